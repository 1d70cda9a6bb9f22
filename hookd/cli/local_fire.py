"""``hookctl fire --local``: run an event's hooks in this process, without the daemon.

The heavy path (trio, the engine, every handler kind): imported only when
``--local`` is given, so ``hookctl fire`` through the daemon stays light.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace

import trio

from hookd.cli.fire_io import held_back_line, print_fire_result, read_input
from hookd.cli.style import Style
from hookd.config.assemble import load_config, load_named_settings, named_settings_problems
from hookd.config.loader import LoadedSource
from hookd.config.model import HookConfig, HookSpec
from hookd.config.sources import SourceLayout
from hookd.daemon.options import command_runner, engine_settings, handler_options
from hookd.daemon.settings import DaemonSettings, load_settings, source_layout
from hookd.daemon.trust import TrustGate, TrustStore, canonical
from hookd.engine.claude_output import render_claude
from hookd.engine.engine import Engine, SessionState
from hookd.handlers.base import Invocation
from hookd.handlers.registry import open_handlers
from hookd.logging import configure_logging
from hookd_client.events import decode_event

__all__ = ["fire_local"]

EXIT_ERROR = 1


def fire_local(args: argparse.Namespace) -> int:
    """Run ``trio`` for one event (raises the input errors the caller reports)."""
    configure_logging("auto", os.environ.get("HOOKCTL_LOG_LEVEL", "warning"))
    return trio.run(_fire_local, args)


class _BackgroundSink:
    """One-shot mode: async hooks run in the CLI's nursery and finish before exit."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery

    def start(self, spec: HookSpec, invocation: Invocation, engine: Engine) -> None:
        self.nursery.start_soon(engine.run_one, spec, invocation)


async def _fire_local(args: argparse.Namespace) -> int:
    raw = read_input(args.input, args.event)
    event = decode_event(raw, args.event)
    named = load_named_settings(args.settings or ())
    problems = named_settings_problems(named)
    if problems:
        # A named file that is missing or broken: running would test nothing.
        for problem in problems:
            print(f"hookctl fire: --settings: {problem}", file=sys.stderr)
        return EXIT_ERROR
    layout = None if args.settings and not args.with_defaults else source_layout(DaemonSettings())
    project = os.environ.get("CLAUDE_PROJECT_DIR") or event.typed.cwd
    if layout is not None:
        named = [_found_in_project(source, project) for source in named]
    config = load_config(layout, project, named=named)
    for error in config.errors:
        print(f"hookctl: config: {error}", file=sys.stderr)
    if layout is not None:
        config = _apply_trust(config, layout, project)
    # The daemon's defaults (not hookd.toml: a one-shot fire stays independent of a
    # daemon's tuning), with no idle python worker kept for a run that ends at once.
    settings = DaemonSettings(python_warm_workers=0)
    async with (
        open_handlers(handler_options(settings), command_runner(settings)) as handlers,
        trio.open_nursery() as nursery,
    ):
        engine = Engine(handlers.table, engine_settings(settings))
        result = await engine.fire(
            config,
            event,
            session=SessionState(),
            context=args.context,
            async_sink=_BackgroundSink(nursery),
        )
        # Printed before async hooks finish: the caller (Claude Code) must not wait for them.
        tool = event.raw.get("tool_name")
        claude = (
            render_claude(result, tool if isinstance(tool, str) else None)
            if args.format == "claude"
            else None
        )
        return print_fire_result(
            result, args.format, claude, Style.for_stream(sys.stdout, args.color)
        )


def _found_in_project(source: LoadedSource, project: str) -> LoadedSource:
    """With ``--with-defaults``, a ``--settings`` file inside the project (by the path given
    or the one it resolves to) is held back like the project's own files."""
    path = str(source.spec.path)
    if path.startswith("<"):  # inline JSON: typed by the caller
        return source
    roots = {d.rstrip("/") + "/" for d in (canonical(project), os.path.abspath(project))}
    given = os.path.abspath(path)
    if not any(p.startswith(r) for p in (given, canonical(given)) for r in roots):
        return source
    return replace(source, spec=replace(source.spec, project_dir=project))


def _apply_trust(config: HookConfig, layout: SourceLayout, project: str) -> HookConfig:
    """The daemon's trust rule, here too: the default sources include the project's own
    files, and running them from ``hookctl fire --local`` in a fresh clone would run the
    repository's code before ``hookctl trust``.  Files named with ``--settings`` are the
    caller's explicit choice — but with ``--with-defaults`` one inside an untrusted
    project is held back like the rest (and said so)."""
    settings = load_settings()
    gate = TrustGate(
        TrustStore(settings.state_path() / "trust.json"), layout, required=settings.require_trust
    )
    verdict, held = gate.held_back(config, project)
    if held:
        print(held_back_line(len(held), project, verdict.reason), file=sys.stderr)
    return gate.apply(config, project)

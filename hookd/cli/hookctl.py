"""``hookctl``: fire events, validate configs, and (with a daemon) inspect and steer it.

Exit codes scripts can rely on: 0 success; 1 a validation error or a failed
request; 2 bad usage; 3 the daemon is not running.  ``fire --format claude``
is the exception: it exits with the code a Claude Code hook must exit with.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import trio

from hookd.config.assemble import (
    explicit_sources,
    load_config,
    load_named_settings,
    named_settings_problems,
)
from hookd.config.loader import load_source
from hookd.config.model import ConfigError, HookConfig, HookSpec
from hookd.config.sources import SourceLayout
from hookd.daemon.settings import SettingsError, load_settings
from hookd.daemon.trust import TrustGate, TrustStore
from hookd.engine.claude_output import render_claude
from hookd.engine.engine import Engine, SessionState
from hookd.handlers.base import Invocation
from hookd.handlers.registry import HandlerOptions, open_handlers
from hookd.logging import configure_logging
from hookd_client.events import EventInputError, decode_event
from hookd_client.results import FireResult

__all__ = ["main"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_DAEMON = 0, 1, 2, 3


def read_input(value: str | None, event: str) -> dict[str, Any]:
    if value is None:
        raw: Any = {
            "session_id": "hookctl",
            "transcript_path": "",
            "cwd": os.getcwd(),
            "hook_event_name": event,
        }
    else:
        text = sys.stdin.read() if value == "-" else Path(value).read_text(encoding="utf-8")
        raw = json.loads(text) if text.strip() else {}
    if not isinstance(raw, dict):
        raise EventInputError("event input must be a JSON object")
    return raw


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
    layout = None if args.settings and not args.with_defaults else SourceLayout()
    project = os.environ.get("CLAUDE_PROJECT_DIR") or event.typed.cwd
    config = load_config(layout, project, named=named)
    for error in config.errors:
        print(f"hookctl: config: {error}", file=sys.stderr)
    if layout is not None:
        config = _apply_trust(config, layout, project)
    engine = Engine()
    options = HandlerOptions(python_warm_workers=0)
    async with open_handlers(engine, options), trio.open_nursery() as nursery:
        result = await engine.fire(
            config,
            event,
            session=SessionState(),
            context=args.context,
            async_sink=_BackgroundSink(nursery),
        )
        # Printed before async hooks finish: the caller (Claude Code) must not wait for them.
        return print_fire_result(result, args.format)


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
        print(
            f"hookctl: {len(held)} hook(s) of {project} held back: {verdict.reason}",
            file=sys.stderr,
        )
    return gate.apply(config, project)


def print_fire_result(result: FireResult, fmt: str) -> int:
    """Print a result as ``--format`` asks; return the exit code hookctl exits with.

    ``claude``: exactly what one Claude Code command hook must print, and its exit
    code; ``json``: the whole result, every hook's outcome included.
    """
    if fmt == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(result).decode(), indent=2) + "\n")
        sys.stdout.flush()
        return EXIT_OK
    rendered = render_claude(result)
    sys.stdout.write(rendered.stdout)
    sys.stdout.flush()
    sys.stderr.write(rendered.stderr)
    sys.stderr.flush()
    return rendered.exit_code


def cmd_fire(args: argparse.Namespace) -> int:
    if not args.local:
        from hookd.cli import remote

        return remote.fire(args)
    try:
        return trio.run(_fire_local, args)
    except (EventInputError, json.JSONDecodeError, OSError, SettingsError) as exc:
        print(f"hookctl fire: {exc}", file=sys.stderr)
        return EXIT_ERROR


def cmd_validate(args: argparse.Namespace) -> int:
    """Every error of every file (file:line: JSON path: what), then warnings; exit 1 on errors."""
    errors = 0
    report: list[dict[str, Any]] = []
    for spec in explicit_sources(args.files):
        loaded = load_source(spec)
        count = sum(len(g.hooks) for _, _, g in loaded.groups)
        problems = [str(e) for e in loaded.errors]
        if not loaded.exists:
            problems = [f"{spec.path}: no such file"]
        errors += len(problems)
        report.append(
            {
                "file": str(spec.path),
                "ok": not problems,
                "hooks": count,
                "errors": [_error_json(e) for e in loaded.errors]
                if loaded.exists
                else [{"message": "no such file", "line": None, "path": None}],
                "warnings": [_error_json(w) for w in loaded.warnings],
            }
        )
        if args.json:
            continue
        for problem in problems:
            print(problem)
        for warning in loaded.warnings:
            print(f"warning: {warning}")
        if not problems:
            print(f"{spec.path}: ok ({count} hook{'s' if count != 1 else ''})")
        elif loaded.exists:
            print(f"{spec.path}: not applied (a file with an error runs none of its hooks)")
    if args.json:
        print(json.dumps(report, indent=2))
    return EXIT_ERROR if errors else EXIT_OK


def _error_json(error: ConfigError) -> dict[str, Any]:
    return {"message": error.message, "line": error.line, "path": error.path}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookctl", description=__doc__)
    parser.add_argument(
        "--socket", help="the daemon's socket (default: $HOOKD_SOCKET, then the runtime dir)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    fire = sub.add_parser("fire", help="fire one event and print the result")
    fire.add_argument("event", help="event name, e.g. PreToolUse")
    fire.add_argument(
        "--local", action="store_true", help="run in this process, without the daemon"
    )
    fire.add_argument(
        "--settings",
        action="append",
        metavar="FILE",
        help="settings file or inline JSON (repeatable); replaces the default sources",
    )
    fire.add_argument(
        "--with-defaults",
        action="store_true",
        help="with --settings: also load the default sources",
    )
    fire.add_argument("--input", metavar="FILE", help="event input JSON file, or - for stdin")
    fire.add_argument("--format", choices=("claude", "json"), default="json")
    fire.add_argument("--context", choices=("interactive", "batch"), default="interactive")
    fire.set_defaults(func=cmd_fire)

    validate = sub.add_parser("validate", help="check config files; exit 1 on any error")
    validate.add_argument("files", nargs="+", metavar="FILE", help="settings, TOML or SKILL.md")
    validate.add_argument("--json", action="store_true", help="one JSON report for all files")
    validate.set_defaults(func=cmd_validate)

    from hookd.cli import remote

    remote.add_commands(sub)

    from hookd.cli import async_cmd

    async_cmd.add_command(sub)

    from hookd.cli import reliability_cmd

    reliability_cmd.add_commands(sub)

    from hookd.cli.claude_cmd import add_claude_command

    add_claude_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    configure_logging("auto", os.environ.get("HOOKCTL_LOG_LEVEL", "warning"))
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())

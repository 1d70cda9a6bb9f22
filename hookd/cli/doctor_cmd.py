"""``hookctl doctor``: agents' hook files, hookd's config and trust, checked for silent failures.

The file checks are :mod:`hookd.installers.agent_doctor`'s; this module adds what
needs the daemon's settings: hookd's own config files as the daemon loads them
(a load error, a matcher in an agent's native tool name), whether hookd will
hold a project's hooks back until ``hookctl trust``, and — for every agent
wired to hookd — what that agent does with each configured hook
(:func:`hookd.agents.capabilities.report`: an event it never fires, a
before-event it only has as an after-event, a stop it cannot continue) and
whether each door its files name reaches this user's hookd
(:mod:`hookd.cli.doors`: the daemon on its socket, the relay program, the
http port with the file's token, the mod's socket).

Exit 1 when anything is an error (hooks that will not run as written), else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hookd.agents.base import Adapter, Finding
from hookd.agents.capabilities import report
from hookd.agents.registry import ADAPTERS, UnknownAgent, adapter_for
from hookd.cli.doors import Wiring, check_doors, find_wirings
from hookd.cli.style import Style
from hookd.config.assemble import load_config
from hookd.daemon.settings import SettingsError, load_settings, source_layout
from hookd.daemon.trust import TrustGate, TrustStore
from hookd.installers.agent_doctor import fail_closed_findings, hookd_config_findings, lint_agent
from hookd.installers.agent_install import hookd_config_path

__all__ = ["add_doctor_command", "cmd_doctor"]

EXIT_OK, EXIT_ERROR = 0, 1
_ORDER = {"error": 0, "warning": 1, "info": 2}


def _wired(adapter: Adapter, home: Path, project: Path) -> bool:
    for scope in ("user", "project"):
        for path in adapter.hook_files(scope, home, project):
            try:
                if adapter.is_wired(path.read_text(encoding="utf-8")):
                    return True
            except (OSError, ValueError):
                continue
    return False


def _wired_files(adapter: Adapter, home: Path, project: Path) -> list[tuple[Path, str]]:
    found = []
    for scope in ("user", "project"):
        for path in adapter.hook_files(scope, home, project):
            try:
                text = path.read_text(encoding="utf-8")
                if adapter.is_wired(text):
                    found.append((path, text))
            except (OSError, ValueError):
                continue
    return found


def _doors(adapter: Adapter, home: Path, project: Path) -> list[Wiring]:
    """Every door hookd's entries in the agent's hook files name — wholly wired or not
    (Claude Code's http transport, or a file wired for some events only)."""
    found: list[Wiring] = []
    paths = [p for scope in ("user", "project") for p in adapter.hook_files(scope, home, project)]
    for path in dict.fromkeys(paths):  # the project may be HOME itself
        try:
            found += find_wirings(adapter.name, path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return found


def collect(agents: list[Adapter], home: Path, project: Path) -> list[dict[str, Any]]:
    """Every finding, each with the agent it concerns ("hookd" for hookd's own config)."""
    rows: list[dict[str, Any]] = []

    def add(agent: str, finding: Finding) -> None:
        rows.append({"agent": agent, **_as_dict(finding)})

    for adapter in agents:
        for finding in lint_agent(adapter, home, project):
            add(adapter.name, finding)
    for scope in ("user", "project"):
        path = hookd_config_path(scope, project)
        for finding in hookd_config_findings(path, ADAPTERS):
            add("hookd", finding)
    try:
        settings = load_settings()
    except SettingsError as exc:
        add("hookd", Finding(severity="error", message=f"hookd.toml: {exc}"))
        return rows
    layout = source_layout(settings)
    config = load_config(layout, str(project))
    for error in config.errors:
        add("hookd", Finding(severity="error", message=f"hookd's config: {error}"))
    gate = TrustGate(
        TrustStore(settings.state_path() / "trust.json"), layout, required=settings.require_trust
    )
    verdict, held = gate.held_back(config, str(project))
    if held:
        add(
            "hookd",
            Finding(
                severity="warning",
                message=f"hookd holds back {len(held)} hook(s) of {project} until you trust it "
                f"(hookctl trust {project}): {verdict.reason}",
                path=held[0].source,
            ),
        )
    hooks = gate.apply(config, str(project)).all_hooks()
    fail_closed = {h.event for h in hooks if getattr(h.handler, "onFailure", None) == "block"}
    wirings = [w for adapter in agents for w in _doors(adapter, home, project)]
    for adapter in agents:
        if not _wired(adapter, home, project):
            continue
        for path, text in _wired_files(adapter, home, project):
            for finding in fail_closed_findings(adapter, path, text, fail_closed):
                add(adapter.name, finding)
        for entry in report(adapter, hooks):
            add(
                adapter.name,
                Finding(
                    severity=entry.severity,
                    message=f"{entry.event} hook {entry.hook}: {entry.message}",
                    path=entry.source,
                ),
            )
    for wiring, problem in check_doors(wirings):
        what = "the mod's events" if wiring.kind == "mod" else f"{wiring.events} event(s)"
        add(
            wiring.agent,
            Finding(
                severity="error",
                message=f"{what} will not reach hookd, and fail open: {problem}",
                path=str(wiring.path),
            ),
        )
    rows.sort(key=lambda r: (_ORDER[r["severity"]], r["agent"], r["path"]))
    return rows


def _as_dict(finding: Finding) -> dict[str, str]:
    return {
        "severity": finding.severity,
        "message": finding.message,
        "path": finding.path,
        "where": finding.where,
    }


def cmd_doctor(args: argparse.Namespace) -> int:
    try:
        agents = [adapter_for(args.agent)] if args.agent else list(ADAPTERS)
    except UnknownAgent as exc:
        print(f"hookctl doctor: {exc}", file=sys.stderr)
        return EXIT_ERROR
    every = collect(agents, Path.home(), Path(args.project_dir).resolve())
    rows = every if args.verbose else [r for r in every if r["severity"] != "info"]
    hidden = len(every) - len(rows)
    failed = any(r["severity"] == "error" for r in rows)
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_ERROR if failed else EXIT_OK
    style = Style.for_stream(sys.stdout, getattr(args, "color", "auto"))
    paint = {"error": style.red, "warning": style.yellow, "info": style.dim}
    if not rows:
        print(
            "no silent failures found in the hook files and doors of: "
            + ", ".join(a.name for a in agents)
        )
    for r in rows:
        where = f" ({r['where']})" if r["where"] else ""
        place = f"{r['path']}{where}: " if r["path"] else ""
        print(f"{paint[r['severity']](r['severity'])} [{r['agent']}] {place}{r['message']}")
    if hidden:
        print(style.dim(f"{hidden} note(s) worth knowing (trust gates, …): hookctl doctor -v"))
    return EXIT_ERROR if failed else EXIT_OK


def add_doctor_command(sub: Any) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check every agent's hook files and doors for silent failures",
        description="Check every agent's hook files (or --agent's) for what makes hooks not run "
        "without a word: a file the agent cannot parse, hooks switched off, hooks it will not "
        "trust, timeouts in the wrong unit, matchers that never meet its tool names; hookd's "
        "own config and trust; what each wired agent does with each hook; and whether each "
        "door a wired file names reaches hookd (the daemon on its socket, the relay program, "
        "the http port with the file's token, the mod's socket). Exit 1 on errors.",
    )
    doctor.add_argument("--agent", help="one agent (default: every agent hookd knows)")
    doctor.add_argument("--project-dir", default=".", help="project root (default: .)")
    doctor.add_argument(
        "--verbose", "-v", action="store_true", help="also what is merely worth knowing"
    )
    doctor.add_argument("--json", action="store_true", help="one JSON array of findings")
    doctor.set_defaults(func=cmd_doctor)

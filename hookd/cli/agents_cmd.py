"""``hookctl agents list | status | install | uninstall``: every coding agent, wired to hookd.

The planning is :mod:`hookd.installers.agent_install` (any agent, through its
adapter's install side) and, for Claude Code, :mod:`hookd.installers.claude_settings`
— ``hookctl agents install claude`` *is* ``hookctl claude install``, with the
same options (http or relay transport, token, scopes), so Claude Code keeps
its richer installer and ``hookctl claude …`` keeps working.  This module
parses flags, prints the plan (a one-line summary, the notes, then a unified
diff with ``--dry-run``) and applies it.

Each agent is its own subcommand of ``install`` and ``uninstall`` so that
``--help`` shows the options that agent takes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hookd.agents.base import Adapter, Installation, Scope
from hookd.cli import claude_cmd
from hookd.cli.style import Style
from hookd.installers.agent_install import (
    AgentFileState,
    AgentPlan,
    Relay,
    apply_plan,
    file_state,
    plan_install,
    plan_uninstall,
)
from hookd.installers.claude_settings import Plan, is_bridge_handler, paths_for

__all__ = ["add_agents_command"]

EXIT_OK, EXIT_ERROR = 0, 1
CLAUDE = "claude"
"""Claude Code's name at every door (``hookctl agents install claude``, ``--agent claude``)."""


# --- the agents ---------------------------------------------------------------------------


def _adapters() -> list[Adapter]:
    """Every agent hookd has an adapter for, Claude Code's included when there is one."""
    from hookd.agents import registry

    return list(registry.ADAPTERS)


def _adapter(name: str) -> Adapter:
    from hookd.agents import registry

    return registry.adapter_for(name)


def _names() -> list[str]:
    names = [a.name for a in _adapters()]
    return names if CLAUDE in names else [CLAUDE, *names]


def _scope(args: argparse.Namespace) -> Scope:
    scope: Scope = args.scope or "user"
    return scope


def _project(args: argparse.Namespace) -> Path:
    return Path(args.project_dir).resolve()


# --- install / uninstall -------------------------------------------------------------------


def _relay(args: argparse.Namespace) -> Relay | None:
    """The relay the wired hooks run (None: a bad ``--relay``, already reported)."""
    binary = claude_cmd.relay_binary(args, "hookctl agents install")
    if binary is False:
        return None
    extra = {"python": args.python} if args.python else {}
    return Relay(binary=binary, socket=args.socket, **extra)


def cmd_install(args: argparse.Namespace) -> int:
    relay = _relay(args)
    if relay is None:
        return EXIT_ERROR
    try:
        adapter = _adapter(args.agent)
        plan = plan_install(adapter, _scope(args), relay, home=Path.home(), project=_project(args))
    except (OSError, ValueError) as exc:
        print(f"hookctl agents install {args.agent}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    plan.notes.extend(claude_cmd.relay_note(args, relay.binary))
    return _finish(plan, args)


def cmd_uninstall(args: argparse.Namespace) -> int:
    try:
        adapter = _adapter(args.agent)
        plan = plan_uninstall(
            adapter, _scope(args), home=Path.home(), project=_project(args), force=args.force
        )
    except (OSError, ValueError) as exc:
        print(f"hookctl agents uninstall {args.agent}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return _finish(plan, args)


def _finish(plan: AgentPlan, args: argparse.Namespace) -> int:
    """Print (dry run) or apply the plan, as ``hookctl claude`` does."""
    if args.dry_run:
        if args.json:
            _print_json(plan, [], dry_run=True)
            return EXIT_OK
        would = "would: " if plan.changed or plan.removals else ""
        print("# " + would + claude_cmd.summary(plan))
        for note in plan.notes:
            print(f"# {note}")
        sys.stdout.write(plan.diff())
        for path in plan.removals:
            print(f"# would remove {path}")
        return EXIT_OK
    try:
        written = apply_plan(plan)
    except (OSError, ValueError) as exc:  # a file that changed since planning, a full disk …
        print(f"hookctl agents: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        _print_json(plan, written, dry_run=False)
        return EXIT_OK
    for path in written:
        print(f"wrote {path}")
    for path in plan.removals:
        print(f"removed {path}")
    if not written and not plan.removals:
        print("nothing to change")
    for note in plan.notes:
        print(note)
    return EXIT_OK


def _print_json(plan: Plan, written: list[Path], *, dry_run: bool) -> None:
    data = {
        "dry_run": dry_run,
        "summary": claude_cmd.summary(plan),
        "changes": [
            {"path": str(c.path), "created": c.old is None, "diff": c.diff()} for c in plan.changed
        ],
        "written": [str(p) for p in written],
        "removed": [str(p) for p in plan.removals] if not dry_run else [],
        "would_remove": [str(p) for p in plan.removals] if dry_run else [],
        "notes": plan.notes,
    }
    print(json.dumps(data, indent=2))


# --- list / status -------------------------------------------------------------------------


def _claude_detect() -> Installation:
    path = shutil.which(CLAUDE)
    return Installation(installed=path is not None, binary=path)


def _claude_file_state(path: Path) -> AgentFileState:
    """Claude Code's settings file: wired when any event runs hookd's http hook or relay."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AgentFileState(path, False, False, 0, False)
    except OSError as exc:
        return AgentFileState(path, True, False, 0, False, error=str(exc))
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        return AgentFileState(path, True, False, 0, False, error=f"line {exc.lineno}: {exc.msg}")
    hooks = data.get("hooks") if isinstance(data, dict) else None
    wired = own = 0
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            mine = [h for h in handlers if is_bridge_handler(h)]
            wired += len(mine)
            own += len(mine) < len(handlers)
    recorded = path.with_name(path.name + ".hookd-moved").exists()
    return AgentFileState(path, True, wired > 0, own, recorded)


def _files(name: str, adapter: Adapter | None, scope: Scope, project: Path) -> list[Path]:
    if adapter is None:
        return [paths_for(scope, project)[0]]
    return adapter.hook_files(scope, Path.home(), project)


def _state(name: str, adapter: Adapter | None, path: Path) -> AgentFileState:
    if name == CLAUDE:
        return _claude_file_state(path)
    assert adapter is not None
    return file_state(adapter, path)


def _rows(names: list[str], project: Path, *, detect: bool) -> list[dict[str, Any]]:
    known = {a.name: a for a in _adapters()}

    def row(name: str) -> dict[str, Any]:
        adapter = known.get(name)
        found = (
            (adapter.detect() if adapter is not None else _claude_detect())
            if detect
            else Installation(installed=False)
        )
        scopes: dict[str, list[dict[str, Any]]] = {}
        for scope in ("user", "project"):
            states = [_state(name, adapter, p) for p in _files(name, adapter, scope, project)]
            scopes[scope] = [_state_json(s) for s in states]
        return {
            "agent": name,
            "title": adapter.title if adapter is not None else "Claude Code",
            "verified": adapter.verified if adapter is not None else True,
            "tested_version": adapter.tested_version if adapter is not None else None,
            "installed": found.installed,
            "binary": found.binary,
            "version": found.version,
            "wired": {s: any(f["wired"] for f in files) for s, files in scopes.items()},
            "files": scopes,
            "trust_steps": {
                s: adapter.trust_steps(s) if adapter is not None else []
                for s in ("user", "project")
            },
        }

    # Each detect may start the agent for its --version (a second or more for a node CLI).
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(row, names))


def _state_json(state: AgentFileState) -> dict[str, Any]:
    return {
        "path": str(state.path),
        "exists": state.exists,
        "wired": state.wired,
        "own_groups": state.own_groups,
        "recorded": state.recorded,
        "error": state.error,
        "notes": list(state.notes),
    }


def cmd_list(args: argparse.Namespace) -> int:
    rows = _rows(_names(), _project(args), detect=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    style = Style.for_stream(sys.stdout, getattr(args, "color", "auto"))
    print(style.bold(f"{'AGENT':<10} {'INSTALLED':<10} {'WIRED':<14} {'KIND':<11} VERSION"))
    for r in rows:
        wired = ",".join(s for s, on in r["wired"].items() if on) or "-"
        kind = "run here" if r["verified"] else "from docs"
        installed = style.green("yes") + " " * 7 if r["installed"] else "no" + " " * 8
        version = r["version"] or ("-" if not r["installed"] else "?")
        print(f"{r['agent']:<10} {installed} {wired:<14} {kind:<11} {version}")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    names = [args.agent] if args.agent else _names()
    if args.agent and args.agent not in _names():
        print(
            f"hookctl agents status: no agent {args.agent!r} ({', '.join(_names())})",
            file=sys.stderr,
        )
        return EXIT_ERROR
    rows = _rows(names, _project(args), detect=False)
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    style = Style.for_stream(sys.stdout, getattr(args, "color", "auto"))
    for r in rows:
        print(style.bold(f"{r['agent']} ({r['title']})"))
        for scope, files in r["files"].items():
            present = [f for f in files if f["exists"]]
            if not files:
                steps = "; ".join(r["trust_steps"][scope])
                print(f"  {scope:<8} {style.dim('no hook file' + (f': {steps}' if steps else ''))}")
            elif not present:
                first = files[0]["path"]
                more = f" (+{len(files) - 1} more)" if len(files) > 1 else ""
                print(f"  {scope:<8} {style.dim(f'no file: {first}{more}')}")
            for f in present:
                print(f"  {scope:<8} {f['path']}: {_describe(f, style)}")
                for note in f["notes"]:
                    print(f"  {'':<8} {style.dim(note)}")
            if r["wired"][scope]:
                for step in r["trust_steps"][scope]:
                    print(f"  {'':<8} trust: {step}")
    return EXIT_OK


def _describe(f: dict[str, Any], style: Style) -> str:
    if f["error"]:
        return style.red(f"unreadable: {f['error']}")
    parts = [style.green("wired to hookd") if f["wired"] else "not wired"]
    if f["own_groups"]:
        parts.append(
            style.yellow(f"{f['own_groups']} hook group(s) of its own (run by the agent itself)")
        )
    if f["recorded"]:
        parts.append("install record kept (uninstall restores)")
    return "; ".join(parts)


# --- the parser ----------------------------------------------------------------------------


def _claude_action(action: str) -> argparse.ArgumentParser:
    """``hookctl claude ACTION``'s own parser (its options, its function)."""
    root = argparse.ArgumentParser(add_help=False)
    claude_cmd.add_claude_command(root.add_subparsers())
    for parser in _subparsers(root).values():
        found = _subparsers(parser).get(action)
        if found is not None:
            return found
    raise LookupError(f"hookctl claude has no {action}")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            choices: dict[str, argparse.ArgumentParser] = action.choices
            return choices
    return {}


def _common(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--user", dest="scope", action="store_const", const="user", help="the agent's user hooks"
    )
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="the project's hooks (moved into <project>/.claude/hooks.json)",
    )
    parser.add_argument("--project-dir", default=".", help="project root (default: .)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print a summary and a unified diff; write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def _install_options(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    parser.add_argument("--socket", help="daemon socket for the relay (default: its own search)")
    parser.add_argument("--python", help="interpreter for the Python relay (default: this one)")
    relay = parser.add_mutually_exclusive_group()
    relay.add_argument(
        "--relay",
        metavar="PATH",
        help="the compiled relay to install (default: hookd-relay-c beside this interpreter)",
    )
    relay.add_argument(
        "--python-relay",
        action="store_true",
        help="the Python relay even where the compiled one is built",
    )


def add_agents_command(sub: Any) -> None:
    """Register ``agents`` on hookctl's subparsers."""
    agents = sub.add_parser(
        "agents",
        help="every coding agent on this machine, wired to hookd",
        description="List the coding agents hookd has an adapter for, wire one to hookd "
        "(its hooks move into hookd's config of the same scope), or undo it.",
    )
    actions = agents.add_subparsers(dest="agents_command", required=True, metavar="ACTION")

    lst = actions.add_parser("list", help="agents installed here, wired or not, their versions")
    lst.add_argument("--project-dir", default=".", help="project whose files count (default: .)")
    lst.add_argument("--json", action="store_true", help="one JSON array")
    lst.set_defaults(func=cmd_list)

    status = actions.add_parser("status", help="each agent's hook files per scope")
    status.add_argument("agent", nargs="?", help="one agent (default: all)")
    status.add_argument("--project-dir", default=".", help="project root (default: .)")
    status.add_argument("--json", action="store_true", help="one JSON array")
    status.set_defaults(func=cmd_status)

    names = _names()
    install = actions.add_parser(
        "install",
        help="send an agent's events to hookd; move its hooks into hookd's config",
        description="One hookd entry per event in the agent's own hook file; the agent's "
        "hooks move into hookd's config of the same scope (nothing runs twice); a backup "
        "and a record beside the file make `uninstall` exact. Idempotent.",
    )
    per_agent = install.add_subparsers(dest="agent", required=True, metavar="AGENT")
    uninstall = actions.add_parser(
        "uninstall", help="give an agent's hook file back as it was; take its hooks back"
    )
    per_agent_un = uninstall.add_subparsers(dest="agent", required=True, metavar="AGENT")
    known = {a.name: a for a in _adapters()}
    for name in names:
        title = known[name].title if name in known else "Claude Code"
        if name == CLAUDE:
            # Claude Code's own installer: http hooks + relay, its scopes, its options.
            per_agent.add_parser(
                name,
                parents=[_claude_action("install")],
                add_help=False,
                help=f"{title} (= hookctl claude install)",
            )
            per_agent_un.add_parser(
                name,
                parents=[_claude_action("uninstall")],
                add_help=False,
                help=f"{title} (= hookctl claude uninstall)",
            )
            continue
        p = per_agent.add_parser(name, help=title)
        _install_options(p)
        p.set_defaults(func=cmd_install)
        u = per_agent_un.add_parser(name, help=title)
        _common(u)
        u.add_argument(
            "--force",
            action="store_true",
            help="restore the file as it was before install even though it changed since",
        )
        u.set_defaults(func=cmd_uninstall)

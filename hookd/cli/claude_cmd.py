"""``hookctl claude install | uninstall | import``: wire Claude Code to hookd.

The planning lives in :mod:`hookd.installers.claude_settings`; this module only
parses flags, prints the plan (a one-line summary, then a unified diff with
``--dry-run``) and applies it.  ``install`` then checks that the daemon serves
the http port it wired — having the running daemon open it when it does not
(:mod:`hookd.installers.door`) — and says so in one line; a door left unserved is
an error (exit 3 without a daemon, else 1): the hooks would fail open.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from hookd.doors import DEFAULT_HTTP_PORT, load_or_create_token, token_path
from hookd.installers.claude_settings import (
    Bridge,
    Plan,
    ScopeName,
    Transport,
    apply_plan,
    compiled_relay,
    plan_import,
    plan_install,
    plan_uninstall,
)
from hookd.installers.door import (
    DoorCheck,
    check_door,
    check_socket_door,
    configured_port,
    default_http_socket,
    served_port,
)

__all__ = ["add_claude_command"]


def _scope(args: argparse.Namespace) -> ScopeName:
    scope: ScopeName = args.scope or "user"
    return scope


def summary(plan: Plan) -> str:
    """One line: which files change and by how much (the diff follows it)."""
    if not plan.changed and not plan.removals:
        return "nothing to change"
    parts = []
    for change in plan.changed:
        old = (change.old or "").splitlines()
        new = change.new.splitlines()
        verb = "create" if change.old is None else "change"
        parts.append(f"{verb} {change.path} ({len(old)} → {len(new)} lines)")
    parts.extend(f"remove {path}" for path in plan.removals)
    return "; ".join(parts)


EXIT_OK, EXIT_ERROR, EXIT_NO_DAEMON = 0, 1, 3


def _door_exit(check: DoorCheck | None) -> int:
    """Files written but the door not served: Claude Code's hooks fail open — an error
    (3 when hookd is not running, as for every hookctl command; else 1)."""
    if check is None or check.ok:
        return EXIT_OK
    return EXIT_NO_DAEMON if check.state == "not_running" else EXIT_ERROR


def _finish(
    plan: Plan, args: argparse.Namespace, door: Callable[[], DoorCheck] | None = None
) -> int:
    """Print (dry run) or apply the plan; ``door`` runs after the files are written.

    A dry run exits 0 whatever the door: it only shows what would happen."""
    if args.dry_run:
        check = door() if door is not None else None
        if args.json:
            _print_json(plan, [], check, dry_run=True)
            return 0
        print("# " + ("would: " if plan.changed or plan.removals else "") + summary(plan))
        for note in plan.notes:
            print(f"# {note}")
        if check is not None:
            print(f"# {check.line}")
        sys.stdout.write(plan.diff())
        return 0
    try:
        written = apply_plan(plan)
    except (OSError, ValueError) as exc:  # a file that changed since planning, a full disk …
        print(f"hookctl claude: {exc}", file=sys.stderr)
        return 1
    check = door() if door is not None else None
    if args.json:
        _print_json(plan, written, check, dry_run=False)
        return _door_exit(check)
    for path in written:
        print(f"wrote {path}")
    for path in plan.removals:
        print(f"removed {path}")
    if not written and not plan.removals:
        print("nothing to change")
    for note in plan.notes:
        print(note)
    if check is not None and check.ok:
        print(check.line)
    elif check is not None:
        sys.stdout.flush()
        print(f"hookctl claude install: error: {check.line}", file=sys.stderr)
    return _door_exit(check)


def _print_json(plan: Plan, written: list[Path], door: DoorCheck | None, *, dry_run: bool) -> None:
    data: dict[str, Any] = {
        "dry_run": dry_run,
        "summary": summary(plan),
        "changes": [
            {"path": str(c.path), "created": c.old is None, "diff": c.diff()} for c in plan.changed
        ],
        "written": [str(p) for p in written],
        "removed": [] if dry_run else [str(p) for p in plan.removals],
        "notes": plan.notes,
    }
    if door is not None:
        data["daemon"] = {
            "state": door.state,
            "ok": door.ok,
            "pid": door.pid,
            "message": door.line,
            "configured": str(door.configured) if door.configured else None,
        }
    print(json.dumps(data, indent=2))


PYTHON_RELAY_NOTE = (
    "the compiled relay (hookd-relay-c) is not installed — hookd was installed where no C "
    "compiler was found — so these hooks run the Python relay (~17 ms an event instead of "
    "~2 ms): install cc, reinstall hookd (from a checkout: scripts/build-relay), install again"
)
"""Said by ``install`` when it wires the Python relay only because no compiled one exists."""


def relay_note(args: argparse.Namespace, binary: str | None) -> list[str]:
    """The note for a plan that wires the Python relay though nobody asked for it."""
    return [PYTHON_RELAY_NOTE] if binary is None and not args.python_relay else []


def relay_binary(
    args: argparse.Namespace, command: str = "hookctl claude install"
) -> str | Literal[False] | None:
    """The compiled relay to wire (``--relay``, else the built one), None for the Python
    one, False on error (said on stderr, as ``command``'s)."""
    if args.python_relay:
        return None
    if not args.relay:
        return compiled_relay()
    path = os.path.abspath(str(args.relay))
    if "hookd-relay" not in os.path.basename(path):
        # uninstall and doctor recognise hookd's own entries by that name
        print(
            f"{command}: --relay {args.relay}: the file name must contain "
            "'hookd-relay' (so that uninstall and doctor recognise the entries)",
            file=sys.stderr,
        )
        return False
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        print(f"{command}: --relay {args.relay}: not an executable file", file=sys.stderr)
        return False
    return path


def cmd_install(args: argparse.Namespace) -> int:
    scope = _scope(args)
    # Project settings are usually committed: never write the secret there.
    token_in_env = scope == "project" and not args.literal_token
    try:
        if args.dry_run and not token_path().exists():
            token = "<hookd-http-token>"  # a dry run writes nothing, not even the token
        else:
            token = load_or_create_token()
    except (OSError, ValueError) as exc:
        print(f"hookctl claude install: token: {exc}", file=sys.stderr)
        return 1
    port: int = args.port or configured_port() or served_port(args.socket) or DEFAULT_HTTP_PORT
    binary = relay_binary(args)
    if binary is False:
        return 1
    transport: Transport = "mod" if args.transport == "mod" else "http"
    http_socket = os.path.abspath(args.http_socket or default_http_socket(args.socket))
    bridge = Bridge(
        port=port,
        token=token,
        socket=args.socket,
        token_in_env=token_in_env,
        relay_binary=binary,
        transport=transport,
        http_socket=http_socket,
        **({"python": args.python} if args.python else {}),
    )
    try:
        plan = plan_install(scope, bridge, Path(args.project_dir))
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        print(f"hookctl claude install: {exc}", file=sys.stderr)
        return 1
    if token_in_env and transport == "http":
        plan.notes.append(f"token file: {token_path()}")
    plan.notes.extend(relay_note(args, binary))
    if transport == "mod":
        return _finish(plan, args, lambda: check_socket_door(http_socket, args.socket))
    return _finish(plan, args, lambda: check_door(port, args.socket, dry_run=args.dry_run))


def cmd_uninstall(args: argparse.Namespace) -> int:
    try:
        plan = plan_uninstall(_scope(args), Path(args.project_dir))
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        print(f"hookctl claude uninstall: {exc}", file=sys.stderr)
        return 1
    return _finish(plan, args)


def cmd_import(args: argparse.Namespace) -> int:
    try:
        plan = plan_import(_scope(args), Path(args.project_dir))
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        print(f"hookctl claude import: {exc}", file=sys.stderr)
        return 1
    return _finish(plan, args)


def _common(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    for name, where in (
        ("user", "~/.claude/settings.json (default)"),
        ("project", ".claude/settings.json"),
        ("local", ".claude/settings.local.json"),
    ):
        scope.add_argument(f"--{name}", dest="scope", action="store_const", const=name, help=where)
    parser.add_argument("--project-dir", default=".", help="project root (default: .)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print a summary and a unified diff; write nothing"
    )
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")


def add_claude_command(sub: Any) -> None:
    """Register ``claude`` on hookctl's subparsers."""
    claude = sub.add_parser("claude", help="run Claude Code's hooks through hookd")
    actions = claude.add_subparsers(dest="claude_command", required=True)

    install = actions.add_parser(
        "install", help="send every Claude Code event to hookd; move existing hooks to hookd"
    )
    _common(install)
    install.add_argument(
        "--port",
        type=int,
        help=f"hookd's http endpoint port (default: http_port in hookd.toml, else the port "
        f"the running hookd serves, else {DEFAULT_HTTP_PORT})",
    )
    install.add_argument("--socket", help="daemon socket for the relay (default: its own search)")
    install.add_argument(
        "--transport",
        choices=("http", "mod"),
        help="how the per-tool-call events reach hookd: http hooks to the loopback port "
        "(default: works with every Claude Code that has http hooks), or mod: hookd's Claude "
        "Code mod, in process over the daemon's Unix socket (faster; --user only; Claude "
        "Code >= 2.1.287, mods are early access there; no systemMessage). Other events go "
        "through the relay either way (mod) or as today (http)",
    )
    install.add_argument(
        "--http-socket",
        metavar="PATH",
        help="with --transport mod: the daemon's http socket (default: http_socket_path in "
        "hookd.toml, else http.sock beside the daemon socket)",
    )
    install.add_argument("--python", help="interpreter for the Python relay (default: this one)")
    relay = install.add_mutually_exclusive_group()
    relay.add_argument(
        "--relay",
        metavar="PATH",
        help="the compiled relay to install (default: hookd-relay-c beside this interpreter, "
        "built by scripts/build-relay; its name must contain hookd-relay)",
    )
    relay.add_argument(
        "--python-relay",
        action="store_true",
        help="install the Python relay even where the compiled one is built",
    )
    install.add_argument(
        "--literal-token",
        action="store_true",
        help="with --project: write the token itself instead of $HOOKD_HTTP_TOKEN",
    )
    install.set_defaults(func=cmd_install)

    uninstall = actions.add_parser(
        "uninstall", help="remove hookd's entries and restore the hooks to Claude Code"
    )
    _common(uninstall)
    uninstall.set_defaults(func=cmd_uninstall)

    imp = actions.add_parser("import", help="copy Claude Code's hooks into hookd's config")
    _common(imp)
    imp.set_defaults(func=cmd_import)

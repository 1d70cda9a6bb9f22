"""``hookctl systemd install | uninstall``: hookd as a socket-activated user service.

The units (``hookd/units/``) are templates: ``install`` fills in how *this*
hookd is started — ``<this interpreter> -m hookd``, so the unit works for a
venv, a pipx install or ``pip install --user`` alike, with no assumption about
``~/.local/bin`` — and where its documentation is, then writes them to
``~/.config/systemd/user/`` and (unless ``--no-enable``) asks the user's
systemd to start listening.  The daemon itself starts on the first connection.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from hookd.safe_files import write_atomically

__all__ = ["add_systemd_command", "render_unit", "unit_dir"]

UNITS = ("hookd.socket", "hookd.service")
_ENABLE = "systemctl --user daemon-reload && systemctl --user enable --now hookd.socket"


def unit_dir() -> Path:
    """``$XDG_CONFIG_HOME/systemd/user`` (default ``~/.config/systemd/user``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def _documentation() -> str:
    """A ``Documentation=`` line naming a file that exists, or none at all."""
    readme = Path(__file__).resolve().parents[2] / "README.md"  # a source checkout
    return f"Documentation=file://{readme}\n" if readme.is_file() else ""


def render_unit(name: str) -> str:
    template = resources.files("hookd").joinpath("units", name).read_text(encoding="utf-8")
    exec_start = f"{shlex.quote(sys.executable)} -m hookd"
    return template.replace("@EXEC_START@", exec_start).replace("@DOCUMENTATION@", _documentation())


def _systemctl(*args: str) -> str | None:
    """Run ``systemctl --user ARGS``; the error in one line, or None when it worked."""
    tool = shutil.which("systemctl")
    if tool is None:
        return "systemctl is not installed"
    try:
        done = subprocess.run(
            [tool, "--user", *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.strip() or f"exit {done.returncode}").splitlines()[0]
    return None


def cmd_install(args: argparse.Namespace) -> int:
    target = unit_dir()
    written: list[str] = []
    for name in UNITS:
        text = render_unit(name)
        path = target / name
        if args.dry_run:
            print(f"# {path}\n{text}")
            continue
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            target.mkdir(parents=True, exist_ok=True)
            write_atomically(path, text, 0o644)  # no temp name a link could be planted at
            written.append(str(path))
    if args.dry_run:
        return 0
    problem = None
    if args.enable:
        problem = _systemctl("daemon-reload") or _systemctl("enable", "--now", "hookd.socket")
    if args.json:
        enabled = args.enable and problem is None
        print(json.dumps({"written": written, "enabled": enabled, "problem": problem}, indent=2))
        return 0 if problem is None else 1
    for path_text in written:
        print(f"wrote {path_text}")
    if not written:
        print(f"{target}/hookd.{{socket,service}} are up to date")
    if not args.enable:
        print(f"enable it with: {_ENABLE}")
    elif problem is None:
        print("hookd.socket is enabled and listening; hookd starts on the first connection")
    else:
        print(f"could not enable hookd.socket ({problem}); where a user systemd runs: {_ENABLE}")
        return 1
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    problem = None
    if args.enable:
        problem = _systemctl("disable", "--now", "hookd.socket", "hookd.service")
    removed = []
    for name in UNITS:
        path = unit_dir() / name
        if path.exists():
            path.unlink()
            removed.append(str(path))
    if args.enable and removed:
        problem = problem or _systemctl("daemon-reload")
    data: dict[str, Any] = {"removed": removed, "problem": problem}
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        for path_text in removed:
            print(f"removed {path_text}")
        if not removed:
            print("no hookd units installed")
        if problem:
            print(f"systemctl: {problem}")
    return 0


def add_systemd_command(sub: Any) -> None:
    """Register ``systemd`` on hookctl's subparsers."""
    systemd = sub.add_parser("systemd", help="run hookd as a socket-activated user service")
    actions = systemd.add_subparsers(dest="systemd_command", required=True)
    install = actions.add_parser(
        "install", help="write the user units (ExecStart: this interpreter -m hookd) and enable"
    )
    install.add_argument("--dry-run", action="store_true", help="print the units; write nothing")
    uninstall = actions.add_parser("uninstall", help="disable and remove the user units")
    for parser in (install, uninstall):
        parser.add_argument(
            "--no-enable",
            dest="enable",
            action="store_false",
            help="only write/remove the files; do not call systemctl",
        )
        parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    install.set_defaults(func=cmd_install)
    uninstall.set_defaults(func=cmd_uninstall)

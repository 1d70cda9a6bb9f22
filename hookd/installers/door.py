"""Whether the daemon serves the door ``hookctl claude install`` wires Claude Code to.

Installing points Claude Code's http hooks at ``127.0.0.1:PORT``; if nothing
listens there, every hook silently fails open — the worst outcome of an
install, because nothing looks wrong.  So install asks the running daemon
which port it serves, and when that is not the wired one it puts ``http_port``
into ``hookd.toml`` (the systemd unit and a plain ``hookd serve`` both read it)
and has the running daemon re-read it: the daemon opens the port at once
(:mod:`hookd.daemon.http_door`), no restart.  Whatever still leaves the door
unserved — no daemon, a port taken by another process, a ``--http-port`` flag
that overrides the file — is one line saying what to do, and an error.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hookd.dirs import config_dir
from hookd.safe_files import write_atomically, write_destination
from hookd_client import sockpath
from hookd_client.client import Client, DaemonError, DaemonUnavailable

__all__ = [
    "DoorCheck",
    "check_door",
    "check_socket_door",
    "configured_port",
    "default_http_socket",
    "served_port",
    "settings_file",
]

DoorState = Literal["serving", "not_running", "other_port", "failed", "unknown"]


@dataclass(frozen=True)
class DoorCheck:
    state: DoorState
    line: str
    """One line for the user: what is true now and what (if anything) to do."""
    pid: int | None = None
    configured: Path | None = None
    """``hookd.toml`` when this check wrote ``http_port`` into it."""

    @property
    def ok(self) -> bool:
        return self.state == "serving"


def settings_file() -> Path:
    return config_dir() / "hookd.toml"


def configured_port(path: Path | None = None) -> int | None:
    """``http_port`` from ``hookd.toml``; None when unset, absent or unreadable."""
    try:
        data = tomllib.loads((path or settings_file()).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    port = data.get("http_port")
    return port if isinstance(port, int) and not isinstance(port, bool) else None


def default_http_socket(daemon_socket: str | None, path: Path | None = None) -> str:
    """Where the daemon serves its http socket: ``http_socket_path`` from hookd.toml,
    else ``http.sock`` beside the daemon's socket (the one given, else its default)."""
    try:
        data = tomllib.loads((path or settings_file()).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        data = {}
    configured = data.get("http_socket_path")
    if isinstance(configured, str) and configured:
        return str(Path(configured).expanduser())
    base = Path(daemon_socket) if daemon_socket else Path(sockpath.default_socket_path())
    return str(base.parent / "http.sock")


def check_socket_door(http_socket: str, socket: str | None) -> DoorCheck:
    """Ask the daemon whether it serves ``http_socket`` (the mod's door)."""
    try:
        with Client(socket, name="hookctl", retries=0, timeout=5.0) as client:
            status = client.status()
    except DaemonUnavailable:
        return DoorCheck(
            "not_running",
            f"hookd is not running: start it (`hookd serve`) — it will serve {http_socket}; "
            "until then the mod's events fail open",
        )
    except (DaemonError, OSError) as exc:
        return DoorCheck("unknown", f"could not ask hookd which http socket it serves: {exc}")
    pid = status.get("pid")
    serving = status.get("http_socket")
    if serving == http_socket:
        return DoorCheck(
            "serving", f"hookd (pid {pid}) serves {http_socket}: Claude Code's mod reaches it", pid
        )
    now = "no http socket" if serving is None else str(serving)
    return DoorCheck(
        "other_port",
        f"hookd (pid {pid}) serves {now}, not {http_socket}: set http_socket_path (or "
        "http_socket = true) in hookd.toml and restart it, or install with --http-socket",
        pid,
    )


def served_port(socket: str | None) -> int | None:
    """The http port the running daemon serves (None: none, or no daemon): what install
    wires when neither ``--port`` nor ``hookd.toml`` names one — a daemon started with
    ``--http-port`` is then used as it is, not asked for another port its flag forbids."""
    try:
        with Client(socket, name="hookctl", retries=0, timeout=5.0) as client:
            port = client.status().get("http_port")
    except (DaemonUnavailable, DaemonError, OSError):
        return None
    return port if isinstance(port, int) and port > 0 else None


def _configure(port: int, dry_run: bool) -> Path | None:
    """Put ``http_port = PORT`` into hookd.toml unless it already says so.

    A top-level key goes first in the file (TOML requires top-level keys
    before any table); an ``http_port`` the user set to another port is not
    overwritten — the caller reports the mismatch instead.
    """
    path = settings_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if configured_port(path) is not None or "http_port" in text:
        return None
    if dry_run:
        return path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = write_destination(path, None)  # a dotfile link stays a link
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    line = f"http_port = {port}  # Claude Code's hooks (hookctl claude install)\n"
    write_atomically(target, line + text, mode)
    return path


def _serving_after_reload(client: Client, port: int, timeout: float = 10.0) -> dict[str, Any]:
    """Have the daemon re-read its settings (``hookd.toml``'s ``http_port``), then wait for
    its door to open the port — or to say why it cannot: the settings unreadable, another
    port wanted (a flag beats the file), the port not bound (``http_error``)."""
    client.reload()
    deadline = time.monotonic() + timeout
    while True:
        status = client.status()
        settled = (
            status.get("http_port") == port
            or status.get("settings_error")
            or status.get("http_wanted") != port
            or status.get("http_error")
        )
        if settled or time.monotonic() > deadline:
            return status
        time.sleep(0.02)


def check_door(port: int, socket: str | None, *, dry_run: bool = False) -> DoorCheck:
    """Ask the daemon which http port it serves; when it is not ``port``, put ``port``
    into ``hookd.toml`` and have the running daemon re-read it (it opens the port without
    a restart).  Anything but "serving" means Claude Code's hooks fail open: an error."""
    url = f"http://127.0.0.1:{port}"
    try:
        with Client(socket, name="hookctl", retries=0, timeout=5.0) as client:
            status = client.status()
            # Also when the port is served now (by a --http-port flag, say): the next
            # start must serve it too, or the wiring breaks at the first restart.
            configured = _configure(port, dry_run)
            if status.get("http_port") != port:
                if dry_run:
                    return _would_open(status, port, url)
                status = _serving_after_reload(client, port)
    except DaemonUnavailable:
        configured = _configure(port, dry_run)
        where = f"http_port = {port} in {settings_file()}"
        return DoorCheck(
            "not_running",
            f"hookd is not running, so Claude Code's hooks fail open until it is: start it "
            f"(`hookd serve`, or `hookctl systemd install`) — it will serve {url} ({where})",
            configured=configured,
        )
    except (DaemonError, OSError) as exc:
        return DoorCheck("unknown", f"could not ask hookd which port it serves: {exc}")
    pid = status.get("pid")
    serving = status.get("http_port")
    if serving == port:
        return DoorCheck(
            "serving", f"hookd (pid {pid}) serves {url}: Claude Code's hooks run through it", pid
        )
    if status.get("settings_error"):
        return DoorCheck(
            "failed",
            f"hookd (pid {pid}) cannot read {status['settings_error']}: fix it, then "
            "`hookctl reload`; until then Claude Code's hooks fail open",
            pid,
            configured,
        )
    if status.get("http_error"):
        return DoorCheck(
            "failed",
            f"hookd (pid {pid}) {status['http_error']}: Claude Code's hooks fail open until it "
            f"can (free the port, then `hookctl reload`; or install with --port)",
            pid,
            configured,
        )
    now = "no http endpoint" if serving is None else f"port {serving}"
    if configured_port() not in (None, port):
        fix = f"{settings_file()} sets http_port = {configured_port()}: make it {port}"
    else:
        fix = (
            "it was started with --http-port or --config, which hookd.toml does not "
            "override: restart it without (`hookctl stop`, then `hookd serve`)"
        )
    return DoorCheck(
        "other_port",
        f"hookd (pid {pid}) serves {now}, not {url}, so Claude Code's hooks fail open: {fix}",
        pid,
        configured,
    )


def _would_open(status: dict[str, Any], port: int, url: str) -> DoorCheck:
    pid = status.get("pid")
    serving = status.get("http_port")
    now = "no http endpoint" if serving is None else f"port {serving}"
    return DoorCheck(
        "other_port",
        f"hookd (pid {pid}) serves {now}: install will put http_port = {port} into "
        f"{settings_file()} and have it open {url}",
        pid,
    )

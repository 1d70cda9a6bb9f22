"""systemd integration without libsystemd: socket activation and sd_notify.

* Socket activation: when systemd passes ``LISTEN_FDS`` (for our pid), fd 3 is
  the already-listening Unix socket of ``hookd.socket``; we adopt it instead
  of binding, so clients that connect before the daemon is up simply wait.
* Notify: ``READY=1`` once serving, ``RELOADING=1`` / ``READY=1`` around a
  reload, ``STOPPING=1`` on shutdown, and ``WATCHDOG=1`` every half of
  ``WATCHDOG_USEC`` — sent as datagrams to ``$NOTIFY_SOCKET`` (a path, or an
  abstract name starting with ``@``), which is all sd_notify(3) does.
"""

from __future__ import annotations

import os
import socket
import time

import structlog
import trio

__all__ = ["listen_fds", "notify", "watchdog_interval", "watchdog_loop"]

log = structlog.get_logger("hookd.systemd")

SD_LISTEN_FDS_START = 3


def listen_fds() -> list[socket.socket]:
    """Sockets passed by systemd (and unset the variables so children don't see them)."""
    try:
        pid = int(os.environ.get("LISTEN_PID", "0"))
        count = int(os.environ.get("LISTEN_FDS", "0"))
    except ValueError:
        return []
    if pid != os.getpid() or count <= 0:
        return []
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(name, None)
    sockets = []
    for fd in range(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + count):
        os.set_inheritable(fd, False)
        sockets.append(socket.socket(fileno=fd))
    return sockets


def notify(state: str) -> bool:
    """Send one sd_notify message; False when not run under a notify-aware manager."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError as exc:
        log.warning("sd_notify failed", state=state, error=str(exc))
        return False
    return True


def reloading() -> None:
    usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    notify(f"RELOADING=1\nMONOTONIC_USEC={usec}")


def watchdog_interval() -> float | None:
    try:
        usec = int(os.environ.get("WATCHDOG_USEC", "0"))
        pid = int(os.environ.get("WATCHDOG_PID", str(os.getpid())))
    except ValueError:
        return None
    if usec <= 0 or pid != os.getpid():
        return None
    return usec / 1_000_000 / 2


async def watchdog_loop(interval: float) -> None:
    """Ping the watchdog from the event loop: if the loop wedges, systemd restarts us."""
    while True:
        notify("WATCHDOG=1")
        await trio.sleep(interval)

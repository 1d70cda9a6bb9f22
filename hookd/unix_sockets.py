"""Unix socket files: is anyone serving on this one?

The daemon's socket and its http socket are both bound at a path that a
crashed daemon may have left behind.  A leftover file nobody answers on is
safe to replace; one a live process answers on is not (a second daemon
would steal its clients).  Connecting is the only reliable test — the
file's existence says nothing — so both binders ask here.
"""

from __future__ import annotations

import socket
from pathlib import Path

__all__ = ["answers"]


def answers(path: Path) -> bool:
    """Does a process accept connections on the Unix socket at ``path`` (within 1 s)?"""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True

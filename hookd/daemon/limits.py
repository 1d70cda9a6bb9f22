"""What a connection may cost the daemon: how many, per peer, and how many buffered bytes.

Every connection costs a descriptor, a task and, while a frame is arriving, the
bytes of that frame.  Without limits a local peer could hold hundreds of idle
connections that never said ``hello``, or twenty unfinished 16 MiB frames
(issue 14: RSS 43 → 373 MB), and starve every agent session of the user.  The
limits here are counted synchronously on the loop thread, at accept and at
each frame header, so a burst cannot slip past a check between two awaits.

A refusal is always said, never a silent close: the peer gets an ``error``
frame whose code and message name the limit and the setting that sets it.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

from hookd.daemon.settings import DaemonSettings
from hookd_client import protocol

__all__ = ["BufferBudget", "ConnectionLimits", "LimitExceeded"]


class LimitExceeded(protocol.FrameError):
    """A connection went over a limit; ``code`` is the ``error`` frame's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class BufferBudget:
    """Bytes that all connections together may hold in frames still arriving.

    A frame larger than one read is reserved in full when its header arrives
    and released when it is complete (or the connection ends); one that does
    not fit in what is left is refused.  Small frames are not counted: they
    fit in one read, and the connection cap bounds how many there can be.
    """

    total: int
    used: int = 0

    def take(self, size: int) -> bool:
        if self.used + size > self.total:
            return False
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used = max(0, self.used - size)


class ConnectionLimits:
    """Open Unix-socket connections, all together and per peer process."""

    def __init__(self, settings: DaemonSettings) -> None:
        self.max_total = settings.max_connections
        self.max_per_pid = settings.max_connections_per_pid
        self.open = 0
        self.per_pid: collections.Counter[int] = collections.Counter()

    def admit(self, pid: int | None) -> str | None:
        """Count one more connection from ``pid``, or say why it is refused."""
        if self.open >= self.max_total:
            return (
                f"hookd already has {self.open} connections open "
                f"(setting max_connections = {self.max_total})"
            )
        if pid is not None and self.per_pid[pid] >= self.max_per_pid:
            return (
                f"process {pid} already has {self.per_pid[pid]} connections open "
                f"(setting max_connections_per_pid = {self.max_per_pid})"
            )
        self.open += 1
        if pid is not None:
            self.per_pid[pid] += 1
        return None

    def leave(self, pid: int | None) -> None:
        self.open -= 1
        if pid is not None:
            self.per_pid[pid] -= 1
            if self.per_pid[pid] <= 0:
                del self.per_pid[pid]

"""What a connection may cost the daemon: how many, per peer, and how many buffered bytes.

Every connection costs a descriptor, a task and, for a large frame, the bytes
of that frame and of the event it carries — until that event is answered.
Without limits a local peer could hold hundreds of idle connections that never
said ``hello``, or twenty unfinished 16 MiB frames (issue 14: RSS 43 → 373 MB),
and forty clients sending 8 MiB inputs took the daemon to 1.8 GB (issue 28):
the budget then counted frames only while they arrived, and each event's
copies (decoded input, the JSON its hooks read, the audit's) were free.  The
limits here are counted synchronously on the loop thread, at accept and at
each frame header, so a burst cannot slip past a check between two awaits.

A refusal is always said, never a silent close: the peer gets an ``error``
frame whose code and message name the limit and the setting that sets it.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

import trio

from hookd.daemon.settings import DaemonSettings
from hookd_client import protocol

__all__ = [
    "HELD_COPIES",
    "BufferBudget",
    "ConnectionLimits",
    "EventCharge",
    "LimitExceeded",
    "request_id_in",
]


class LimitExceeded(protocol.FrameError):
    """A connection went over a limit; ``code`` is the ``error`` frame's code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


HELD_COPIES = 3
"""What a large frame is charged, in multiples of its size: an event in flight holds
its input about this many times over — the decoded input, the JSON its hooks read
(one copy shared by all of them), and the frame or the relay's raw stdin while it is
decoded (``bench/big_inputs.py`` measures it)."""


@dataclass
class BufferBudget:
    """Bytes that large frames, and the events they carry, may hold all together.

    A frame larger than one read is charged ``HELD_COPIES`` times its size when
    its header arrives, and the charge is released when its request is answered
    (or the connection ends).  One that does not fit waits for the budget until
    ``wait`` seconds have passed, then is refused: its bytes are read and dropped
    as they come and the request gets ``error{busy}`` — the client's failure
    policy applies, and the connection goes on.  Small frames are not counted:
    they fit in one read, and the connection cap bounds how many there can be.
    """

    total: int
    wait: float = 0.0
    used: int = 0
    refused: int = 0
    """Frames refused for want of budget since the daemon started (``hookctl status``)."""
    outputs_cut: int = 0
    """Hook outputs cut short for want of budget (``truncated``) since the daemon started."""
    _freed: trio.Event = field(default_factory=trio.Event)

    def take(self, size: int) -> bool:
        if self.used + size > self.total:
            return False
        self.used += size
        return True

    def force(self, size: int) -> None:
        """Count ``size`` bytes held whether or not they fit: memory already spent (one
        large reply on its way out) that the next request must wait for."""
        self.used += size

    def give(self, size: int) -> None:
        if size:
            self.used = max(0, self.used - size)
            self._freed.set()
            self._freed = trio.Event()

    async def hold(self, size: int) -> int:
        """Charge a large frame (or http body) of ``size`` bytes for what its event will
        hold, waiting up to ``wait`` for room: the bytes charged — to :meth:`give` back
        once the request is answered — or 0 when it is refused."""
        charge = size * HELD_COPIES
        return charge if await self.take_by(charge, trio.current_time() + self.wait) else 0

    def refusal(self, size: int) -> str:
        """Why a ``size``-byte request was refused, naming the settings."""
        return (
            f"a {size}-byte request does not fit the daemon's memory budget: large "
            f"requests and their events in flight hold {self.used} of {self.total} bytes "
            f"(setting buffer_budget; each is charged {HELD_COPIES}x its size), and none "
            f"was freed within {self.wait:g} s (setting buffer_wait)"
        )

    async def take_by(self, size: int, deadline: float) -> bool:
        """Take ``size`` bytes, waiting for other requests to give some back until
        ``deadline`` (trio time); False (counted in ``refused``) when it passes."""
        if size <= self.total:
            with trio.move_on_at(deadline):
                while not self.take(size):
                    await self._freed.wait()
                return True
        self.refused += 1
        return False


class EventCharge:
    """One event's share of the budget for its hooks' output (``OutputBudget``): taken
    without waiting as the output arrives — no room, and the hook keeps no more of it —
    and given back, all of it, when the event is answered.  Output that arrives after
    that (a hook that went async) is not charged: ``async_max_running`` bounds it."""

    __slots__ = ("budget", "held", "open")

    def __init__(self, budget: BufferBudget) -> None:
        self.budget = budget
        self.held = 0
        self.open = True

    def take(self, size: int) -> bool:
        if not self.open:
            return True
        if not self.budget.take(size):
            self.budget.outputs_cut += 1
            return False
        self.held += size
        return True

    def close(self) -> None:
        self.open = False
        self.budget.give(self.held)
        self.held = 0


def request_id_in(prefix: bytes | bytearray) -> tuple[str | None, int | None]:
    """``(kind, id)`` of a request from the first bytes of its frame body, as far as
    they hold them.

    A refused frame is never decoded (it is dropped as it arrives), but its
    request should still get an ``error`` with its ``id`` — the clients match
    replies by it.  Every client encodes ``kind`` and then ``id`` first, so this
    reads a MessagePack map's leading scalar entries and stops at anything else.
    """
    reader = _Prefix(prefix)
    kind: str | None = None
    try:
        entries = reader.map_header()
        for _ in range(entries):
            key = reader.scalar()
            value = reader.scalar()
            if key == "kind" and isinstance(value, str):
                kind = value
            elif key == "id":
                if isinstance(value, int) and not isinstance(value, bool):
                    return kind, value
                return kind, None
    except (IndexError, ValueError, UnicodeDecodeError):
        pass
    return kind, None


class _Prefix:
    """Just enough of a MessagePack reader for :func:`request_id_in`."""

    _FIXED = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: -1, 0xD1: -2, 0xD2: -4, 0xD3: -8}
    _STR = {0xD9: 1, 0xDA: 2, 0xDB: 4}

    def __init__(self, data: bytes | bytearray) -> None:
        self.data = data
        self.at = 0

    def _take(self, count: int) -> bytes:
        if self.at + count > len(self.data):
            raise IndexError("the prefix ends here")
        chunk = bytes(self.data[self.at : self.at + count])
        self.at += count
        return chunk

    def map_header(self) -> int:
        first = self._take(1)[0]
        if 0x80 <= first <= 0x8F:
            return first & 0x0F
        if first in (0xDE, 0xDF):
            return int.from_bytes(self._take(2 if first == 0xDE else 4), "big")
        raise ValueError("not a map")

    def scalar(self) -> object:
        first = self._take(1)[0]
        if first <= 0x7F:
            return first
        if first >= 0xE0:
            return first - 0x100
        if 0xA0 <= first <= 0xBF:
            return self._take(first & 0x1F).decode()
        if first in self._STR:
            size = int.from_bytes(self._take(self._STR[first]), "big")
            return self._take(size).decode()
        if first in self._FIXED:
            width = self._FIXED[first]
            return int.from_bytes(self._take(abs(width)), "big", signed=width < 0)
        if first in (0xC0, 0xC2, 0xC3):
            return None if first == 0xC0 else first == 0xC3
        raise ValueError("not a scalar")


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

"""Non-blocking reads and writes on a raw descriptor, without trio's extra checkpoints.

trio's streams (``SocketStream``, ``FdStream``) try the system call first and
add a trip through the scheduler after every call.  On hookd's hot paths — a
client connection, a hook's pipes, a python worker's pipe — the peer has
usually sent nothing yet when we read, and the pipe or socket nearly always
takes a small write whole; each saved trip is tens of µs on these machines.
So those paths wait for readability *first* and then read once, and write
straight away, queueing only what did not fit.

Errors other than "would block" are the caller's to interpret (a reset client,
a dead worker, a hook that closed its stdin), so they propagate unchanged.
"""

from __future__ import annotations

import os

import trio

__all__ = ["read_when_ready", "write_nowait"]


async def read_when_ready(fd: int, size: int) -> bytes:
    """Wait until ``fd`` is readable, then read up to ``size`` bytes (b"" at EOF).

    Cancellation can only land in the wait, before a read, so no byte is ever
    lost to it: a later reader resumes exactly where this one stopped.
    """
    while True:
        await trio.lowlevel.wait_readable(fd)
        try:
            return os.read(fd, size)
        except BlockingIOError:
            continue  # woken without data (a spurious wake-up)


def write_nowait(fd: int, data: bytes | memoryview) -> int:
    """How much of ``data`` a non-blocking write to ``fd`` took right now (0 when full)."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0

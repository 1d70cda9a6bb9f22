"""Reading the process table from /proc: parents, sessions, states, start times, markers, pipes.

The kernel these daemons run on may lack ``/proc/<pid>/task/<tid>/children``
(``CONFIG_PROC_CHILDREN``), so ancestry comes from one pass over
``/proc/*/stat`` (:func:`snapshot`): every process's parent, process group,
session, state and start time.  A pass costs a few milliseconds on a busy
machine, so callers take one per decision, never one per process.

Start times (clock ticks since boot) make a ``(pid, start)`` pair name one
process for good: a pid the kernel reused for a newcomer has another start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "ProcInfo",
    "boot_ticks_now",
    "descendants",
    "info",
    "pipe_inodes",
    "run_marker",
    "snapshot",
]

CLK_TCK = os.sysconf("SC_CLK_TCK")


class ProcInfo(NamedTuple):
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    """``R``, ``S``, ``D``, ``T``, ``Z`` (a zombie: dead, not yet reaped) …"""
    start: int
    """Start time in clock ticks since boot."""


def _parse(pid: int, data: bytes) -> ProcInfo | None:
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    rest = data.rsplit(b")", 1)[-1].split()
    if len(rest) < 20:
        return None
    return ProcInfo(
        pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0].decode("ascii", "replace"),
        int(rest[19]),
    )  # fmt: skip


def info(pid: int) -> ProcInfo | None:
    """One process, or None when it is gone (a zombie is still there, state ``Z``)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return _parse(pid, f.read())
    except (OSError, ValueError):
        return None


def snapshot() -> dict[int, ProcInfo]:
    """Every process visible in /proc, by pid."""
    table: dict[int, ProcInfo] = {}
    for entry in os.scandir("/proc"):
        name = entry.name
        if not name.isdigit():
            continue
        proc = info(int(name))
        if proc is not None:
            table[proc.pid] = proc
    return table


def descendants(table: dict[int, ProcInfo], roots: Iterable[int]) -> set[int]:
    """Every process below ``roots`` in ``table`` (the roots themselves not included)."""
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def run_marker(pid: int) -> str | None:
    """The ``HOOKD_RUN_ID`` in a process's environment (None: none, or unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return None
    start = data.find(b"HOOKD_RUN_ID=")
    while start > 0 and data[start - 1] != 0:  # a match inside another variable
        start = data.find(b"HOOKD_RUN_ID=", start + 1)
    if start < 0:
        return None
    end = data.find(b"\0", start)
    return data[start + 13 : end if end >= 0 else len(data)].decode("ascii", "replace")


def pipe_inodes(pid: int) -> set[int]:
    """Inodes of the pipes a process holds open (``pipe:[N]`` in /proc/<pid>/fd)."""
    found: set[int] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("pipe:["):
            found.add(int(target[6:-1]))
    return found


def boot_ticks_now() -> int:
    """Now, in the unit and origin of :attr:`ProcInfo.start` (ticks since boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * CLK_TCK)

"""Processes as /proc shows them: the checks that hook-killing tests make."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["alive", "processes_with_env"]


def alive(pid: int) -> bool:
    """The process exists and has not ended.

    A zombie has ended: only its table entry waits for a reaper (an orphan's for
    init), so it counts as gone — ``os.kill(pid, 0)`` would still say alive.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def processes_with_env(marker: str) -> list[int]:
    """Live processes (other than this one) whose environment has the item ``marker``,
    e.g. ``RELIABILITY_MARK=<uuid>``: every process a hook started inherits it."""
    needle = marker.encode()
    found = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            data = Path(f"/proc/{entry.name}/environ").read_bytes()
        except OSError:
            continue
        if needle in data.split(b"\0") and alive(int(entry.name)):
            found.append(int(entry.name))
    return found

"""The daemon's own process: closed to hooks' debuggers, one session with them, big buffers freed.

**Not dumpable.**  Every hook runs as the daemon's user, and the kernel lets
a process trace another of the same uid: a hostile hook could ``ptrace`` the
daemon, or read ``/proc/<daemon>/mem``, and from there switch any guard off
(the trust store, the breaker, other sessions' answers).
``prctl(PR_SET_DUMPABLE, 0)`` makes the daemon's memory reachable only with
``CAP_SYS_PTRACE`` (root's, or a debugger given it on purpose).  The price:
the files of ``/proc/<daemon>/`` that are not world-readable (``environ``,
``fd/``, ``mem``, ``maps``) become root's, so another process of the user can
no longer list the daemon's descriptors — ``/proc/<daemon>/status`` (RSS) still
reads, and the daemon itself still reads its own entries (the kernel lets a
process into its own ``/proc``; ``hookctl status`` reports them).  Children are
not affected: ``execve`` makes every hook dumpable again.

**One session for the daemon and its hooks.**  Embedded in another program (tests,
a library user), the daemon cannot know every child its host starts, so each hook
starts a new session: no descendant of a hook can join the host's back, and the
subreaper tells the host's children from adopted orphans by session
(:mod:`hookd.subreaper`).  But every new session is also a new scheduling group
where the kernel groups sessions (``sched_autogroup``, the default on most
distributions), and on busy cores a new group's first child waits ~3× longer for
a CPU: 5.9 against 1.9 ms for ``/bin/true`` beside two CPU hogs
(docs/performance.md, "Parallel spawns").  ``hookd serve`` starts every child of
its own process itself and registers it, so there the session is not needed to
tell them apart: each hook gets a process group of its own in the daemon's
session — as node and Rust agents start theirs, in the agent's.  Except when the
daemon has a controlling terminal (run in the foreground of a shell): a hook in
that session could read it or take its foreground, so there each hook keeps a
session of its own; and except a Python hook that may run warm, which keeps one
either way (:func:`hookd.handlers.spawn.session_flags`).

**Big buffers go back to the system.**  An 8 MiB event input is a handful of
8 MiB allocations (the frame, its decoded copy, the JSON each hook reads).
glibc raises its mmap threshold each time such a block is freed, so the next
ones come from the heap, where freed memory stays: after a burst of big inputs
the daemon kept 1.5 GB it no longer used (``bench/big_inputs.py``).  A fixed
threshold (glibc's default, 128 KiB — setting it turns the dynamic raise off)
serves every large block by ``mmap``, returned to the system the moment it is
freed.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

import structlog

from hookd.subreaper import SUBREAPER

__all__ = [
    "MMAP_THRESHOLD",
    "dumpable",
    "forbid_tracing",
    "open_fds",
    "return_big_buffers",
    "rss_kb",
    "set_up",
    "share_session_with_hooks",
]

log = structlog.get_logger("hookd.process")

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024
"""Blocks this large or larger are served by ``mmap`` and unmapped when freed."""


def _libc_function(name: str) -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn: Callable[..., int] = getattr(libc, name)
    except (OSError, AttributeError):
        return None
    return fn


def forbid_tracing() -> bool:
    """Make this process non-dumpable (no ptrace, no ``/proc/<pid>/mem`` for its own
    uid without ``CAP_SYS_PTRACE``); False where the kernel or libc refuses."""
    prctl = _libc_function("prctl")
    if prctl is None or prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        errno = ctypes.get_errno() if prctl is not None else None
        log.warning("cannot make the daemon non-dumpable: hooks may trace it", errno=errno)
        return False
    return True


def dumpable() -> bool | None:
    """Whether this process may be traced by its own uid (None: cannot tell)."""
    prctl = _libc_function("prctl")
    if prctl is None:
        return None
    state = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    return None if state < 0 else state != 0


def rss_kb() -> int:
    """Resident memory now, in KiB (0 where ``/proc`` has none)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def open_fds() -> int:
    """Descriptors open now (-1 where ``/proc`` cannot tell): read by the daemon itself,
    since a non-dumpable process's ``fd/`` is closed to the rest of its user."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def return_big_buffers() -> bool:
    """Fix glibc's mmap threshold (see the module docstring); False without glibc."""
    mallopt = _libc_function("mallopt")
    if mallopt is None or mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) != 1:
        log.info("mallopt unavailable: freed big buffers may stay in the heap")
        return False
    return True


def share_session_with_hooks() -> bool:
    """Start hooks in this process's session, each in a process group of its own
    (see the module docstring); False, and a new session per hook as before, where
    this process has a controlling terminal."""
    try:
        terminal = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        SUBREAPER.hooks_share_session = True
        return True
    os.close(terminal)
    log.info("a controlling terminal: every hook starts a session of its own")
    return False


def set_up() -> None:
    """What ``hookd serve`` does to its own process before serving."""
    forbid_tracing()
    return_big_buffers()
    share_session_with_hooks()

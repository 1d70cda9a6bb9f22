"""Start a hook process from the event loop's own thread, and wait for it on a pidfd.

Why not ``trio.lowlevel.open_process``: it runs ``subprocess.Popen`` in a
worker thread so that a slow ``fork`` cannot stall the loop.  But CPython
holds the GIL through ``vfork`` + ``exec`` anyway, so the loop gains nothing
while it waits, and the hop to the thread and back costs 0.15–0.4 ms per hook
on these machines (measured interleaved: ``bench/`` row 4, docs/performance.md)
— a fifth of the cost of running a ``cat`` hook.  Here ``Popen`` is called
directly; its pipes become :class:`trio.lowlevel.FdStream` objects and the
exit is awaited on a pidfd, all public trio API.

The object quacks like the parts of ``trio.Process`` that hookd uses (``pid``,
``returncode``, ``stdin``/``stdout``/``stderr``, ``wait``), so
:func:`hookd.handlers.process.kill_tree` serves both.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import trio
from trio.lowlevel import RunVar

from hookd.subreaper import SUBREAPER

__all__ = ["HookProcess", "spawn", "spawn_turn"]

_POLL_INTERVAL = 0.005
"""Where there is no pidfd (not Linux ≥ 5.3), how often ``wait`` polls."""


class HookProcess:
    """A child with three pipes, reaped exactly once."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: trio.lowlevel.FdStream,
        stdout: trio.lowlevel.FdStream,
        stderr: trio.lowlevel.FdStream,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin: trio.lowlevel.FdStream | None = stdin
        self.stdout: trio.lowlevel.FdStream | None = stdout
        self.stderr: trio.lowlevel.FdStream | None = stderr
        self._pidfd: int | None = None
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            try:
                self._pidfd = pidfd_open(self.pid)
            except OSError:
                self._pidfd = None  # an old kernel: fall back to polling
        self._exited: trio.Event | None = None
        """Set once reaped; exists while some task watches the pidfd."""

    @property
    def returncode(self) -> int | None:
        """The exit status once reaped; ``-N`` when killed by signal N (as Popen)."""
        return self._popen.returncode

    async def wait(self) -> int:
        """Wait for the exit and reap.  Several tasks may wait: one watches the pidfd,
        the others wait for it (no lock — a lock would cost every hook a trip through
        the scheduler even when nobody else waits)."""
        while self._popen.returncode is None:
            if self._exited is not None:
                await self._exited.wait()
                continue  # the watcher may have been cancelled: check, maybe take over
            exited = self._exited = trio.Event()
            try:
                if self._pidfd is not None:
                    await trio.lowlevel.wait_readable(self._pidfd)
                else:
                    while self._popen.poll() is None:
                        await trio.sleep(_POLL_INTERVAL)
                self._popen.wait()  # exited: reaps without blocking
                SUBREAPER.waited(self.pid)
                self._close_pidfd()
            finally:
                self._exited = None
                exited.set()
        return self._popen.returncode

    def close_pipes(self) -> None:
        """Close our ends of its pipes now (a retired warm spare: nothing more to say)."""
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()

    def kill_now(self) -> None:
        """SIGKILL it if it has not been reaped (shutdown: a spare that did not exit)."""
        if self._popen.returncode is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass

    def reap_now(self) -> bool:
        """Reap it without waiting; True once it is reaped."""
        if self._popen.returncode is None and self._popen.poll() is None:
            return False
        SUBREAPER.waited(self.pid)
        self._close_pidfd()
        return True

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class _Turn:
    def __init__(self) -> None:
        self.lock = trio.Lock()
        self.last_end = -1.0


_SAME_PASS = 0.0002
"""Two starts closer than this (seconds) are taken to be in one scheduler pass."""

_TURN: RunVar[_Turn] = RunVar("hookd_spawn_turn")


@asynccontextmanager
async def spawn_turn() -> AsyncIterator[None]:
    """Hold while starting a process: one start per pass of the scheduler.

    ``spawn`` blocks the loop for the whole ``vfork`` + ``exec`` (a few hundred
    µs).  Eight hooks of one event all become runnable together, and trio runs
    every runnable task before it looks at the sockets again — so without
    turns, eight starts in a row (several ms) would sit in front of every other
    session's event.  Taking turns puts an I/O poll between two starts; a lone
    start (the common case) goes straight ahead.
    """
    try:
        turn = _TURN.get()
    except LookupError:
        turn = _Turn()
        _TURN.set(turn)
    if turn.lock.locked() or trio.current_time() - turn.last_end < _SAME_PASS:
        # Another start just happened, most likely in this very pass: start in a
        # later one, queued behind whoever waits already (acquiring always yields).
        async with turn.lock:
            try:
                yield
            finally:
                turn.last_end = trio.current_time()
        return
    try:
        yield
    finally:
        turn.last_end = trio.current_time()


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
) -> HookProcess:
    """Start ``argv`` in a new session with piped stdin/stdout/stderr.

    ``pass_fds``: descriptors the child keeps, at the same numbers (a warm spare's
    control socket). Raises OSError when it cannot start (missing program, bad cwd);
    no descriptor is left open then.
    """
    fds: list[int] = []
    try:
        in_r, in_w = os.pipe()
        fds += (in_r, in_w)
        out_r, out_w = os.pipe()
        fds += (out_r, out_w)
        err_r, err_w = os.pipe()
        fds += (err_r, err_w)
        popen = subprocess.Popen(
            list(argv),
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    for fd in (in_r, out_w, err_w):  # the child's ends
        os.close(fd)
    # Before any checkpoint: the subreaper's sweep must never take it for an orphan.
    SUBREAPER.spawned(popen.pid)
    return HookProcess(
        popen,
        trio.lowlevel.FdStream(in_w),
        trio.lowlevel.FdStream(out_r),
        trio.lowlevel.FdStream(err_r),
    )

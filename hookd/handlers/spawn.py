"""Start a hook process, and wait for it on a pidfd.

Why not ``trio.lowlevel.open_process``: it runs ``subprocess.Popen`` in a
worker thread for every process, and the hop to the thread and back costs
0.15–0.4 ms per hook on these machines (measured interleaved: ``bench/`` row 4,
docs/performance.md) — a fifth of the cost of running a ``cat`` hook.  Here a
lone start calls ``Popen`` directly on the loop; only starts that come together
(the hooks of one event, several sessions' events) go to worker threads, where
their waits for ``exec`` overlap (:func:`start_hook`).  The pipes become
:class:`trio.lowlevel.FdStream` objects and the exit is awaited on a pidfd, all
public trio API.

The object quacks like the parts of ``trio.Process`` that hookd uses (``pid``,
``returncode``, ``stdin``/``stdout``/``stderr``, ``wait``), so
:func:`hookd.handlers.process.kill_tree` serves both.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

import trio
from trio.lowlevel import RunVar

from hookd.subreaper import SUBREAPER

__all__ = ["HookProcess", "spawn", "start_hook"]

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


class _Starts:
    def __init__(self) -> None:
        self.off_loop = 0
        """Starts running in worker threads now."""
        self.last_end = -1.0
        self.threads = trio.CapacityLimiter(_THREADS)


_SAME_PASS = 0.0002
"""Two starts closer than this (seconds) are taken to be in one scheduler pass."""

_THREADS = 4
"""At most this many starts at once off the loop (more do not start sooner on a few cores)."""

_STARTS: RunVar[_Starts] = RunVar("hookd_spawn_starts")


async def start_hook(
    argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str]
) -> HookProcess:
    """:func:`spawn`, on the loop when it is the only start, else in a worker thread.

    ``spawn`` waits for the child's ``exec`` (``vfork``): a few hundred µs on a
    quiet box, and 1–3 ms once the cores are busy, the time the new child waits
    for a CPU.  On the loop that wait stops everything: eight hooks of one event
    started in a row held every other session's event for all eight waits, and
    the hooks themselves started one after the other.  ``fork_exec`` lets go of
    the GIL while it waits, so starts from worker threads overlap their waits and
    the loop keeps serving: every hook of an event starts at once, as an agent
    starts them.  A lone start (the common case) stays on the loop — the trip to
    a thread and back costs more than it saves there.  Measured in
    ``bench/parallel_spawns.py`` (docs/performance.md, "Parallel spawns").

    Off the loop, the thread runs ``Popen`` and nothing else: the pipes are made
    here, the start is announced to the subreaper before it leaves (its sweeps and
    kills must not take the unregistered child for an orphan), and the child is
    registered here when the thread is back.  A cancellation meanwhile waits for
    the thread (``abandon_on_cancel`` stays False): the child is then registered
    and returned like any other, and the caller's first checkpoint — inside its
    kill-on-cancel ``finally`` (:func:`hookd.handlers.process.run_process_capped`)
    — kills its tree; a cancellation before the thread began starts nothing.
    """
    try:
        starts = _STARTS.get()
    except LookupError:
        starts = _Starts()
        _STARTS.set(starts)
    if not starts.off_loop and trio.current_time() - starts.last_end >= _SAME_PASS:
        try:
            return spawn(argv, cwd=cwd, env=env)
        finally:
            starts.last_end = trio.current_time()
    starts.off_loop += 1
    try:
        return await _start_in_thread(argv, cwd, env, starts.threads)
    finally:
        starts.off_loop -= 1
        starts.last_end = trio.current_time()


async def _start_in_thread(
    argv: Sequence[str], cwd: str | None, env: Mapping[str, str], limiter: trio.CapacityLimiter
) -> HookProcess:
    pipes = _Pipes()
    announced = SUBREAPER.starting(pipes.all)
    popen: subprocess.Popen[bytes] | None = None
    try:
        popen = await trio.to_thread.run_sync(
            lambda: _popen(argv, cwd, env, pipes, ()), limiter=limiter
        )
    except BaseException:
        pipes.close_all()
        raise
    finally:
        SUBREAPER.settled(announced, popen.pid if popen is not None else None)
    return pipes.process(popen)


class _Pipes:
    """The three pipes of a child: made before it starts, closed on every failure."""

    def __init__(self) -> None:
        self.all: list[int] = []
        try:
            for _ in range(3):
                self.all += os.pipe()
        except BaseException:
            self.close_all()
            raise
        self.in_r, self.in_w, self.out_r, self.out_w, self.err_r, self.err_w = self.all

    def close_all(self) -> None:
        for fd in self.all:
            os.close(fd)
        self.all = []

    def process(self, popen: subprocess.Popen[bytes]) -> HookProcess:
        """The started child's :class:`HookProcess`: the child's ends are closed here."""
        for fd in (self.in_r, self.out_w, self.err_w):
            os.close(fd)
        return HookProcess(
            popen,
            trio.lowlevel.FdStream(self.in_w),
            trio.lowlevel.FdStream(self.out_r),
            trio.lowlevel.FdStream(self.err_r),
        )


def _popen(
    argv: Sequence[str],
    cwd: str | None,
    env: Mapping[str, str],
    pipes: _Pipes,
    pass_fds: Sequence[int],
) -> subprocess.Popen[bytes]:
    """Only ``Popen``: safe in a worker thread.  ``close_fds`` keeps another hook's
    pipes, made meanwhile on the loop, out of this child."""
    return subprocess.Popen(
        list(argv),
        stdin=pipes.in_r,
        stdout=pipes.out_w,
        stderr=pipes.err_w,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
) -> HookProcess:
    """Start ``argv`` in a new session with piped stdin/stdout/stderr, from the loop.

    ``pass_fds``: descriptors the child keeps, at the same numbers (a warm spare's
    control socket). Raises OSError when it cannot start (missing program, bad cwd);
    no descriptor is left open then.
    """
    pipes = _Pipes()
    try:
        popen = _popen(argv, cwd, env, pipes, pass_fds)
    except BaseException:
        pipes.close_all()
        raise
    # Before any checkpoint: the subreaper's sweep must never take it for an orphan.
    SUBREAPER.spawned(popen.pid)
    return pipes.process(popen)

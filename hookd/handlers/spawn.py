"""Start a hook process, and wait for it on a pidfd.

Why not ``trio.lowlevel.open_process``: it runs ``subprocess.Popen`` in a
worker thread for every process, and the hop to the thread and back costs
0.15–0.4 ms per hook on these machines (measured interleaved: ``bench/`` row 4,
docs/performance.md) — a fifth of the cost of running a ``cat`` hook.  Here a
lone start starts its child directly on the loop; only starts that come together
(the hooks of one event, several sessions' events) go to worker threads, where
their waits for ``exec`` overlap (:func:`start_hook`).  The pipes become
:class:`trio.lowlevel.FdStream` objects and the exit is awaited on a pidfd, all
public trio API.

The object quacks like the parts of ``trio.Process`` that hookd uses (``pid``,
``returncode``, ``stdin``/``stdout``/``stderr``, ``wait``), so
:func:`hookd.handlers.process.kill_tree` serves both.

Why not ``subprocess.Popen`` either: around the one call that starts the child
(``_posixsubprocess.fork_exec``, the ``vfork``/``exec`` itself) it spends ~80 µs
of Python per start here — argument checks, a lock, the environment copied and
encoded key by key, handles it does not need — as much as the start (measured,
docs/performance.md "Parallel spawns").  :func:`_fork_exec` calls
``fork_exec`` as ``Popen`` does, with the same arguments and the same report
of a failed ``exec`` (an ``OSError`` with its errno, the program or the
working directory as its file name); :class:`_Child` is the part of ``Popen``
left (``pid``, ``returncode``, ``poll``, ``wait``).  Where the interpreter is
not one whose ``fork_exec`` this was written against (3.11–3.13), ``Popen``.
"""

from __future__ import annotations

import _posixsubprocess
import builtins
import functools
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import structlog
import trio
from trio.lowlevel import RunVar

from hookd.fdio import write_nowait
from hookd.subreaper import SUBREAPER, Start

if TYPE_CHECKING:
    import outcome  # trio's own dependency: only its type is named here

__all__ = ["HookProcess", "session_flags", "session_options", "spawn", "start_hook"]

log = structlog.get_logger("hookd.spawn")

_POLL_INTERVAL = 0.005
"""Where there is no pidfd (not Linux ≥ 5.3), how often ``wait`` polls."""


class _Started(Protocol):
    """What a started child offers: :class:`_Child`, or ``Popen`` where there is no lean path."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


class _Child:
    """A child started by :func:`_fork_exec`: ``Popen``'s ``pid``/``returncode``/``poll``/``wait``,
    with ``Popen``'s reading of a wait status (``-N`` for signal N, and 0 when somebody
    else reaped it — ``ECHILD`` — as ``Popen`` reports it)."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            self._reap(0)
        return self.returncode

    def _reap(self, options: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, options)
        except ChildProcessError:
            pid, status = self.pid, 0  # reaped by somebody else: Popen says 0 too
        except InterruptedError:
            return
        if pid == self.pid:
            self.returncode = (
                -os.WSTOPSIG(status) if os.WIFSTOPPED(status) else os.waitstatus_to_exitcode(status)
            )


class HookProcess:
    """A child with three pipes, reaped exactly once."""

    def __init__(
        self,
        popen: _Started,
        stdin: trio.lowlevel.FdStream | None,
        stdout_fd: int,
        stderr_fd: int,
        stdin_rest: memoryview | None = None,
        pipe_inodes: frozenset[int] | None = None,
    ) -> None:
        self._popen = popen
        self.pipe_inodes = pipe_inodes
        """The inodes of its stdout and stderr pipes, when the start looked them up."""
        self.pid = popen.pid
        self.stdin: trio.lowlevel.FdStream | None = stdin
        """Our end of its stdin; None when all of its input was written before it started."""
        self.stdin_rest = stdin_rest
        """What of the input given to the start did not fit in the pipe (still to write)."""
        self._out = _ReadEnd(stdout_fd)
        self._err = _ReadEnd(stderr_fd)
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
    def stdout_fd(self) -> int:
        """Our end of its stdout pipe (-1 once closed), read where its pidfd is watched."""
        return self._out.fd

    @property
    def stderr_fd(self) -> int:
        return self._err.fd

    @property
    def stdout(self) -> trio.lowlevel.FdStream | None:
        """Our end of its stdout as a trio stream, made on first use (None once closed)."""
        return self._out.stream()

    @property
    def stderr(self) -> trio.lowlevel.FdStream | None:
        return self._err.stream()

    @property
    def pidfd(self) -> int | None:
        """The pidfd while it is not reaped (None: reaped, or no pidfd on this kernel)."""
        return self._pidfd

    def reap_exited(self) -> None:
        """Reap it now that its pidfd said it exited (the caller's own wait on the pidfd)."""
        self._popen.wait()  # exited: reaps without blocking
        SUBREAPER.waited(self.pid)
        self._close_pidfd()

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
                self.reap_exited()
            finally:
                self._exited = None
                exited.set()
        return self._popen.returncode

    def close_pipes(self) -> None:
        """Close our ends of its pipes now (a retired warm spare, a run that is over)."""
        if self.stdin is not None:
            self.stdin.close()
        self._out.close()
        self._err.close()

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


class _ReadEnd:
    """Our end of a child's output pipe: a descriptor, and a :class:`trio.lowlevel.FdStream`
    only where something reads it through trio (where there is no pidfd:
    :func:`hookd.handlers.process._supervise_tasks`).  Where the pidfd is watched, the
    pipe is read in the hook's epoll set as it reports data, and the stream's set-up (its
    descriptor made non-blocking, the original mode restored and trio told at the close)
    was four system calls a pipe for nothing (docs/performance.md, "Fourth pass: row
    5")."""

    __slots__ = ("_stream", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._stream: trio.lowlevel.FdStream | None = None

    def stream(self) -> trio.lowlevel.FdStream | None:
        if self._stream is None and self.fd >= 0:
            self._stream = trio.lowlevel.FdStream(self.fd)
        return self._stream

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
        elif self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def __del__(self) -> None:
        # The stream's own safety net, kept: a descriptor nobody closed goes with its owner.
        if self._stream is None and self.fd >= 0:
            os.close(self.fd)


class _Start:
    """One hook's start, asked for in a scheduler pass; carried out by whoever takes the pass."""

    __slots__ = ("argv", "cwd", "env", "error", "own_session", "process", "stdin")

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str],
        stdin: bytes | None,
        own_session: bool,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.stdin = stdin
        self.own_session = own_session
        self.process: HookProcess | None = None
        self.error: BaseException | None = None

    def result(self) -> HookProcess:
        if self.process is not None:
            return self.process
        raise self.error if self.error is not None else RuntimeError("the start was not made")


class _Pass:
    """The starts asked for in one scheduler pass (the hooks of an event, as a rule)."""

    __slots__ = ("finished", "starts", "taken", "waiting")

    def __init__(self) -> None:
        self.starts: list[_Start] = []
        self.taken = False
        """Some task took these starts to carry them out (no start leaves the list then)."""
        self.finished = False
        self.waiting: list[trio.lowlevel.Task] = []
        """The tasks of its other starts, until the pass is finished."""

    async def until_finished(self) -> None:
        """Until every start of the pass is made, whatever cancellation comes meanwhile
        (the caller meets it at its next checkpoint), as a shielded wait on an event
        would, without the cancel scope and the event: a shielded scope is ~10 % of a
        hook's supervision in the loop's time (docs/performance.md, "Fourth pass")."""
        if self.finished:
            return
        self.waiting.append(trio.lowlevel.current_task())
        await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.FAILED)

    def finish(self) -> None:
        self.finished = True
        for task in self.waiting:
            trio.lowlevel.reschedule(task)
        self.waiting = []


class _Starts:
    def __init__(self) -> None:
        self.off_loop = 0
        """Starts running in worker threads now."""
        self.forming: _Pass | None = None
        """The starts of the current scheduler pass, until one of their tasks takes them."""
        self.last_end = -1.0
        self.threads = trio.CapacityLimiter(_THREADS)


_SAME_PASS = 0.0002
"""Two starts closer than this (seconds) are taken to be in one scheduler pass."""

_THREADS = 4
"""At most this many worker-thread calls at once (more do not start sooner on a few cores)."""

_STARTS: RunVar[_Starts] = RunVar("hookd_spawn_starts")


async def start_hook(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    own_session: bool = False,
) -> HookProcess:
    """:func:`spawn`, on the loop when it is the only start, else in a worker thread.

    ``stdin``: the hook's input, written into its pipe before it starts (see :func:`spawn`).

    ``spawn`` waits for the child's ``exec`` (``vfork``): a few hundred µs on a
    quiet box, and 1–3 ms once the cores are busy, the time the new child waits
    for a CPU.  On the loop that wait stops everything: eight hooks of one event
    started in a row held every other session's event for all eight waits, and
    the hooks themselves started one after the other.  ``fork_exec`` lets go of
    the GIL while it waits, so starts from worker threads overlap their waits and
    the loop keeps serving: every hook of an event starts at once, as an agent
    starts them.  A lone start (the common case) stays on the loop — the trip to
    a thread and back costs more than it saves there.  Which is which is known
    after one scheduler pass: an event's hooks are started in one pass, so by its
    end all of them have arrived, and the first no longer starts on the loop while
    the others wait behind its ``exec``.  Measured in ``bench/parallel_spawns.py``
    (docs/performance.md, "Parallel spawns").

    The starts of one pass are carried out together by the first of their tasks
    to run again: dealt out over at most ``_THREADS`` worker-thread calls, each
    starting its share one after the other (eight hooks: four calls of two; five:
    one of two and three of one).  A trip to a thread and back — the limiter, the
    thread's wake-up, the result handed back through the loop's wake-up socket,
    the GIL changing hands — cost ~0.2 ms of the daemon's CPU per hook, more than
    the start itself; two starts per trip halve it, while fewer calls than four
    make the ``exec`` waits in a row cost more latency than they save CPU
    (docs/performance.md, "Third pass").

    Off the loop, the thread runs the starts (:func:`_popen`) and nothing else: the pipes are made
    here, each start is announced to the subreaper before it leaves (its sweeps and
    kills must not take the unregistered child for an orphan), and the children are
    registered here when the thread is back.  Once its pass is taken, a start is
    carried out whatever happens to its caller: a cancellation waits for it (as
    ``abandon_on_cancel=False`` does), the child is registered and returned like
    any other, and the caller's next checkpoint — inside its kill-on-cancel
    ``finally`` (:func:`hookd.handlers.process.run_process_capped`) — kills its
    tree.  A start whose cancellation reaches it before its pass is taken starts
    nothing (trio delivers a cancellation a pass late: in practice, a start alone in
    its pass).
    """
    try:
        starts = _STARTS.get()
    except LookupError:
        starts = _Starts()
        _STARTS.set(starts)
    batch = starts.forming
    if batch is None:
        batch = starts.forming = _Pass()
    start = _Start(argv, cwd, env, stdin, own_session)
    batch.starts.append(start)
    # One scheduler pass before choosing: the hooks of one event are started in one
    # pass, so by the end of it every one of them has arrived here, and none has to
    # go on the loop (holding the others back for its whole wait) just for being first.
    try:
        await trio.lowlevel.checkpoint()
    except trio.Cancelled:
        if not batch.taken:
            batch.starts.remove(start)
            raise
        # Another task took this start with its pass: it is being carried out.
        # The cancellation stands; the caller meets it at its next checkpoint.
    if not batch.taken:
        batch.taken = True
        if starts.forming is batch:
            starts.forming = None
        await _carry_out(batch, starts)
    else:
        await batch.until_finished()
    return start.result()


async def _carry_out(batch: _Pass, starts: _Starts) -> None:
    """Make every start of ``batch``: a lone one on the loop, else in worker threads."""
    try:
        jobs = batch.starts
        if not jobs:
            return  # every start of the pass was cancelled before it was taken
        lone = len(jobs) == 1 and not starts.off_loop
        if lone and trio.current_time() - starts.last_end >= _SAME_PASS:
            job = jobs[0]
            try:
                job.process = spawn(
                    job.argv,
                    cwd=job.cwd,
                    env=job.env,
                    stdin=job.stdin,
                    own_session=job.own_session,
                )
            except Exception as exc:
                job.error = exc
            finally:
                starts.last_end = trio.current_time()
            return
        await _start_in_threads(jobs, starts)
    finally:
        batch.finish()


async def _start_in_threads(jobs: list[_Start], starts: _Starts) -> None:
    """Deal ``jobs`` out over at most ``_THREADS`` worker-thread calls, each starting its
    share one after the other; pipes, announcements and registrations on the loop.

    One task and one trip back for the whole pass: the calls run side by side, and the
    last of them to finish hands every result back at once.  A task per call, in a
    nursery, each woken by a result of its own through the loop's wake-up socket, cost
    ~0.35 ms of the loop's time per 8-hook event (docs/performance.md, "Fourth pass: row
    5"); every hook of the pass waits for the whole pass either way."""
    made: list[tuple[_Start, _Pipes, Start]] = []
    for job in jobs:
        try:
            pipes = _Pipes()
        except Exception as exc:  # out of descriptors: this start fails, the others go on
            job.error = exc
            continue
        made.append((job, pipes, SUBREAPER.starting(inodes=pipes.inodes())))
    if not made:
        return
    starts.off_loop += len(made)
    shares: list[list[tuple[_Start, _Pipes, Start]]] = []
    results: list[list[_Started | Exception] | None] = []
    threads: list[object] = []
    try:
        threads = await _threads_for(min(len(made), _THREADS), starts.threads)
        calls = len(threads)
        shares = [made[first::calls] for first in range(calls)]
        results = [None] * calls
        results = await _in_worker_threads(
            [functools.partial(_start_all, [(j, p) for j, p, _ in share]) for share in shares],
            meanwhile=[functools.partial(_prefill, share) for share in shares],
        )
    finally:
        for thread in threads:
            starts.threads.release_on_behalf_of(thread)
        if not shares:  # not one thread call was made: nothing started
            shares, results = [made], [None]
        starts.off_loop -= len(made)
        starts.last_end = trio.current_time()
        for share, children in zip(shares, results, strict=True):
            for index, (job, pipes, announced) in enumerate(share):
                child = children[index] if children is not None else None
                if child is None or isinstance(child, Exception):
                    SUBREAPER.settled(announced, None)
                    pipes.close_all()
                    job.error = child
                else:
                    SUBREAPER.settled(announced, child.pid)
                    job.process = pipes.process(child)


def _prefill(share: list[tuple[_Start, _Pipes, Start]]) -> None:
    """Each start's input into its pipe while the thread starts them (announced before: a
    closed end has no inode)."""
    for job, pipes, _ in share:
        pipes.prefill(job.stdin)


async def _threads_for(wanted: int, limiter: trio.CapacityLimiter) -> list[object]:
    """Up to ``wanted`` of ``limiter``'s worker threads (its tokens, one borrower each):
    as many as are free now, or — none free — the first to come free.  Never a wait while
    holding some: a pass holds its threads until its last call is back, so two passes
    each holding some and waiting for more would wait for each other for ever."""
    taken: list[object] = []
    while len(taken) < wanted:
        borrower = object()
        try:
            limiter.acquire_on_behalf_of_nowait(borrower)  # a free thread: no pass first
        except trio.WouldBlock:
            if taken:
                break  # go with the threads we have: more starts per call
            with trio.CancelScope(shield=True):  # others' starts: never left half made
                await limiter.acquire_on_behalf_of(borrower)
        taken.append(borrower)
    return taken


async def _in_worker_threads(
    fns: list[Callable[[], list[_Started | Exception]]],
    *,
    meanwhile: list[Callable[[], None]],
) -> list[list[_Started | Exception] | None]:
    """Each of ``fns`` in a worker thread at once (the caller holds a limiter's token for
    each), as ``trio.to_thread.run_sync(fn)`` where nothing may cancel it, with the rest
    left out: no context copy, no renaming of the OS thread around the call (two ``prctl``
    calls), no cancellation plumbing (4.13 → 3.87 ms of the daemon's CPU per 8-hook
    event, four trips: docs/performance.md, "Third pass"), and one trip back through the
    loop's wake-up socket for all of them, made by the last to finish.  The same thread
    cache as ``to_thread``.  ``meanwhile[i]`` runs on the loop once ``fns[i]``'s thread has
    its work (it must not raise).  A call's result is None where it raised (not expected:
    each start catches its own failure), after the error is logged."""
    task = trio.lowlevel.current_task()
    token = trio.lowlevel.current_trio_token()
    outcomes: list[outcome.Outcome[list[_Started | Exception]] | None] = [None] * len(fns)
    left = [len(fns)]
    lock = threading.Lock()

    def deliver_as(index: int) -> Callable[[outcome.Outcome[list[_Started | Exception]]], None]:
        def deliver(result: outcome.Outcome[list[_Started | Exception]]) -> None:
            outcomes[index] = result  # in the worker thread
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                token.run_sync_soon(trio.lowlevel.reschedule, task)

        return deliver

    for index, fn in enumerate(fns):
        trio.lowlevel.start_thread_soon(fn, deliver_as(index))
        meanwhile[index]()
    await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.FAILED)
    results: list[list[_Started | Exception] | None] = []
    for result in outcomes:
        assert result is not None
        try:
            results.append(result.unwrap())
        except Exception as exc:  # its starts are failed; the other calls' stand
            log.error("a start in a worker thread raised", error=repr(exc))
            results.append(None)
    return results


def _start_all(jobs: list[tuple[_Start, _Pipes]]) -> list[_Started | Exception]:
    """In a worker thread: each start in turn, its failure its own."""
    children: list[_Started | Exception] = []
    for job, pipes in jobs:
        try:
            children.append(_popen(job.argv, job.cwd, job.env, pipes, (), job.own_session))
        except Exception as exc:
            children.append(exc)
    return children


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
        self.stdin_rest: memoryview | None = None
        self._inodes: tuple[int, int, int] | None = None

    def inodes(self) -> tuple[int, int, int]:
        """The three pipes' inodes (stdin, stdout, stderr), looked up once: the subreaper is
        told them when the start is announced and again when the run is tracked, and both
        ends of a pipe are one inode — three ``fstat`` calls a hook where eight were made
        (docs/performance.md, "Fourth pass: row 5")."""
        if self._inodes is None:
            self._inodes = (
                os.fstat(self.in_r).st_ino,
                os.fstat(self.out_r).st_ino,
                os.fstat(self.err_r).st_ino,
            )
        return self._inodes

    def prefill(self, data: bytes | None) -> None:
        """Write the child's input into its stdin pipe before it starts, closing our end
        when all of it fits (an event is far below the pipe's 64 KiB); what does not fit
        is kept in ``stdin_rest``, written as the child reads.  Nobody reads the pipe
        yet (or the child has only just started), so the write rarely wakes anybody, and
        the child finds its input ready, however long the other starts of its pass keep
        its task waiting: 7.46 → 7.31, 8.42 → 8.08, 10.17 → 8.86 ms p50 for eight `cat`
        hooks (docs/performance.md, "Third pass")."""
        if data is None:
            return
        try:
            os.set_blocking(self.in_w, False)
            sent = write_nowait(self.in_w, data) if data else 0
        except OSError:  # not expected (we hold the read end): written later, as before
            sent = 0
        if sent < len(data):
            self.stdin_rest = memoryview(data)[sent:]
            return
        os.close(self.in_w)
        self.all.remove(self.in_w)
        self.in_w = -1

    def close_all(self) -> None:
        for fd in self.all:
            os.close(fd)
        self.all = []

    def process(self, popen: _Started) -> HookProcess:
        """The started child's :class:`HookProcess`: the child's ends are closed here."""
        for fd in (self.in_r, self.out_w, self.err_w):
            os.close(fd)
        return HookProcess(
            popen,
            trio.lowlevel.FdStream(self.in_w) if self.in_w >= 0 else None,
            self.out_r,
            self.err_r,
            self.stdin_rest,
            None if self._inodes is None else frozenset(self._inodes[1:]),
        )


def _popen(
    argv: Sequence[str],
    cwd: str | None,
    env: Mapping[str, str],
    pipes: _Pipes,
    pass_fds: Sequence[int],
    own_session: bool = False,
) -> _Started:
    """Only the start: safe in a worker thread.  ``close_fds`` keeps another hook's
    pipes, made meanwhile on the loop, out of this child."""
    if _LEAN:
        return _fork_exec(list(argv), cwd, env, pipes, pass_fds, own_session)
    return subprocess.Popen(
        list(argv),
        stdin=pipes.in_r,
        stdout=pipes.out_w,
        stderr=pipes.err_w,
        cwd=cwd,
        env=dict(env),
        pass_fds=tuple(pass_fds),
        **session_options(own_session),
    )


_LEAN = (3, 11) <= sys.version_info[:2] <= (3, 13)
"""Whether ``fork_exec`` has the arguments :func:`_fork_exec` passes (CPython 3.11–3.13)."""


def _fork_exec(
    argv: list[str],
    cwd: str | None,
    env: Mapping[str, str],
    pipes: _Pipes,
    pass_fds: Sequence[int],
    own_session: bool,
) -> _Child:
    """``Popen(argv, stdin/stdout/stderr=pipes, cwd, env, start_new_session=True (or
    process_group=0: :func:`session_flags`), pass_fds, close_fds=True)``, without the
    rest of ``Popen``: the same
    ``fork_exec`` call (``vfork``, the GIL let go while the child ``exec``s), the
    program looked up on the hook's own PATH, and a failed ``exec`` raised as the
    same ``OSError``."""
    sys.audit("subprocess.Popen", argv[0], argv, cwd, env)
    if any("=" in key for key in env):
        raise ValueError("illegal environment variable name")
    env_list = [f"{key}={value}".encode(_FS_ENCODING, _FS_ERRORS) for key, value in env.items()]
    programs = _exec_candidates(argv[0], env.get("PATH"))
    err_r, err_w = os.pipe()
    while err_w < 3:  # never one of the child's stdio numbers (Popen does the same)
        low, err_w = err_w, os.dup(err_w)
        os.close(low)
    try:
        try:
            pid = _posixsubprocess.fork_exec(
                argv, programs, True, tuple(sorted({*map(int, pass_fds), err_w})),
                cwd,  # type: ignore[arg-type]  # None: stay where the daemon is, as Popen
                env_list,
                pipes.in_r, -1, -1, pipes.out_w, -1, pipes.err_w,
                err_r, err_w,
                True, *session_flags(own_session), None, None, None, -1,
                None,  # type: ignore[arg-type]  # no preexec_fn, as Popen passes it
                True,
            )  # fmt: skip
        finally:
            os.close(err_w)
        report = bytearray()
        while part := os.read(err_r, 50000):  # EOF at the exec (CLOEXEC), or its error
            report += part
            if len(report) > 50000:
                break
    finally:
        os.close(err_r)
    child = _Child(pid)
    if report:
        child.wait()
        raise _exec_error(bytes(report), argv[0], cwd)
    return child


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()
"""``os.fsencode``'s codec, called directly (an environment is ~40 encodes per start)."""


@functools.lru_cache(maxsize=256)
def _exec_candidates(program: str, path: str | None) -> tuple[bytes, ...]:
    """The files ``exec`` tries for ``program`` on ``path``, as ``Popen`` lists them.

    Once per program and PATH, not per start: ``os.get_exec_path`` sets up a
    ``warnings.catch_warnings`` block on every call, and the joins are ~10 µs a
    start for a PATH of ten directories.  Only strings go in, so nothing on disk
    is remembered: the child still looks at each file when it ``exec``s."""
    encoded = os.fsencode(program)
    if os.path.dirname(encoded):
        return (encoded,)
    search = os.get_exec_path({} if path is None else {"PATH": path})
    return tuple(os.path.join(os.fsencode(d), encoded) for d in search)


def session_options(own_session: bool = False) -> dict[str, Any]:
    """:func:`session_flags` as ``Popen``'s keywords: for a hook where there is no lean
    start (:func:`_popen`), and for the daemon's other children (python workers, launcher
    probes) — where hooks share the daemon's session, so do they."""
    call_setsid, pgid = session_flags(own_session)
    return {"start_new_session": call_setsid, "process_group": None if pgid < 0 else pgid}


def session_flags(own_session: bool = False) -> tuple[bool, int]:
    """``fork_exec``'s ``call_setsid`` and ``pgid_to_set``: a new session for each hook,
    or (``hookd serve``, :func:`hookd.daemon.own_process.share_session_with_hooks`) a
    process group of its own in the daemon's session.  Every new session is a new
    scheduling group where the kernel groups sessions (``sched_autogroup``), and on busy
    cores its first child waits ~3× longer for a CPU (docs/performance.md, "Parallel
    spawns"); a process group alone costs nothing.

    ``own_session``: a new session even so — a Python hook that may run warm
    (:mod:`hookd.handlers.warm_python`), warm or cold alike.  A warm spare waits for
    its run in a scheduling group of its own: in the daemon's it ran ~15 % slower,
    quiet and loaded (it and the daemon share one group's CPU), and the same hook
    must find the same session whichever way it starts."""
    if own_session or not SUBREAPER.hooks_share_session:
        return True, -1
    return False, 0


def _exec_error(report: bytes, program: str, cwd: str | None) -> BaseException:
    """The exception ``Popen`` raises for the child's report ``Name:hex errno:text``."""
    try:
        name, hex_errno, text = report.split(b":", 2)
        message = text.decode()
    except ValueError:
        return subprocess.SubprocessError(f"Bad exception data from child: {report!r}")
    kind = getattr(builtins, name.decode("ascii", "replace"), subprocess.SubprocessError)
    if isinstance(kind, type) and issubclass(kind, OSError) and hex_errno:
        number = int(hex_errno, 16)
        # "noexec" (3.11, 3.12) or "noexec:chdir" (3.13): it failed before exec, in chdir(cwd).
        before_exec = message in ("noexec", "noexec:chdir")
        filename = cwd if before_exec else program
        message = os.strerror(number) if number else ("" if before_exec else message)
        return kind(number, message, filename)
    if isinstance(kind, type) and issubclass(kind, BaseException):
        return kind(message)
    return subprocess.SubprocessError(message)


def spawn(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
    stdin: bytes | None = None,
    own_session: bool = False,
) -> HookProcess:
    """Start ``argv`` in a process group of its own (a new session, unless hooks share
    the daemon's: :func:`session_flags`) with piped stdin/stdout/stderr, from the loop.

    ``pass_fds``: descriptors the child keeps, at the same numbers (a warm spare's
    control socket). ``stdin``: its whole input, written before it starts (our end of
    the pipe is then closed, or ``stdin_rest`` holds what did not fit); None: the
    caller writes it. ``own_session``: a new session even where hooks share the
    daemon's (:func:`session_flags`). Raises OSError when it cannot start (missing
    program, bad cwd); no descriptor is left open then.
    """
    pipes = _Pipes()
    try:
        pipes.prefill(stdin)
        popen = _popen(argv, cwd, env, pipes, pass_fds, own_session)
    except BaseException:
        pipes.close_all()
        raise
    # Before any checkpoint: the subreaper's sweep must never take it for an orphan.
    SUBREAPER.spawned(popen.pid)
    return pipes.process(popen)

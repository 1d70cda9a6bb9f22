"""Spawn one hook process and guarantee that nothing of it outlives its deadline.

Claude Code signals only the direct child on timeout, so grandchildren
survive (its issues #24206, #86578).  hookd uses three nets, each catching
what the previous one misses:

1. every hook starts in a **process group of its own** (under ``hookd serve`` in
   the daemon's session, else in a new session: :func:`hookd.handlers.spawn.session_flags`),
   so ``killpg`` reaches the hook and everything it forks (double-forks too);
2. every hook's environment carries a unique ``HOOKD_RUN_ID``; at kill time
   ``/proc/*/environ`` is scanned for it, which finds descendants that called
   ``setsid`` themselves and left the group (the technique of Jenkins'
   ProcessTreeKiller);
3. the daemon is a **child subreaper** (:mod:`hookd.subreaper`): a descendant
   that both calls ``setsid`` and scrubs its environment is re-parented to the
   daemon when its parent exits, and is found by ancestry — the run's tree,
   snapshots of it taken while it ran, and the orphans adopted during the run;
4. kills go TERM → short grace → KILL, and the daemon reaps the child and the
   adopted orphans it killed.

Output is read with a byte cap while the pipe keeps draining: a hook that
writes 100 MB neither blocks on a full pipe nor grows the daemon's memory.

A hook may background itself by printing ``{"async": true}`` as its *first*
stdout line (Claude Code's output-level async).  When the caller passes an
``on_async_ack`` adopter, the runner stops waiting at that line and hands the
still-running process — with its pipes, what was read so far, and its run
marker — to the adopter as an :class:`AsyncHandoff`, which finishes it under
its own deadline in a nursery the adopter owns.  Nothing is killed at the
handoff; whoever holds the handoff owns the kill.
"""

from __future__ import annotations

import errno
import math
import os
import select
import signal
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec
import structlog
import trio

from hookd import proctree
from hookd.fdio import read_when_ready, write_nowait
from hookd.handlers.spawn import HookProcess, start_hook
from hookd.subreaper import SUBREAPER

__all__ = [
    "AsyncAdopter",
    "AsyncHandoff",
    "ExitReport",
    "OutputBudget",
    "ProcessResult",
    "kill_tree",
    "run_process_capped",
    "working_directory",
]

log = structlog.get_logger("hookd.process")

_CHUNK = 65536


@dataclass(slots=True)
class ProcessResult:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    truncated: bool
    timed_out: bool
    pid: int | None
    spawn_error: str | None = None
    spawn_exc: OSError | None = None
    """What ``spawn`` raised (its errno tells a missing program from a daemon out of processes)."""
    killed: int = 0
    """How many processes the kill found still alive (0 when it exited on its own)."""
    went_async: bool = False
    """The first stdout line was an async acknowledgement and an adopter took the process."""
    refused: str | None = None
    """The first stdout line was an async acknowledgement but the adopter refused it (why)."""


class OutputBudget(Protocol):
    """Room for a hook's output beyond its first 64 KiB per stream, in the daemon's buffer
    budget, for as long as its event is in flight (hookd/daemon/limits.py)."""

    def take(self, size: int) -> bool:
        """Charge ``size`` more bytes; False when there is no room (keep no more)."""
        ...


_FREE_OUTPUT = 65536
"""Bytes of each stream kept without asking the output budget (most hooks print less)."""


class _Capture:
    """One stream of a hook's output, kept up to ``cap`` — and, past its first 64 KiB,
    only while ``budget`` has room: a hundred events whose hooks each print their
    megabyte would otherwise hold it all at once, outside every limit."""

    def __init__(self, cap: int, budget: OutputBudget | None = None) -> None:
        self.cap = cap
        self.budget = budget
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.cap - self.size
        if room <= 0:
            self.truncated = True
            return
        if len(chunk) > room:
            chunk = chunk[:room]
            self.truncated = True
        charged = self.size + len(chunk) - max(self.size, _FREE_OUTPUT)
        if self.budget is not None and charged > 0 and not self.budget.take(charged):
            self.cap = self.size  # no room: keep what we have, drain and drop the rest
            self.truncated = True
            return
        self.parts.append(chunk)
        self.size += len(chunk)

    def value(self) -> bytes:
        return b"".join(self.parts)


class ExitReport(Protocol):
    """Where a process says its exit status before it has exited (a warm Python run,
    :mod:`hookd.handlers.warm_python`): its pipes are closed, only its teardown is left."""

    def fileno(self) -> int: ...

    def read(self, pid: int) -> int | None:
        """The status ``pid`` reported (None: nothing from it yet)."""
        ...


_FIRST_LINE_LIMIT = 8192
"""An acknowledgement is a short JSON line; longer first lines are ordinary output."""


class _FirstLine:
    """Watches stdout's first line for ``{"async": true, ...}`` (Claude Code's async ack)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.decided = False
        self.ack: dict[str, Any] | None = None
        self.line = b""

    def feed(self, chunk: bytes, capture: _Capture) -> bool:
        """Add ``chunk``; True once the first line turned out to be an acknowledgement.

        Bytes are held back from ``capture`` until the first line is decided, so
        that a handed-over hook's output does not start with its own ack.
        """
        if self.decided:
            capture.add(chunk)
            return False
        self.buffer += chunk
        newline = self.buffer.find(b"\n")
        if newline < 0 and len(self.buffer) <= _FIRST_LINE_LIMIT and chunk:
            return False
        end = newline if newline >= 0 else len(self.buffer)
        self.decided = True
        line = bytes(self.buffer[:end])
        rest = bytes(self.buffer[end + 1 :]) if newline >= 0 else b""
        self.buffer = bytearray()
        ack = _parse_ack(line)
        if ack is None:
            capture.add(line + (b"\n" if newline >= 0 else b""))
            if rest:
                capture.add(rest)
            return False
        self.ack, self.line = ack, line.strip()
        if rest:
            capture.add(rest)
        return True


def _parse_ack(line: bytes) -> dict[str, Any] | None:
    text = line.strip()
    if not text.startswith(b"{"):
        return None
    try:
        data = msgspec.json.decode(text)
    except (msgspec.DecodeError, UnicodeError, RecursionError):
        # Raw bytes here (not yet decoded with replacement): msgspec raises
        # UnicodeDecodeError for invalid UTF-8 and RecursionError for deep nesting.
        return None
    if isinstance(data, dict) and data.get("async") is True:
        return data
    return None


class AsyncAdopter(Protocol):
    """Takes over a hook that acknowledged ``{"async": true}`` on its first stdout line."""

    def adopt(self, handoff: AsyncHandoff) -> str | None:
        """Start finishing ``handoff`` in a nursery the adopter owns; or say why not.

        Returns None when adopted.  A refusal (a reason) makes the runner kill the
        hook's tree and report the reason as the hook's failure.  Must not block.
        """
        ...


@dataclass
class AsyncHandoff:
    """A hook process that backgrounded itself, still running, with everything read so far."""

    proc: HookProcess
    run_id: str
    ack: dict[str, Any]
    ack_line: bytes
    stdout: _Capture
    stderr: _Capture
    kill_grace: float
    pipe_grace: float
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    """Run once the process is over (e.g. removing the hook's input file)."""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output_size(self) -> int:
        return self.stdout.size + self.stderr.size

    async def finish(self, timeout: float) -> ProcessResult:
        """Read and wait until the hook exits or ``timeout``; kill its tree on timeout or cancel."""
        timed_out = False
        killed = 0
        try:
            with trio.move_on_after(timeout) as deadline:
                await _supervise(self.proc, None, self.stdout, self.stderr, self.pipe_grace, None)
            timed_out = deadline.cancelled_caught
        finally:
            with trio.CancelScope(shield=True):
                if self.proc.returncode is None or timed_out:
                    killed = await kill_tree(self.proc, self.run_id, self.kill_grace)
                await _close_pipes(self.proc)
            SUBREAPER.untrack(self.run_id)
            for fn in self.cleanup:
                try:
                    fn()
                except OSError as exc:
                    log.warning("async hook cleanup failed", pid=self.proc.pid, error=str(exc))
        return ProcessResult(
            returncode=self.proc.returncode if not timed_out else None,
            stdout=self.stdout.value(),
            stderr=self.stderr.value(),
            truncated=self.stdout.truncated or self.stderr.truncated,
            timed_out=timed_out,
            pid=self.proc.pid,
            killed=killed,
        )


async def _read(
    stream: trio.lowlevel.FdStream | None,
    capture: _Capture,
    watch: _FirstLine | None,
    on_ack: Callable[[], None],
) -> None:
    """Drain ``stream``'s pipe into ``capture`` without closing it (a handoff keeps reading it).

    Reads the descriptor itself (:func:`hookd.fdio.read_when_ready`):
    ``FdStream.receive_some`` adds a checkpoint after every read, three more
    trips through the scheduler per hook (the output, its EOF, stderr's EOF).
    Cancellation lands only before a read, so no byte is lost at an ack: the
    adopter resumes exactly where this stopped.
    """
    if stream is None:
        return
    fd = stream.fileno()
    while True:
        try:
            chunk = await read_when_ready(fd, _CHUNK)
        except trio.ClosedResourceError:
            return  # our end was closed (the run is being torn down)
        except OSError:
            return
        if watch is not None and watch.feed(chunk, capture):
            on_ack()
            return
        if not chunk:
            return
        if watch is None:
            capture.add(chunk)


async def _supervise(
    proc: HookProcess,
    stdin: bytes | None,
    out: _Capture,
    err: _Capture,
    pipe_grace: float,
    watch: _FirstLine | None,
    report: ExitReport | None = None,
) -> int | None:
    """Feed stdin, read both pipes, wait for exit; return early when ``watch`` sees an ack.
    The exit status ``report`` gave, when the process said it before it was reaped.

    One task and one wait per wake-up: the hook's pipes and its pidfd go into an
    epoll set of its own (:class:`_Watched`), and trio waits on that one
    descriptor.  Three tasks each waiting on a descriptor of its own (a nursery,
    two readers, the pidfd) cost ~0.3 ms of the daemon's CPU per hook in tasks,
    cancel scopes and trio registrations — more than the spawn — measured in
    docs/performance.md ("Parallel spawns").  ``stdin`` (None: the start already
    wrote it, :func:`hookd.handlers.spawn.spawn`) is written on the spot when the
    pipe takes it whole (an event is far below the 64 KiB pipe buffer); the rest —
    here, or what did not fit at the start — is written as the pipe drains.
    Cancellation lands only in the wait, before a read, so no byte is lost at an
    ack: the adopter resumes exactly where this stopped.  Where the kernel has no
    pidfd, :func:`_supervise_tasks`.
    """
    if proc.pidfd is None:
        return await _supervise_tasks(proc, stdin, out, err, pipe_grace, watch, report)
    rest = _write_now(proc.stdin, stdin) if stdin is not None else _written_at_start(proc)
    with _Watched(proc, out, err, watch, rest, report) as watched:
        while not watched.done():
            if watched.deadline == math.inf:
                await trio.lowlevel.wait_readable(watched.fileno())
            else:
                with trio.move_on_at(watched.deadline):
                    await trio.lowlevel.wait_readable(watched.fileno())
            if watched.handle_events(pipe_grace):
                break  # an async ack: the rest is the adopter's
            if trio.current_time() >= watched.deadline:
                break  # exited, and the pipe grace is over (a background holder)
        return watched.reported if proc.returncode is None else None


class _Watched:
    """A hook's pipes and pidfd in one epoll set: what :func:`_supervise` waits on."""

    def __init__(
        self,
        proc: HookProcess,
        out: _Capture,
        err: _Capture,
        watch: _FirstLine | None,
        stdin_rest: memoryview | None,
        report: ExitReport | None = None,
    ) -> None:
        self.proc = proc
        self.poller = select.epoll()
        self.readers: dict[int, tuple[_Capture, _FirstLine | None]] = {}
        self.deadline = math.inf
        """Once it exited: when to stop reading pipes a background process still holds."""
        self.stdin_rest = stdin_rest
        self.stdin_fd = -1
        for fd, capture, first in ((proc.stdout_fd, out, watch), (proc.stderr_fd, err, None)):
            if fd >= 0:
                self._add(fd, select.EPOLLIN)
                self.readers[fd] = (capture, first)
        if stdin_rest is not None and proc.stdin is not None:
            self.stdin_fd = proc.stdin.fileno()
            self._add(self.stdin_fd, select.EPOLLOUT)
        assert proc.pidfd is not None
        self.pidfd = proc.pidfd
        self._add(self.pidfd, select.EPOLLIN)
        self.report = report
        self.reported: int | None = None
        """The exit status the process reported (it is ending; reaped by its owner)."""
        if report is not None:
            self._add(report.fileno(), select.EPOLLIN)

    def _add(self, fd: int, events: int) -> None:
        try:
            self.poller.register(fd, events)
        except BaseException:
            self.poller.close()
            raise

    def __enter__(self) -> _Watched:
        return self

    def __exit__(self, *exc: object) -> None:
        self.poller.close()
        if self.stdin_rest is not None and self.proc.stdin is not None:
            self.proc.stdin.close()  # not all fed (an ack, a cancel, the grace): as the feeder did

    def fileno(self) -> int:
        return self.poller.fileno()

    def done(self) -> bool:
        """Exited, every pipe at EOF, stdin fed (or given up)."""
        return self.pidfd < 0 and not self.readers and self.stdin_rest is None

    def handle_events(self, pipe_grace: float) -> bool:
        """Read, write and reap what is ready; True when stdout's first line was an ack."""
        for fd, _mask in self.poller.poll(0):
            if fd == self.pidfd:
                self.poller.unregister(fd)
                self.pidfd = -1
                self.proc.reap_exited()
                self.deadline = trio.current_time() + pipe_grace
            elif self.report is not None and fd == self.report.fileno():
                self._take_report(pipe_grace)
            elif fd == self.stdin_fd:
                self._feed()
            elif fd in self.readers and self._read(fd):
                return True
        return False

    def _take_report(self, pipe_grace: float) -> None:
        """The process said its exit status: it has closed its pipes and is being torn
        down, which takes ~0.5 ms for an interpreter (the pidfd says so only after);
        from here on it is treated as exited, and its owner reaps it."""
        assert self.report is not None
        code = self.report.read(self.proc.pid)
        if code is None or self.pidfd < 0:
            return  # nothing from it (yet), or reaped already
        self.poller.unregister(self.report.fileno())
        self.poller.unregister(self.pidfd)
        self.report = None
        self.pidfd = -1
        self.reported = code
        self.deadline = trio.current_time() + pipe_grace

    def _read(self, fd: int) -> bool:
        capture, first = self.readers[fd]
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return False  # woken without data
        except OSError:
            chunk = b""
        if first is not None and first.feed(chunk, capture):
            return True
        if not chunk:
            self.poller.unregister(fd)
            del self.readers[fd]
        elif first is None:
            capture.add(chunk)
        return False

    def _feed(self) -> None:
        """Write more of a large stdin; closed when all is written or the hook stops reading."""
        rest = self.stdin_rest
        assert rest is not None and self.proc.stdin is not None
        try:
            sent = write_nowait(self.stdin_fd, rest)
        except OSError:  # EPIPE: the hook closed stdin early, that is its right
            sent = len(rest)
        rest = rest[sent:]
        if rest:
            self.stdin_rest = rest
            return
        self.poller.unregister(self.stdin_fd)
        self.stdin_fd = -1
        self.stdin_rest = None
        self.proc.stdin.close()


async def _supervise_tasks(
    proc: HookProcess,
    stdin: bytes | None,
    out: _Capture,
    err: _Capture,
    pipe_grace: float,
    watch: _FirstLine | None,
    report: ExitReport | None = None,
) -> int | None:
    """:func:`_supervise` where there is no pidfd: a reader task per pipe, the exit polled
    — with the same result: the status ``report`` gave when it came before the exit (the
    process is then its owner's to reap, as there), and what the pipes held when the
    grace ran out read all the same (:func:`_drain_ready`), as ``_Watched`` reads what is
    ready once more after its deadline: a starved loop may run the readers only after
    the grace they were given, and the bytes the hook wrote before it exited are not
    lost for that."""
    reported: int | None = None
    with trio.CancelScope() as handoff_scope:
        async with trio.open_nursery() as nursery:
            rest = _write_now(proc.stdin, stdin) if stdin is not None else _written_at_start(proc)
            if rest is not None:
                nursery.start_soon(_feed, proc.stdin, rest)
            readers = (trio.CancelScope(), trio.CancelScope())
            nursery.start_soon(_read_in, readers[0], proc.stdout, out, watch, handoff_scope.cancel)
            nursery.start_soon(_read_in, readers[1], proc.stderr, err, None, handoff_scope.cancel)
            reported = await _exit_or_report(proc, report)
            grace_end = trio.current_time() + pipe_grace
            for scope in readers:
                scope.deadline = min(scope.deadline, grace_end)
    if handoff_scope.cancelled_caught:
        return None  # an async ack: the rest is the adopter's
    for scope, stream, capture, first in (
        (readers[0], proc.stdout, out, watch),
        (readers[1], proc.stderr, err, None),
    ):
        if scope.cancelled_caught and _drain_ready(stream, capture, first):
            return None  # an ack after all: the adopter's
    return reported if proc.returncode is None else None


async def _exit_or_report(proc: HookProcess, report: ExitReport | None) -> int | None:
    """Wait for the exit and reap (None), or — where the process says its status first
    (``report``) — that status, the process left unreaped: its teardown is its owner's."""
    if report is None:
        await proc.wait()
        return None
    said: list[int] = []

    async def exited(done: trio.CancelScope) -> None:
        await proc.wait()
        done.cancel()

    async def reported(done: trio.CancelScope) -> None:
        while True:
            await trio.lowlevel.wait_readable(report.fileno())
            code = report.read(proc.pid)
            if code is not None:
                said.append(code)
                done.cancel()
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(exited, nursery.cancel_scope)
        nursery.start_soon(reported, nursery.cancel_scope)
    return said[0] if said and proc.returncode is None else None


def _drain_ready(
    stream: trio.lowlevel.FdStream | None, capture: _Capture, watch: _FirstLine | None
) -> bool:
    """One read, without waiting, of what a pipe holds (a pipe's whole default buffer —
    ``_Watched``'s last read after its deadline); True when it ends the first line as
    an async ack."""
    if stream is None:
        return False
    try:
        chunk = os.read(stream.fileno(), _CHUNK)
    except OSError:  # BlockingIOError: nothing there; a closed end: nothing to read
        return False
    if watch is not None:
        return watch.feed(chunk, capture)
    capture.add(chunk)
    return False


async def _read_in(
    scope: trio.CancelScope,
    stream: trio.lowlevel.FdStream | None,
    capture: _Capture,
    watch: _FirstLine | None,
    on_ack: Callable[[], None],
) -> None:
    with scope:
        await _read(stream, capture, watch, on_ack)


def _written_at_start(proc: HookProcess) -> memoryview | None:
    """What of the input the start wrote (:func:`hookd.handlers.spawn.spawn`) is left to
    write — taken once: a handoff's supervision after this one has nothing more."""
    rest, proc.stdin_rest = proc.stdin_rest, None
    return rest


def _write_now(stream: trio.lowlevel.FdStream | None, data: bytes) -> memoryview | None:
    """Write ``data`` without waiting and close the stream; what did not fit, if any
    (a view, not a copy: a big input is shared by every hook of its event).

    A hook that exits (or closes stdin) without reading is within its rights:
    the broken pipe ends the feeding quietly.
    """
    if stream is None:
        return None
    try:
        sent = write_nowait(stream.fileno(), data) if data else 0
    except OSError:  # EPIPE: the hook is not reading
        stream.close()
        return None
    if sent < len(data):
        return memoryview(data)[sent:]
    stream.close()
    return None


async def _close_pipes(proc: HookProcess | trio.Process) -> None:
    """Close our ends of the pipes; an FdStream closes without a trip through the scheduler."""
    if isinstance(proc, HookProcess):
        proc.close_pipes()
        return
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if isinstance(stream, trio.lowlevel.FdStream):
            stream.close()
        elif stream is not None:
            await stream.aclose()


async def _feed(stream: trio.abc.SendStream | None, data: bytes | memoryview) -> None:
    if stream is None:
        return
    async with stream:
        try:
            if data:
                await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the hook closed stdin early: that is its right


async def run_process_capped(
    argv: Sequence[str],
    *,
    stdin: bytes,
    cwd: str | None,
    env: Mapping[str, str],
    timeout: float,
    output_cap: int,
    kill_grace: float,
    pipe_grace: float,
    on_spawn: Callable[[int], None] | None = None,
    on_async_ack: AsyncAdopter | None = None,
    run_id: str | None = None,
    started: HookProcess | None = None,
    output_budget: OutputBudget | None = None,
    exit_report: ExitReport | None = None,
    own_session: bool = False,
) -> ProcessResult:
    """Run ``argv`` to completion or ``timeout``; on timeout or cancellation kill its tree.

    ``own_session``: start it in a new session even where hooks share the daemon's
    (:func:`hookd.handlers.spawn.session_flags`).

    ``run_id``: the ``HOOKD_RUN_ID`` marker to give the tree (default: a new one).

    ``started``: a process already running this hook (a warm Python spare that was just
    handed its request, :mod:`hookd.handlers.warm_python`), whose marker is ``run_id``;
    ``argv``, ``cwd`` and ``env`` are then only what it was told.

    ``output_budget``: where output kept past 64 KiB a stream is charged (no room:
    the rest is dropped, ``truncated``).

    ``exit_report``: where ``started`` says its exit status before its teardown; the run
    ends there, and the caller reaps the process (it may still be exiting).

    ``pipe_grace``: once the hook itself has exited, how long to keep reading
    from pipes that a background grandchild may still hold open.  Claude Code
    waits for those until the timeout; hookd stops reading after the grace
    (a documented difference), so ``cmd &`` in a hook cannot stall an event.

    ``on_async_ack``: when given, a first stdout line ``{"async": true, ...}``
    ends the wait there and the process is handed to the adopter (see the
    module docstring); the result then has ``went_async`` and the ack line as
    its stdout.  Without an adopter the hook is waited for as before.
    """
    run_id = run_id or uuid.uuid4().hex
    full_env = dict(env)
    full_env["HOOKD_RUN_ID"] = run_id
    workdir = working_directory(cwd)
    feed: bytes | None = stdin  # None: written into the pipe by the start itself
    try:
        if started is not None:
            proc = started
        else:
            proc = await start_hook(
                argv, cwd=workdir, env=full_env, stdin=stdin, own_session=own_session
            )
            feed = None
    except OSError as exc:
        return ProcessResult(
            None, b"", b"", False, False, None, spawn_error=str(exc), spawn_exc=exc
        )
    if proc.pipe_inodes is not None:
        SUBREAPER.track(run_id, proc.pid, inodes=proc.pipe_inodes)
    else:
        SUBREAPER.track(run_id, proc.pid, _pipe_fds(proc))
    if on_spawn is not None:
        on_spawn(proc.pid)

    out, err = _Capture(output_cap, output_budget), _Capture(output_cap, output_budget)
    watch = _FirstLine() if on_async_ack is not None else None
    timed_out = False
    killed = 0
    handed_over = False
    refused: str | None = None
    reported: int | None = None
    try:
        with trio.move_on_after(timeout) as deadline:
            reported = await _supervise(proc, feed, out, err, pipe_grace, watch, exit_report)
        timed_out = deadline.cancelled_caught
        if watch is not None and watch.ack is not None and on_async_ack is not None:
            handoff = AsyncHandoff(
                proc, run_id, watch.ack, watch.line, out, err, kill_grace, pipe_grace
            )
            refused = on_async_ack.adopt(handoff)
            if refused is None:
                handed_over = True
                return ProcessResult(
                    returncode=None,
                    stdout=watch.line + b"\n",
                    stderr=b"",
                    truncated=False,
                    timed_out=False,
                    pid=proc.pid,
                    went_async=True,
                )
            timed_out = False
    finally:
        if not handed_over:
            if (proc.returncode is None and reported is None) or timed_out:
                with trio.CancelScope(shield=True):
                    killed = await kill_tree(proc, run_id, kill_grace)
            proc.close_pipes()  # no await: a shielded scope only where there is a kill
            SUBREAPER.untrack(run_id)
    returncode = proc.returncode if proc.returncode is not None else reported
    return ProcessResult(
        returncode=returncode if not timed_out and refused is None else None,
        stdout=out.value(),
        stderr=err.value(),
        truncated=out.truncated or err.truncated,
        timed_out=timed_out,
        pid=proc.pid,
        killed=killed,
        refused=refused,
    )


def working_directory(cwd: str | None) -> str | None:
    """Where a hook runs: ``cwd`` when it is an existing directory, else (None) where
    the daemon runs — an event may name a directory that is gone."""
    return cwd if cwd and os.path.isdir(cwd) else None


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when the group is already gone (or,
    logged, when the kernel refuses): a run's group may end by itself at any moment.

    The one group signal of the command runners (``kill_tree`` here, a warm run's
    group in :mod:`hookd.handlers.warm_python`); the caller makes sure ``pgid`` is
    still its own group (its leader not yet reaped, so the id cannot be reused)."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError as exc:
        log.warning("killpg refused", pgid=pgid, error=str(exc))
        return False


def marked_processes(run_id: str) -> list[int]:
    """PIDs whose environment carries ``HOOKD_RUN_ID=<run_id>`` (our descendants)."""
    marker = f"HOOKD_RUN_ID={run_id}".encode()
    found: list[int] = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            data = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if marker + b"\0" in data or data.endswith(marker):
            found.append(pid)
    return found


def _pipe_fds(proc: HookProcess) -> list[int]:
    return [fd for fd in (proc.stdout_fd, proc.stderr_fd) if fd >= 0]


def _signal_known(targets: dict[int, int], sig: int) -> None:
    """Signal each of ``targets`` (pid → start time) that is still that same process."""
    for pid, start in targets.items():
        now = proctree.info(pid)
        if now is None or now.start != start or now.state == "Z":
            continue
        try:
            os.kill(pid, sig)
        except OSError as exc:
            if exc.errno not in (errno.ESRCH, errno.EPERM):
                log.warning("kill failed", pid=pid, error=str(exc))


def _living(targets: dict[int, int]) -> list[int]:
    """Those of ``targets`` still running (a zombie is dead: it only waits to be reaped)."""
    alive = []
    for pid, start in targets.items():
        now = proctree.info(pid)
        if now is not None and now.start == start and now.state != "Z":
            alive.append(pid)
    return alive


async def kill_tree(proc: HookProcess | trio.Process, run_id: str, grace: float) -> int:
    """TERM every process of the run, wait ``grace``, KILL what is left, reap what is ours.

    The run's processes are its process group, its ``HOOKD_RUN_ID`` marker,
    and — with the daemon as child subreaper — its descendants and the
    orphans it left, found by ancestry (:meth:`hookd.subreaper.Subreaper.processes_of`),
    so ``setsid`` plus ``env -i`` no longer escapes.  Returns how many
    processes (the root included) were alive when the kill began.  Always
    reaps the direct child, and the adopted orphans it killed, before returning.
    """
    pgid = proc.pid
    targets = SUBREAPER.processes_of(run_id, proc.pid)
    alive = len(targets)
    signal_group(pgid, signal.SIGTERM)
    _signal_known(targets, signal.SIGTERM)
    signal_group(pgid, signal.SIGCONT)
    with trio.move_on_after(grace):
        await proc.wait()
        # Give the rest of the run the same grace to finish dying.
        end = time.monotonic() + grace
        while time.monotonic() < end and _living(targets):
            await trio.sleep(0.02)
    group = SUBREAPER.group_of(run_id, pgid)  # None: the root was reaped and its pid reused
    if group is not None:
        signal_group(group, signal.SIGKILL)
    # Look again: a process may have forked (or been orphaned) during the grace.
    targets.update(SUBREAPER.processes_of(run_id, proc.pid))
    _signal_known(targets, signal.SIGKILL)
    await proc.wait()
    SUBREAPER.waited(proc.pid)
    # SIGKILL is delivered asynchronously: a killed grandchild can still be
    # listed as running for a moment.  Wait (bounded) until the kernel has
    # really ended every one, reaping the orphans the daemon adopted, so that
    # "the hook's run is over" also means "its processes are gone".
    with trio.move_on_after(grace):
        while True:
            SUBREAPER.reap(targets)
            if not _living(targets):
                # One more look once all are dead: a process that was mid-fork (or
                # mid-exec out of the group and the marker) when the KILL landed may
                # have left a child that no earlier look could see.
                late = {
                    pid: start
                    for pid, start in SUBREAPER.processes_of(run_id, proc.pid).items()
                    if targets.get(pid) != start
                }
                if not late:
                    break
                log.info("killing processes of the run that appeared late", pids=sorted(late))
                targets.update(late)
                _signal_known(late, signal.SIGKILL)
            await trio.sleep(0.01)
    SUBREAPER.reap(targets)
    SUBREAPER.untrack(run_id, killed=True)
    return alive

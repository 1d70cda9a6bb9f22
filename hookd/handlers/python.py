"""The ``python`` handler: call a Python function instead of spawning a process per event.

``{"type": "python", "callable": "package.module:function"}`` or
``"/path/file.py:function"`` (a relative file path is relative to the project
directory; a module is looked up on ``sys.path`` plus the project directory).

**What the function gets and returns.**  A regular hook is called with one
argument, the :class:`hookd_client.events.DecodedEvent` — ``.name``, ``.raw``
(the exact input a command hook reads on stdin) and ``.typed`` (the validated
Struct, e.g. ``PreToolUse`` with ``.tool_name``).  It returns what a command
hook would print: a ``dict`` or a :class:`hookd_client.output.HookOutput`
(the JSON answer), a ``str`` (read exactly like stdout), or ``None`` (exit 0,
no output).  It may be ``def`` or ``async def``.  A function that raises is a
non-blocking error carrying the exception text (or a block under
``onFailure: "block"``).

With ``"function": "stop"`` (seed 004) the function is a *stop function* for
Stop/SubagentStop: it is called with the conversation — the entries of
``transcript_path`` (for SubagentStop ``agent_transcript_path``) as a list of
dicts — and returns ``True`` to let the agent stop, or ``False`` /
``(False, reason)`` to keep it working; that is ``decision: "block"`` with the
reason.

**Where it runs, and why.**  Every call runs in a pool of warm worker
processes (:mod:`hookd.handlers.pyworker`), never in the daemon itself —
``async def`` functions too, each on a fresh asyncio loop in the worker —
unless the hook says ``"inDaemon": true`` and is an ``async def`` of a file:
then it runs as a trio task in the daemon, cancelled at its timeout, and is
sent back to the workers if it ever holds the loop
(:mod:`hookd.handlers.python_inline`).  An
in-daemon coroutine would be cheaper, but a single ``time.sleep`` or busy loop
in it would freeze every session of the daemon, and a cancel scope cannot
interrupt code that never yields.  A worker can always be killed: when a call
passes its timeout (or its event is cancelled), the worker's whole process
group is killed and a fresh one takes its place; the daemon never waits for
the function to cooperate.

Limits of that choice, on purpose:

* each call is a pipe round trip (well under a millisecond) and the input is
  re-encoded; the function shares no memory with the daemon, and each worker
  imports hook modules on its own (state kept in module globals is per worker);
* at most ``size`` calls run at once (``python_workers``), and at most
  ``per_session`` of them for one session (``python_workers_per_session``); a
  call waits for a free slot, and that wait counts against its timeout.  The
  per-session share is what keeps sessions from starving each other: a
  session whose hooks are stuck (a ``time.sleep``, a busy loop) holds at most
  its share until their deadline kills them, and the rest of the pool keeps
  serving every other session.  A freed slot goes to the waiting session that
  holds the fewest workers;
* workers start on demand: none while no python hook has run, then one per
  concurrent call up to ``size``; ``warm`` idle workers are kept ready after
  the first call (a killed one is replaced), the others stay until the daemon
  stops;
* only the hook's own module is reloaded when its file changes (checked by
  ``stat`` before every call), not the modules it imports;
* the function sees the daemon's environment, not the agent's; ``print``
  output goes to the daemon's log, not to the hook answer.
"""

from __future__ import annotations

import functools
import os
import struct
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import structlog
import trio
from trio.lowlevel import FdStream

import hookd
import hookd_client
from hookd.config.schema import Handler, PythonHandler
from hookd.fdio import read_when_ready, write_nowait
from hookd.handlers.base import HandlerResult, Invocation, failed_with
from hookd.handlers.process import kill_tree
from hookd.handlers.python_inline import InDaemonPolicies
from hookd.handlers.pyworker import WorkerReply, WorkerRequest
from hookd.handlers.spawn import session_options
from hookd.subreaper import SUBREAPER

__all__ = ["PythonRunner", "PythonWorkerPool", "WorkerDied"]

log = structlog.get_logger("hookd.handlers.python")

_HEADER = struct.Struct(">I")
_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})


class WorkerDied(Exception):
    """The worker exited (or closed its pipe) before answering."""


class _Worker:
    """One worker process and the daemon's end of its two protocol pipes."""

    def __init__(self, proc: trio.Process, run_id: str) -> None:
        self.proc = proc
        self.run_id = run_id
        self.buffer = bytearray()
        self.calls = 0

    async def _receive_exactly(self, size: int) -> bytes:
        stream = self.proc.stdout
        assert stream is not None
        while len(self.buffer) < size:
            try:
                chunk = await _read_some(stream)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                raise WorkerDied("python worker closed its pipe") from exc
            if not chunk:
                raise WorkerDied("python worker exited before answering")
            self.buffer.extend(chunk)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def call(self, payload: bytes, max_reply: int) -> bytes:
        stdin = self.proc.stdin
        assert stdin is not None
        frame = _HEADER.pack(len(payload)) + payload
        try:
            # Write straight into the pipe when it takes the whole frame (it nearly
            # always does: the worker is idle and the pipe empty); send_all would
            # add a trip through the scheduler to a call that costs a few of them.
            sent = write_nowait(stdin.fileno(), frame) if isinstance(stdin, FdStream) else 0
            if sent < len(frame):
                await stdin.send_all(frame[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError, BrokenPipeError) as exc:
            raise WorkerDied("python worker is gone") from exc
        (size,) = _HEADER.unpack(await self._receive_exactly(_HEADER.size))
        self.calls += 1
        if size > max_reply:
            # The worker caps what it sends; a larger frame means hook code wrote to the
            # protocol pipe itself.  Never read it: the worker is discarded unread.
            raise WorkerDied(f"python worker sent a {size}-byte reply (limit {max_reply})")
        return await self._receive_exactly(size)


async def _read_some(stream: trio.abc.ReceiveStream) -> bytes:
    """Wait for the pipe, then read it: unlike ``receive_some``, no extra trip through
    the scheduler after the read (a call waits for exactly one reply)."""
    if not isinstance(stream, FdStream):
        return bytes(await stream.receive_some(65536))
    return await read_when_ready(stream.fileno(), 65536)


def _worker_env() -> dict[str, str]:
    """The daemon's environment, with hookd itself importable whatever the interpreter."""
    roots = {
        str(Path(hookd.__file__).parent.parent),
        str(Path(hookd_client.__file__).parent.parent),
    }
    env = dict(os.environ)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([*sorted(roots), *([existing] if existing else [])])
    env["PYTHONUNBUFFERED"] = "1"
    return env


@dataclass(eq=False)
class _Waiter:
    session: str
    ready: trio.Event = field(default_factory=trio.Event)
    granted: bool = False


class PythonWorkerPool:
    """Killable worker processes shared by every session; owned by a nursery (see
    ``open_handlers``).

    ``size`` bounds how many calls run at once, ``per_session`` how many of them
    one session may hold (so a session with stuck hooks leaves the rest of the
    pool to the others).  Workers start when a call needs one — none before the
    first python hook — and ``warm`` of them are kept ready afterwards, so the
    common call never pays interpreter start-up.
    """

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        size: int,
        per_session: int,
        warm: int,
        executable: str,
        kill_grace: float,
    ) -> None:
        self.nursery = nursery
        self.size = max(1, size)
        self.per_session = max(1, min(per_session, self.size))
        self.warm = max(0, min(warm, self.size))
        self.executable = executable
        self.kill_grace = kill_grace
        self._busy = 0
        self._by_session: dict[str, int] = {}
        self._waiters: list[_Waiter] = []
        self._used = False
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._closed = False
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(WorkerReply)
        self.spawned = 0
        """Workers started so far (tests read it to see that a killed worker was replaced)."""

    # --- admission: the pool's share per session -------------------------------------

    def _may_take(self, session: str) -> bool:
        return self._busy < self.size and self._by_session.get(session, 0) < self.per_session

    def _take(self, session: str) -> None:
        self._busy += 1
        self._by_session[session] = self._by_session.get(session, 0) + 1

    def _give_back(self, session: str) -> None:
        self._busy -= 1
        left = self._by_session[session] - 1
        if left:
            self._by_session[session] = left
        else:
            del self._by_session[session]
        self._grant()

    def _grant(self) -> None:
        """Hand free slots to waiters: the session holding the fewest workers first,
        first come first served among equals; a session at its share keeps waiting."""
        while self._waiters and self._busy < self.size:
            eligible = [
                w for w in self._waiters if self._by_session.get(w.session, 0) < self.per_session
            ]
            if not eligible:
                return
            chosen = min(eligible, key=lambda w: self._by_session.get(w.session, 0))
            self._waiters.remove(chosen)
            self._take(chosen.session)
            chosen.granted = True
            chosen.ready.set()

    async def _acquire(self, session: str) -> None:
        if self._may_take(session):
            # Every release grants what it can, so a free slot here has no eligible
            # waiter ahead of us: take it without a trip through the scheduler.
            self._take(session)
            return
        waiter = _Waiter(session)
        self._waiters.append(waiter)
        try:
            await waiter.ready.wait()
        except BaseException:
            if waiter.granted:
                self._give_back(session)
            else:
                self._waiters.remove(waiter)
            raise

    def in_use(self) -> dict[str, int]:
        """Workers busy per session (for status and tests)."""
        return dict(self._by_session)

    def pids(self) -> list[int]:
        return sorted(w.proc.pid for w in self._all)

    @property
    def busy(self) -> int:
        """Workers inside a call right now: tests wait on it instead of sleeping."""
        return len(self._all) - len(self._idle)

    async def _spawn(self) -> _Worker:
        run_id = uuid.uuid4().hex
        env = _worker_env()
        env["HOOKD_RUN_ID"] = run_id
        proc = await SUBREAPER.open_process(
            functools.partial(
                trio.lowlevel.open_process,
                [self.executable, "-m", "hookd.handlers.pyworker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                **session_options(),
            )
        )
        SUBREAPER.track(run_id, proc.pid)
        worker = _Worker(proc, run_id)
        self._all.add(worker)
        self.spawned += 1
        self.nursery.start_soon(self._log_stderr, worker)
        return worker

    async def _log_stderr(self, worker: _Worker) -> None:
        """Whatever hooks print lands here, one log record per line (capped)."""
        stream = worker.proc.stderr
        assert stream is not None
        pending = b""
        async with stream:
            while True:
                try:
                    chunk = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    text = line.decode("utf-8", errors="replace")[:2000]
                    log.info("python hook output", worker=worker.proc.pid, line=text)
                pending = pending[-65536:]
        if pending:
            text = pending.decode("utf-8", errors="replace")[:2000]
            log.info("python hook output", worker=worker.proc.pid, line=text)

    async def _discard(self, worker: _Worker) -> None:
        """Kill a worker whose state is unknown (timed out, cancelled, died) and reap it."""
        self._all.discard(worker)
        if worker in self._idle:
            self._idle.remove(worker)
        with trio.CancelScope(shield=True):
            await kill_tree(worker.proc, worker.run_id, self.kill_grace)
            await _close_pipes(worker)
        log.info("python worker discarded", worker=worker.proc.pid, calls=worker.calls)
        if not self._closed and self._used and len(self._all) < self.warm:
            self.nursery.start_soon(self._replenish)

    async def _replenish(self) -> None:
        if self._closed or len(self._all) >= self.warm:
            return
        try:
            worker = await self._spawn()
        except OSError as exc:
            log.warning("cannot start a python worker", error=str(exc))
            return
        self._idle.append(worker)

    async def call(self, request: WorkerRequest, session: str = "") -> WorkerReply:
        """One call on a free worker, within ``session``'s share; the caller's cancel
        scope is the deadline (the wait for a slot included).

        If the call does not complete — deadline, cancellation, a dead worker —
        the worker is killed rather than returned to the pool.
        """
        if self._closed:
            raise WorkerDied("the python worker pool is closed")
        await self._acquire(session)
        try:
            self._used = True
            worker = self._idle.pop() if self._idle else await self._spawn()
            done = False
            try:
                # JSON escaping can make the capped text up to 6 bytes per byte ("\u0000").
                max_reply = 6 * request.output_cap + 65536
                raw = await worker.call(self._encoder.encode(request), max_reply)
                done = True
            finally:
                if done:
                    self._idle.append(worker)
                else:
                    await self._discard(worker)
        finally:
            self._give_back(session)
        return self._decoder.decode(raw)

    async def aclose(self) -> None:
        """Stop every worker: close its stdin (a clean exit), then kill what remains."""
        self._closed = True
        with trio.CancelScope(shield=True):
            for worker in list(self._all):
                if worker.proc.stdin is not None:
                    await worker.proc.stdin.aclose()
            for worker in list(self._all):
                await kill_tree(worker.proc, worker.run_id, self.kill_grace)
                await _close_pipes(worker)
            self._all.clear()
            self._idle.clear()


async def _close_pipes(worker: _Worker) -> None:
    """Close our ends of stdin/stdout; stderr is closed by its reader at EOF."""
    for stream in (worker.proc.stdin, worker.proc.stdout):
        if stream is not None:
            await stream.aclose()


class PythonRunner:
    def __init__(self, pool: PythonWorkerPool, output_cap: int) -> None:
        self.pool = pool
        self.output_cap = output_cap
        self.in_daemon = InDaemonPolicies(output_cap)

    def answers_at_once(self, handler: Handler, project_dir: str, trusted: bool) -> bool:
        """``handler`` is an in-daemon policy called in one synchronous step
        (:meth:`InDaemonPolicies.answers_at_once`)."""
        return (
            isinstance(handler, PythonHandler)
            and handler.inDaemon
            and self.in_daemon.answers_at_once(handler, project_dir, trusted)
        )

    async def run(self, handler: PythonHandler, inv: Invocation) -> HandlerResult:
        if handler.function == "stop" and inv.event_name not in _STOP_EVENTS:
            return HandlerResult(
                exit_code=None,
                failure=f"a stop function only runs on Stop/SubagentStop, not {inv.event_name}",
            )
        if handler.inDaemon:
            answered = await self.in_daemon.run(handler, inv)
            if answered is not None:
                return answered
        request = WorkerRequest(
            callable=handler.callable,
            function=handler.function,
            event=inv.event_name,
            input=inv.input,
            project_dir=inv.project_dir,
            cwd=inv.cwd,
            project_trusted=inv.project_trusted,
            output_cap=self.output_cap,
        )
        with trio.move_on_after(inv.timeout) as deadline:
            try:
                reply = await self.pool.call(request, inv.session_id)
            except WorkerDied as exc:
                return failed_with(str(exc), exc)
            except OSError as exc:  # the worker interpreter could not be started
                return failed_with(f"cannot start a python worker: {exc}", exc)
        if deadline.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        if reply.kind == "error":
            return HandlerResult(
                exit_code=None, failure=reply.error or "python hook failed", stderr=reply.traceback
            )
        if reply.kind == "none":
            return HandlerResult(exit_code=0, json_output=None)
        if reply.truncated:  # over output_cap: read like a command's capped stdout
            return HandlerResult(exit_code=0, stdout=str(reply.value), truncated=True)
        return HandlerResult(exit_code=0, json_output=reply.value)

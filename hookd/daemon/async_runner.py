"""Background (async) hooks: run them under limits, supervise them, journal their states.

Three kinds reach the runner (reference §8):

* ``async: true`` in config — the engine hands the hook over before starting
  it (:meth:`AsyncRunner.submit`); decisions are ignored, and its
  ``additionalContext`` / ``systemMessage`` are delivered later;
* ``asyncRewake: true`` — the same, except in batch context, where the engine
  waits for it (observed in ``-p``); exit 2 wakes the agent: its text is
  pushed at once to a subscribed connection of that agent;
* output-level ``{"async": true, "asyncTimeout": ms}`` as the hook's *first*
  stdout line — the command runner hands the still-running process over
  (:meth:`AsyncRunner.adopt`); like Claude Code, only its side effects
  count, so it delivers no text.

Which timeout applies (Claude Code's documents disagree, reference §1.4):
config ``async`` and ``asyncRewake`` get the hook's ``timeout`` or 600 s,
counted from when the process starts (a queued hook's clock has not started);
output-level async gets ``asyncTimeout`` (ms) or 15 s from the ack
(``hookd/config/timeouts.py`` states the rule; the engine builds a background
hook's invocation with its timeout already).

Ownership: every run is a task in the one nursery :meth:`AsyncRunner.run`
opens, which the daemon starts in its own nursery.  A run outlives the
connection and the session that fired it (SessionEnd does not end it); only
the daemon stopping cancels it, and then its tree is killed and it is
recorded as ``cancelled`` for its session.

Limits: at most ``max_running`` runs overall and ``max_running_per_session``
per session; behind them a per-session queue of ``max_queued_per_session``;
a hook beyond that is refused, and the event says so in its errors.

Journal: every state change (queued, running, finished) is written to
:mod:`hookd.daemon.async_store` as it happens, the end durably; after a crash
:meth:`AsyncRunner.run` replays it, kills orphaned processes by their
``HOOKD_RUN_ID`` and reports their runs cancelled.

Delivery is not here: each run that ends is offered to
:class:`~hookd.daemon.async_delivery.AsyncDelivery` (``self.delivery``), which
holds the one index of finished, undelivered results and states the
exactly-once argument.  The runner keeps only what its views need: every run
it knows by process id, until it has been delivered (the last
``keep_delivered`` stay listed) or dropped.
"""

from __future__ import annotations

import collections
import os
import signal
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import structlog
import trio

from hookd.config.model import HookSpec
from hookd.config.schema import CommandHandler, handler_label
from hookd.config.timeouts import output_async_timeout
from hookd.daemon.async_delivery import AsyncDelivery, Retention
from hookd.daemon.async_store import AsyncEntry, AsyncKind, AsyncState, AsyncStore
from hookd.handlers.base import Invocation
from hookd.handlers.process import AsyncHandoff, marked_processes
from hookd_client.results import HookRun

if TYPE_CHECKING:
    from hookd.daemon.settings import DaemonSettings
    from hookd.engine.engine import Engine

__all__ = ["AsyncLimits", "AsyncListing", "AsyncOrigin", "AsyncRunner"]

log = structlog.get_logger("hookd.async")

MAX_MESSAGE_CHARS = 10_000

STOPPED = "cancelled: hookd stopped while it ran"
INTERRUPTED = "cancelled: hookd exited before it finished (found in the journal at startup)"


@dataclass(frozen=True)
class AsyncLimits:
    """The runner's limits; their defaults are the daemon's ``async_*`` settings."""

    max_running: int
    max_running_per_session: int
    max_queued_per_session: int
    retention_seconds: float
    retention_per_session: int
    housekeeping_seconds: float
    """How often :meth:`AsyncRunner.run` applies the retention limits."""
    keep_delivered: int
    """Delivered results kept in memory (not on disk) so that listings can show them."""

    @classmethod
    def from_settings(cls, settings: DaemonSettings) -> AsyncLimits:
        return cls(
            max_running=settings.async_max_running,
            max_running_per_session=settings.async_max_running_per_session,
            max_queued_per_session=settings.async_max_queued_per_session,
            retention_seconds=settings.async_retention_seconds,
            retention_per_session=settings.async_retention_per_session,
            housekeeping_seconds=settings.async_housekeeping_seconds,
            keep_delivered=settings.async_keep_delivered,
        )


@dataclass(frozen=True, slots=True)
class AsyncOrigin:
    """Who started a fire's async hooks, for telemetry: each run's span (a fresh id
    under the event's span, from ``span()``), the agent and the prompt."""

    span: Callable[[], str]
    agent: str
    prompt_id: str


class AsyncListing(msgspec.Struct, kw_only=True):
    """One row of ``hookctl status`` / ``hookctl async``."""

    agent_pid: int | None
    session_id: str
    process_id: str
    kind: str
    hook: str
    event: str
    tool: str
    state: str
    """queued, running, finished, timed_out, cancelled — or delivered once it was."""
    elapsed: float
    timeout: float
    bytes: int
    delivered: bool
    exit_code: int | None
    pid: int | None


@dataclass
class _Job:
    entry: AsyncEntry
    body: Callable[[], Awaitable[None]]
    live: Invocation | AsyncHandoff | None = None


@dataclass
class _Counts:
    running: int = 0
    by_session: collections.Counter[str] = field(default_factory=collections.Counter)
    queued: collections.Counter[str] = field(default_factory=collections.Counter)


class AsyncRunner:
    """Runs and supervises async hooks and journals them; the daemon starts :meth:`run`."""

    def __init__(self, limits: AsyncLimits, store: AsyncStore) -> None:
        self.limits = limits
        self.store = store
        self.counters: collections.Counter[str] = collections.Counter()
        self.delivery = AsyncDelivery(
            Retention(limits.retention_seconds, limits.retention_per_session),
            self._journal,
            self._settled,
            self.counters,
            store,
        )
        self._known: dict[str, AsyncEntry] = {}
        """Every run the views show, by process id: queued, running, waiting for
        delivery, and the last ``keep_delivered`` delivered ones."""
        self._jobs: dict[str, _Job] = {}
        """Queued and running jobs by process id."""
        self._queue: collections.deque[_Job] = collections.deque()
        self._counts = _Counts()
        self._delivered: collections.deque[str] = collections.deque()
        self._nursery: trio.Nursery | None = None
        self._stopping = False
        self.on_finished: Callable[[AsyncEntry], None] | None = None
        """Told of every run that ends (the daemon's live view, so ``tail`` shows it)."""

    # --- lifecycle -------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load what the last daemon left, then own every async run until cancelled."""
        for entry in self.store.load(INTERRUPTED):
            if entry.error == INTERRUPTED and entry.run_id:
                _kill_orphans(entry)
            self._known[entry.process_id] = entry
            self.delivery.restore(entry)
        if self._known:
            log.info("async results carried over from the last run", results=len(self._known))
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                try:
                    while True:
                        await trio.sleep(self.limits.housekeeping_seconds)
                        self.delivery.prune(time.time())
                        self.counters["housekeeping"] += 1
                finally:
                    self._stopping = True
        finally:
            self._nursery = None
            self._stopping = True
            for job in list(self._queue):
                self._finish(job.entry, state="cancelled", error="cancelled: hookd stopped first")
            self._queue.clear()
            self.store.close()

    def stop(self) -> None:
        """Refuse new async hooks from now on (the daemon is shutting down)."""
        self._stopping = True

    # --- intake ------------------------------------------------------------------------

    def sink(self, agent_pid: int | None, origin: AsyncOrigin | None = None) -> _Sink:
        """The engine's :class:`~hookd.engine.engine.AsyncSink` for one fire of one agent."""
        return _Sink(self, agent_pid, origin)

    def submit(
        self,
        spec: HookSpec,
        inv: Invocation,
        engine: Engine,
        agent_pid: int | None,
        origin: AsyncOrigin | None = None,
    ) -> str | None:
        """Take a config ``async``/``asyncRewake`` hook: run it, queue it, or say why not."""
        handler = spec.handler
        kind: AsyncKind = (
            "asyncRewake"
            if isinstance(handler, CommandHandler) and handler.asyncRewake
            else "async"
        )
        entry = self._new_entry(kind, spec, inv, agent_pid, origin)
        refusal = self._admit(entry, queue=True)
        if refusal is not None:
            return refusal

        async def body() -> None:
            run = await engine.run_one(spec, inv)
            self._finish_run(entry, run)

        job = _Job(entry, body, live=inv)
        self._known[entry.process_id] = entry
        self._jobs[entry.process_id] = job
        if self._has_slot(entry.session_id) and not self._counts.queued[entry.session_id]:
            self._launch(job)
        else:
            self._counts.queued[entry.session_id] += 1
            self._queue.append(job)
            self._journal(self.store.put, entry)
        return None

    def adopt(
        self,
        spec: HookSpec,
        inv: Invocation,
        agent_pid: int | None,
        handoff: AsyncHandoff,
        origin: AsyncOrigin | None = None,
    ) -> str | None:
        """Take a hook that backgrounded itself; it is already running, so it is never queued."""
        timeout = output_async_timeout(handoff.ack)
        entry = self._new_entry("output", spec, inv, agent_pid, origin)
        entry.timeout = timeout
        entry.pid = handoff.pid
        refusal = self._admit(entry, queue=False)
        if refusal is not None:
            return refusal

        async def body() -> None:
            result = await handoff.finish(timeout)
            self._finish(
                entry,
                state="timed_out" if result.timed_out else "finished",
                exit_code=result.returncode,
                stdout=result.stdout.decode("utf-8", errors="replace"),
                stderr=result.stderr.decode("utf-8", errors="replace"),
                truncated=result.truncated,
                error=f"timed out after {timeout:g}s" if result.timed_out else None,
            )

        job = _Job(entry, body, live=handoff)
        self._known[entry.process_id] = entry
        self._jobs[entry.process_id] = job
        self._launch(job)
        return None

    def _new_entry(
        self,
        kind: AsyncKind,
        spec: HookSpec,
        inv: Invocation,
        agent_pid: int | None,
        origin: AsyncOrigin | None = None,
    ) -> AsyncEntry:
        handler = spec.handler
        tool = inv.input.get("tool_name")
        command = handler.command if isinstance(handler, CommandHandler) else ""
        if isinstance(handler, CommandHandler) and handler.args:
            command = " ".join([handler.command, *handler.args])
        entry = AsyncEntry(
            process_id=uuid.uuid4().hex[:16],
            kind=kind,
            agent_pid=agent_pid,
            session_id=inv.session_id,
            hook_name=handler_label(handler),
            hook_event=inv.event_name,
            tool_name=tool if isinstance(tool, str) else "",
            command=command,
            source=spec.source,
            queued_time=time.time(),
            timeout=inv.timeout,
            run_id=inv.run_id,
        )
        if origin is not None:
            entry.span, entry.agent, entry.prompt_id = origin.span(), origin.agent, origin.prompt_id
        return entry

    def _admit(self, entry: AsyncEntry, *, queue: bool) -> str | None:
        if self._nursery is None or self._stopping:
            self.counters["refused"] += 1
            return "async hook refused: hookd is not accepting background hooks (stopping)"
        session = entry.session_id
        if self._has_slot(session):
            return None
        limits = self.limits
        if queue and self._counts.queued[session] < limits.max_queued_per_session:
            return None
        self.counters["refused"] += 1
        log.warning(
            "async hook refused: limits reached",
            session=session,
            hook=entry.hook_name,
            running=self._counts.running,
            session_running=self._counts.by_session[session],
            session_queued=self._counts.queued[session],
        )
        if not queue:
            return (
                f"async hook refused: {self._counts.running} background hooks running "
                f"(limits: {limits.max_running} in all, "
                f"{limits.max_running_per_session} per session); it was stopped"
            )
        return (
            f"async hook refused: {self._counts.by_session[session]} running and "
            f"{self._counts.queued[session]} queued for this session "
            f"(limits: {limits.max_running_per_session} running, "
            f"{limits.max_queued_per_session} queued per session, {limits.max_running} in all)"
        )

    def _has_slot(self, session: str) -> bool:
        return (
            self._counts.running < self.limits.max_running
            and self._counts.by_session[session] < self.limits.max_running_per_session
        )

    # --- running -----------------------------------------------------------------------

    def _launch(self, job: _Job) -> None:
        assert self._nursery is not None
        entry = job.entry
        self._counts.running += 1
        self._counts.by_session[entry.session_id] += 1
        entry.state = "running"
        entry.start_time = time.time()
        self._journal(self.store.put, entry)
        self._nursery.start_soon(self._guard, job, name=f"async hook {entry.process_id}")

    async def _guard(self, job: _Job) -> None:
        entry = job.entry
        try:
            await job.body()
        except trio.Cancelled:
            raise
        except Exception as exc:  # a bug here must not take the runner down
            log.exception("async hook crashed", hook=entry.hook_name, process_id=entry.process_id)
            self._finish(entry, state="finished", error=f"hookd error: {exc!r}")
        finally:
            if not entry.done:
                self._finish(entry, state="cancelled", error=STOPPED)
            self._release(job)

    def _release(self, job: _Job) -> None:
        entry = job.entry
        self._jobs.pop(entry.process_id, None)
        self._counts.running -= 1
        self._counts.by_session[entry.session_id] -= 1
        if self._counts.by_session[entry.session_id] <= 0:
            del self._counts.by_session[entry.session_id]
        if self._stopping or trio.current_effective_deadline() == float("-inf"):
            return  # being cancelled: queued jobs are recorded as cancelled by run()
        self._pump()

    def _pump(self) -> None:
        """Start queued jobs, oldest first, while slots are free."""
        if not self._queue or self._counts.running >= self.limits.max_running:
            return
        kept: collections.deque[_Job] = collections.deque()
        while self._queue:
            job = self._queue.popleft()
            session = job.entry.session_id
            if self._counts.running < self.limits.max_running and self._has_slot(session):
                self._counts.queued[session] -= 1
                if self._counts.queued[session] <= 0:
                    del self._counts.queued[session]
                self._launch(job)
            else:
                kept.append(job)
        self._queue = kept

    # --- finishing ---------------------------------------------------------------------

    def _finish_run(self, entry: AsyncEntry, run: HookRun) -> None:
        messages: list[str] = []
        output = run.output
        specific = output.hookSpecificOutput if output is not None else None
        if specific is not None and specific.additionalContext:
            messages.append(specific.additionalContext[:MAX_MESSAGE_CHARS])
        if output is not None and output.systemMessage:
            messages.append(output.systemMessage[:MAX_MESSAGE_CHARS])
        rewake = entry.kind == "asyncRewake" and run.exit_code == 2
        if rewake:
            text = run.stderr.strip() or run.stdout.strip() or "No stderr output"
            label = f"{entry.hook_event}:{entry.tool_name}" if entry.tool_name else entry.hook_event
            messages.append(
                f'{label} hook blocking error from command: "{entry.command}": '
                f"[{entry.command}]: {text}"[:MAX_MESSAGE_CHARS]
            )
        self._finish(
            entry,
            state="timed_out" if run.timed_out else "finished",
            exit_code=run.exit_code,
            stdout=run.stdout,
            stderr=run.stderr,
            truncated=run.truncated,
            error=run.error if run.outcome in ("non_blocking_error", "cancelled") else None,
            messages=messages,
            rewake=rewake,
            pid=run.pid,
        )

    def _finish(
        self,
        entry: AsyncEntry,
        *,
        state: AsyncState,
        exit_code: int | None = None,
        stdout: str = "",
        stderr: str = "",
        truncated: bool = False,
        error: str | None = None,
        messages: list[str] | None = None,
        rewake: bool = False,
        pid: int | None = None,
    ) -> None:
        """Record the end of a run (durably) and offer it for delivery.  Never awaits."""
        if entry.done:
            return
        job = self._jobs.get(entry.process_id)
        if pid is None and job is not None and job.live is not None:
            pid = job.live.pid
        entry.state = state
        entry.exit_code = exit_code
        entry.stdout, entry.stderr, entry.truncated = stdout, stderr, truncated
        entry.error = error
        entry.messages = messages or []
        entry.rewake = rewake
        entry.pid = pid if pid is not None else entry.pid
        entry.end_time = time.time()
        self.counters[entry.state] += 1
        self._journal(self.store.put, entry, durable=True)
        log.info(
            "async hook ended",
            session=entry.session_id,
            hook=entry.hook_name,
            kind=entry.kind,
            state=entry.state,
            exit_code=exit_code,
        )
        if self.on_finished is not None:
            self.on_finished(entry)
        self.delivery.offer(entry)

    # --- what delivery settled --------------------------------------------------------

    def _settled(self, entries: list[AsyncEntry]) -> None:
        """Entries that left the delivery index: keep the delivered ones listed (up to
        ``keep_delivered``), forget the dropped ones, and compact the journal when due."""
        for entry in entries:
            if entry.response_attachment_sent:
                self._delivered.append(entry.process_id)
            else:
                self._known.pop(entry.process_id, None)
        while len(self._delivered) > self.limits.keep_delivered:
            self._known.pop(self._delivered.popleft(), None)
        self._maybe_compact()

    def _maybe_compact(self) -> None:
        live = [e for e in self._known.values() if not e.response_attachment_sent]
        if self.store.records > 2 * len(live) + 1000:
            self._journal(self.store.compact, live)

    def _journal(self, fn: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        """Write to the journal; a disk error is logged, never raised into a hook's run."""
        try:
            fn(*args, **kwargs)
        except OSError as exc:
            self.counters["journal_errors"] += 1
            log.error("async journal write failed", path=str(self.store.path), error=str(exc))

    # --- views -------------------------------------------------------------------------

    def entries(self, session_id: str | None = None) -> Iterator[AsyncEntry]:
        for entry in self._known.values():
            if session_id is None or entry.session_id == session_id:
                yield entry

    def listing(self, session_id: str | None) -> list[dict[str, Any]]:
        """Rows for ``hookctl status`` and ``hookctl async``: every known run, oldest first."""
        now = time.time()
        rows: list[AsyncListing] = []
        for entry in sorted(self.entries(session_id), key=lambda e: e.queued_time):
            job = self._jobs.get(entry.process_id)
            live = job.live if job is not None else None
            size = len(entry.stdout) + len(entry.stderr)
            if isinstance(live, AsyncHandoff) and not entry.done:
                size = live.output_size()
            pid = entry.pid if entry.pid is not None else (live.pid if live else None)
            begin = entry.start_time or entry.queued_time
            rows.append(
                AsyncListing(
                    agent_pid=entry.agent_pid,
                    session_id=entry.session_id,
                    process_id=entry.process_id,
                    kind=entry.kind,
                    hook=entry.hook_name,
                    event=entry.hook_event,
                    tool=entry.tool_name,
                    state="delivered" if entry.response_attachment_sent else entry.state,
                    elapsed=round((entry.end_time or now) - begin, 3),
                    timeout=entry.timeout,
                    bytes=size,
                    delivered=entry.response_attachment_sent,
                    exit_code=entry.exit_code,
                    pid=pid,
                )
            )
        return [msgspec.to_builtins(r) for r in rows]

    def stats(self) -> dict[str, int]:
        return {
            "running": self._counts.running,
            "queued": len(self._queue),
            "undelivered": self.delivery.waiting(),
            **self.counters,
        }


class _Sink:
    """The engine's sink for one fire: remembers which agent process fired it."""

    def __init__(
        self, runner: AsyncRunner, agent_pid: int | None, origin: AsyncOrigin | None = None
    ) -> None:
        self.runner = runner
        self.agent_pid = agent_pid
        self.origin = origin

    def start(self, spec: HookSpec, invocation: Invocation, engine: Engine) -> str | None:
        return self.runner.submit(spec, invocation, engine, self.agent_pid, self.origin)

    def adopt(self, invocation: Invocation, handoff: AsyncHandoff) -> str | None:
        """The engine's :data:`~hookd.handlers.base.RunAdopter` for this fire's command hooks."""
        return self.runner.adopt(invocation.spec, invocation, self.agent_pid, handoff, self.origin)


def _kill_orphans(entry: AsyncEntry) -> None:
    """Kill what is left of a run the previous daemon died under (SIGKILL, crash).

    Its processes outlived their parent; they still carry the run's
    ``HOOKD_RUN_ID``, so they are found and killed before the run is reported
    as cancelled — nothing keeps running that nobody supervises.
    """
    pids = marked_processes(entry.run_id)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        except PermissionError as exc:
            log.warning("cannot kill an orphaned async hook process", pid=pid, error=str(exc))
    if pids:
        log.info("killed orphaned async hook processes", process_id=entry.process_id, pids=pids)

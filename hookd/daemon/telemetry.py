"""OpenTelemetry export of every event and hook run, daemon side (docs/observability.md).

Why the SDK is not in this process: the daemon answers an event in ~100 µs of Python,
and an SDK span — its object, its attribute checks, its batch queue, then protobuf and
an HTTP request under the same GIL — costs tens of µs per span here, and a batch
exported in a background thread holds the GIL for milliseconds while an event waits.
So the daemon only *records*: at the end of each event and each hook run
(:class:`~hookd.daemon.pipeline.EventPipeline`, as one more consumer beside the breaker,
the audit log and the live view) it encodes one compact :class:`SpanRecord` line — a few
µs — into a bounded buffer, and a trio task writes the buffer to an exporter process
(``python -m hookd.daemon.otel_export``), which owns the official ``opentelemetry-sdk``
and OTLP exporter, builds the spans and the metrics, and exports them on the other core.

Export never blocks an event: the buffer is bounded (``max_queue`` records); when it is
full — the exporter is slow, stuck on a collector that never answers, or restarting —
new records are dropped and counted; the exporter's own queue is bounded the same way
and reports its drops.  Both counts are in ``hookctl status``.  The daemon never imports
``opentelemetry``: without the ``otel`` extra it runs as before, and says in status and
its log why nothing is exported.

Span identities are chosen here (random 64-bit span ids, a 128-bit trace id per event
unless the agent passed a W3C ``TRACEPARENT``), so that a hook's span names its event's
span as parent, and an async hook's span — which ends long after its event — names the
event that started it as parent and is linked from the event that received its result.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import structlog
import trio

from hookd.daemon.async_store import AsyncEntry
from hookd.daemon.audit import EventAudit, hook_decision, kill_reason
from hookd.daemon.settings import TelemetrySettings
from hookd.subreaper import SUBREAPER
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = [
    "ExporterConfig",
    "ExporterStats",
    "Gauges",
    "SpanIds",
    "SpanRecord",
    "Telemetry",
    "TelemetryStatus",
    "otel_installed",
    "parse_traceparent",
    "resolve_config",
]

log = structlog.get_logger("hookd.telemetry")

EXPORTER_MODULE = "hookd.daemon.otel_export"
NOT_INSTALLED = 3
"""The exporter's exit status when the ``otel`` extra is missing: not restarted."""
_MAX_RESTART_DELAY = 60.0


# --- what crosses the pipe -------------------------------------------------------------


class SpanRecord(msgspec.Struct, array_like=True, omit_defaults=True, tag="s"):
    """One span: an event (``hook`` empty) or a hook run.  Positional on the wire (the
    exporter decodes with this same type): the fields cost no key bytes per span."""

    trace: str
    """The trace id, 32 hex digits."""
    span: int
    parent: int
    """The parent span's id (0: none)."""
    start_ns: int
    end_ns: int
    agent: str
    event: str
    session_id: str
    prompt_id: str = ""
    tool: str = ""
    tool_use_id: str = ""
    event_id: str = ""
    """The audit log's event id (``hookctl replay`` takes it)."""
    decision: str | None = None
    # event spans
    native_event: str = ""
    project: str = ""
    client: str = ""
    hooks: int = 0
    held_back: int = 0
    generation: int = 0
    errors: int = 0
    stop: bool = False
    links: list[tuple[str, int, str]] = msgspec.field(default_factory=list)
    """Spans this event received the results of: (trace, span, hook)."""
    # hook spans
    hook: str = ""
    """The hook's label as configured; the exporter redacts it (``hook_names``)."""
    hook_type: str = ""
    scope: str = ""
    source: str = ""
    matcher: str = ""
    outcome: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    truncated: bool = False
    is_async: bool = False
    kill: str | None = None
    error: str | None = None


_WIRE_ORDER = [
    "trace",
    "span",
    "parent",
    "start_ns",
    "end_ns",
    "agent",
    "event",
    "session_id",
    "prompt_id",
    "tool",
    "tool_use_id",
    "event_id",
    "decision",
    "native_event",
    "project",
    "client",
    "hooks",
    "held_back",
    "generation",
    "errors",
    "stop",
    "links",
    "hook",
    "hook_type",
    "scope",
    "source",
    "matcher",
    "outcome",
    "exit_code",
    "timed_out",
    "truncated",
    "is_async",
    "kill",
    "error",
]
"""The order :meth:`Telemetry.event` and :meth:`Telemetry.run` write their tuples in."""
if tuple(_WIRE_ORDER) != SpanRecord.__struct_fields__:  # pragma: no cover - a refactoring slip
    raise RuntimeError("telemetry: the record tuples no longer match SpanRecord's fields")


class Gauges(msgspec.Struct, array_like=True, tag="g"):
    """The daemon's state for the gauges, sent every few seconds."""

    sessions: int
    async_running: int
    async_queued: int
    generation: int
    config_errors: int
    reload_failures: int
    breakers: list[tuple[str, str, int, bool]]
    """(hook, breaker key, consecutive failures, paused) of every hook with failures."""


class ExporterConfig(msgspec.Struct, kw_only=True):
    """What the exporter process is told on its first line: the ``[telemetry]`` table
    with every ``OTEL_*`` variable already applied (:func:`resolve_config`)."""

    traces_endpoint: str
    metrics_endpoint: str
    headers: dict[str, str]
    timeout: float
    resource: dict[str, str]
    traces: bool
    metrics: bool
    metric_interval: float
    max_queue: int
    batch_size: int
    schedule_delay: float
    hook_names: str
    exporter_cpu: float
    version: str


class ExporterStats(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the exporter reports back, one JSON line whenever it changed."""

    exported: int = 0
    """Spans the collector accepted."""
    dropped: int = 0
    """Spans dropped in the exporter: its queue was full, or an export failed."""
    failed_exports: int = 0
    queued: int = 0
    last_error: str | None = None


class TelemetryStatus(msgspec.Struct, kw_only=True):
    """``hookctl status``'s telemetry line."""

    traces_endpoint: str
    metrics_endpoint: str
    exporter_pid: int | None = None
    recorded: int = 0
    """Spans recorded by the daemon."""
    exported: int = 0
    dropped: int = 0
    """Spans that will never reach the collector: dropped here (buffer full, exporter
    down) or in the exporter (its queue full, an export failed)."""
    queued: int = 0
    failed_exports: int = 0
    restarts: int = 0
    last_error: str | None = None


# --- configuration the ecosystem's way -----------------------------------------------------


def _pairs(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` (``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_RESOURCE_ATTRIBUTES``);
    values are percent-decoded as the specification says."""
    from urllib.parse import unquote

    out: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            out[key.strip()] = unquote(value.strip())
    return out


def _ms(env: Mapping[str, str], name: str) -> float:
    try:
        return float(env.get(name, "")) / 1000.0
    except ValueError:
        return 0.0


def _count(env: Mapping[str, str], name: str) -> int:
    try:
        return max(0, int(env.get(name, "")))
    except ValueError:
        return 0


def _first(*values: str | None) -> str:
    """The first value that is set (the table's key, then its variable, then a default)."""
    return next((v for v in values if v), "")


def _check_protocol(settings: TelemetrySettings, env: Mapping[str, str]) -> None:
    protocol = _first(
        settings.protocol,
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        env.get("OTEL_EXPORTER_OTLP_PROTOCOL"),
        "http/protobuf",
    )
    if protocol != "http/protobuf":
        raise ValueError(
            f"telemetry: protocol {protocol!r} is not supported: hookd exports OTLP over "
            "http/protobuf (port 4318 of a collector; set protocol or "
            "OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf)"
        )


def _resource(settings: TelemetrySettings, env: Mapping[str, str], version: str) -> dict[str, str]:
    resource = _pairs(env.get("OTEL_RESOURCE_ATTRIBUTES", ""))
    resource.update(settings.resource_attributes)
    resource["service.name"] = _first(
        settings.service_name, env.get("OTEL_SERVICE_NAME"), resource.get("service.name"), "hookd"
    )
    resource.setdefault("service.version", version)
    return resource


def resolve_config(
    settings: TelemetrySettings, env: Mapping[str, str], version: str
) -> ExporterConfig:
    """The table's keys, each empty one filled from its ``OTEL_*`` variable, then the
    defaults.  Raises ValueError for a protocol other than ``http/protobuf``."""
    _check_protocol(settings, env)
    base = _first(
        settings.endpoint, env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), "http://localhost:4318"
    ).rstrip("/")
    headers = _pairs(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""))
    headers.update(settings.headers)
    queue = settings.max_queue or _count(env, "OTEL_BSP_MAX_QUEUE_SIZE") or 2048
    batch = settings.batch_size or _count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE") or 512
    return ExporterConfig(
        traces_endpoint=_first(
            settings.traces_endpoint,
            env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            f"{base}/v1/traces",
        ),
        metrics_endpoint=_first(
            settings.metrics_endpoint,
            env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
            f"{base}/v1/metrics",
        ),
        headers=headers,
        timeout=settings.timeout or _ms(env, "OTEL_EXPORTER_OTLP_TIMEOUT") or 10.0,
        resource=_resource(settings, env, version),
        traces=settings.traces,
        metrics=settings.metrics,
        metric_interval=settings.metric_interval or _ms(env, "OTEL_METRIC_EXPORT_INTERVAL") or 60.0,
        max_queue=max(1, queue),
        batch_size=max(1, min(batch, queue)),
        schedule_delay=settings.schedule_delay or _ms(env, "OTEL_BSP_SCHEDULE_DELAY") or 1.0,
        hook_names=settings.hook_names,
        exporter_cpu=settings.exporter_cpu,
        version=version,
    )


def otel_installed() -> bool:
    """The ``otel`` extra is installed — found on the path, not imported (the daemon
    never imports it: ``importlib.util.find_spec`` of a submodule would)."""
    spec = importlib.util.find_spec("opentelemetry")
    if spec is None or not spec.submodule_search_locations:
        return False
    needed = ("sdk/trace/__init__.py", "exporter/otlp/proto/http/trace_exporter/__init__.py")
    return all(
        any((Path(root) / part).exists() for root in spec.submodule_search_locations)
        for part in needed
    )


# --- span identities --------------------------------------------------------------------


@dataclass(slots=True)
class SpanIds:
    """An event's span: its trace, its id, and its parent (the agent's span, or 0)."""

    trace: str
    span: int
    parent: int = 0


def parse_traceparent(value: str | None) -> tuple[str, int] | None:
    """W3C ``traceparent`` (``00-<32 hex trace>-<16 hex span>-<2 hex flags>``) → (trace,
    span); None when absent or malformed (an all-zero id is invalid too)."""
    if not value or len(value) < 55:
        return None
    parts = value.strip().split("-")
    if len(parts) < 4 or len(parts[1]) != 32 or len(parts[2]) != 16 or parts[0] == "ff":
        return None
    try:
        trace, span = int(parts[1], 16), int(parts[2], 16)
    except ValueError:
        return None
    if not trace or not span:
        return None
    return parts[1].lower(), span


def _span_id() -> int:
    return random.getrandbits(64) or 1


def _common(
    trace: str, span: int, parent: int, start: int, end: int, audit: EventAudit
) -> tuple[Any, ...]:
    """The fields every span has, in :data:`_WIRE_ORDER` up to ``event_id``, tag first."""
    raw = audit.raw
    tool = raw.get("tool_name")
    has_tool = isinstance(tool, str)
    return (
        "s",
        trace,
        span,
        parent,
        start,
        end,
        audit.agent,
        audit.event,
        audit.session_id,
        raw.get("prompt_id") or "",
        tool if has_tool else "",
        (raw.get("tool_use_id") or "") if has_tool else "",
        audit.id,
    )


_EVENT, _RUN = 0, 1
_NO_EVENT_FIELDS = ("", "", "", 0, 0, 0, 0, False, ())
"""A hook run's span leaves the event span's own fields (``native_event`` … ``links``)
at their defaults."""
_Pending = tuple[Any, ...] | SpanRecord | Gauges
"""A buffered item: an event's or a run's references (``_EVENT``/``_RUN`` first), or a
record built already (an async hook's span, the gauges)."""


# --- the daemon's recorder --------------------------------------------------------------


class Telemetry:
    """Records spans and gauges and feeds them to the exporter process.

    Built only when ``[telemetry] enabled`` and the extra is installed; the pipeline
    holds None otherwise and pays one ``is None`` per event."""

    def __init__(
        self,
        config: ExporterConfig,
        *,
        gauges: Callable[[], Gauges] | None = None,
        exporter_argv: list[str] | None = None,
    ) -> None:
        self.config = config
        self.gauges = gauges
        self.argv = exporter_argv or [sys.executable, "-m", EXPORTER_MODULE]
        self._buffer: list[_Pending] = []
        self._wake = trio.Event()
        self._torn = False
        """A write to the exporter was cancelled part-way (the daemon is stopping)."""
        self._encode = msgspec.json.Encoder().encode
        self.recorded = 0
        self.dropped = 0
        """Dropped here: the buffer was full or the exporter was not running."""
        self.restarts = 0
        self.pid: int | None = None
        self.stats = ExporterStats()
        """The running exporter's counts (each process counts from zero)."""
        self._past = ExporterStats()
        """The counts of the exporter processes that exited."""
        self.last_error: str | None = None

    # --- recording (the hot path: no await, no system call) --------------------------

    def event_span(self, env: Mapping[str, str] | None) -> SpanIds:
        """A new event's span ids; its trace continues the agent's when it passed one."""
        parent = parse_traceparent(env.get("TRACEPARENT")) if env else None
        if parent is not None:
            return SpanIds(parent[0], _span_id(), parent[1])
        return SpanIds(f"{random.getrandbits(128):032x}", _span_id())

    def _put(self, item: _Pending) -> None:
        if len(self._buffer) >= self.config.max_queue:
            self.dropped += 1
            return
        self._buffer.append(item)
        if not self._wake.is_set():
            self._wake.set()

    # On the hot path ``event`` and ``run`` keep references and two clock readings, no
    # more (under a µs): the writer turns them into records (:meth:`_wire`) a batch at a
    # time, after the answer went out.  What they reference is not changed afterwards.

    def event(
        self,
        ids: SpanIds | None,
        env: Mapping[str, str] | None,
        audit: EventAudit,
        result: FireResult,
        held_back: int,
        received: list[AsyncEntry] | None = None,
    ) -> None:
        """The event's span, when its answer is ready; ``ids`` None: chosen later (an
        event that ran no hook has no child that needed them first)."""
        self.recorded += 1
        self._put(
            (
                _EVENT,
                ids,
                env,
                audit,
                time.time_ns(),
                time.perf_counter(),
                result,
                held_back,
                received,
            )
        )

    def run(self, ids: SpanIds, audit: EventAudit, ref: HookRef, run: HookRun) -> None:
        """One finished (foreground) hook run's span, a child of its event's."""
        self.recorded += 1
        self._put((_RUN, ids, audit, time.time_ns(), ref, run))

    def _wire(self, item: _Pending) -> tuple[Any, ...] | SpanRecord | Gauges:
        """A pending item as it goes on the wire: the tuples are in SpanRecord's order
        (its tag, then its fields: :data:`_WIRE_ORDER` is checked against the Struct at
        import), cheaper to build than the Struct."""
        if not isinstance(item, tuple):
            return item
        if item[0] == _EVENT:
            return self._event_record(*item[1:])
        return self._run_record(*item[1:])

    def _event_record(
        self,
        ids: SpanIds | None,
        env: Mapping[str, str] | None,
        audit: EventAudit,
        end: int,
        perf_end: float,
        result: FireResult,
        held_back: int,
        received: list[AsyncEntry] | None,
    ) -> tuple[Any, ...]:
        if ids is None:
            ids = self.event_span(env)
        start = end - int((perf_end - audit.started) * 1e9)
        return (
            *_common(ids.trace, ids.span, ids.parent, start, end, audit),
            result.decision,
            audit.native_event,
            audit.project,
            audit.client,
            len(result.hooks),
            held_back,
            result.generation,
            len(result.errors),
            not result.continue_,
            [_link(entry) for entry in received if entry.span] if received else [],
        )

    @staticmethod
    def _run_record(
        ids: SpanIds, audit: EventAudit, end: int, ref: HookRef, run: HookRun
    ) -> tuple[Any, ...]:
        start = end - int(run.duration_ms * 1e6)
        return (
            *_common(ids.trace, _span_id(), ids.span, start, end, audit),
            hook_decision(run),
            *_NO_EVENT_FIELDS,
            ref.name,
            ref.type,
            ref.scope,
            ref.source,
            ref.matcher or "",
            run.outcome,
            run.exit_code,
            run.timed_out,
            run.truncated,
            False,
            kill_reason(run),
            run.error,
        )

    def async_span(self, ids: SpanIds) -> str:
        """The span an async hook started by this event will have (kept on its
        :class:`AsyncEntry` until it ends): ``trace-parent-span`` in hex."""
        return f"{ids.trace}-{ids.span:016x}-{_span_id():016x}"

    def async_finished(self, entry: AsyncEntry) -> None:
        """An async hook ended: its span, from its hand-over to its end."""
        if not entry.span:
            return
        trace, parent, span = entry.span.split("-")
        end = entry.end_time or time.time()
        record = SpanRecord(
            trace,
            int(span, 16),
            int(parent, 16),
            int(entry.queued_time * 1e9),
            int(end * 1e9),
            entry.agent,
            entry.hook_event,
            entry.session_id,
        )
        record.prompt_id, record.tool = entry.prompt_id, entry.tool_name
        record.hook, record.hook_type, record.source = entry.hook_name, "command", entry.source
        record.outcome = _async_outcome(entry)
        record.exit_code, record.timed_out = entry.exit_code, entry.state == "timed_out"
        record.truncated, record.is_async, record.error = entry.truncated, True, entry.error
        self.recorded += 1
        self._put(record)

    # --- status ----------------------------------------------------------------------------

    def status(self) -> TelemetryStatus:
        stats, past = self.stats, self._past
        return TelemetryStatus(
            traces_endpoint=self.config.traces_endpoint if self.config.traces else "",
            metrics_endpoint=self.config.metrics_endpoint if self.config.metrics else "",
            exporter_pid=self.pid,
            recorded=self.recorded,
            exported=past.exported + stats.exported,
            dropped=self.dropped + past.dropped + stats.dropped,
            queued=len(self._buffer) + stats.queued,
            failed_exports=past.failed_exports + stats.failed_exports,
            restarts=self.restarts,
            last_error=stats.last_error or self.last_error,
        )

    # --- the exporter process ----------------------------------------------------------

    async def run_exporter(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep the exporter process running (restarted with a growing delay when it
        dies) and feed it; ends when cancelled (the daemon stops)."""
        task_status.started()
        delay = 1.0
        while True:
            started = time.monotonic()
            code = await self._serve_exporter()
            if code == NOT_INSTALLED:
                self.last_error = (
                    "the otel extra is not installed for the exporter: pip install 'hookd[otel]'"
                )
                log.error("telemetry exporter cannot start", error=self.last_error)
                self._buffer.clear()
                return
            self.last_error = f"exporter exited with status {code}"
            log.error("telemetry exporter exited; restarting", status=code, delay=delay)
            self.restarts += 1
            delay = 1.0 if time.monotonic() - started > 60 else min(delay * 2, _MAX_RESTART_DELAY)
            self.dropped += len(self._buffer)
            self._buffer.clear()
            await trio.sleep(delay)

    async def _serve_exporter(self) -> int:
        """One exporter process from start to exit; returns its exit status."""
        # The exporter gets its configuration resolved on its first line: the SDK's own
        # reading of OTEL_* variables would apply them a second time, differently.
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        process = await SUBREAPER.open_process(
            functools.partial(
                trio.lowlevel.open_process,
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
        )
        self.pid = process.pid
        assert process.stdin is not None and process.stdout is not None
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._feed, process.stdin)
                if self.gauges is not None and self.config.metrics:
                    nursery.start_soon(self._send_gauges)
                await self._read_stats(process.stdout)  # until it closes: it is exiting
                nursery.cancel_scope.cancel()
            return await process.wait()
        finally:
            self.pid = None
            with trio.CancelScope(shield=True):
                await self._stop(process)
            SUBREAPER.waited(process.pid)
            # What this process counted carries over (its queue, lost with it, as drops).
            old, past = self.stats, self._past
            past.exported += old.exported
            past.dropped += old.dropped + old.queued
            past.failed_exports += old.failed_exports
            self.stats = ExporterStats(last_error=old.last_error)

    async def _feed(self, stdin: trio.abc.SendStream) -> None:
        """Write the buffer to the exporter, a batch at a time.  A blocked write (the
        exporter is stuck) only stops this task: the buffer fills and drops."""
        try:
            await stdin.send_all(msgspec.json.encode(self.config) + b"\n")
            while True:
                await self._wake.wait()
                self._wake = trio.Event()
                await trio.sleep(0.05)  # gather a few records per write
                await self._write_buffer(stdin)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the exporter is gone: its exit status says why

    async def _write_buffer(self, stdin: trio.abc.SendStream) -> None:
        """One line: the batch as a JSON array of records."""
        batch, self._buffer = self._buffer, []
        if batch:
            wire = [self._wire(item) for item in batch]
            self._torn = True  # until the whole line is written
            await stdin.send_all(self._encode(wire) + b"\n")
            self._torn = False

    async def _stop(self, process: trio.Process) -> None:
        """Hand over what is buffered, close the exporter's input (it exports what it
        holds, for at most 2 s, and exits), then kill it if it lingers."""
        if process.stdin is not None:
            with trio.move_on_after(1):
                try:
                    if self._torn:  # a write was cut off: end its line (dropped there)
                        await process.stdin.send_all(b"\n")
                    await self._write_buffer(process.stdin)
                except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
                    pass
            await process.stdin.aclose()
        with trio.move_on_after(3):
            await process.wait()
            return
        process.kill()
        await process.wait()

    async def _read_stats(self, stdout: trio.abc.ReceiveStream) -> None:
        decoder = msgspec.json.Decoder(ExporterStats)
        pending = b""
        async for chunk in stdout:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    self.stats = decoder.decode(line)
                except msgspec.DecodeError as exc:
                    log.warning(
                        "telemetry exporter said something odd", line=line[:200], error=str(exc)
                    )

    async def _send_gauges(self) -> None:
        assert self.gauges is not None
        every = max(0.5, min(self.config.metric_interval / 2, 5.0))
        while True:
            self._put(self.gauges())
            await trio.sleep(every)


def _link(entry: AsyncEntry) -> tuple[str, int, str]:
    trace, _, span = entry.span.split("-")
    return trace, int(span, 16), entry.hook_name


def _async_outcome(entry: AsyncEntry) -> str:
    if entry.state == "cancelled":
        return "cancelled"
    if entry.state == "timed_out" or entry.error:
        return "non_blocking_error"
    if entry.exit_code == 2:
        return "blocking"
    return "success" if entry.exit_code in (0, None) else "non_blocking_error"


def gauges_from(
    *,
    sessions: int,
    async_stats: dict[str, int],
    generation: int,
    config_errors: int,
    reload_failures: int,
    breakers: list[Any],
) -> Gauges:
    """The gauges record from the daemon's parts (``Daemon`` calls it)."""
    return Gauges(
        sessions=sessions,
        async_running=async_stats.get("running", 0),
        async_queued=async_stats.get("queued", 0),
        generation=generation,
        config_errors=config_errors,
        reload_failures=reload_failures,
        breakers=[(b.hook, b.key, b.failures, b.paused) for b in breakers],
    )

"""The telemetry exporter process: records from the daemon in, OTLP out.

``python -m hookd.daemon.otel_export`` — started by the daemon
(:class:`hookd.daemon.telemetry.Telemetry`), never imported by it.  This is the only
module of hookd that imports ``opentelemetry`` (the ``otel`` extra).  It reads, on its
standard input, one :class:`~hookd.daemon.telemetry.ExporterConfig` line and then one
:class:`~hookd.daemon.telemetry.SpanRecord` or :class:`~hookd.daemon.telemetry.Gauges`
per line; builds the SDK's spans with the identities the daemon chose, and records the
metrics; exports with the official OTLP/HTTP exporters; and writes an
:class:`~hookd.daemon.telemetry.ExporterStats` line to its standard output whenever
its counts changed (at most every 0.2 s).

Bounded: spans wait in a queue of ``max_queue``; when it is full — the collector is slow,
unreachable, or accepts and never answers — new spans are dropped and counted, as is a
batch whose export failed.  Reading never waits for exporting (two threads), so the
daemon's pipe never fills because of a collector.  At the end of its input (the daemon
stops) it exports what it holds and exits.
"""

from __future__ import annotations

import collections
import fcntl
import hashlib
import os
import re
import shlex
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import msgspec

from hookd.daemon.telemetry import (
    NOT_INSTALLED,
    ExporterConfig,
    ExporterStats,
    Gauges,
    SpanRecord,
)

__all__ = ["main", "redact_hook"]

_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SCRIPT = re.compile(r"\.(py|sh|bash|zsh|js|mjs|cjs|ts|rb|pl|php|lua|exe)$")
_REDACTED = "…"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _redact_url(url: str) -> str:
    """scheme://host[:port]/path — no user, password, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return _REDACTED
    if not parts.scheme or not host:
        return _REDACTED
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _redact_word(word: str) -> str:
    if word.startswith("-"):
        flag, eq, _ = word.partition("=")
        return f"{flag}={_REDACTED}" if eq else word
    if "://" in word:
        return _redact_url(word)
    if ("/" in word or _SCRIPT.search(word)) and not any(c in word for c in "=@:"):
        return word
    return _REDACTED


def redact_hook(label: str, hook_type: str, mode: str = "redacted") -> str:
    """A hook's name as exported (docs/observability.md, "The redaction rule").

    ``full``: as configured.  ``hash``: ``sha256:<12 hex>`` of it.  ``redacted``: a
    command keeps its program, its flags (``--x``; ``--x=…`` loses the value) and the
    words that name files (a ``/`` or a script extension, without ``=``, ``@`` or ``:``);
    an environment assignment before the program keeps its name (``TOKEN=…``); a URL
    keeps scheme, host, port and path; every other word becomes ``…``.  An http hook's
    URL is cut the same way; a prompt or agent hook is ``prompt:<12 hex>`` (its prompt
    is text of the user's); python and callback hooks keep their callable's name.
    """
    if mode == "full":
        return label
    if mode == "hash":
        return f"sha256:{_digest(label)}"
    if hook_type in ("prompt", "agent"):
        return f"{hook_type}:{_digest(label)}"
    if hook_type == "http":
        return _redact_url(label)
    if hook_type != "command":
        return label
    try:
        words = shlex.split(label)
    except ValueError:  # an unbalanced quote (a label cut at 80 characters)
        words = label.split()
    out: list[str] = []
    program = False
    for word in words:
        if not program and _ENV_ASSIGNMENT.match(word):
            out.append(word.partition("=")[0] + "=" + _REDACTED)
        elif not program:
            program = True
            out.append(word)
        else:
            out.append(_redact_word(word))
    return " ".join(out)


class _Names:
    """Redaction memoised per (label, type): a session runs the same hooks again."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self._known: dict[tuple[str, str], str] = {}

    def __call__(self, label: str, hook_type: str) -> str:
        key = (label, hook_type)
        name = self._known.get(key)
        if name is None:
            if len(self._known) > 4096:
                self._known.clear()
            name = self._known[key] = redact_hook(label, hook_type, self.mode)
        return name


class _CpuCap:
    """Keeps the process under ``share`` of one core (0: no cap), both threads together.

    Each thread calls :meth:`pace` after a piece of work; over the budget, it sleeps.  The
    reader sleeping stops reading, so the daemon's writes wait, its bounded buffer fills,
    and records are dropped there — the cheapest place, one length check in the daemon.
    """

    def __init__(self, share: float) -> None:
        self.share = share
        self._cpu0 = time.process_time()
        self._wall0 = time.monotonic()

    def pace(self) -> None:
        if self.share <= 0:
            return
        cpu, wall = time.process_time(), time.monotonic()
        used, elapsed = cpu - self._cpu0, wall - self._wall0
        if used > self.share * elapsed:
            time.sleep(min(1.0, used / self.share - elapsed))
        if elapsed > 5.0:  # a sliding window: old idle time is no credit
            self._cpu0, self._wall0 = cpu, wall


class Exporter:
    """Spans and metrics from records; the SDK objects live here only."""

    def __init__(self, config: ExporterConfig) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope

        self.config = config
        self.names = _Names(config.hook_names)
        self.cpu = _CpuCap(config.exporter_cpu)
        self.resource = Resource.create(dict(config.resource))
        self.scope = InstrumentationScope("hookd", config.version)
        self.queue: collections.deque[SpanRecord] = collections.deque()
        self.ready = threading.Condition()
        self.done = False
        self.stats = ExporterStats()
        self._reported = ExporterStats()
        self._report_lock = threading.Lock()
        self.finished = threading.Event()
        self.spans: Any = None
        if config.traces:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self.spans = OTLPSpanExporter(
                endpoint=config.traces_endpoint, headers=config.headers, timeout=config.timeout
            )
        self.metrics: _Metrics | None = _Metrics(config, self.resource) if config.metrics else None

    # --- reading (its own thread) ------------------------------------------------------

    def read(self, stream: Any) -> None:
        decoder = msgspec.json.Decoder(list[SpanRecord | Gauges])
        for line in stream:
            try:
                records = decoder.decode(line)
            except msgspec.DecodeError as exc:
                print(f"hookd telemetry exporter: bad batch: {exc}", file=sys.stderr)
                continue
            for record in records:
                self._take(record)
            self.cpu.pace()
        with self.ready:
            self.done = True
            self.ready.notify()

    def _take(self, record: SpanRecord | Gauges) -> None:
        if isinstance(record, Gauges):
            if self.metrics is not None:
                self.metrics.gauges(record, self.names)
            return
        if self.metrics is not None:
            self.metrics.record(record, self.names)
        if self.spans is None:
            return
        with self.ready:
            if len(self.queue) >= self.config.max_queue:
                self.stats.dropped += 1
            else:
                self.queue.append(record)
            if len(self.queue) >= self.config.batch_size:
                self.ready.notify()

    # --- exporting (the main thread) -----------------------------------------------------

    def run(self) -> None:
        while True:
            with self.ready:
                if not self.done and len(self.queue) < self.config.batch_size:
                    self.ready.wait(self.config.schedule_delay)
                batch = [
                    self.queue.popleft()
                    for _ in range(min(len(self.queue), self.config.batch_size))
                ]
                done = self.done and not self.queue
                self.stats.queued = len(self.queue)
            if batch:
                self._export(batch)
                self.cpu.pace()
            if done:
                break
        if self.spans is not None:
            self.spans.shutdown()
        if self.metrics is not None:
            self.metrics.shutdown()
        self.finished.set()
        self._report()

    def _export(self, batch: list[SpanRecord]) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            outcome = self.spans.export([self._span(r) for r in batch])
        except Exception as exc:  # the exporter's own bug must not end the process
            outcome, error = None, repr(exc)
        else:
            error = "the collector refused or did not answer the export"
        if outcome == SpanExportResult.SUCCESS:
            self.stats.exported += len(batch)
            return
        self.stats.failed_exports += 1
        self.stats.dropped += len(batch)
        self.stats.last_error = f"{error} ({self.config.traces_endpoint})"

    def report(self) -> None:
        """Its own thread: the counts, every 0.2 s when they changed — an export that
        hangs for its whole timeout must not hide the drops meanwhile."""
        while not self.finished.wait(0.2):
            self._report()

    def _report(self) -> None:
        with self._report_lock:
            if self.stats == self._reported:
                return
            self._reported = msgspec.structs.replace(self.stats)
            sys.stdout.buffer.write(msgspec.json.encode(self.stats) + b"\n")
            sys.stdout.buffer.flush()

    def _span(self, r: SpanRecord) -> Any:
        from opentelemetry.sdk.trace import ReadableSpan
        from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

        sampled = TraceFlags(TraceFlags.SAMPLED)
        trace = int(r.trace, 16)
        context = SpanContext(trace, r.span, is_remote=False, trace_flags=sampled)
        parent = SpanContext(trace, r.parent, is_remote=False, trace_flags=sampled)
        attributes = span_attributes(r, self.names)
        links = [
            Link(
                SpanContext(int(t, 16), s, is_remote=False, trace_flags=sampled),
                {"hookd.link": "async_result", "hookd.hook.name": self.names(h, "command")},
            )
            for t, s, h in r.links
        ]
        if r.is_async and r.parent:  # it outlives its parent: say so where links are read
            links.append(Link(parent, {"hookd.link": "started_by"}))
        error = _error_type(r) if r.hook else ""
        status = Status(StatusCode.ERROR, error) if error else Status(StatusCode.UNSET)
        if r.hook:
            name, kind = f"execute_hook {attributes['hookd.hook.name']}", SpanKind.INTERNAL
        else:
            name, kind = f"hookd {r.event}", SpanKind.SERVER
        return ReadableSpan(
            name=name,
            context=context,
            parent=parent if r.parent else None,
            resource=self.resource,
            attributes=attributes,
            links=links,
            kind=kind,
            status=status,
            start_time=r.start_ns,
            end_time=r.end_ns,
            instrumentation_scope=self.scope,
        )


def _error_type(r: SpanRecord) -> str:
    """Why a hook run failed (``timeout``, ``signal N``, ``non_blocking_error``,
    ``cancelled``), or "" — a block (exit 2) is a decision, not a failure."""
    if r.kill:
        return r.kill
    if r.outcome in ("non_blocking_error", "cancelled"):
        return r.outcome
    return ""


def span_attributes(r: SpanRecord, names: _Names) -> dict[str, Any]:
    """Every attribute of a span (docs/observability.md lists them)."""
    a: dict[str, Any] = {
        "gen_ai.agent.name": r.agent,
        "gen_ai.conversation.id": r.session_id,
        "session.id": r.session_id,
        "hookd.event": r.event,
    }
    if r.prompt_id:
        a["prompt.id"] = r.prompt_id
    if r.tool:
        a["gen_ai.tool.name"] = r.tool
    if r.tool_use_id:
        a["gen_ai.tool.call.id"] = r.tool_use_id
    if r.event_id:
        a["hookd.event.id"] = r.event_id
    if r.decision is not None:
        a["hookd.decision"] = r.decision
    if r.hook:
        a["gen_ai.operation.name"] = "execute_hook"
        a["hookd.hook.name"] = names(r.hook, r.hook_type)
        a["hookd.hook.type"] = r.hook_type
        a["hookd.hook.async"] = r.is_async
        a["hookd.hook.outcome"] = r.outcome
        a["hookd.hook.timed_out"] = r.timed_out
        a["hookd.hook.truncated"] = r.truncated
        for key, text in (
            ("hookd.hook.scope", r.scope),
            ("hookd.hook.source", r.source),
            ("hookd.hook.matcher", r.matcher),
            ("error.type", _error_type(r)),
        ):
            if text:
                a[key] = text
        if r.exit_code is not None:
            a["process.exit.code"] = r.exit_code
        return a
    # An event span's zeros are left out (most events run no hook): every attribute costs
    # the exporter's pure-Python encoder ~5 µs, and the backend reads a missing one as 0.
    a["hookd.hooks"] = r.hooks
    a["hookd.config.generation"] = r.generation
    optional: tuple[tuple[str, str | int | bool], ...] = (
        ("hookd.hooks.held_back", r.held_back),
        ("hookd.errors", r.errors),
        ("hookd.stop", r.stop),
        ("hookd.event.native", r.native_event),
        ("hookd.project", r.project),
        ("hookd.client", r.client),
    )
    for key, value in optional:
        if value:
            a[key] = value
    return a


class _Metrics:
    """The instruments (docs/observability.md, "Metrics") and their reader."""

    def __init__(self, config: ExporterConfig, resource: Any) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        exporter = OTLPMetricExporter(
            endpoint=config.metrics_endpoint, headers=config.headers, timeout=config.timeout
        )
        reader = PeriodicExportingMetricReader(
            exporter,
            export_interval_millis=config.metric_interval * 1000,
            export_timeout_millis=config.timeout * 1000,
        )
        self.provider = MeterProvider(resource=resource, metric_readers=[reader])
        meter = self.provider.get_meter("hookd", config.version)
        self.hook_duration = meter.create_histogram(
            "hookd.hook.duration", unit="s", description="Duration of one hook run"
        )
        self.event_duration = meter.create_histogram(
            "hookd.event.duration", unit="s", description="Duration of one event, all its hooks"
        )
        self.decisions = meter.create_counter(
            "hookd.hook.decisions", description="Decisions hooks gave, by hook and decision"
        )
        self.failures = meter.create_counter(
            "hookd.hook.failures", description="Hook runs that failed (error, timeout, signal)"
        )
        self.timeouts = meter.create_counter(
            "hookd.hook.timeouts", description="Hook runs stopped at their timeout"
        )
        self.breaker_failures = meter.create_gauge(
            "hookd.breaker.failures", description="Consecutive failures of a hook's breaker"
        )
        self.breaker_paused = meter.create_gauge(
            "hookd.breaker.paused", description="1 while the circuit breaker pauses the hook"
        )
        self.sessions = meter.create_gauge("hookd.sessions", description="Live agent sessions")
        self.async_running = meter.create_gauge(
            "hookd.async.running", description="Async hooks running"
        )
        self.async_queued = meter.create_gauge(
            "hookd.async.queued", description="Async hooks waiting for a slot"
        )
        self.generation = meter.create_gauge(
            "hookd.config.generation", description="The live configuration's generation"
        )
        self.config_errors = meter.create_gauge(
            "hookd.config.errors", description="Errors in the configuration files now"
        )
        self.reload_failures = meter.create_gauge(
            "hookd.config.reload_failures", description="Reloads that failed since start"
        )
        self._breakers: dict[str, dict[str, str]] = {}
        """The attributes of every breaker series set, by key (a closed one goes to 0)."""

    def record(self, r: SpanRecord, names: _Names) -> None:
        seconds = max(0.0, (r.end_ns - r.start_ns) / 1e9)
        if not r.hook:
            self.event_duration.record(
                seconds, {"hookd.event": r.event, "gen_ai.agent.name": r.agent}
            )
            return
        attrs = {
            "hookd.hook.name": names(r.hook, r.hook_type),
            "hookd.hook.type": r.hook_type,
            "hookd.event": r.event,
            "gen_ai.agent.name": r.agent,
        }
        self.hook_duration.record(seconds, {**attrs, "hookd.hook.outcome": r.outcome})
        if r.decision is not None:
            self.decisions.add(1, {**attrs, "hookd.decision": r.decision})
        if r.timed_out:
            self.timeouts.add(1, attrs)
        error = _error_type(r)
        if error:
            self.failures.add(1, {**attrs, "error.type": error})

    def gauges(self, g: Gauges, names: _Names) -> None:
        self.sessions.set(g.sessions)
        self.async_running.set(g.async_running)
        self.async_queued.set(g.async_queued)
        self.generation.set(g.generation)
        self.config_errors.set(g.config_errors)
        self.reload_failures.set(g.reload_failures)
        seen: dict[str, dict[str, str]] = {}
        for hook, key, failures, paused in g.breakers:
            attrs = seen[key] = {
                "hookd.hook.name": names(hook, "command"),
                "hookd.breaker.key": key,
            }
            self.breaker_failures.set(failures, attrs)
            self.breaker_paused.set(int(paused), attrs)
        for key, attrs in self._breakers.items():
            if key not in seen:  # closed again: back to zero
                self.breaker_failures.set(0, attrs)
                self.breaker_paused.set(0, attrs)
        self._breakers = seen

    def shutdown(self) -> None:
        self.provider.shutdown(timeout_millis=2000)


def _pipe_input() -> Any:
    """Standard input read 1 MiB at a time from a pipe enlarged to 1 MiB where Linux
    allows: the daemon's writes then wait less often for this process to read."""
    try:
        fcntl.fcntl(0, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass  # not a pipe, or above /proc/sys/fs/pipe-max-size: the default size works
    return os.fdopen(0, "rb", buffering=1 << 20, closefd=False)


def main() -> int:
    stdin = _pipe_input()
    first = stdin.readline()
    if not first:
        return 0
    config = msgspec.json.decode(first, type=ExporterConfig)
    # Background work: on a machine whose cores the agents and the daemon keep busy, the
    # exporter takes only what they leave (its queue is bounded; a starved exporter drops).
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)
    try:
        exporter = Exporter(config)
    except ImportError as exc:
        print(
            f"hookd telemetry exporter: {exc}: pip install 'hookd[otel]'",
            file=sys.stderr,
        )
        return NOT_INSTALLED
    reader = threading.Thread(target=exporter.read, args=(stdin,), daemon=True)
    reader.start()
    threading.Thread(target=exporter.report, daemon=True).start()
    exporter.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())

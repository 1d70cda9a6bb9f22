"""OTLP/HTTP receivers on loopback for the telemetry tests: one that stores what it is
sent (decoded with ``opentelemetry-proto``, from the ``otel`` extra), and one that
accepts connections and never answers.

Both run in the test's trio loop (:func:`support.fake_http.serve_loopback`); the
daemon's exporter process reaches them over real HTTP.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from support.fake_http import send, serve_loopback

__all__ = ["OtlpSink", "ReceivedSpan", "SilentCollector", "start_otlp_sink", "start_silent"]


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    status: int
    attributes: dict[str, Any]
    links: list[tuple[str, str, dict[str, Any]]]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


@dataclass
class OtlpSink:
    """Stores every span and metric data point it receives."""

    port: int = 0
    spans: list[ReceivedSpan] = field(default_factory=list)
    metrics: dict[str, list[tuple[dict[str, Any], Any]]] = field(default_factory=dict)
    """Metric name → (attributes, data point) of every point received."""
    requests: int = 0
    changed: trio.Event = field(default_factory=trio.Event)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def take(self, path: str, body: bytes) -> None:
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self.requests += 1
        if path == "/v1/traces":
            traces = trace_service_pb2.ExportTraceServiceRequest()
            traces.ParseFromString(body)
            for rs in traces.resource_spans:
                resource = _attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            ReceivedSpan(
                                name=s.name,
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent_id=s.parent_span_id.hex(),
                                kind=s.kind,
                                status=s.status.code,
                                attributes=_attrs(s.attributes),
                                links=[
                                    (ln.trace_id.hex(), ln.span_id.hex(), _attrs(ln.attributes))
                                    for ln in s.links
                                ],
                                resource=resource,
                                start_ns=s.start_time_unix_nano,
                                end_ns=s.end_time_unix_nano,
                            )
                        )
        elif path == "/v1/metrics":
            metrics = metrics_service_pb2.ExportMetricsServiceRequest()
            metrics.ParseFromString(body)
            for rm in metrics.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        data = getattr(m, m.WhichOneof("data"))
                        points = self.metrics.setdefault(m.name, [])
                        points.extend((_attrs(p.attributes), p) for p in data.data_points)
        self.changed.set()
        self.changed = trio.Event()

    async def wait_for(self, check: Any, timeout: float = 60.0) -> Any:
        """Wait until ``check()`` is truthy (re-checked on every request); its value."""
        with trio.fail_after(timeout):
            while not (value := check()):
                await self.changed.wait()
            return value


async def _answer(
    sink: OtlpSink, stream: trio.SocketStream, conn: h11.Connection, req: h11.Request, body: bytes
) -> None:
    sink.take(req.target.decode(), body)
    headers = [("content-type", "application/x-protobuf"), ("content-length", "0")]
    await send(stream, conn, h11.Response(status_code=200, headers=headers))
    await send(stream, conn, h11.EndOfMessage())


async def start_otlp_sink(nursery: trio.Nursery) -> OtlpSink:
    sink = OtlpSink()
    await nursery.start(serve_loopback, sink, _answer)
    return sink


@dataclass
class SilentCollector:
    """Accepts every connection, reads what it is sent, and never answers."""

    port: int = 0
    connections: int = 0
    received: int = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"


async def _silent(
    collector: SilentCollector, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    await sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    collector.port = sock.getsockname()[1]

    async def hold(stream: trio.SocketStream) -> None:
        collector.connections += 1
        async with stream:
            while chunk := await stream.receive_some(65536):
                collector.received += len(chunk)

    async with trio.open_nursery() as nursery:
        task_status.started(collector.port)
        await trio.serve_listeners(hold, [trio.SocketListener(sock)], handler_nursery=nursery)


async def start_silent(nursery: trio.Nursery) -> SilentCollector:
    collector = SilentCollector()
    await nursery.start(_silent, collector)
    return collector

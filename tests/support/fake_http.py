"""The HTTP half of every fake model server: one loopback listener, h11 on trio.

The fake Anthropic Messages API (``e2e/fake_api.py``), the fake Responses API
(``agents/fake_responses.py``) and the fake Gemini API
(``agents/fake_gemini.py``) differ only in what they answer; how they accept
a connection, read requests with keep-alive and write an answer is here, once.
Each runs in the test's own trio loop (no thread, no subprocess), so a test
can read what the model was sent as soon as the agent exits.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import h11
import trio

__all__ = [
    "FakeApi",
    "Respond",
    "refused_port",
    "send",
    "send_events",
    "send_json",
    "serve_loopback",
]


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port where every connection is refused, for as long as the block runs.

    Bound and never listened on, and kept open meanwhile: the kernel answers a connect
    with a reset (``ECONNREFUSED``), and no other process can take the port — as it
    could between a helper closing a socket to "free" a port and the test's connect."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


class FakeApi(Protocol):
    port: int
    """The loopback port, set once the server is bound."""


Api = TypeVar("Api", bound=FakeApi)

Respond = Callable[[Api, trio.SocketStream, h11.Connection, h11.Request, bytes], Awaitable[None]]
"""Answer one request (its whole body read) on ``stream`` through ``conn``, for ``api``."""


async def send(stream: trio.SocketStream, conn: h11.Connection, event: h11.Event) -> None:
    data = conn.send(event)
    if data:
        await stream.send_all(data)


async def send_json(
    stream: trio.SocketStream, conn: h11.Connection, status: int, body: dict[str, Any]
) -> None:
    payload = json.dumps(body).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(payload)))]
    await send(stream, conn, h11.Response(status_code=status, headers=headers))
    await send(stream, conn, h11.Data(data=payload))
    await send(stream, conn, h11.EndOfMessage())


async def send_events(
    stream: trio.SocketStream, conn: h11.Connection, chunks: Iterable[bytes]
) -> None:
    """A 200 ``text/event-stream`` answer (server-sent events), one chunk a write."""
    headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
    await send(stream, conn, h11.Response(status_code=200, headers=headers))
    for chunk in chunks:
        await send(stream, conn, h11.Data(data=chunk))
    await send(stream, conn, h11.EndOfMessage())


async def _serve_connection(api: Api, stream: trio.SocketStream, respond: Respond[Api]) -> None:
    conn = h11.Connection(h11.SERVER)
    async with stream:
        while True:
            request: h11.Request | None = None
            body = bytearray()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    chunk = await stream.receive_some(65536)
                    conn.receive_data(chunk)
                    if not chunk and conn.their_state is not h11.DONE:
                        return
                    continue
                if isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                    break
            if request is None:
                return
            await respond(api, stream, conn, request, bytes(body))
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                return
            conn.start_next_cycle()


async def serve_loopback(
    api: Api,
    respond: Respond[Api],
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``api`` on an ephemeral loopback port: ``api.port`` is set, then
    ``task_status.started(port)``."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    await sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    api.port = sock.getsockname()[1]
    listener = trio.SocketListener(sock)

    async def handler(stream: trio.SocketStream) -> None:
        try:
            await _serve_connection(api, stream, respond)
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.RemoteProtocolError):
            pass  # the agent hung up mid-request (it was killed, or gave up); nothing to answer

    async with trio.open_nursery() as nursery:
        task_status.started(api.port)
        await trio.serve_listeners(handler, [listener], handler_nursery=nursery)

"""Connections cost bounded memory and descriptors, and one http request cannot hog the loop.

Issue 14, items 5 and 6.  Each limit is a daemon setting; each refusal is an
``error`` frame (or an HTTP status with a JSON body) that names the limit.
The tests set the limits small and cross them with real sockets.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import time
from pathlib import Path
from typing import Any

import h11
import msgspec
import trio
import trio.testing

from hookd.doors import http_endpoint
from hookd_client import protocol
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure
from support.http_door import HEALTH, exchange, hook_request, read_response

MIB = 1024 * 1024


# --- the Unix socket -----------------------------------------------------------------


def _connect(sock: Path, hello: bool = True) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(20)
    conn.connect(str(sock))
    if hello:
        conn.sendall(protocol.encode(protocol.Hello(client="limits-test")))
        reply = _read_frame(conn)
        assert isinstance(reply, protocol.Welcome), reply
    return conn


def _read_frame(conn: socket.socket) -> protocol.ServerMessage | None:
    """The next frame, or None at EOF."""
    head = b""
    while len(head) < 4:
        chunk = conn.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (length,) = protocol.HEADER.unpack(head)
    body = b""
    while len(body) < length:
        chunk = conn.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return protocol.decode_server(body)


def _error_then_eof(conn: socket.socket) -> protocol.Error:
    reply = _read_frame(conn)
    assert isinstance(reply, protocol.Error), reply
    assert _read_frame(conn) is None, "the connection should be closed after the error"
    return reply


async def in_thread(fn: Any, *args: Any) -> Any:
    return await trio.to_thread.run_sync(fn, *args)


async def test_a_connection_that_never_says_hello_is_closed(daemon_factory: Any) -> None:
    handle = await daemon_factory(hello_timeout=0.3)

    def run() -> protocol.Error:
        with _connect(handle.socket, hello=False) as conn:
            return _error_then_eof(conn)

    err = await in_thread(run)
    assert err.code == "timeout" and "hello_timeout" in err.message


async def test_a_frame_sent_too_slowly_is_dropped(daemon_factory: Any) -> None:
    """Slowloris: a frame's first bytes, then nothing."""
    handle = await daemon_factory(frame_timeout=0.3)

    def run() -> protocol.Error:
        with _connect(handle.socket) as conn:
            conn.sendall(protocol.HEADER.pack(1000) + b"\x81")
            return _error_then_eof(conn)

    err = await in_thread(run)
    assert err.code == "timeout" and "frame_timeout" in err.message


async def test_connections_over_the_cap_are_refused_with_a_reason(daemon_factory: Any) -> None:
    handle = await daemon_factory(max_connections=4, max_connections_per_pid=100)

    def run() -> tuple[protocol.Error, bool]:
        conns = [_connect(handle.socket) for _ in range(4)]
        try:
            with _connect(handle.socket, hello=False) as extra:
                err = _error_then_eof(extra)
            conns.pop().close()
            # One left: a new connection is served again (wait until the close is seen).
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with _connect(handle.socket, hello=False) as again:
                    try:
                        again.sendall(protocol.encode(protocol.Hello(client="again")))
                        reply = _read_frame(again)
                    except (BrokenPipeError, ConnectionResetError):
                        # Refused and closed before the hello was written or read: the
                        # daemon has not seen the close yet.  Another attempt.
                        reply = None
                    if isinstance(reply, protocol.Welcome):
                        return err, True
            return err, False
        finally:
            for conn in conns:
                conn.close()

    err, served_again = await in_thread(run)
    assert err.code == "busy" and "max_connections = 4" in err.message
    assert served_again


async def test_connections_per_peer_process_are_capped(daemon_factory: Any) -> None:
    handle = await daemon_factory(max_connections_per_pid=3)

    def run() -> protocol.Error:
        conns = [_connect(handle.socket) for _ in range(3)]
        try:
            with _connect(handle.socket, hello=False) as extra:
                return _error_then_eof(extra)
        finally:
            for conn in conns:
                conn.close()

    err = await in_thread(run)
    assert err.code == "busy" and "max_connections_per_pid = 3" in err.message


async def test_a_process_that_closes_its_connections_is_never_refused(
    daemon_factory: Any,
) -> None:
    """The per-process count goes down as connections close: a client that connects,
    asks and closes again and again (hookd-relay: one connection per event) is served
    every time, far past ``max_connections_per_pid`` connections in all."""
    handle = await daemon_factory(max_connections_per_pid=2, max_connections=3)
    limits = handle.daemon.limits

    def ask(n: int) -> int:
        with _connect(handle.socket) as conn:
            conn.sendall(protocol.encode(protocol.Status(id=n)))
            reply = _read_frame(conn)
            assert isinstance(reply, protocol.Reply), (n, reply)
            return reply.id

    for n in range(8):
        assert await in_thread(ask, n) == n
        with trio.fail_after(20):  # the daemon has seen the close
            while limits.open:
                await trio.sleep(0.01)
        assert dict(limits.per_pid) == {}, limits.per_pid


async def test_a_large_frame_that_waits_for_room_is_served_once_room_is_given_back(
    daemon_factory: Any,
) -> None:
    """Two 3 MiB frames against a budget that holds one: the second waits (up to a
    ``buffer_wait`` far longer than the test) and is served as soon as the first one's
    answer gives its share back — not refused when the wait runs out."""
    handle = await daemon_factory(buffer_budget=12 * MIB, buffer_wait=30)
    budget = handle.daemon.buffer_budget
    body = msgspec.msgpack.encode({"kind": "status", "id": 7, "pad": "x" * (3 * MIB)})
    frame = protocol.HEADER.pack(len(body)) + body

    def start() -> tuple[socket.socket, socket.socket]:
        pair = _connect(handle.socket), _connect(handle.socket)
        for conn in pair:
            conn.sendall(frame[:1000])
        return pair

    one, two = await in_thread(start)
    try:
        with trio.fail_after(30):  # one frame is charged; the other waits for room
            while budget.used == 0:
                await trio.sleep(0.01)

        def finish(conn: socket.socket) -> protocol.ServerMessage | None:
            conn.sendall(frame[1000:])
            return _read_frame(conn)

        async with trio.open_nursery() as nursery:
            replies: list[protocol.ServerMessage | None] = []

            async def answer(conn: socket.socket) -> None:
                replies.append(await in_thread(finish, conn))

            nursery.start_soon(answer, one)
            nursery.start_soon(answer, two)
    finally:
        one.close()
        two.close()
    assert [type(r) for r in replies] == [protocol.Reply, protocol.Reply], replies
    assert budget.refused == 0


async def test_large_frames_share_one_byte_budget(daemon_factory: Any) -> None:
    """Two half-sent 3 MiB frames, each charged three times its size, against a 12 MiB
    budget: whichever the daemon reads second waits ``buffer_wait``, then its request
    is refused by its id — at once, before the rest of its frame, which is read and
    dropped: the connection goes on.  The other one completes."""
    handle = await daemon_factory(buffer_budget=12 * MIB, buffer_wait=0.3)
    body = msgspec.msgpack.encode({"kind": "status", "id": 7, "pad": "x" * (3 * MIB)})

    def run() -> tuple[protocol.ServerMessage | None, ...]:
        with _connect(handle.socket) as one, _connect(handle.socket) as two:
            for conn in (one, two):
                conn.sendall(protocol.HEADER.pack(len(body)) + body[:1000])
            # Only the refused one gets an answer before its frame is complete.
            readable, _, _ = select.select([one, two], [], [], 30)
            assert len(readable) == 1, readable
            refused = readable[0]
            other = two if refused is one else one
            err = _read_frame(refused)
            refused.sendall(body[1000:] + protocol.encode(protocol.Status(id=8)))
            after = _read_frame(refused)
            other.sendall(body[1000:])
            return err, after, _read_frame(other)

    err, after, first_reply = await in_thread(run)
    assert isinstance(err, protocol.Error) and err.code == "busy" and err.id == 7, err
    assert "buffer_budget" in err.message and "buffer_wait" in err.message
    assert isinstance(after, protocol.Reply) and after.id == 8, after
    assert isinstance(first_reply, protocol.Reply) and first_reply.id == 7


async def test_an_event_over_the_budget_meets_the_clients_failure_policy(
    daemon_factory: Any,
) -> None:
    """A refused event is ``busy`` — an error the client's ``on_unavailable`` handles
    (fail closed here), never a silent allow and never a broken pipe."""
    handle = await daemon_factory(buffer_budget=2 * MIB)
    big = event(tool_input={"command": "x" * MIB})

    def run() -> tuple[protocol.FireReply, protocol.FireReply]:
        with Client(handle.socket) as client:
            refused = client.fire("PreToolUse", big, on_unavailable="closed")
            small = client.fire("PreToolUse", event(), on_unavailable="closed")
        return refused, small

    refused, small = await in_thread(run)
    assert refused.result.decision == "deny", refused.result
    assert "busy" in (refused.result.reason or "") and "buffer_budget" in (
        refused.result.reason or ""
    )
    assert small.result.decision is None and small.id != 0  # the connection went on


async def test_a_reader_too_slow_for_its_big_replies_is_closed_by_the_budget(
    daemon_factory: Any,
) -> None:
    """Replies a client does not read wait in its queue; large ones are charged to the
    buffer budget, and the client whose unread replies no longer fit is dropped — long
    before 256 replies of 300 KB each, and long before the write timeout."""
    handle = await daemon_factory(buffer_budget=4 * MIB, send_timeout=600.0)
    context = "x" * 300_000
    output = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": context}}
    )
    script = handle.root / "big_context.py"
    script.write_text(f"print({output!r})\n")
    hook = {"type": "command", "command": f"{sys.executable} {script}"}
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})

    def flood() -> None:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.connect(str(handle.socket))
        conn.sendall(protocol.encode(protocol.Hello(client="slow")))
        for i in range(1, 41):
            fire = protocol.Fire(id=i, event="PreToolUse", input=event(session_id="slow"))
            try:
                conn.sendall(protocol.encode(fire))
            except OSError:
                break
        flooded.append(conn)  # never read; closed by the test at the end

    def status() -> dict[str, Any]:
        with Client(handle.socket) as client:
            return client.status()

    flooded: list[socket.socket] = []
    try:
        await in_thread(flood)
        with trio.fail_after(60):
            while True:
                st = await in_thread(status)
                if st["connections"] == 1:  # only this status request's own
                    break
                await trio.sleep(0.05)
        assert st["process"]["buffer_held"] == 0, st["process"]
    finally:
        for conn in flooded:
            conn.close()


async def test_hook_output_is_kept_only_while_the_budget_has_room(daemon_factory: Any) -> None:
    """Past its first 64 KiB a stream, what a hook prints is charged to the buffer budget
    until its event is answered; with no room left the rest is dropped (``truncated``),
    however high ``output_cap`` is — and all of it is given back after."""
    handle = await daemon_factory(buffer_budget=4 * MIB, output_cap=64 * MIB)
    script = handle.root / "loud.py"
    script.write_text(f"import sys\nsys.stdout.write('x' * {8 * MIB})\n")
    hook = {"type": "command", "command": f"{sys.executable} {script}"}
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})

    def run() -> tuple[protocol.FireReply, dict[str, Any]]:
        with Client(handle.socket) as client:
            reply = client.fire("PreToolUse", event(session_id="loud"))
            return reply, client.status()

    reply, st = await in_thread(run)
    (hook_run,) = reply.result.hooks
    assert hook_run.outcome == "success" and hook_run.truncated
    assert 64 * 1024 <= len(hook_run.stdout) <= 4 * MIB + 64 * 1024, len(hook_run.stdout)
    assert st["process"]["buffer_held"] == 0 and st["process"]["buffer_outputs_cut"] == 1


# --- the http endpoint ---------------------------------------------------------------


async def _http_daemon(daemon_factory: Any, **settings: Any) -> tuple[Any, int]:
    handle = await daemon_factory(http_port=0, **settings)
    port = handle.daemon.http_port
    assert port
    return handle, port


def _status_and_body(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


async def test_http_connections_over_the_cap_get_503(daemon_factory: Any) -> None:
    """The cap counts connections that showed the token (issue 28): three kept-alive ones
    fill it; a fourth request with the token gets 503, one without the token is no
    connection of the cap's (a health check is still answered)."""
    _handle, port = await _http_daemon(daemon_factory, http_max_connections=3)
    token = http_endpoint.load_or_create_token()

    def run() -> tuple[bytes, bytes]:
        kept = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(3)]
        try:
            for conn in kept:
                conn.sendall(hook_request(token, event(session_id="s-cap"), close=False))
                assert read_response(conn)[0] == 200
            fourth = exchange(port, hook_request(token, event(session_id="s-cap")))
            return fourth, exchange(port, HEALTH)
        finally:
            for conn in kept:
                conn.close()

    fourth, health = await in_thread(run)
    status, body = _status_and_body(fourth)
    assert status == 503 and "http_max_connections = 3" in body["error"]
    assert health.startswith(b"HTTP/1.1 200 ")


async def test_an_http_body_over_the_buffer_budget_gets_503(daemon_factory: Any) -> None:
    """The http door shares the socket's budget: a body whose event would hold more
    than it has is answered ``503`` naming the setting; a small one passes after."""
    _handle, port = await _http_daemon(daemon_factory, buffer_budget=2 * MIB)
    token = http_endpoint.load_or_create_token()

    def post(payload: dict[str, Any]) -> bytes:
        body = json.dumps(payload).encode()
        return exchange(
            port,
            b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
            b"authorization: Bearer " + token.encode() + b"\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body,
        )

    status, answer = _status_and_body(
        await in_thread(post, event(tool_input={"command": "x" * MIB}))
    )
    assert status == 503 and "buffer_budget" in answer["error"], answer
    response = await in_thread(post, event())
    assert response.startswith(b"HTTP/1.1 200 "), response[:200]


async def test_http_headers_sent_byte_by_byte_time_out(daemon_factory: Any) -> None:
    """Slowloris on http: each byte arrives in time, the headers as a whole do not."""
    _handle, port = await _http_daemon(daemon_factory, http_header_timeout=0.5)

    def run() -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(b"POST /hooks/PreToolUse HTTP/1.1\r\n")
            data = b""
            for _ in range(600):  # up to a minute of one byte every 0.1 s
                try:
                    conn.sendall(b"x")
                except OSError:
                    break
                conn.settimeout(0.1)
                try:
                    chunk = conn.recv(65536)
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                data += chunk
            return data

    status, body = _status_and_body(await in_thread(run))
    assert status == 408 and "http_header_timeout" in body["error"]


async def test_a_deeply_nested_json_body_is_a_400_with_a_json_error(daemon_factory: Any) -> None:
    _handle, port = await _http_daemon(daemon_factory)
    token = http_endpoint.load_or_create_token()
    depth = 100_000
    body = b'{"a": ' + b"[" * depth + b"]" * depth + b"}"
    request = (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"authorization: Bearer " + token.encode() + b"\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    status, answer = _status_and_body(await in_thread(exchange, port, request))
    assert status == 400 and "nested" in answer["error"]
    # Still serving.
    ok = event()
    good = json.dumps(ok).encode()
    request = (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"authorization: Bearer " + token.encode() + b"\r\n"
        b"content-length: " + str(len(good)).encode() + b"\r\n\r\n" + good
    )
    response = await in_thread(exchange, port, request)
    assert response.startswith(b"HTTP/1.1 200 "), response[:200]


async def test_a_body_of_100k_one_byte_chunks_is_parsed_in_many_steps() -> None:
    """The parser gives the loop back while it works through a pathological body.

    Counted with a trio instrument: the number of steps the reading task takes
    (each step runs until the next checkpoint).  Without yielding, the whole
    body — ~600 kB, ten reads — is parsed in about ten steps, during which no
    other connection is served.
    """
    chunks = 100_000
    body = b"1\r\nx\r\n" * chunks + b"0\r\n\r\n"
    request = (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n" + body
    )

    class Steps(trio.abc.Instrument):
        def __init__(self) -> None:
            self.task: trio.lowlevel.Task | None = None
            self.count = 0

        def before_task_step(self, task: trio.lowlevel.Task) -> None:
            if task is self.task:
                self.count += 1

    steps = Steps()
    client, server = trio.testing.memory_stream_pair()
    await client.send_all(request)
    await client.send_eof()
    parsed: list[bytes] = []

    async def read() -> None:
        steps.task = trio.lowlevel.current_task()
        conn = h11.Connection(h11.SERVER)
        _request, got = await http_endpoint._read_request(server, conn)
        parsed.append(got)

    trio.lowlevel.add_instrument(steps)
    try:
        await read()
    finally:
        trio.lowlevel.remove_instrument(steps)
    assert parsed == [b"x" * chunks]
    assert steps.count > 500, f"parsed in only {steps.count} steps"

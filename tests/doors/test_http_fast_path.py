"""The http door's fast path.

The simple request reader accepts exactly the shape Claude Code sends and
declines everything else to h11, and its answers are byte-for-byte h11's.  The
hang-up watch runs only while hooks run, and still cancels them for real.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import h11
import pytest
import trio

from hookd.doors import http_endpoint
from hookd.doors.http_wire import HeadMemo, parse_head, response_bytes
from support.daemon import DaemonHandle, configure
from support.http_door import HEALTH, exchange

DATA = Path(__file__).resolve().parents[1] / "data"

# What axios (Claude Code 2.1.x) sends for an http hook, as received on the wire.
AXIOS = (
    b"POST /hooks/PreToolUse HTTP/1.1\r\n"
    b"Accept: application/json, text/plain, */*\r\n"
    b"Content-Type: application/json\r\n"
    b"Authorization: Bearer t0k\r\n"
    b"User-Agent: axios/1.13.2\r\n"
    b"Content-Length: 734\r\n"
    b"Accept-Encoding: gzip, compress, deflate, br\r\n"
    b"Host: 127.0.0.1:8765\r\n"
    b"Connection: keep-alive"
)


def test_claude_codes_request_is_the_simple_shape() -> None:
    head = parse_head(AXIOS)
    assert head is not None
    assert (head.method, head.target, head.content_length, head.close) == (
        b"POST",
        b"/hooks/PreToolUse",
        734,
        False,
    )
    assert (b"authorization", b"Bearer t0k") in head.headers
    assert parse_head(AXIOS.replace(b"keep-alive", b"close")).close  # type: ignore[union-attr]


DECLINED = [
    (b"HTTP/1.1\r\n", b"HTTP/1.0\r\n"),  # another version
    (b"POST /hooks", b"HEAD /hooks"),  # HEAD: no body in the answer
    (b"POST /hooks/PreToolUse", b"POST http://x/hooks/PreToolUse"),  # absolute form
    (b"Content-Length: 734", b"Transfer-Encoding: chunked"),
    (b"Content-Length: 734", b"Content-Length: 734\r\nContent-Length: 734"),
    (b"Content-Length: 734", b"Content-Length: +734"),
    (b"Content-Length: 734", b"Content-Length: 734\r\nExpect: 100-continue"),
    (b"Host: 127.0.0.1:8765\r\n", b""),  # HTTP/1.1 requires Host
    (b"Host: 127.0.0.1:8765", b"Host: a\r\nHost: b"),
    (b"User-Agent: axios/1.13.2", b"User-Agent: axios\r\n /1.13.2"),  # obs-fold
    (b"User-Agent: axios/1.13.2", b"User-Agent: ax\x00ios"),  # control byte
    (b"User-Agent: axios/1.13.2", b"User Agent: axios"),  # not a token
    (b"Connection: keep-alive", b"Connection: upgrade"),
]
"""Changes of Claude Code's request that make it something for h11 to read."""


@pytest.mark.parametrize("change", DECLINED)
def test_anything_else_is_left_to_h11(change: tuple[bytes, bytes]) -> None:
    old, new = change
    assert old in AXIOS
    assert parse_head(AXIOS.replace(old, new)) is None


def test_a_connections_next_head_is_read_by_comparison_and_reads_the_same() -> None:
    memo = HeadMemo()
    assert memo.parse(AXIOS) == parse_head(AXIOS)
    for length in (b"0", b"7", b"734", b"1048576"):
        head = AXIOS.replace(b"734", length)
        assert memo.parse(head) == parse_head(head)
        assert memo.parse(head).content_length == int(length)  # type: ignore[union-attr]
    assert memo.parse(AXIOS.replace(b"734", b"")) is None  # an empty length is no length


def test_the_length_s_place_is_exactly_its_value_wherever_the_header_is() -> None:
    """``length_at`` (what the memo compares around) spans the ``Content-Length`` value and
    nothing else, whichever line the header is on and however it is spaced."""
    lines = AXIOS.split(b"\r\n")
    length = next(line for line in lines if line.startswith(b"Content-Length"))
    others = [line for line in lines[1:] if line != length]
    for spaced in (length, b"content-length:734", b"Content-Length: \t734 \t"):
        for at in range(len(others) + 1):
            head = b"\r\n".join([lines[0], *others[:at], spaced, *others[at:]])
            parsed = parse_head(head)
            assert parsed is not None and parsed.length_at is not None, head
            start, stop = parsed.length_at
            assert head[start:stop] == b"734", (head, parsed.length_at)


@pytest.mark.parametrize("change", DECLINED)
def test_a_remembered_head_never_lets_a_declined_one_through(change: tuple[bytes, bytes]) -> None:
    """The comparison only accepts what the parse would: after a good head, each
    change that the parse declines is declined again."""
    memo = HeadMemo()
    assert memo.parse(AXIOS) is not None
    old, new = change
    assert memo.parse(AXIOS.replace(old, new)) is None
    assert memo.parse(AXIOS.replace(b"734", b"735")) == parse_head(AXIOS.replace(b"734", b"735"))


@pytest.mark.parametrize("payload", [b"", b'{"decision":"block","reason":"no"}'])
@pytest.mark.parametrize("close", [False, True])
def test_answers_are_what_h11_writes(payload: bytes, close: bool) -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(AXIOS.replace(b"734", b"0") + b"\r\n\r\n")
    assert isinstance(conn.next_event(), h11.Request)
    headers = [("content-length", str(len(payload)))]
    if payload:
        headers.append(("content-type", "application/json"))
    if close:
        headers.append(("connection", "close"))
    expected = conn.send(h11.Response(status_code=200, headers=headers, reason="OK")) or b""
    expected += conn.send(h11.Data(data=payload)) or b"" if payload else b""
    expected += conn.send(h11.EndOfMessage()) or b""
    assert response_bytes(200, b"OK", payload, close) == expected


def _read_responses(sock: socket.socket, count: int) -> list[tuple[bytes, bytes]]:
    """``count`` (head, body) pairs read off a blocking socket."""
    data, out = b"", list[tuple[bytes, bytes]]()
    while len(out) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end]
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(data) >= head_end + 4 + length:
                out.append((head, data[head_end + 4 : head_end + 4 + length]))
                data = data[head_end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        assert chunk, f"closed early after {out!r}"
        data += chunk
    return out


def _pre_tool_use(handle: DaemonHandle, **fields: Any) -> bytes:
    """A whole ``POST /hooks/PreToolUse`` (the Bash fixture with ``fields``), as axios sends it."""
    raw = json.loads((DATA / "cc-fixtures" / "PreToolUse-Bash.json").read_text())
    raw.update(cwd=str(handle.project()), **fields)
    body = json.dumps(raw).encode()
    token = http_endpoint.load_or_create_token().encode()
    return (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + token
        + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )


async def test_a_connection_mixes_both_readers_and_close_is_honoured(daemon_factory: Any) -> None:
    """Simple, then chunked (h11 from then on), then simple again on one connection; a
    ``Connection: close`` request is answered and the connection closed."""
    handle: DaemonHandle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token().encode()
    raw = json.loads((DATA / "cc-fixtures" / "PostToolUse-Bash.json").read_text())
    raw["cwd"] = str(handle.project())
    body = json.dumps(raw).encode()
    start = b"POST /hooks/PostToolUse HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
    simple = start + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    chunked = (
        start
        + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(body)
        + body
        + b"\r\n0\r\n\r\n"
    )
    closing = start + b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    def exchange() -> tuple[list[tuple[bytes, bytes]], bytes]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(simple + chunked + simple + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            answers = _read_responses(sock, 4)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(closing)
            rest = b""
            while chunk := sock.recv(65536):  # ends only if the server closes
                rest += chunk
        return answers, rest

    answers, closed = await trio.to_thread.run_sync(exchange)
    assert [head.split(b"\r\n")[0] for head, _ in answers] == [b"HTTP/1.1 200 OK"] * 4
    assert [body for _, body in answers] == [b"", b"", b"", b'{"ok":true}']
    assert closed.startswith(b"HTTP/1.1 200 OK\r\n") and b"connection: close" in closed
    assert handle.daemon.activity.counters["events"] == 4


async def test_a_client_hanging_up_cancels_its_running_hooks(daemon_factory: Any) -> None:
    """Claude Code closes the connection at its hook timeout: the daemon's pipeline
    cancels the hook (its process is killed) and keeps serving."""
    handle: DaemonHandle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    assert port is not None
    configure(
        handle,
        {"PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 60"}]}]},
    )
    request = _pre_tool_use(handle, session_id="s-hangup")
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(request)
    with trio.fail_after(30):
        while (session := handle.daemon.sessions.get("s-hangup")) is None or not session.in_flight:
            await trio.sleep(0.01)
        await stream.aclose()
        while session.in_flight:
            await trio.sleep(0.01)
    assert handle.daemon.activity.counters["events"] == 0  # cancelled, never answered
    # The daemon keeps serving: a health check on a new connection.
    answer = await trio.to_thread.run_sync(exchange, port, HEALTH)
    assert answer.endswith(b'{"ok":true}')


async def test_empty_lines_between_requests_and_lone_surrogates_are_served(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """A stray CRLF after a body is no request (RFC 9112 §2.2: ignored, no header clock
    started); a lone surrogate escape in the input (JSON.stringify writes one for a
    broken JavaScript string) reaches the hook as U+FFFD, as Claude Code's own UTF-8
    stdin would carry it, instead of failing the request."""
    handle: DaemonHandle = await daemon_factory(http_port=0, http_header_timeout=0.5)
    seen = tmp_path / "stdin.json"
    configure(
        handle,
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": f"cat > {seen}"}]}
            ]
        },
    )
    port = handle.daemon.http_port
    # Six bytes for six: the length stays right.
    request = _pre_tool_use(handle, tool_input={"command": "echo XLONEX", "description": "x"})
    request = request.replace(b"XLONEX", b"\\ud800")

    def exchange() -> list[tuple[bytes, bytes]]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(request + b"\r\n")
            first = _read_responses(sock, 1)
            # Idle past the header timeout with the stray CRLF read: no 408 comes.
            sock.settimeout(1.0)
            try:
                unexpected = sock.recv(65536)
            except TimeoutError:
                unexpected = b""
            assert unexpected == b""
            sock.settimeout(30)
            sock.sendall(b"\r\n" + request)
            return first + _read_responses(sock, 1)

    answers = await trio.to_thread.run_sync(exchange)
    assert [head.split(b"\r\n")[0] for head, _ in answers] == [b"HTTP/1.1 200 OK"] * 2
    assert json.loads(seen.read_bytes())["tool_input"]["command"] == "echo \ufffd"


async def test_a_hang_up_still_cancels_an_in_daemon_hook_that_a_worker_runs(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Only a policy answered in one synchronous step goes unwatched: an ``inDaemon``
    plain ``def`` runs in a worker process, and a hang-up cancels it (the worker is
    killed) instead of leaving it to its 30 s timeout."""
    policy = tmp_path / "slow.py"
    policy.write_text("import time\ndef slow(event):\n    time.sleep(60)\n")
    handle: DaemonHandle = await daemon_factory(http_port=0)
    hook = {"type": "python", "callable": f"{policy}:slow", "inDaemon": True, "timeout": 30}
    configure(handle, {"PreToolUse": [{"hooks": [hook]}]})
    request = _pre_tool_use(handle, session_id="s-hang-up")
    assert handle.daemon.http_port is not None
    stream = await trio.open_tcp_stream("127.0.0.1", handle.daemon.http_port)
    await stream.send_all(request)
    runner = handle.daemon.handlers.python  # type: ignore[union-attr]
    with trio.fail_after(30):
        while not (runner.pool.spawned and handle.daemon.activity.running_hooks()):
            await trio.sleep(0.01)
    await stream.aclose()
    session = handle.daemon.sessions.get("s-hang-up")
    assert session is not None
    with trio.fail_after(10):  # far below the hook's 30 s timeout
        while session.in_flight:
            await trio.sleep(0.01)
    assert handle.daemon.activity.running_hooks() == []  # not left in hookctl status


async def test_new_connections_share_a_head_memo_that_never_lends_a_token(
    daemon_factory: Any,
) -> None:
    """A new connection's head is compared with the last new connection's (one-shot
    clients repeat it): a head that differs in anything but its length — here the
    token — is read for itself, and refused."""
    handle: DaemonHandle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    assert port is not None
    good = _pre_tool_use(handle).replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
    token = http_endpoint.load_or_create_token().encode()
    forged = good.replace(token, b"x" * len(token))

    def one_shots() -> list[bytes]:
        return [exchange(port, request) for request in (good, good, forged, good)]

    answers = await trio.to_thread.run_sync(one_shots)
    assert [a.split(b"\r\n", 1)[0] for a in answers] == [
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 401 Unauthorized",
        b"HTTP/1.1 200 OK",
    ]


@pytest.mark.parametrize("reader", ["simple", "h11"])
async def test_a_request_pipelined_while_hooks_run_is_answered_after_them(
    daemon_factory: Any, tmp_path: Path, reader: str
) -> None:
    """While an event's hooks run, the hang-up watch reads the connection: a request the
    client pipelined meanwhile is kept for after the answer — whichever reader the
    connection is on — not lost, and not taken for a hang-up."""
    handle: DaemonHandle = await daemon_factory(http_port=0)
    started, go = tmp_path / "started", tmp_path / "go"
    wait = f"touch {started}; while [ ! -e {go} ]; do sleep 0.01; done"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": wait}]}]})
    first = _pre_tool_use(handle, session_id="s-pipelined")
    if reader == "h11":  # chunked: h11 reads this connection from its first request
        head, _, body = first.partition(b"\r\n\r\n")
        head = head.replace(b"Content-Length: %d" % len(body), b"Transfer-Encoding: chunked")
        first = head + b"\r\n\r\n%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    port = handle.daemon.http_port
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        await trio.to_thread.run_sync(sock.sendall, first)
        with trio.fail_after(30):
            while not started.exists():
                await trio.sleep(0.01)
        await trio.to_thread.run_sync(sock.sendall, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        go.touch()
        answers = await trio.to_thread.run_sync(_read_responses, sock, 2)
    assert [head.split(b"\r\n")[0] for head, _ in answers] == [b"HTTP/1.1 200 OK"] * 2
    assert answers[1][1] == b'{"ok":true}', answers
    assert handle.daemon.activity.counters["events"] == 1

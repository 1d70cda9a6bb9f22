"""Every large http body is charged to the buffer budget, whichever way it is framed (issue 32).

The http door shares the daemon's buffer budget with its Unix socket
(:class:`hookd.daemon.limits.BufferBudget`): a body over 64 KiB is charged from its
head — ``HELD_COPIES`` times its size, what its event will hold — until its answer
is sent, and one that does not fit is answered ``503`` naming the setting.  The
rule holds for every framing a client may use, since each is read by another
path: ``Content-Length`` through the simple reader (:mod:`hookd.doors.http_wire`),
``Content-Length`` on a head only h11 reads, and a chunked body whose size nobody
knows before its end (charged as it grows).  Enumerated, each framing:

- while the event's hook runs, the budget holds at least the body's charge;
- once the answer is sent, the budget holds nothing — though the kept-alive
  connection stays open (a connection that idles holds no memory);
- the next request on that connection is served and given back the same way;
- with a budget too small for it, the body is ``503`` (no hook runs) and the budget
  is whole again after.

A real daemon on a real port, a real hook that waits for the test to let it go.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.daemon.limits import HELD_COPIES
from hookd.doors import http_endpoint
from reliability.helpers import event
from support.daemon import configure
from support.http_door import read_response

MIB = 1024 * 1024


def _content_length(head: str, body: bytes) -> bytes:
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


def _chunked(head: str, body: bytes) -> bytes:
    step = 60_000
    chunks = b"".join(
        b"%x\r\n" % len(body[i : i + step]) + body[i : i + step] + b"\r\n"
        for i in range(0, len(body), step)
    )
    return f"{head}transfer-encoding: chunked\r\n\r\n".encode() + chunks + b"0\r\n\r\n"


FRAMINGS: dict[str, Callable[[str, bytes], bytes]] = {
    "content-length, the simple reader": _content_length,
    # A connection header with another token: the simple reader declines, h11 reads it.
    "content-length, read by h11": lambda head, body: _content_length(
        head + "connection: keep-alive, x-other\r\n", body
    ),
    "chunked": _chunked,
}


def _request(token: str, payload: dict[str, Any], framing: str) -> bytes:
    head = f"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n"
    return FRAMINGS[framing](head, json.dumps(payload).encode())


async def _until(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    with trio.move_on_after(timeout):
        while not condition():
            await trio.sleep(0.01)
        return
    raise AssertionError(f"not within {timeout} s: {what}")


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await trio.to_thread.run_sync(fn, *args)


def _charged(used: int, size: int, framing: str) -> None:
    """What a ``size``-byte body holds while its event runs: ``HELD_COPIES`` times its
    size — exactly, when its head announced it; a chunked one, charged in doubling steps
    as it grew, at most twice that."""
    at_most = HELD_COPIES * size * (2 if framing == "chunked" else 1)
    assert HELD_COPIES * size <= used <= at_most, (framing, used, size)


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
async def test_a_large_body_is_charged_until_its_answer_whatever_its_framing(
    daemon_factory: Any, tmp_path: Path, framing: str
) -> None:
    handle = await daemon_factory(http_port=0)
    budget = handle.daemon.buffer_budget
    started, go = tmp_path / "started", tmp_path / "go"
    wait = f"touch {started}; while [ ! -e {go} ]; do sleep 0.01; done"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": wait}]}]})
    token = http_endpoint.load_or_create_token()
    large = event(session_id="s-budget", tool_input={"command": "x" * MIB})
    size = len(json.dumps(large))

    with socket.create_connection(("127.0.0.1", handle.daemon.http_port), timeout=30) as conn:
        # Then the same connection, kept alive: a second large request, charged and freed alike.
        for which, again in (("the hook", ""), ("the second hook", " again")):
            started.unlink(missing_ok=True)
            go.unlink(missing_ok=True)
            await _in_thread(conn.sendall, _request(token, large, framing))
            await _until(started.exists, f"{which} started")
            _charged(budget.used, size, framing)
            go.touch()
            status, _ = await _in_thread(read_response, conn)
            assert status == 200, framing
            await _until(lambda: budget.used == 0, f"{framing}: the budget given back{again}")


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
async def test_a_body_over_the_budget_is_a_503_whatever_its_framing(
    daemon_factory: Any, tmp_path: Path, framing: str
) -> None:
    handle = await daemon_factory(http_port=0, buffer_budget=2 * MIB, buffer_wait=0.1)
    budget = handle.daemon.buffer_budget
    ran = tmp_path / "ran"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {ran}"}]}]})
    token = http_endpoint.load_or_create_token()
    large = event(session_id="s-over", tool_input={"command": "x" * MIB})

    def post() -> tuple[int, bytes]:
        with socket.create_connection(("127.0.0.1", handle.daemon.http_port), timeout=30) as c:
            try:
                c.sendall(_request(token, large, framing))
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused at its head: the rest of the body may not be read
            return read_response(c)

    status, body = await _in_thread(post)
    assert status == 503 and b"buffer_budget" in body, (framing, status, body[:300])
    assert not ran.exists(), f"{framing}: a hook ran for a body over the budget"
    await _until(lambda: budget.used == 0, f"{framing}: nothing held after the refusal")


@pytest.mark.parametrize("framing", sorted(set(FRAMINGS) - {"chunked"}))
async def test_a_body_announced_over_the_budget_is_refused_at_its_head(
    daemon_factory: Any, framing: str
) -> None:
    """A ``Content-Length`` over the budget is a ``503`` before any byte of the body is
    sent: the client is not made to send megabytes that will be thrown away."""
    handle = await daemon_factory(http_port=0, buffer_budget=2 * MIB, buffer_wait=0.1)
    token = http_endpoint.load_or_create_token()
    large = event(session_id="s-head", tool_input={"command": "x" * MIB})
    request = _request(token, large, framing)
    head = request[: request.index(b"\r\n\r\n") + 4]

    def post_head_only() -> tuple[int, bytes]:
        with socket.create_connection(("127.0.0.1", handle.daemon.http_port), timeout=30) as c:
            c.sendall(head)
            return read_response(c)

    status, body = await _in_thread(post_head_only)
    assert status == 503 and b"buffer_budget" in body, (framing, status, body[:300])


def _padded(size: int) -> bytes:
    """A hook input of exactly ``size`` bytes."""
    raw = event(session_id="s-max", tool_input={"command": ""})
    bare = len(json.dumps(raw).encode())
    raw["tool_input"]["command"] = "x" * (size - bare)
    body = json.dumps(raw).encode()
    assert len(body) == size
    return body


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
async def test_a_body_over_the_largest_is_a_413_and_the_largest_is_served(
    daemon_factory: Any, framing: str
) -> None:
    """``MAX_BODY`` is the largest body served, whatever the framing: one byte more is a
    ``413`` — at its head when the head announces it, as soon as it grows past it when
    chunked — and the largest itself is served."""
    handle = await daemon_factory(http_port=0, buffer_budget=256 * MIB)
    token = http_endpoint.load_or_create_token()
    head = f"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n"
    largest = FRAMINGS[framing](head, _padded(http_endpoint.MAX_BODY))
    over = FRAMINGS[framing](head, _padded(http_endpoint.MAX_BODY + 1))
    if framing != "chunked":  # announced: refused before any byte of it is sent
        over = over[: over.index(b"\r\n\r\n") + 4]

    def post(request: bytes) -> int:
        with socket.create_connection(("127.0.0.1", handle.daemon.http_port), timeout=60) as c:
            try:
                c.sendall(request)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before the rest was read
            return read_response(c)[0]

    assert await _in_thread(post, over) == 413, framing
    assert await _in_thread(post, largest) == 200, framing

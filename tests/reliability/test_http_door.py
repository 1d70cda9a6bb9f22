"""Another local user, without the token, cannot take the http door away (issue 28, item 3).

The attacks run as they did in the issue: a real process of a second uid
(:data:`support.http_door.ATTACKER`, started with ``user=``) holds hundreds of
connections to the daemon's loopback port — silent ones, ones answered
``401``, ones trickling a head, ones sending blank lines — and then the owner's
new connections, with the token, must all be served (the issue saw ``503`` for
10 of 10).  Each waits for the daemon to have accepted every attacking
connection (its listener's accept queue empty) before the owner connects.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest
import trio

from hookd.doors import http_endpoint
from reliability.helpers import event
from support.http_door import (
    attacker,
    exchange,
    hook_request,
    python_for,
    read_response,
    wait_accepted,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="running as a second uid needs root")

ATTACKERS = 300
"""As many connections as the issue's attacker held (more than ``http_max_connections``)."""


def _uid(offset: int = 0) -> int:
    """A uid nobody uses (the second user): no files of it exist anywhere that matters."""
    uid = 62000 + os.getpid() % 1000 + offset
    if python_for(uid) is None:
        pytest.skip(f"uid {uid} can run no Python here")
    return uid


async def _in_thread(fn: Any, *args: Any) -> Any:
    return await trio.to_thread.run_sync(fn, *args)


async def _owner_is_served(port: int, times: int = 10) -> None:
    """``times`` new connections of the owner, each one request with the token: all 200."""
    token = http_endpoint.load_or_create_token()
    request = hook_request(token, event(session_id="s-owner"))
    for _ in range(times):
        response = await _in_thread(exchange, port, request)
        assert response.startswith(b"HTTP/1.1 200 "), response[:300]


@pytest.mark.parametrize("mode", ["silent", "refused", "trickle", "junk"])
async def test_connections_of_another_uid_without_the_token_leave_the_owner_served(
    daemon_factory: Any, mode: str
) -> None:
    """Silent (held for ever), ``401``'d (kept open), a head trickled a byte at a time,
    blank lines without end: none of them counts against ``http_max_connections``."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    async with attacker(_uid(), mode, port, str(ATTACKERS)) as bad:
        ready = await bad.until("ready")
        if mode == "refused":  # every one got its 401, none a 503
            assert ready == f"ready [('401', {ATTACKERS})]"
        await wait_accepted(port)
        await _owner_is_served(port)
    assert handle.daemon.activity.counters["http_evicted"] >= ATTACKERS - 32


async def test_a_flood_from_many_uids_while_the_owner_connects(daemon_factory: Any) -> None:
    """Three other users connect without end, each holding 300 connections, while the
    owner's connections come and go: every one of the owner's is served."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    async with (
        attacker(_uid(1), "flood", port) as one,
        attacker(_uid(2), "flood", port) as two,
        attacker(_uid(3), "flood", port) as three,
    ):
        for bad in (one, two, three):
            await bad.until("ready")
        await _owner_is_served(port, times=20)


async def test_the_owners_own_slow_connection_outlives_a_flood(daemon_factory: Any) -> None:
    """A connection of the owner's uid that has not sent its request yet is not the one
    evicted when another uid floods the pool; the owner's new connections are served."""
    handle = await daemon_factory(http_port=0, http_first_request_timeout=120)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as slow:
        await wait_accepted(port)
        async with attacker(_uid(), "silent", port, str(ATTACKERS)) as bad:
            await bad.until("ready")
            await wait_accepted(port)
            await _owner_is_served(port)
            slow.sendall(hook_request(token, event(session_id="s-slow"), close=False))
            status, _ = await _in_thread(read_response, slow)
            assert status == 200


async def test_idle_keep_alive_connections_with_the_token_are_never_timed_out_or_evicted(
    daemon_factory: Any,
) -> None:
    """Claude Code's connections idle between tool calls: a pending connection's deadline
    passes (every silent one of the attacker is closed) and the pool is flooded, and the
    owner's kept-alive connection still answers."""
    handle = await daemon_factory(http_port=0, http_first_request_timeout=0.5)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as claude:
        claude.sendall(hook_request(token, event(session_id="s-keep"), close=False))
        assert (await _in_thread(read_response, claude))[0] == 200
        async with attacker(_uid(), "silent", port, str(ATTACKERS)) as bad:
            await bad.until("ready")
            await bad.until(f"closed {ATTACKERS}")  # evicted, or timed out: all of them
        for _ in range(3):
            claude.sendall(hook_request(token, event(session_id="s-keep"), close=False))
            assert (await _in_thread(read_response, claude))[0] == 200


async def test_a_trickled_head_without_the_token_is_cut_by_the_first_request_deadline(
    daemon_factory: Any,
) -> None:
    """``http_header_timeout`` is generous; a connection that has not shown the token has
    ``http_first_request_timeout`` for its whole head, a byte every 0.1 s or not."""
    handle = await daemon_factory(
        http_port=0, http_header_timeout=600, http_first_request_timeout=0.5
    )
    port = handle.daemon.http_port

    def trickle() -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
            conn.sendall(b"POST /hooks/PreToolUse HTTP/1.1\r\n")
            conn.settimeout(0.1)
            for _ in range(600):  # a minute at most
                try:
                    conn.sendall(b"x")
                    if chunk := conn.recv(65536):
                        return chunk
                except TimeoutError:
                    continue
                except OSError:
                    break
            return b""

    answer = await _in_thread(trickle)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert b"http_first_request_timeout" in answer


async def test_an_error_answer_closes_the_connection(daemon_factory: Any) -> None:
    """A request refused with ``401`` ends its connection: a request pipelined behind it,
    even one with the token, is not read."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()
    body = event(session_id="s-pipe")
    pipelined = hook_request(None, body, close=False) + hook_request(token, body, close=False)
    response = await _in_thread(exchange, port, pipelined)
    assert response.startswith(b"HTTP/1.1 401 "), response[:300]
    assert response.count(b"HTTP/1.1 ") == 1, response
    assert b"connection: close" in response.lower()


async def test_a_health_check_without_the_token_cannot_make_hookd_buffer_a_body(
    daemon_factory: Any,
) -> None:
    """The one request served without the token is refused at its head when it announces
    a body: 32 pending connections of 16 MiB each would otherwise be half a gigabyte."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    head = b"GET /health HTTP/1.1\r\nhost: x\r\ncontent-length: 16000000\r\n\r\n"
    response = await _in_thread(exchange, port, head)
    assert response.startswith(b"HTTP/1.1 413 "), response[:300]
    assert b"without the token" in response


async def test_requests_without_the_token_cannot_fill_the_log(
    daemon_factory: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    """Each refusal of a request without the token is counted (``hookctl status``:
    ``http_refused_unauthenticated``); only the first and every thousandth is logged."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    request = hook_request(None, event(session_id="s-log"))
    for _ in range(50):
        assert (await _in_thread(exchange, port, request)).startswith(b"HTTP/1.1 401 ")
    assert handle.daemon.activity.counters["http_refused_unauthenticated"] == 50
    logged = capfd.readouterr().err
    assert logged.count("request without the token refused") == 1, logged
    assert "http hook request refused" not in logged

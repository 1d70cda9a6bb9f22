"""Every door rejects a missing or wrong credential on every route it serves (issue 32).

The http door on the loopback port serves ``POST /hooks/<Event>`` and ``POST
/mod/<Event>`` for every event, and ``GET``/``HEAD /health``.  The rule, enumerated
over the whole class: a request with no token, a wrong token of the same length, a
token of another length (a prefix, one byte more, empty), the token in another case,
in the wrong scheme or without one, or in the other header's form, on every route
and every method, is refused (``401``, or ``405``/``404`` before any hook is
considered) — and no hook runs, and ``/health`` never names the daemon's pid.  A
connection that showed the token once is not trusted for the next request's wrong
one — but it is out of the pending pool (newer silent connections never evict it)
and may idle past every deadline, whichever reader serves it.  With the right token in
either header form every route is served (the control: the credentials, not the route,
were refused).

A real daemon on a real port; the hooks are real commands that leave a file per
event, so "no hook ran" is observed, not inferred.  The owner-only Unix sockets
(the daemon's and ``http.sock``) refuse another uid in
``tests/doors/test_http_socket.py`` and ``tests/reliability/test_socket_squatting.py``.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
import trio

from engine.vectors import CC_FIXTURES, VECTORS
from hookd.doors import http_endpoint
from hookd_client.events import EVENT_NAMES
from support.daemon import configure
from support.http_door import exchange, read_response

TABLE: dict[str, dict[str, Any]] = json.loads(
    (VECTORS / "tables" / "exit_codes.json").read_text(encoding="utf-8")
)["events"]


def _fixture(event: str) -> Path | None:
    """A recorded Claude Code input of ``event`` (``<Event>.json`` or ``<Event>-*.json``)."""
    found = sorted(CC_FIXTURES.glob(f"{event}.json")) + sorted(CC_FIXTURES.glob(f"{event}-*.json"))
    return found[0] if found else None


RECORDED = [e for e in EVENT_NAMES if _fixture(e) is not None]
"""The events whose recorded input the daemon serves whole (the control's hooks run)."""


def _input(event: str) -> dict[str, Any]:
    recorded = _fixture(event)
    if recorded is not None:
        loaded: dict[str, Any] = json.loads(recorded.read_text(encoding="utf-8"))
        return loaded
    found = TABLE[event].get("input")
    if isinstance(found, dict):
        return found
    return {"session_id": "doors", "transcript_path": "", "cwd": "/", "hook_event_name": event}


def wrong_credentials(token: str) -> dict[str, list[tuple[str, str]]]:
    """Every way to show a credential that is not the token (header lists)."""
    same_length = ("A" if token[0] != "A" else "B") + token[1:]
    return {
        "none": [],
        "bearer, wrong, same length": [("authorization", f"Bearer {same_length}")],
        "bearer, a prefix": [("authorization", f"Bearer {token[:-1]}")],
        "bearer, one byte more": [("authorization", f"Bearer {token}x")],
        "bearer, empty": [("authorization", "Bearer ")],
        "bearer, other case": [("authorization", f"Bearer {token.swapcase()}")],
        "basic scheme": [("authorization", f"Basic {token}")],
        "no scheme": [("authorization", token)],
        "x-hookd-token, wrong, same length": [("x-hookd-token", same_length)],
        "x-hookd-token, a prefix": [("x-hookd-token", token[:-1])],
        "x-hookd-token, empty": [("x-hookd-token", "")],
        "x-hookd-token in bearer form": [("x-hookd-token", f"Bearer {token}")],
        "wrong x-hookd-token beside the right bearer": [
            ("x-hookd-token", same_length),
            ("authorization", f"Bearer {token}"),
        ],
    }


def right_credentials(token: str) -> dict[str, list[tuple[str, str]]]:
    return {
        "bearer": [("authorization", f"Bearer {token}")],
        "bearer, lower-case scheme": [("authorization", f"bearer {token}")],
        "x-hookd-token": [("x-hookd-token", token)],
    }


def request(method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    head = f"{method} {target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
    if body or method == "POST":
        head += f"content-length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers)
    return head.encode() + b"\r\n" + body


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def _routes() -> list[tuple[str, str, bytes]]:
    """(method, target, body) for every hook route, each method, and a query string."""
    routes: list[tuple[str, str, bytes]] = []
    for event in EVENT_NAMES:
        body = json.dumps(_input(event)).encode()
        for prefix in ("hooks", "mod"):
            routes.append(("POST", f"/{prefix}/{event}", body))
        routes.append(("POST", f"/hooks/{event}?token=x", body))
    for method in ("GET", "PUT", "DELETE", "PATCH", "HEAD"):
        routes.append((method, "/hooks/PreToolUse", b""))
    return routes


async def _daemon_with_a_hook_on_every_event(daemon_factory: Any, marks: Path) -> Any:
    handle = await daemon_factory(http_port=0)
    marks.mkdir()
    configure(
        handle,
        {
            event: [{"hooks": [{"type": "command", "command": f"touch {marks}/{event}"}]}]
            for event in EVENT_NAMES
        },
    )
    return handle


async def test_every_hook_route_refuses_every_wrong_credential(
    daemon_factory: Any, tmp_path: Path
) -> None:
    marks = tmp_path / "ran"
    handle = await _daemon_with_a_hook_on_every_event(daemon_factory, marks)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()

    def attempt_all() -> list[str]:
        wrong: list[str] = []
        for method, target, body in _routes():
            for name, headers in wrong_credentials(token).items():
                response = exchange(port, request(method, target, headers, body))
                if status_of(response) not in (401, 404, 405):
                    wrong.append(f"{method} {target} [{name}]: {response[:200]!r}")
        return wrong

    served = await trio.to_thread.run_sync(attempt_all)
    assert served == [], "\n".join(served[:20])
    assert sorted(p.name for p in marks.iterdir()) == [], "a hook ran without the token"

    # The control: the same routes with the token are served, and the hooks run.
    def with_the_token() -> list[str]:
        wrong: list[str] = []
        for method, target, body in _routes():
            if method != "POST":
                continue
            for name, headers in right_credentials(token).items():
                response = exchange(port, request(method, target, headers, body))
                if status_of(response) not in (200, 400):
                    wrong.append(f"{method} {target} [{name}]: {response[:200]!r}")
        return wrong

    refused = await trio.to_thread.run_sync(with_the_token)
    assert refused == [], "\n".join(refused[:20])
    ran = {p.name for p in marks.iterdir()}
    assert set(RECORDED) <= ran, f"the control: with the token these hooks ran only: {ran}"


async def test_health_names_the_daemon_only_to_the_token(daemon_factory: Any) -> None:
    """``/health`` without any credential says only ``{"ok":true}``; with a wrong one it
    is a 401; its pid (what ``hookctl doctor`` trusts) only with the token."""
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()

    def check() -> list[str]:
        wrong: list[str] = []
        for method in ("GET", "HEAD"):
            for name, headers in wrong_credentials(token).items():
                response = exchange(port, request(method, "/health", headers, b""))
                want = 200 if name == "none" else 401
                if status_of(response) != want or b"pid" in response:
                    wrong.append(f"{method} /health [{name}]: {response[:200]!r}")
            for name, headers in right_credentials(token).items():
                response = exchange(port, request(method, "/health", headers, b""))
                named = b'"pid"' in response or method == "HEAD"  # HEAD: no body
                if status_of(response) != 200 or not named:
                    wrong.append(f"{method} /health [{name}] with the token: {response[:200]!r}")
        return wrong

    wrong = await trio.to_thread.run_sync(check)
    assert wrong == [], "\n".join(wrong)


async def test_a_connection_that_showed_the_token_is_not_trusted_for_the_next_request(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """On one kept-alive connection: a request with the token, then every wrong
    credential in turn on the next request — each refused, no hook run for it."""
    marks = tmp_path / "ran"
    handle = await _daemon_with_a_hook_on_every_event(daemon_factory, marks)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()
    body = json.dumps(_input("UserPromptSubmit")).encode()

    def keep_alive(headers: list[tuple[str, str]]) -> tuple[int, int]:
        good = request("POST", "/hooks/Stop", right_credentials(token)["bearer"], b"")
        good = good.replace(b"connection: close\r\n", b"")
        stop = json.dumps(_input("Stop")).encode()
        good = good.replace(b"content-length: 0", b"content-length: %d" % len(stop)) + stop
        bad = request("POST", "/hooks/UserPromptSubmit", headers, body)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(good)
            first, _ = read_response(conn)
            conn.sendall(bad)
            second, _ = read_response(conn)
        return first, second

    for name, headers in wrong_credentials(token).items():
        first, second = await trio.to_thread.run_sync(keep_alive, headers)
        assert first == 200, name
        assert second == 401, (name, second)
    assert (marks / "Stop").exists()
    assert not (marks / "UserPromptSubmit").exists(), "a hook ran for a wrong credential"


# --- a connection that showed the token is trusted: out of the pending pool and its clock ---

CHUNKED_STOP = "chunked"


def _kept_alive(token: str, reader: str) -> bytes:
    """A Stop posted with the token on a kept-alive connection, read by ``reader``."""
    body = json.dumps(_input("Stop")).encode()
    head = f"POST /hooks/Stop HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n"
    if reader == CHUNKED_STOP:  # h11 reads the connection from then on
        return (head + "transfer-encoding: chunked\r\n\r\n").encode() + (
            b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
        )
    return (head + f"content-length: {len(body)}\r\n\r\n").encode() + body


def _closed_by_the_server(conn: socket.socket) -> bool:
    try:
        return conn.recv(65536) == b""
    except ConnectionResetError:
        return True


async def test_a_connection_that_showed_the_token_leaves_the_pending_pool(
    daemon_factory: Any,
) -> None:
    """With room for one pending connection, newer silent connections evict each other —
    never the connection that showed the token, which keeps being served."""
    handle = await daemon_factory(http_port=0, http_max_unauthenticated=1)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()

    def run() -> list[int]:
        statuses = []
        with socket.create_connection(("127.0.0.1", port), timeout=30) as claude:
            claude.sendall(_kept_alive(token, "simple"))
            statuses.append(read_response(claude)[0])
            silent = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(3)]
            try:
                for older in silent[:-1]:  # each pushed out by the next
                    assert _closed_by_the_server(older)
                claude.sendall(_kept_alive(token, "simple"))
                statuses.append(read_response(claude)[0])
            finally:
                for conn in silent:
                    conn.close()
        return statuses

    assert await trio.to_thread.run_sync(run) == [200, 200]
    assert handle.daemon.activity.counters["http_evicted"] == 2


@pytest.mark.parametrize("reader", ["simple", CHUNKED_STOP])
async def test_a_connection_that_showed_the_token_may_idle_past_every_deadline(
    daemon_factory: Any, reader: str
) -> None:
    """Claude Code's connection idles between tool calls for as long as it likes: past the
    header and first-request deadlines (seen passing by a silent connection made after
    its answer being closed), its next request is served — whichever reader it is on."""
    handle = await daemon_factory(
        http_port=0, http_header_timeout=0.3, http_first_request_timeout=0.3
    )
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()

    def run() -> list[int]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as claude:
            claude.sendall(_kept_alive(token, reader))
            first = read_response(claude)[0]
            with socket.create_connection(("127.0.0.1", port), timeout=30) as silent:
                assert _closed_by_the_server(silent)  # its deadline passed: so did any of ours
            claude.sendall(_kept_alive(token, reader))
            return [first, read_response(claude)[0]]

    assert await trio.to_thread.run_sync(run) == [200, 200]

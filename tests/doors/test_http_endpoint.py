"""The http hook endpoint, served for real on 127.0.0.1 with an Engine-backed fire.

The fire callable is a real :class:`~hookd.engine.engine.Engine` running real
command hooks from ``tests/data/bridge/endpoint-hooks.json`` — the daemon's
``fire`` minus sessions, which this module does not depend on.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from engine.vectors import command_engine
from hookd.agent_process import AgentLookup
from hookd.config.assemble import load_config
from hookd.doors.http_endpoint import (
    load_or_create_token,
    open_http_listeners,
    serve_http,
)
from hookd.engine.engine import Engine
from hookd_client.events import decode_event
from hookd_client.results import FireResult

DATA = Path(__file__).resolve().parents[1] / "data"
HOOKS = DATA / "bridge" / "endpoint-hooks.json"
TOKEN = "test-token-0123456789"


def _input(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "cc-fixtures" / f"{name}.json").read_text())
    return data


@dataclass
class EngineFire:
    """A real engine behind the endpoint; records what each call was given."""

    engine: Engine = field(default_factory=command_engine)
    calls: list[dict[str, Any]] = field(default_factory=list)
    cancelled: trio.Event = field(default_factory=trio.Event)

    async def __call__(
        self,
        event: str,
        raw: dict[str, Any],
        /,
        *,
        agent: AgentLookup,
        client: str = "",
        deliver_async: bool = False,
        agent_caps_stop: bool = False,
        hangup: Callable[[], Awaitable[None]] | None = None,
    ) -> FireResult | None:
        info = await agent.resolve(event, raw)
        self.calls.append(
            {
                "event": event,
                "agent_pid": info.pid,
                "context": info.context,
                "deliver_async": deliver_async,
                "agent_caps_stop": agent_caps_stop,
            }
        )
        config = load_config(None, None, [str(HOOKS)])
        decoded = decode_event(raw, event)
        result: FireResult | None = None

        async def run() -> None:
            nonlocal result
            try:
                result = await self.engine.fire(config, decoded, env=info.env)
            finally:
                if result is None:  # cancelled
                    self.cancelled.set()
            nursery.cancel_scope.cancel()

        async def watch() -> None:
            assert hangup is not None  # the endpoint always passes its watcher
            await hangup()
            nursery.cancel_scope.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            nursery.start_soon(watch)
        return result


@dataclass
class Endpoint:
    url: str
    port: int
    fire: EngineFire


@pytest.fixture
async def endpoint(nursery: trio.Nursery) -> AsyncIterator[Endpoint]:
    listeners = await open_http_listeners(0)
    port = listeners[0].socket.getsockname()[1]
    fire = EngineFire()
    await nursery.start(serve_http, listeners, fire, TOKEN)
    yield Endpoint(f"http://127.0.0.1:{port}", port, fire)


def _auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_exit2_block_comes_back_as_a_json_deny(endpoint: Endpoint) -> None:
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        reply = await client.post(
            "/hooks/PreToolUse", json=_input("PreToolUse-Bash"), headers=_auth()
        )
    assert reply.status_code == 200
    specific = reply.json()["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"] == (
        "[echo BLOCKED-BY-HOOK >&2; exit 2]: BLOCKED-BY-HOOK"
    )


async def test_plain_text_context_becomes_additional_context(endpoint: Endpoint) -> None:
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        reply = await client.post(
            "/hooks/UserPromptSubmit", json=_input("UserPromptSubmit"), headers=_auth()
        )
    assert reply.json() == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "PLAIN-UPS-CONTEXT",
        }
    }


async def test_stop_block_travels_as_json(endpoint: Endpoint) -> None:
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        reply = await client.post("/hooks/Stop", json=_input("Stop"), headers=_auth())
    assert reply.json() == {"decision": "block", "reason": "KEEP-GOING"}
    # Late async context must not ride on Stop: there it would continue the turn.
    assert endpoint.fire.calls[-1]["deliver_async"] is False
    # Claude Code caps Stop loops itself (the 9th block): hookd must not add a cap.
    assert endpoint.fire.calls[-1]["agent_caps_stop"] is True


async def test_no_matching_hook_is_an_empty_200(endpoint: Endpoint) -> None:
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        reply = await client.post(
            "/hooks/PostToolUse", json=_input("PostToolUse-Bash"), headers={"X-Hookd-Token": TOKEN}
        )
    assert reply.status_code == 200
    assert reply.content == b""


@pytest.mark.parametrize(
    ("method", "path", "headers", "body", "status", "words"),
    [
        ("POST", "/hooks/PreToolUse", {}, b"{}", 401, "token"),
        ("POST", "/hooks/PreToolUse", {"Authorization": "Bearer wrong"}, b"{}", 401, "token"),
        ("POST", "/hooks/NoSuchEvent", _auth(), b"{}", 404, "unknown hook event"),
        ("POST", "/elsewhere", _auth(), b"{}", 404, "/hooks/<Event>"),
        ("GET", "/hooks/PreToolUse", _auth(), b"", 405, "POST"),
        ("POST", "/hooks/PreToolUse", _auth(), b"{not json", 400, "not JSON"),
        ("POST", "/hooks/PreToolUse", _auth(), b"[1, 2]", 400, "JSON object"),
    ],
)
async def test_bad_requests_get_a_clear_4xx_and_the_connection_keeps_serving(
    endpoint: Endpoint,
    method: str,
    path: str,
    headers: dict[str, str],
    body: bytes,
    status: int,
    words: str,
) -> None:
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        bad = await client.request(method, path, headers=headers, content=body)
        assert bad.status_code == status
        assert words in bad.json()["error"]
        good = await client.post(
            "/hooks/UserPromptSubmit", json=_input("UserPromptSubmit"), headers=_auth()
        )
        assert good.status_code == 200


async def test_input_for_another_event_or_with_bad_fields_is_refused(endpoint: Endpoint) -> None:
    bad_field = {**_input("PreToolUse-Bash"), "tool_name": 5}
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        wrong_event = await client.post("/hooks/PreToolUse", json=_input("Stop"), headers=_auth())
        wrong_type = await client.post("/hooks/PreToolUse", json=bad_field, headers=_auth())
    assert wrong_event.status_code == 400
    assert "'Stop'" in wrong_event.json()["error"]
    assert wrong_type.status_code == 400
    assert "$.tool_name" in wrong_type.json()["error"]


async def test_many_requests_share_one_keep_alive_connection(endpoint: Endpoint) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", endpoint.port)
    body = json.dumps(_input("UserPromptSubmit")).encode()
    request = (
        b"POST /hooks/UserPromptSubmit HTTP/1.1\r\nhost: x\r\n"
        + f"authorization: Bearer {TOKEN}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    async with stream:
        # Pipelined: both requests sent before reading any reply.
        await stream.send_all(request + request)
        received = b""
        while received.count(b"PLAIN-UPS-CONTEXT") < 2:
            chunk = await stream.receive_some(65536)
            assert chunk, f"connection closed early; got {received!r}"
            received += chunk
    assert received.count(b"HTTP/1.1 200") == 2


async def test_client_hang_up_cancels_the_running_hooks(endpoint: Endpoint) -> None:
    """Claude Code drops the connection at its timeout: hookd must not keep hooks running."""
    body = json.dumps(_input("PreToolUse-Read")).encode()
    stream = await trio.open_tcp_stream("127.0.0.1", endpoint.port)
    await stream.send_all(
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\n"
        + f"authorization: Bearer {TOKEN}\r\ncontent-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    while not endpoint.fire.calls:
        await trio.sleep(0.01)
    await stream.aclose()
    with trio.fail_after(20):  # generous: the point is that it happens, not how fast
        await endpoint.fire.cancelled.wait()


async def test_agent_pid_is_the_peer_process_and_print_mode_is_batch(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    """An http hook cannot send $CLAUDE_PID (Claude Code does not interpolate it),
    so the endpoint asks the kernel who is at the other end of the connection."""
    body = tmp_path / "input.json"
    body.write_text(json.dumps(_input("UserPromptSubmit")))
    script = (
        "import http.client,sys;"
        f"c=http.client.HTTPConnection('127.0.0.1',{endpoint.port});"
        f"c.request('POST','/hooks/UserPromptSubmit',open(sys.argv[1],'rb').read(),"
        f"{{'Authorization':'Bearer {TOKEN}'}});"
        "print(c.getresponse().status, __import__('os').getpid())"
    )
    proc = await trio.run_process(
        [sys.executable, "-I", "-S", "-c", script, str(body), "-p"], capture_stdout=True
    )
    status, pid = proc.stdout.split()
    assert status == b"200"
    call = endpoint.fire.calls[-1]
    assert call["agent_pid"] == int(pid)
    assert call["context"] == "batch"  # `-p` on the peer's command line


def test_token_file_is_created_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "hookd" / "http-token"
    first = load_or_create_token(path)
    assert len(first) >= 40
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create_token(path) == first


def test_token_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "http-token"
    path.write_text("abc\n")
    os.chmod(path, 0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        load_or_create_token(path)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com"])
async def test_endpoint_listens_on_loopback_only(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        await open_http_listeners(0, host)


async def test_a_precompact_block_carries_the_bare_reason(endpoint: Endpoint) -> None:
    """Claude Code prefixes every PreCompact block's reason with ``[<hook>]: `` itself
    ("Compaction blocked by PreCompact hook: [<hook>]: <reason>", JSON or exit 2), so
    hookd's reason must not carry the command's label too (the e2e scenario
    ``precompact_blocked`` showed it twice)."""
    async with httpx.AsyncClient(base_url=endpoint.url) as client:
        reply = await client.post(
            "/hooks/PreCompact", json=_input("PreCompact-manual"), headers=_auth()
        )
    assert reply.json() == {"decision": "block", "reason": "KEEP-THE-CONTEXT"}


async def test_accepted_connections_have_no_nagle_delay() -> None:
    """Answers go out in one write each without Nagle's delay: TCP_NODELAY is set once
    on the listening socket, and what it accepts carries it (no call per connection)."""
    listeners = await open_http_listeners(0)
    listener = listeners[0].socket
    port = listener.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port)):
        conn, _ = await listener.accept()
        with conn:
            assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    for each in listeners:
        each.socket.close()

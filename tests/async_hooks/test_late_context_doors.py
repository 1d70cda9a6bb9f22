"""A delivered async result reaches its reader, through every front door.

An async PostToolUse hook finishes after its event's reply; its context waits
for the session's next reply that can carry it, is marked delivered when it
is taken, and so must appear in what that reply's reader sees: ``async_results``
for a result, ``additionalContext`` for anything read as Claude Code's output
(``relay``, the http endpoint, ``fire`` in ``claude`` format — all clients and
``hookctl fire --format claude``), the tool-call outcome for ``toolcall``.  An
event whose Claude output cannot carry context (Stop) must leave the result
waiting instead of taking it and printing it nowhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import trio

from hookd.doors.http_endpoint import open_http_listeners, serve_http
from hookd_client import protocol, relay
from hookd_client.aio import AsyncClient
from hookd_client.client import Client
from hookd_client.toolcall import run_tool_call, run_tool_call_blocking
from hookd_client.trio_client import open_client

from .helpers import async_hook, configure, event, script, wait_until

ROOT = Path(__file__).resolve().parents[2]
LATE = "LATE\nSYS-LATE"
"""What late_context.sh hands back: its additionalContext, then its systemMessage."""
HANG_GUARD = 30
"""Seconds before a stuck asyncio program fails instead of hanging; never a timing claim."""


@pytest.fixture
async def waiting(daemon_factory: Any, wire: Any) -> AsyncIterator[Any]:
    """A daemon holding one finished, undelivered async result for session ``s-late``."""
    handle = await daemon_factory()
    late = async_hook(script("late_context.sh", "LATE"))
    configure(handle, {"PostToolUse": [{"matcher": "Bash", "hooks": [late]}]})
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-late"))
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    handle.wire = conn
    yield handle


def _context(stdout: str) -> str:
    out = json.loads(stdout)
    context: str = out["hookSpecificOutput"]["additionalContext"]
    return context


async def _nothing_left(handle: Any) -> None:
    assert await handle.wire.check("s-late") == []
    assert handle.daemon.async_runner.stats()["undelivered"] == 0


async def _still_waiting(handle: Any) -> None:
    results = await handle.wire.check("s-late")
    assert [r["messages"] for r in results] == [["LATE", "SYS-LATE"]]


def _user_prompt() -> dict[str, Any]:
    return event("UserPromptSubmit", "s-late")


# --- fire in claude format, on the wire and in each client ---------------------------


async def test_fire_in_claude_format_renders_late_context(waiting: Any) -> None:
    reply = await waiting.wire.request(
        lambda rid: protocol.Fire(
            id=rid, event="UserPromptSubmit", input=_user_prompt(), format="claude"
        )
    )
    assert isinstance(reply, protocol.FireReply), reply
    assert reply.result.async_results == ["LATE", "SYS-LATE"]
    assert reply.claude is not None
    assert _context(reply.claude.stdout) == LATE
    await _nothing_left(waiting)


async def test_fire_in_claude_format_leaves_results_for_an_event_that_cannot_carry_them(
    waiting: Any,
) -> None:
    reply = await waiting.wire.request(
        lambda rid: protocol.Fire(
            id=rid, event="Stop", input=event("Stop", "s-late"), format="claude"
        )
    )
    assert isinstance(reply, protocol.FireReply), reply
    assert reply.result.async_results == []
    await _still_waiting(waiting)


async def test_blocking_client_fire_claude(waiting: Any) -> None:
    def fire() -> protocol.FireReply:
        with Client(waiting.socket, timeout=HANG_GUARD) as client:
            return client.fire("UserPromptSubmit", _user_prompt(), claude=True)

    reply = await trio.to_thread.run_sync(fire)
    assert reply.claude is not None
    assert _context(reply.claude.stdout) == LATE
    await _nothing_left(waiting)


async def test_asyncio_client_fire_claude(waiting: Any) -> None:
    async def fire() -> protocol.FireReply:
        async with AsyncClient(waiting.socket) as client:
            return await client.fire("UserPromptSubmit", _user_prompt(), claude=True)

    reply = await trio.to_thread.run_sync(asyncio.run, asyncio.wait_for(fire(), HANG_GUARD))
    assert reply.claude is not None
    assert _context(reply.claude.stdout) == LATE
    await _nothing_left(waiting)


async def test_trio_client_fire_claude(waiting: Any) -> None:
    async with open_client(waiting.socket) as client:
        reply = await client.fire("UserPromptSubmit", _user_prompt(), claude=True)
    assert reply.claude is not None
    assert _context(reply.claude.stdout) == LATE
    await _nothing_left(waiting)


# --- hookctl fire, both formats -------------------------------------------------------


async def _hookctl_fire(handle: Any, event_name: str, payload: dict[str, Any], fmt: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}
    args = [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(handle.socket)]
    proc = await trio.run_process(
        [*args, "fire", event_name, "--input", "-", "--format", fmt],
        stdin=json.dumps(payload).encode(),
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


async def test_hookctl_fire_format_claude_prints_late_context(waiting: Any) -> None:
    stdout = await _hookctl_fire(waiting, "UserPromptSubmit", _user_prompt(), "claude")
    assert _context(stdout) == LATE
    await _nothing_left(waiting)


async def test_hookctl_fire_format_claude_on_stop_leaves_the_result_waiting(
    waiting: Any,
) -> None:
    stdout = await _hookctl_fire(waiting, "Stop", event("Stop", "s-late"), "claude")
    assert "LATE" not in stdout
    await _still_waiting(waiting)


async def test_hookctl_fire_format_json_lists_async_results(waiting: Any) -> None:
    stdout = await _hookctl_fire(waiting, "Stop", event("Stop", "s-late"), "json")
    assert json.loads(stdout)["async_results"] == ["LATE", "SYS-LATE"]
    await _nothing_left(waiting)


# --- Claude Code's own doors: hookd-relay and the http endpoint -------------------------


async def test_hookd_relay_prints_late_context(waiting: Any) -> None:
    relay_dir = str(Path(relay.__file__).resolve().parent)
    program = f"import sys;sys.path.append({relay_dir!r});import relay;sys.exit(relay.main())"
    proc = await trio.run_process(
        [sys.executable, "-I", "-S", "-c", program, "UserPromptSubmit"],
        stdin=msgspec.json.encode(_user_prompt()),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOOKD_SOCKET": str(waiting.socket)},
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert _context(proc.stdout.decode()) == LATE
    await _nothing_left(waiting)


async def test_http_endpoint_answers_with_late_context(waiting: Any, nursery: trio.Nursery) -> None:
    listeners = await open_http_listeners(0)
    port = listeners[0].socket.getsockname()[1]
    await nursery.start(serve_http, listeners, waiting.daemon.pipeline.fire, "token-0123456789")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        response = await http.post(
            "/hooks/UserPromptSubmit",
            json=_user_prompt(),
            headers={"Authorization": "Bearer token-0123456789"},
        )
    assert response.status_code == 200, response.text
    assert response.json()["hookSpecificOutput"]["additionalContext"] == LATE
    await _nothing_left(waiting)


# --- the tool-call helper, both drivers --------------------------------------------------


def _bash_call() -> dict[str, Any]:
    base = event("PreToolUse-Bash", "s-late")
    for key in ("hook_event_name", "tool_name", "tool_input", "tool_use_id"):
        base.pop(key, None)
    return base


async def test_toolcall_blocking_collects_late_context(waiting: Any) -> None:
    def call() -> list[str]:
        with Client(waiting.socket, timeout=HANG_GUARD) as client:
            outcome = run_tool_call_blocking(
                client,
                base=_bash_call(),
                tool_name="Read",
                tool_input={"file_path": "/etc/hostname"},
                tool=lambda _input: "contents",
            )
        return outcome.additional_context

    assert await trio.to_thread.run_sync(call) == ["LATE", "SYS-LATE"]
    await _nothing_left(waiting)


async def test_toolcall_async_collects_late_context(waiting: Any) -> None:
    async def tool(_input: dict[str, Any]) -> str:
        return "contents"

    async with open_client(waiting.socket) as client:
        outcome = await run_tool_call(
            client,
            base=_bash_call(),
            tool_name="Read",
            tool_input={"file_path": "/etc/hostname"},
            tool=tool,
        )
    assert outcome.additional_context == ["LATE", "SYS-LATE"]
    await _nothing_left(waiting)


async def test_another_sessions_reply_takes_none_of_the_waiting_results(
    waiting: Any, nursery: trio.Nursery
) -> None:
    """A waiting result is its own session's: another session's replies — at the http
    door and a fire in Claude format, each of which can carry late context — take
    nothing of it, and it still waits for its own session."""
    listeners = await open_http_listeners(0)
    port = listeners[0].socket.getsockname()[1]
    await nursery.start(serve_http, listeners, waiting.daemon.pipeline.fire, "token-0123456789")
    other = event("UserPromptSubmit", "s-other")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        response = await http.post(
            "/hooks/UserPromptSubmit",
            json=other,
            headers={"Authorization": "Bearer token-0123456789"},
        )
    assert response.status_code == 200 and "LATE" not in response.text, response.text
    reply = await _fire_claude(waiting, other)
    claude = reply.claude.stdout if reply.claude is not None else ""
    assert reply.result.async_results == [] and "LATE" not in claude, reply
    assert waiting.daemon.async_runner.stats()["undelivered"] == 1
    reply = await _fire_claude(waiting, _user_prompt())
    assert reply.result.async_results == ["LATE", "SYS-LATE"], reply
    await _nothing_left(waiting)


async def _fire_claude(handle: Any, raw: dict[str, Any]) -> protocol.FireReply:
    reply = await handle.wire.request(
        lambda rid: protocol.Fire(id=rid, event="UserPromptSubmit", input=raw, format="claude")
    )
    assert isinstance(reply, protocol.FireReply), reply
    return reply

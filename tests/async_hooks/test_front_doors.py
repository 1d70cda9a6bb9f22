"""The first-line watch leaves ordinary hooks alone; the relay carries late context."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from hookd_client import protocol

from .helpers import async_hook, command_hook, configure, event, script, wait_until


async def test_a_first_line_that_is_not_an_ack_is_read_as_usual(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {"PostToolUse": [{"hooks": [command_hook(script("late_context.sh", "NOW"))]}]},
    )
    conn = await wire(handle.socket)
    reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-sync"))
    assert isinstance(reply, protocol.FireReply)
    assert not reply.result.hooks[0].is_async
    assert reply.result.additional_context == ["NOW"]
    assert handle.daemon.async_runner.listing(None) == []


async def test_relay_puts_waiting_results_into_additional_context(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {"PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "VIA-RELAY"))]}]},
    )
    conn = await wire(handle.socket)
    payload = event("PostToolUse-Bash", "s-relay")

    async def relay() -> protocol.RelayReply:
        reply = await conn.request(
            lambda rid: protocol.Relay(
                id=rid, event="PostToolUse", input=msgspec.json.encode(payload)
            )
        )
        assert isinstance(reply, protocol.RelayReply), reply
        return reply

    await relay()
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    out = json.loads((await relay()).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context == "VIA-RELAY\nSYS-VIA-RELAY"
    assert await conn.check("s-relay") == []


async def test_an_agent_relay_puts_waiting_results_into_its_own_context(
    daemon_factory: Any, wire: Any
) -> None:
    """``hookd-relay --agent codex``: late async context reaches Codex as additionalContext on
    the next event whose answer carries context (PostToolUse), delivered once."""
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PostToolUse": [
                {"hooks": [{**command_hook(script("late_context.sh", "VIA-CODEX")), "async": True}]}
            ]
        },
    )
    conn = await wire(handle.socket)
    payload = {**event("PostToolUse-Bash", "s-codex"), "tool_response": "ran\n", "turn_id": "t"}

    async def relay() -> protocol.RelayReply:
        reply = await conn.request(
            lambda rid: protocol.Relay(
                id=rid, event="PostToolUse", input=msgspec.json.encode(payload), agent="codex"
            )
        )
        assert isinstance(reply, protocol.RelayReply), reply
        return reply

    assert (await relay()).stdout == ""
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    out = json.loads((await relay()).stdout)
    assert out["hookSpecificOutput"]["additionalContext"] == "VIA-CODEX\nSYS-VIA-CODEX"
    assert await conn.check("s-codex") == []

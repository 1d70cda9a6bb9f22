"""The asyncio flavour against a real daemon.

The daemon runs in this test's trio loop; each asyncio program runs with
``asyncio.run`` in a worker thread, so both loops are real and independent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import trio

from hookd_client import protocol
from hookd_client.aio import AsyncClient, CallbackHook
from hookd_client.client import DaemonUnavailable

T = TypeVar("T")
HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


async def run_asyncio(main: Callable[[], Awaitable[T]]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(main(), HANG_GUARD)

    return await trio.to_thread.run_sync(asyncio.run, guarded())


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


async def test_fire_returns_a_typed_result_with_progress(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    handle.user_config.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [{"type": "command", "command": "echo nope >&2; exit 2"}],
                        }
                    ]
                }
            }
        )
    )
    handle.daemon.reload()
    phases: list[str] = []

    async def main() -> protocol.FireReply:
        async with AsyncClient(handle.socket) as client:
            return await client.fire(
                "PreToolUse",
                make_event("PreToolUse-Bash"),
                on_progress=lambda p: phases.append(p.phase),
            )

    reply = await run_asyncio(main)
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.decision == "deny"
    assert reply.result.reason == "[echo nope >&2; exit 2]: nope"
    assert phases == ["started", "finished"]


async def test_many_requests_in_flight_get_their_own_replies(
    daemon_factory: Any, make_event: Any
) -> None:
    """Callback ``i`` answers only after ``i+1`` has: replies arrive in reverse order."""
    handle = await daemon_factory()
    count = 12
    session = "aaaaaaaa-2222-3333-4444-555555555555"
    project = str(handle.project())

    async def main() -> dict[int, list[str]]:
        answered = [asyncio.Event() for _ in range(count + 1)]
        answered[count].set()

        async def ordered(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
            index = int(payload["tool_input"]["command"])
            await answered[index + 1].wait()
            answered[index].set()
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": f"reply-{index}",
                }
            }

        async with AsyncClient(handle.socket) as client:
            await client.register_session_hooks(
                session, {"PreToolUse": [{"hooks": [ordered]}]}, project=project
            )

            async def one(index: int) -> tuple[int, list[str]]:
                event = make_event(
                    "PreToolUse-Bash", session_id=session, tool_input={"command": str(index)}
                )
                reply = await client.fire("PreToolUse", event)
                return index, reply.result.additional_context

            pairs = await asyncio.gather(*(one(i) for i in range(count)))
        return dict(pairs)

    results = await run_asyncio(main)
    assert results == {i: [f"reply-{i}"] for i in range(count)}


async def test_connects_to_a_daemon_that_starts_a_moment_later(
    daemon_factory: Any, make_event: Any, unused_socket: Path
) -> None:
    client = AsyncClient(unused_socket, retries=60, backoff=0.02, max_backoff=0.2)

    async def main() -> protocol.FireReply:
        async with client:
            return await client.fire("PreToolUse", make_event("PreToolUse-Bash"))

    replies: list[protocol.FireReply] = []

    async def in_thread() -> None:
        replies.append(await run_asyncio(main))

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(in_thread)
            while client.connect_attempts < 2:  # it has failed at least once
                await trio.sleep(0.01)
            await daemon_factory(socket=str(unused_socket))
    assert replies[0].result.event == "PreToolUse"
    assert client.connect_attempts >= 2


async def test_no_daemon_raises_or_applies_the_failure_policy(
    make_event: Any, unused_socket: Path
) -> None:
    event = make_event("PreToolUse-Bash")

    async def main() -> tuple[protocol.FireReply, protocol.FireReply]:
        async with AsyncClient(unused_socket, retries=1, backoff=0.001) as client:
            with pytest.raises(DaemonUnavailable):
                await client.fire("PreToolUse", event)
            return (
                await client.fire("PreToolUse", event, on_unavailable="open"),
                await client.fire("PreToolUse", event, on_unavailable="closed"),
            )

    opened, closed = await run_asyncio(main)
    assert opened.result.decision is None
    assert opened.result.system_messages[0].startswith("hookd unavailable")
    assert closed.result.decision == "deny"


async def test_python_callback_denies_a_bash_call(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    async def main() -> protocol.FireReply:
        async def no_echo(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
            await asyncio.sleep(0)
            return _deny(f"not {payload['tool_input']['command']!r}")

        async with AsyncClient(handle.socket) as client:
            await client.register_session_hooks(
                event["session_id"], {"PreToolUse": [{"matcher": "Bash", "hooks": [no_echo]}]}
            )
            return await client.fire("PreToolUse", event)

    reply = await run_asyncio(main)
    assert reply.result.decision == "deny"
    assert reply.result.reason == "not 'echo from-sub'"


async def test_slow_async_callback_is_cancelled_at_the_hook_timeout(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    async def main() -> tuple[protocol.FireReply, bool]:
        observed = asyncio.Event()

        async def slow(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                observed.set()
                raise
            raise AssertionError("unreachable")

        async with AsyncClient(handle.socket) as client:
            await client.register_session_hooks(
                event["session_id"],
                {"PreToolUse": [{"hooks": [CallbackHook(slow, timeout=0.5, name="slow")]}]},
            )
            reply = await client.fire("PreToolUse", event)
            await observed.wait()
            return reply, observed.is_set()

    reply, observed = await run_asyncio(main)
    assert observed
    assert reply.result.decision == "deny"  # §4.7: a timed-out callback blocks PreToolUse
    assert reply.result.hooks[0].outcome == "blocking" and reply.result.hooks[0].timed_out


async def test_callback_that_raises_is_a_non_blocking_error(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    def broken(_payload: dict[str, Any], _tid: str | None) -> None:
        raise KeyError("rules")

    async def main() -> protocol.FireReply:
        async with AsyncClient(handle.socket) as client:
            await client.register_session_hooks(
                event["session_id"], {"PreToolUse": [{"hooks": [broken]}]}
            )
            return await client.fire("PreToolUse", event)

    reply = await run_asyncio(main)
    assert reply.result.hooks[0].outcome == "non_blocking_error"
    assert "KeyError: 'rules'" in (reply.result.hooks[0].error or "")
    assert reply.result.decision is None


async def test_status_clear_and_async_check(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    async def main() -> tuple[dict[str, Any], int, list[Any]]:
        async with AsyncClient(handle.socket) as client:
            await client.register_session_hooks(
                event["session_id"], {"PreToolUse": [{"hooks": [lambda _p, _t: None]}]}
            )
            status = await client.status()
            removed = await client.clear_session_hooks(event["session_id"])
            return status, removed, await client.check_for_new_responses(event["session_id"])

    status, removed, responses = await run_asyncio(main)
    assert [s["session_id"] for s in status["sessions"]] == [event["session_id"]]
    assert removed == 1
    assert responses == []

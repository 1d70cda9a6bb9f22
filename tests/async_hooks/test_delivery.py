"""Async hook results reach their session exactly once: by poll, fire reply or push."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol

from .helpers import async_hook, command_hook, configure, event, poll_results, script, wait_until


async def test_config_async_does_not_wait_and_its_context_is_polled_once(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(
        handle,
        {"PostToolUse": [{"hooks": [async_hook(script("wait_go.sh", go, "", "LATE"))]}]},
    )
    conn = await wire(handle.socket)
    reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-poll"))
    # The hook waits for `go`, which does not exist yet: the reply came without it.
    assert isinstance(reply, protocol.FireReply)
    assert [run.is_async for run in reply.result.hooks] == [True]
    assert reply.result.async_results == []
    assert await conn.check("s-poll") == []
    go.touch()
    results = await poll_results(conn, "s-poll", 1)
    assert results[0]["messages"] == ["LATE"]
    assert results[0]["hookEvent"] == "PostToolUse" and results[0]["toolName"] == "Bash"
    assert results[0]["state"] == "finished" and results[0]["exitCode"] == 0
    assert results[0]["responseAttachmentSent"] is True
    assert await conn.check("s-poll") == []
    again = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-other"))
    assert isinstance(again, protocol.FireReply) and again.result.async_results == []


async def test_result_rides_on_the_sessions_next_fire_reply_as_bare_context(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "CTX-1"))]}],
            "UserPromptSubmit": [{"hooks": [command_hook("true")]}],
        },
    )
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-next"))
    supervisor = handle.daemon.async_runner
    await wait_until(lambda: supervisor.stats()["undelivered"] == 1)
    reply = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-next"))
    assert isinstance(reply, protocol.FireReply)
    # additionalContext and systemMessage, verbatim, no prefix (observed: async_config).
    assert reply.result.async_results == ["CTX-1", "SYS-CTX-1"]
    assert reply.result.additional_context == []
    assert await conn.check("s-next") == []
    later = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-next"))
    assert isinstance(later, protocol.FireReply) and later.result.async_results == []


async def test_async_deny_is_ignored(daemon_factory: Any, wire: Any) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [async_hook("echo no >&2; exit 2")],
                }
            ]
        },
    )
    conn = await wire(handle.socket)
    reply = await conn.fire("PreToolUse", event("PreToolUse-Bash", "s-deny"))
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.decision is None and not reply.result.blocked
    results = await poll_results(conn, "s-deny", 1)
    assert results[0]["exitCode"] == 2 and results[0]["messages"] == []


async def test_concurrent_polls_and_reconnects_see_every_result_exactly_once(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    hooks = [
        async_hook(f"sleep 0.0{i % 10}; {script('late_context.sh', f'R{i}')}") for i in range(40)
    ]
    configure(handle, {"PostToolUse": [{"hooks": hooks}]})
    firer = await wire(handle.socket)
    reply = await firer.fire("PostToolUse", event("PostToolUse-Bash", "s-race"))
    assert isinstance(reply, protocol.FireReply) and len(reply.result.hooks) == 40
    seen: list[str] = []
    done = trio.Event()

    async def poller(seed: int) -> None:
        rng = random.Random(seed)
        conn = await wire(handle.socket)
        polls = 0
        while not done.is_set():
            for result in await conn.check("s-race"):
                seen.append(result["processId"])
            if len(seen) >= 40:
                done.set()
            polls += 1
            if polls % rng.randint(2, 5) == 0:  # drop the connection and come back
                await conn.aclose()
                conn = await wire(handle.socket)
            await trio.sleep(rng.random() * 0.01)
        await conn.aclose()

    with trio.fail_after(30):
        async with trio.open_nursery() as pollers:
            for seed in range(8):
                pollers.start_soon(poller, seed)
    counts = Counter(seen)
    assert len(counts) == 40
    assert max(counts.values()) == 1
    # And the reply path does not repeat any of them either.
    after = await firer.fire("UserPromptSubmit", event("UserPromptSubmit", "s-race"))
    assert isinstance(after, protocol.FireReply) and after.result.async_results == []


async def test_results_outlive_the_agent_connection_and_session_end(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook(script("wait_go.sh", go, "", "AFTER"))]}],
            "SessionEnd": [{"hooks": [command_hook("true")]}],
        },
    )
    agent = await wire(handle.socket, pid=424242)
    await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-gone"))
    await agent.fire("SessionEnd", event("SessionEnd-other", "s-gone"))
    await agent.aclose()
    rows = handle.daemon.async_runner.listing(None)
    assert [(r["agent_pid"], r["session_id"], r["state"]) for r in rows] == [
        (424242, "s-gone", "running")
    ]
    go.touch()
    later = await wire(handle.socket)
    results = await poll_results(later, "s-gone", 1)
    assert results[0]["messages"] == ["AFTER"] and results[0]["agentPid"] == 424242


async def test_async_rewake_exit2_is_pushed_to_a_subscribed_agent_at_once(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(
        handle,
        {
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{**command_hook(script("rewake.sh", go)), "asyncRewake": True}],
                }
            ]
        },
    )
    agent = await wire(handle.socket, pid=515151)
    await agent.subscribe("s-wake")
    reply = await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-wake"))
    assert isinstance(reply, protocol.FireReply) and reply.result.hooks[0].is_async
    go.touch()
    with trio.fail_after(20):
        push = await agent.pushes.receive()
    assert push.rewake and push.exit_code == 2 and push.session_id == "s-wake"
    command = script("rewake.sh", go)
    assert push.messages == [
        f'PostToolUse:Bash hook blocking error from command: "{command}": '
        f"[{command}]: WAKE-UP: tests failed"
    ]
    assert await agent.check("s-wake") == []


async def test_a_subscription_without_a_session_gets_its_own_agents_wake_ups_only(
    daemon_factory: Any, wire: Any
) -> None:
    """``subscribe_async`` with no session: every wake-up of hooks this agent process
    fired, in any of its sessions, and none of another agent's (that one waits for a
    poll).  A surviving mutant made an agent-wide subscription receive nothing."""
    handle = await daemon_factory()
    configure(
        handle, {"PostToolUse": [{"hooks": [command_hook(script("rewake.sh"), asyncRewake=True)]}]}
    )
    agent = await wire(handle.socket, pid=616161)
    other = await wire(handle.socket, pid=626262)
    await agent.subscribe()
    await other.fire("PostToolUse", event("PostToolUse-Bash", "s-other-agent"))
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-any-session"))
    with trio.fail_after(20):
        push = await agent.pushes.receive()
    assert push.rewake and push.session_id == "s-any-session"
    assert handle.daemon.async_runner.stats()["undelivered"] == 1
    [waiting] = await other.check("s-other-agent")
    assert "WAKE-UP" in waiting["messages"][0]


async def test_async_rewake_without_a_subscriber_waits_for_a_poll(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {"PostToolUse": [{"hooks": [{**command_hook(script("rewake.sh")), "asyncRewake": True}]}]},
    )
    agent = await wire(handle.socket)
    await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-nosub"))
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    # A subscriber that arrives later gets the waiting wake-up pushed once.
    await agent.subscribe("s-nosub")
    with trio.fail_after(20):
        push = await agent.pushes.receive()
    assert push.rewake and "WAKE-UP" in push.messages[0]
    assert await agent.check("s-nosub") == []


async def test_async_rewake_in_batch_context_is_waited_for(daemon_factory: Any, wire: Any) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {"PostToolUse": [{"hooks": [{**command_hook(script("rewake.sh")), "asyncRewake": True}]}]},
    )
    agent = await wire(handle.socket)
    reply = await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-batch"), "batch")
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.decision == "block"
    assert handle.daemon.async_runner.listing(None) == []

"""The trio flavour against a real daemon: what only it has (test_flavours.py: both flavours)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol
from hookd_client.trio_client import CallbackHook, open_client
from support.daemon import configure
from support.events import context_output, deny_output

HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


async def _accepts(path: Path) -> bool:
    try:
        stream = await trio.open_unix_socket(str(path))
    except OSError:
        return False
    await stream.aclose()
    return True


async def test_client_default_policy_applies_to_fire(make_event: Any, unused_socket: Path) -> None:
    async with open_client(unused_socket, retries=0, on_unavailable="closed") as client:
        reply = await client.fire("Stop", make_event("Stop"))
    assert reply.result.decision == "block"


async def test_callback_returning_a_non_dict_is_a_non_blocking_error(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            event["session_id"], {"PreToolUse": [{"hooks": [lambda _p, _t: "allow"]}]}
        )
        reply = await client.fire("PreToolUse", event)
    assert reply.result.hooks[0].outcome == "non_blocking_error"
    assert "must return a dict" in (reply.result.hooks[0].error or "")


async def test_cancelling_a_fire_cancels_the_callback_it_waits_on(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    started, observed = trio.Event(), trio.Event()

    async def waits(_payload: dict[str, Any], _tid: str | None) -> None:
        started.set()
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            observed.set()
            raise

    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            event["session_id"], {"PreToolUse": [{"hooks": [waits]}]}
        )
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:

                async def fire() -> None:
                    await client.fire("PreToolUse", event)

                nursery.start_soon(fire)
                await started.wait()
                nursery.cancel_scope.cancel()  # the client sends `cancel`; the daemon stops
            await observed.wait()
        assert (await client.status())["generation"] >= 1


async def test_client_gone_while_its_callback_is_pending_leaves_others_served(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    started = trio.Event()

    async def hangs(_payload: dict[str, Any], _tid: str | None) -> None:
        started.set()
        await trio.sleep_forever()

    replies: list[protocol.FireReply] = []
    with trio.fail_after(HANG_GUARD):
        async with (
            open_client(handle.socket, name="owner") as owner,
            open_client(handle.socket, name="agent") as agent,
        ):
            await owner.register_session_hooks(
                event["session_id"],
                {"PreToolUse": [{"hooks": [CallbackHook(hangs, timeout=120)]}]},
            )
            async with trio.open_nursery() as nursery:

                async def fire() -> None:
                    replies.append(await agent.fire("PreToolUse", event))

                nursery.start_soon(fire)
                await started.wait()
                await owner.aclose()  # the callback's owner disconnects mid-call
            again = await agent.fire("PreToolUse", event)
            status = await agent.status()
    (run,) = replies[0].result.hooks
    assert run.outcome == "non_blocking_error"
    assert "disconnected" in (run.error or "")
    assert again.result.hooks[0].outcome == "non_blocking_error"
    assert "gone" in (again.result.hooks[0].error or "")
    assert status["generation"] >= 1


async def test_clear_session_hooks_stops_the_callbacks(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    calls: list[str] = []
    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"hooks": [lambda p, _t: calls.append(p["tool_name"])]}]},
            source="skill-a",
        )
        await client.fire("PreToolUse", event)
        removed = await client.clear_session_hooks(event["session_id"], source="skill-a")
        after = await client.fire("PreToolUse", event)
    assert calls == ["Bash"]
    assert removed == 1
    assert after.result.hooks == []


async def test_status_tail_and_async_check(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]})
    event = make_event("PreToolUse-Bash")
    async with open_client(handle.socket) as client:
        await client.fire("PreToolUse", event)
        status = await client.status()
        records = await client.tail(last=5)
        responses = await client.check_for_new_responses(event["session_id"])
    assert status["socket"] == str(handle.socket)
    assert any(s["session_id"] == event["session_id"] for s in status["sessions"])
    assert records and records[-1]["session_id"] == event["session_id"]
    assert responses == []


async def test_tail_follow_streams_new_records_until_cancelled(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]})
    event = make_event("PreToolUse-Bash")
    followed: list[dict[str, Any]] = []
    got = trio.Event()

    def on_record(record: dict[str, Any]) -> None:
        followed.append(record)
        got.set()

    async with open_client(handle.socket) as client:
        with trio.fail_after(HANG_GUARD):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: client.tail(last=0, follow=True, on_record=on_record))
                while not handle.daemon.activity.following:  # the daemon has the follower
                    await trio.sleep(0.01)
                await client.fire("PreToolUse", event)
                await got.wait()
                nursery.cancel_scope.cancel()
            while handle.daemon.activity.following:  # the client's `cancel` ended the follow
                await trio.sleep(0.01)
    assert [r["session_id"] for r in followed] == [event["session_id"]]


async def test_session_hooks_run_only_for_their_own_event(
    daemon_factory: Any, make_event: Any
) -> None:
    """A PostToolUse callback is not called for PreToolUse (daemon fix: events were mixed)."""
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    calls: list[str] = []
    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            event["session_id"],
            {
                "PreToolUse": [{"hooks": [lambda p, _t: calls.append(p["hook_event_name"])]}],
                "PostToolUse": [{"hooks": [lambda _p, _t: calls.append("post hook")]}],
            },
        )
        reply = await client.fire("PreToolUse", event)
    assert calls == ["PreToolUse"]
    assert len(reply.result.hooks) == 1


async def test_reconnect_after_a_daemon_restart_replays_callback_registrations(
    daemon_factory: Any, make_event: Any
) -> None:
    first = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    async with open_client(first.socket, retries=60, backoff=0.02, max_backoff=0.2) as client:
        await client.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"hooks": [lambda _p, _t: deny_output("still here")]}]},
        )
        assert (await client.fire("PreToolUse", event)).result.decision == "deny"
        first.cancel()
        with trio.fail_after(HANG_GUARD):
            while client.welcome is not None:  # the client saw the daemon go
                await trio.sleep(0.01)
            while await _accepts(first.socket):  # and the old listener is closed
                await trio.sleep(0.01)
        await daemon_factory(socket=str(first.socket))
        reply = await client.fire("PreToolUse", event)
    assert reply.result.decision == "deny"
    assert reply.result.reason == "still here"


async def test_two_connections_with_callbacks_for_one_session_each_get_their_own(
    daemon_factory: Any, make_event: Any
) -> None:
    """Callback calls go to the connection that registered *that* callback."""
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    calls: list[str] = []

    def first(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        calls.append("first")
        return context_output("from first")

    def second(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        calls.append("second")
        return context_output("from second")

    async with open_client(handle.socket) as a, open_client(handle.socket) as b:
        # Distinct sources: registering the same source again would replace the set.
        await a.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"hooks": [first]}]},
            source="agent-a",
            project=str(handle.root),
        )
        await b.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"hooks": [second]}]},
            source="agent-b",
            project=str(handle.root),
        )
        with trio.fail_after(HANG_GUARD):
            reply = await a.fire("PreToolUse", event)
    assert sorted(calls) == ["first", "second"]
    assert sorted(reply.result.additional_context) == ["from first", "from second"]
    assert reply.result.errors == []


async def test_subscribed_client_gets_async_rewake_pushes(
    daemon_factory: Any, make_event: Any, tmp_path: Path
) -> None:
    """An asyncRewake hook that exits 2 reaches a subscribed client at once, exactly once."""
    handle = await daemon_factory()
    rewake = Path(__file__).resolve().parent.parent / "data" / "async" / "rewake.sh"
    go = tmp_path / "go"
    command = f"{rewake} '{go}'"
    configure(
        handle,
        {
            "PostToolUse": [
                {"hooks": [{"type": "command", "command": command, "asyncRewake": True}]}
            ]
        },
    )
    event = make_event("PostToolUse-Bash")
    send, receive = trio.open_memory_channel[protocol.AsyncResult](10)

    async with open_client(handle.socket) as client:
        await client.subscribe_async(send.send, session_id=event["session_id"])
        reply = await client.fire("PostToolUse", event)
        assert reply.result.hooks[0].is_async
        go.touch()
        with trio.fail_after(HANG_GUARD):
            push = await receive.receive()
        assert push.rewake and push.exit_code == 2
        assert push.session_id == event["session_id"]
        assert "WAKE-UP" in push.messages[0]
        # Pushed counts as delivered: a poll does not repeat it.
        assert await client.check_for_new_responses(event["session_id"]) == []

"""What the asyncio and the trio client share, written once and run on both flavours.

The daemon runs in this test's trio loop.  The trio flavour runs the test's
body in that loop; the asyncio flavour runs it with ``asyncio.run`` in a worker
thread, so both loops are real and independent.  A body only awaits the
client's methods and the few loop primitives a :class:`Flavour` provides, so
the same lines exercise both clients.  What only one flavour has (reconnects,
tail follow, pushes, cancellation from trio) stays in test_trio_client.py and
test_aio_client.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest
import trio

from hookd_client import aio, protocol, trio_client
from hookd_client.client import DaemonUnavailable
from support.daemon import configure
from support.events import context_output, deny_output

T = TypeVar("T")
HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


class Waitable(Protocol):
    def set(self) -> None: ...

    def is_set(self) -> bool: ...

    async def wait(self) -> Any: ...


@dataclass(frozen=True)
class Flavour:
    name: str
    callback_hook: Any
    """The flavour's ``CallbackHook`` class."""
    cancelled: type[BaseException]
    """What a cancelled callback sees."""

    async def run(self, socket: Path, body: Callable[[Any], Awaitable[T]], **client: Any) -> T:
        """Open a client of this flavour on ``socket`` and run ``body(client)`` in its loop."""
        if self.name == "trio":
            with trio.fail_after(HANG_GUARD):
                async with trio_client.open_client(socket, **client) as opened:
                    return await body(opened)

        async def main() -> T:
            async with aio.AsyncClient(socket, **client) as opened:
                return await asyncio.wait_for(body(opened), HANG_GUARD)

        return await trio.to_thread.run_sync(asyncio.run, main())

    def new_event(self) -> Waitable:
        """An event of the running loop (call it inside a body)."""
        return trio.Event() if self.name == "trio" else asyncio.Event()

    async def wait_forever(self) -> None:
        if self.name == "trio":
            await trio.sleep_forever()
        await asyncio.Event().wait()

    async def gather(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run ``calls`` at once; their results in order."""
        if self.name != "trio":
            return list(await asyncio.gather(*(call() for call in calls)))
        results: list[Any] = [None] * len(calls)

        async def one(index: int) -> None:
            results[index] = await calls[index]()

        async with trio.open_nursery() as nursery:
            for index in range(len(calls)):
                nursery.start_soon(one, index)
        return results


FLAVOURS = [
    Flavour("trio", trio_client.CallbackHook, trio.Cancelled),
    Flavour("asyncio", aio.CallbackHook, asyncio.CancelledError),
]


@pytest.fixture(params=FLAVOURS, ids=lambda f: f.name)
def flavour(request: pytest.FixtureRequest) -> Flavour:
    chosen: Flavour = request.param
    return chosen


async def test_fire_returns_a_typed_result_with_progress(
    flavour: Flavour, daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    command = "echo nope >&2; exit 2"
    configure(
        handle,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]},
    )
    seen: list[tuple[str, str | None]] = []

    async def body(client: Any) -> protocol.FireReply:
        reply: protocol.FireReply = await client.fire(
            "PreToolUse",
            make_event("PreToolUse-Bash"),
            claude=True,
            on_progress=lambda p: seen.append((p.phase, p.outcome)),
        )
        return reply

    reply = await flavour.run(handle.socket, body)
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.decision == "deny"
    assert reply.result.reason == f"[{command}]: nope"
    assert reply.result.hooks[0].outcome == "blocking"
    assert reply.claude is not None and reply.claude.exit_code == 0
    assert seen == [("started", None), ("finished", "blocking")]


async def test_many_requests_in_flight_get_their_own_replies(
    flavour: Flavour, daemon_factory: Any, make_event: Any
) -> None:
    """Callback ``i`` answers only after callback ``i+1`` has: the replies come back in
    reverse order, and the test can only finish if every fire is in flight at once."""
    handle = await daemon_factory()
    count = 12
    session = "11111111-2222-3333-4444-555555555555"

    async def body(client: Any) -> dict[int, list[str]]:
        answered = [flavour.new_event() for _ in range(count + 1)]
        answered[count].set()

        async def ordered(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
            index = int(payload["tool_input"]["command"])
            await answered[index + 1].wait()
            answered[index].set()
            return context_output(f"reply-{index}")

        await client.register_session_hooks(
            session, {"PreToolUse": [{"hooks": [ordered]}]}, project=str(handle.project())
        )

        def one(index: int) -> Callable[[], Awaitable[tuple[int, list[str]]]]:
            async def fire() -> tuple[int, list[str]]:
                event = make_event(
                    "PreToolUse-Bash", session_id=session, tool_input={"command": str(index)}
                )
                reply = await client.fire("PreToolUse", event)
                return index, reply.result.additional_context

            return fire

        return dict(await flavour.gather([one(i) for i in range(count)]))

    results = await flavour.run(handle.socket, body)
    assert results == {i: [f"reply-{i}"] for i in range(count)}


async def test_no_daemon_raises_or_applies_the_failure_policy(
    flavour: Flavour, make_event: Any, unused_socket: Path
) -> None:
    event = make_event("PreToolUse-Bash")

    async def body(client: Any) -> tuple[protocol.FireReply, protocol.FireReply]:
        with pytest.raises(DaemonUnavailable) as raised:
            await client.fire("PreToolUse", event)
        assert raised.value.path == unused_socket
        opened = await client.fire("PreToolUse", event, on_unavailable="open")
        closed = await client.fire("PreToolUse", event, on_unavailable="closed")
        with pytest.raises(DaemonUnavailable):
            await client.status()
        return opened, closed

    opened, closed = await flavour.run(unused_socket, body, retries=1, backoff=0.001)
    assert opened.result.decision is None
    assert opened.result.system_messages[0].startswith("hookd unavailable")
    assert closed.result.decision == "deny"
    assert closed.result.blocked


async def test_python_callback_denies_a_bash_call(
    flavour: Flavour, daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    seen: list[tuple[str, str | None]] = []

    async def no_echo(payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        seen.append((payload["tool_input"]["command"], tool_use_id))
        return deny_output(f"not {payload['tool_input']['command']!r}")

    async def body(client: Any) -> tuple[int, protocol.FireReply, protocol.FireReply]:
        count = await client.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"matcher": "Bash", "hooks": [no_echo]}]},
            project=str(handle.project()),
        )
        reply = await client.fire("PreToolUse", event)
        other = await client.fire(
            "PreToolUse", {**make_event("PreToolUse-Read"), "session_id": event["session_id"]}
        )
        return count, reply, other

    count, reply, other = await flavour.run(handle.socket, body)
    assert count == 1
    assert reply.result.decision == "deny"
    assert reply.result.reason == "not 'echo from-sub'"
    assert seen == [("echo from-sub", event["tool_use_id"])]
    assert other.result.decision is None  # the matcher kept it to Bash


async def test_slow_callback_is_cancelled_at_the_hook_timeout(
    flavour: Flavour, daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    async def body(client: Any) -> tuple[protocol.FireReply, bool, bool]:
        started, observed = flavour.new_event(), flavour.new_event()

        async def slow(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
            started.set()
            try:
                await flavour.wait_forever()
            except flavour.cancelled:
                observed.set()
                raise
            raise AssertionError("unreachable")

        hook = flavour.callback_hook(slow, timeout=0.5, name="slow")
        await client.register_session_hooks(
            event["session_id"], {"PreToolUse": [{"hooks": [hook]}]}
        )
        reply = await client.fire("PreToolUse", event)
        await observed.wait()
        return reply, started.is_set(), observed.is_set()

    reply, started, observed = await flavour.run(handle.socket, body)
    assert started and observed
    # Reference §4.7: a callback that times out on PreToolUse blocks the call.
    assert reply.result.decision == "deny"
    (run,) = reply.result.hooks
    assert run.hook.name == "slow"
    assert run.timed_out and run.outcome == "blocking"
    assert reply.result.reason == "[slow]: callback did not answer within 0.5s"


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_callback_that_raises_is_a_non_blocking_error(
    flavour: Flavour, kind: str, daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    def broken(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        raise KeyError("rules")

    async def broken_async(_payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        raise ValueError("policy file missing")

    callback = broken if kind == "sync" else broken_async

    async def body(client: Any) -> protocol.FireReply:
        await client.register_session_hooks(
            event["session_id"], {"PreToolUse": [{"hooks": [callback]}]}
        )
        reply: protocol.FireReply = await client.fire("PreToolUse", event)
        return reply

    reply = await flavour.run(handle.socket, body)
    (run,) = reply.result.hooks
    assert run.outcome == "non_blocking_error"
    expected = "KeyError: 'rules'" if kind == "sync" else "ValueError: policy file missing"
    assert run.error is not None and expected in run.error
    assert reply.result.decision is None


async def test_status_clear_and_async_check(
    flavour: Flavour, daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")

    async def body(client: Any) -> tuple[dict[str, Any], int, protocol.FireReply, list[Any]]:
        await client.register_session_hooks(
            event["session_id"], {"PreToolUse": [{"hooks": [lambda _p, _t: None]}]}
        )
        status = await client.status()
        removed = await client.clear_session_hooks(event["session_id"])
        after = await client.fire("PreToolUse", event)
        return status, removed, after, await client.check_for_new_responses(event["session_id"])

    status, removed, after, responses = await flavour.run(handle.socket, body)
    assert status["socket"] == str(handle.socket)
    assert [s["session_id"] for s in status["sessions"]] == [event["session_id"]]
    assert removed == 1
    assert after.result.hooks == []  # cleared: the callback no longer runs
    assert responses == []

"""Failure policy and the circuit breaker: onFailure everywhere; a hook failing N times pauses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd.daemon.audit import AuditBreaker, read_records
from hookd.engine.breaker import CircuitBreaker
from hookd_client import protocol
from hookd_client.client import Client
from hookd_client.results import HookRef, HookRun
from hookd_client.trio_client import CallbackHook, open_client
from reliability.helpers import DATA, event
from support.daemon import configure_text

REF = HookRef(name="h", type="command", scope="user", source="s", event="PreToolUse")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run(outcome: str, error: str | None = None) -> HookRun:
    return HookRun(hook=REF, outcome=outcome, error=error)  # type: ignore[arg-type]


# --- the breaker itself -------------------------------------------------------------


def test_pauses_after_n_consecutive_failures_and_resumes_after_the_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown=60, clock=clock)
    for _ in range(2):
        assert breaker.record("k", "h", run("non_blocking_error", "boom")) is None
    assert breaker.paused("k") is None
    assert breaker.record("k", "h", run("cancelled", "timed out")) == "paused"
    why = breaker.paused("k")
    assert why is not None and "3 consecutive failures" in why and "timed out" in why
    clock.now = 59
    assert breaker.paused("k") is not None
    clock.now = 61
    assert breaker.paused("k") is None  # half open: one more try
    assert breaker.record("k", "h", run("non_blocking_error", "still")) == "paused"
    assert breaker.paused("k") is not None
    clock.now = 200
    assert breaker.paused("k") is None
    breaker.record("k", "h", run("success"))
    assert breaker.states() == []


def test_states_show_a_pause_until_the_cooldown_ends() -> None:
    """``hookctl status`` shows a paused hook with the seconds left (one decimal), and
    not paused once the cooldown is over although the entry is still kept (two
    surviving mutants: paused after expiry, two decimals)."""
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=60, clock=clock)
    breaker.record("k", "h", run("non_blocking_error", "boom"))
    clock.now = 20.04
    [state] = breaker.states()
    assert state.paused is True and state.resumes_in == 40.0
    clock.now = 61
    [state] = breaker.states()
    assert state.paused is False and state.resumes_in is None and state.failures == 1


def test_success_and_blocking_by_design_reset_the_count() -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=60, clock=Clock())
    breaker.record("k", "h", run("non_blocking_error", "x"))
    breaker.record("k", "h", run("blocking"))  # exit 2: the hook did its job
    breaker.record("k", "h", run("non_blocking_error", "x"))
    assert breaker.paused("k") is None
    # onFailure=block: blocking *because it failed* counts.
    breaker.record("k", "h", run("blocking", "Failed with non-blocking status code"))
    assert breaker.paused("k") is not None


def test_reset_by_pattern() -> None:
    breaker = CircuitBreaker(threshold=1, cooldown=60, clock=Clock())
    breaker.record("a#PreToolUse[0][0]", "lint", run("non_blocking_error", "x"))
    breaker.record("b#PreToolUse[0][0]", "fmt", run("non_blocking_error", "x"))
    assert breaker.reset("lint") == ["a#PreToolUse[0][0]"]
    assert breaker.paused("a#PreToolUse[0][0]") is None
    assert breaker.paused("b#PreToolUse[0][0]") is not None
    assert breaker.reset(None) == ["b#PreToolUse[0][0]"]


# --- in the daemon ----------------------------------------------------------------------


async def _daemon(daemon_factory: Any, **settings: Any) -> Any:
    handle = await daemon_factory(**settings)
    text = (DATA / "faulty.json").read_text().replace("{DATA}", str(DATA))
    configure_text(handle, text)
    return handle


def _fire_sync(sock: Path, tool: str) -> protocol.FireReply:
    with Client(sock) as client:
        return client.fire("PreToolUse", event(tool_name=tool, session_id="breaker"))


async def fire(handle: Any, tool: str) -> protocol.FireReply:
    return await trio.to_thread.run_sync(_fire_sync, handle.socket, tool)


async def test_a_failing_hook_is_paused_reported_and_resumes(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory, breaker_threshold=3, breaker_cooldown=1.0)
    for _ in range(3):
        reply = await fire(handle, "Failing")
        assert [r.outcome for r in reply.result.hooks] == ["non_blocking_error"]
    paused = await fire(handle, "Failing")
    assert paused.result.hooks == []
    [error] = paused.result.errors
    assert "paused by the circuit breaker after 3 consecutive failures" in error
    st = await trio.to_thread.run_sync(lambda: Client(handle.socket).connect().status())
    [state] = st["breakers"]
    assert state["paused"] and state["failures"] == 3 and "broken" in state["last_error"]
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    assert [r.state for r in records if isinstance(r, AuditBreaker)] == ["paused"]
    await trio.sleep(1.2)
    again = await fire(handle, "Failing")  # the cool-down is over: it runs (and fails) again
    assert [r.outcome for r in again.result.hooks] == ["non_blocking_error"]
    assert (await fire(handle, "Failing")).result.hooks == []  # … and is paused at once


async def test_blocking_by_design_never_pauses(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory, breaker_threshold=2)
    for _ in range(4):
        reply = await fire(handle, "Blocker")
        assert reply.result.decision == "deny"


async def test_on_failure_block_fails_closed_and_counts(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory, breaker_threshold=2)
    for _ in range(2):
        reply = await fire(handle, "FailClosed")
        assert reply.result.decision == "deny"
        assert 'onFailure is "block"' in reply.result.blocking_messages[0]
    # Paused: a fail-closed hook that cannot run no longer blocks (and says why).
    reply = await fire(handle, "FailClosed")
    assert reply.result.decision is None and "paused" in reply.result.errors[0]


async def test_reset_resumes_a_paused_hook(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory, breaker_threshold=1, breaker_cooldown=3600)
    await fire(handle, "Failing")
    assert (await fire(handle, "Failing")).result.hooks == []

    def reset() -> Any:
        with Client(handle.socket) as client:
            return client.call(protocol.ResetBreakers(id=client.next_id(), hook="broken"))

    data = await trio.to_thread.run_sync(reset)
    assert len(data["reset"]) == 1
    assert len((await fire(handle, "Failing")).result.hooks) == 1


async def test_on_failure_block_for_a_callback_hook(daemon_factory: Any) -> None:
    """onFailure is read for every handler kind: a callback that raises blocks the call."""
    handle = await daemon_factory()

    async def broken(_input: dict[str, Any], _tool_use_id: str | None) -> dict[str, Any]:
        raise RuntimeError("callback broke")

    async def slow(_input: dict[str, Any], _tool_use_id: str | None) -> dict[str, Any]:
        await trio.sleep(30)
        return {}

    async with open_client(handle.socket) as client:
        for name, fn, timeout in (("broken", broken, None), ("slow", slow, 0.3)):
            session = f"cb-{name}"
            await client.register_session_hooks(
                session,
                {
                    "PreToolUse": [
                        {
                            "hooks": [
                                CallbackHook(fn, name=name, timeout=timeout, on_failure="block")
                            ]
                        }
                    ]
                },
                project=str(handle.project()),
            )
            reply = await client.fire("PreToolUse", event(session_id=session))
            assert reply.result.decision == "deny", (name, reply.result)
            assert 'onFailure is "block"' in reply.result.blocking_messages[0]

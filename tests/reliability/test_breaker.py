"""Failure policy and the circuit breaker: onFailure everywhere; a hook failing N times pauses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd.config.model import HookSpec, Scope
from hookd.config.schema import CommandHandler
from hookd.daemon.audit import AuditBreaker, read_records
from hookd.engine.breaker import CircuitBreaker, breaker_key
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


def run(outcome: str, error: str | None = None, hook: HookRef = REF) -> HookRun:
    return HookRun(hook=hook, outcome=outcome, error=error)  # type: ignore[arg-type]


# --- the breaker itself -------------------------------------------------------------


def spec(command: str = "h", event: str = "PreToolUse") -> HookSpec:
    return HookSpec(event, None, CommandHandler(command=command), Scope.USER, "s", 0, 0)


H = spec()


def key(session: str = "s", hook: HookSpec = H) -> str:
    return breaker_key(hook, session)


def paused(breaker: CircuitBreaker, session: str = "s", hook: HookSpec = H) -> str | None:
    pause = breaker.pause(hook, session)
    return pause.reason if pause is not None else None


def test_pauses_after_n_consecutive_failures_and_resumes_after_the_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown=60, clock=clock)
    for _ in range(2):
        assert breaker.record(H, "s", run("non_blocking_error", "boom")) is None
    assert paused(breaker) is None
    assert breaker.record(H, "s", run("cancelled", "timed out")) == "paused"
    why = paused(breaker)
    assert why is not None and "3 consecutive failures" in why and "timed out" in why
    clock.now = 59
    assert paused(breaker) is not None
    clock.now = 61
    assert paused(breaker) is None  # half open: one more try
    assert breaker.record(H, "s", run("non_blocking_error", "still")) == "paused"
    assert paused(breaker) is not None
    clock.now = 200
    assert paused(breaker) is None
    breaker.record(H, "s", run("success"))
    assert breaker.states() == []


def test_states_show_a_pause_until_the_cooldown_ends() -> None:
    """``hookctl status`` shows a paused hook with the seconds left (one decimal), and
    not paused once the cooldown is over although the entry is still kept (two
    surviving mutants: paused after expiry, two decimals)."""
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=60, clock=clock)
    breaker.record(H, "s", run("non_blocking_error", "boom"))
    clock.now = 20.04
    [state] = breaker.states()
    assert state.paused is True and state.resumes_in == 40.0 and state.session == "s"
    clock.now = 61
    [state] = breaker.states()
    assert state.paused is False and state.resumes_in is None and state.failures == 1


def test_success_and_blocking_by_design_reset_the_count() -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=60, clock=Clock())
    breaker.record(H, "s", run("non_blocking_error", "x"))
    breaker.record(H, "s", run("blocking"))  # exit 2: the hook did its job
    breaker.record(H, "s", run("non_blocking_error", "x"))
    assert paused(breaker) is None
    # onFailure=block: blocking *because it failed* counts.
    breaker.record(H, "s", run("blocking", "Failed with non-blocking status code"))
    pause = breaker.pause(H, "s")
    assert pause is not None and pause.blocks  # its last failure blocked: the pause blocks


def test_reset_by_pattern() -> None:
    breaker = CircuitBreaker(threshold=1, cooldown=60, clock=Clock())
    lint, fmt = spec("lint"), spec("fmt")
    breaker.record(lint, "s", run("non_blocking_error", "x", lint.ref()))
    breaker.record(fmt, "s", run("non_blocking_error", "x", fmt.ref()))
    assert breaker.reset("lint") == [key(hook=lint)]
    assert paused(breaker, hook=lint) is None
    assert paused(breaker, hook=fmt) is not None
    assert breaker.reset(None) == [key(hook=fmt)]


def test_one_sessions_failures_never_pause_the_hook_for_another_session() -> None:
    """Issue 28: the breaker is per (session, hook) — five failures in session A pause
    the hook in A only; B's count starts at nothing and B's success does not close A's."""
    breaker = CircuitBreaker(threshold=5, cooldown=60, clock=Clock())
    for _ in range(5):
        breaker.record(H, "A", run("non_blocking_error", "could not start"))
    assert paused(breaker, "A") is not None
    assert paused(breaker, "B") is None
    breaker.record(H, "B", run("success"))
    assert paused(breaker, "A") is not None


def test_a_run_the_daemon_could_not_start_neither_counts_nor_resets() -> None:
    breaker = CircuitBreaker(threshold=2, cooldown=60, clock=Clock())
    fault = HookRun(hook=REF, outcome="non_blocking_error", error="EAGAIN", daemon_fault=True)
    breaker.record(H, "s", run("non_blocking_error", "x"))
    for _ in range(5):
        assert breaker.record(H, "s", fault) is None
    [state] = breaker.states()
    assert state.failures == 1 and not state.paused


def test_no_failure_counts_while_the_daemon_is_short_of_resources() -> None:
    """A hook that did start while another could not (a shell that cannot fork its
    pipeline) fails for the daemon's reason: nothing counts until a cooldown after
    the last run the daemon could not start."""
    clock = Clock()
    breaker = CircuitBreaker(threshold=2, cooldown=60, clock=clock)
    fault = HookRun(hook=REF, outcome="non_blocking_error", error="EAGAIN", daemon_fault=True)
    breaker.record(spec("other"), "A", fault)
    assert breaker.short_of_resources
    for _ in range(5):
        assert breaker.record(H, "B", run("non_blocking_error", "sh: Cannot fork")) is None
    assert breaker.states() == []
    clock.now = 61
    assert not breaker.short_of_resources
    breaker.record(H, "B", run("non_blocking_error", "x"))
    assert breaker.record(H, "B", run("non_blocking_error", "x")) == "paused"


def test_breakers_of_ended_sessions_and_removed_hooks_are_forgotten() -> None:
    breaker = CircuitBreaker(threshold=5, cooldown=60, clock=Clock())
    other = spec("other")
    for session in ("A", "B"):
        for hook in (H, other):
            breaker.record(hook, session, run("non_blocking_error", "x"))
    dropped = breaker.retain({H.hook_id}, {"A"})
    assert sorted(dropped) == sorted([key("A", other), key("B", H), key("B", other)])
    assert [s.key for s in breaker.states()] == [key("A", H)]


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
    # Paused: a fail-closed hook is not run, and still blocks — saying why (issue 28).
    reply = await fire(handle, "FailClosed")
    assert reply.result.decision == "deny"
    [held] = reply.result.hooks
    assert held.paused and held.pid is None
    [message] = reply.result.blocking_messages
    assert "paused by the circuit breaker after 2 consecutive failures" in message
    assert 'blocking because onFailure is "block"' in message
    assert "paused" in reply.result.errors[0]


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

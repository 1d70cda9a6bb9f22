"""A paused fail-closed hook keeps blocking, whatever its handler and however it failed
(issue 28, item 4: "with ``onFailure: "block"``, 39 blocked, then 317 allowed").

The breaker pauses a hook to save its cost; it must not change the answer.  A
hook that fails closed — ``onFailure: "block"``, or a failure that blocks on
its own (a timed-out PreModelSwitch hook, a timed-out SDK callback on
PreToolUse) — answers with a block while paused, saying it is paused, and is
not run.  A fail-open hook is still skipped (tests/reliability/test_breaker.py).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.daemon.audit import AuditRun, read_records
from hookd_client.client import Client
from hookd_client.results import FireResult
from hookd_client.trio_client import CallbackHook, open_client
from reliability.helpers import event
from support.daemon import configure
from support.fake_http import refused_port

THRESHOLD = 2

GUARD_PY = """
import time

def raises(event):
    raise RuntimeError("guard broke")

def hangs(event):
    time.sleep(30)

async def raises_in_daemon(event):
    raise RuntimeError("guard broke in the daemon")
"""


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nobody listens on: connections are refused (for the whole test)."""
    with refused_port() as port:
        yield port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


def _cases(tmp: Path, closed: int, silent: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """Case → (event, handler): every handler kind, every way of failing."""
    guard = tmp / "guard.py"
    guard.write_text(GUARD_PY)
    block = {"onFailure": "block"}
    api = f"http://127.0.0.1:{closed}"
    return {
        "command-exit-1": ("PreToolUse", {"type": "command", "command": "exit 1", **block}),
        "command-timeout": (
            "PreToolUse",
            {"type": "command", "command": "sleep 30", "timeout": 0.3, **block},
        ),
        "command-cannot-start": (
            "PreToolUse",
            {"type": "command", "command": str(tmp / "missing"), "args": [], **block},
        ),
        "command-bad-json": (
            "PreToolUse",
            {"type": "command", "command": "echo '{\"decision\": }'", **block},
        ),
        "command-killed": ("PreToolUse", {"type": "command", "command": "kill -9 $$", **block}),
        "http-refused": ("PreToolUse", {"type": "http", "url": f"{api}/hook", **block}),
        "http-timeout": (
            "PreToolUse",
            {"type": "http", "url": f"http://127.0.0.1:{silent}/hook", "timeout": 0.3, **block},
        ),
        "python-raises": ("PreToolUse", {"type": "python", "callable": f"{guard}:raises", **block}),
        "python-timeout": (
            "PreToolUse",
            {"type": "python", "callable": f"{guard}:hangs", "timeout": 0.5, **block},
        ),
        "python-in-daemon-raises": (
            "PreToolUse",
            {"type": "python", "callable": f"{guard}:raises_in_daemon", "inDaemon": True, **block},
        ),
        "prompt-api-down": (
            "PreToolUse",
            {"type": "prompt", "prompt": "safe? $ARGUMENTS", **block},
        ),
        "agent-api-down": ("PreToolUse", {"type": "agent", "prompt": "safe? $ARGUMENTS", **block}),
        "user-prompt-exit-1": (
            "UserPromptSubmit",
            {"type": "command", "command": "exit 1", **block},
        ),
        # No onFailure: on PreModelSwitch a timeout blocks by itself (reference §4.7).
        "pre-model-switch-timeout": (
            "PreModelSwitch",
            {"type": "command", "command": "sleep 30", "timeout": 0.3},
        ),
    }


CASES = [
    "command-exit-1",
    "command-timeout",
    "command-cannot-start",
    "command-bad-json",
    "command-killed",
    "http-refused",
    "http-timeout",
    "python-raises",
    "python-timeout",
    "python-in-daemon-raises",
    "prompt-api-down",
    "agent-api-down",
    "user-prompt-exit-1",
    "pre-model-switch-timeout",
]


def _input(name: str, session: str, cwd: str) -> dict[str, Any]:
    if name == "PreToolUse":
        return event(session_id=session, cwd=cwd)
    if name == "UserPromptSubmit":
        return event("UserPromptSubmit", session_id=session, cwd=cwd)
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": cwd,
        "hook_event_name": name,
    }


def _blocked(result: FireResult) -> bool:
    return result.decision in ("deny", "block")


@pytest.mark.parametrize("case", CASES)
async def test_a_paused_fail_closed_hook_keeps_blocking(
    daemon_factory: Any, tmp_path: Path, closed_port: int, silent_port: int, case: str
) -> None:
    handle = await daemon_factory(breaker_threshold=THRESHOLD, breaker_cooldown=3600)
    name, handler = _cases(tmp_path, closed_port, silent_port)[case]
    configure(handle, {name: [{"hooks": [handler]}]})
    payload = _input(name, f"fc-{case}", str(handle.project()))
    # The prompt and agent hooks reach the Messages API at a port nobody serves.
    env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port}"}

    def fire() -> FireResult:
        with Client(handle.socket) as client:
            return client.fire(name, payload, env=env).result

    for _ in range(THRESHOLD):  # failing, and blocking each time
        result = await trio.to_thread.run_sync(fire)
        assert _blocked(result), result
        assert [r.outcome for r in result.hooks] == ["blocking"], result

    paused = await trio.to_thread.run_sync(fire)
    assert _blocked(paused), paused  # today: paused, skipped — and allowed
    [held] = paused.hooks
    assert held.outcome == "blocking" and held.pid is None and held.duration_ms == 0
    assert getattr(held, "paused", False), held
    [message] = paused.blocking_messages
    assert f"paused by the circuit breaker after {THRESHOLD} consecutive failures" in message
    assert "blocking because" in message
    assert any("paused by the circuit breaker" in e for e in paused.errors)
    [state] = handle.daemon.breaker.states()
    assert state.paused and state.blocks and state.session == f"fc-{case}"
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    [audited] = [r for r in records if isinstance(r, AuditRun) and r.paused]
    assert audited.outcome == "blocking" and "paused by the circuit breaker" in (
        audited.error or ""
    )


async def test_a_paused_fail_closed_callback_keeps_blocking(daemon_factory: Any) -> None:
    """Client callbacks: one raising under onFailure "block", one timing out on PreToolUse
    (a callback timeout blocks there by itself)."""
    handle = await daemon_factory(breaker_threshold=THRESHOLD, breaker_cooldown=3600)

    async def broken(_input: dict[str, Any], _tool_use_id: str | None) -> dict[str, Any]:
        raise RuntimeError("callback broke")

    async def slow(_input: dict[str, Any], _tool_use_id: str | None) -> dict[str, Any]:
        await trio.sleep(30)
        return {}

    hooks = {
        "broken": CallbackHook(broken, name="broken", on_failure="block"),
        "slow": CallbackHook(slow, name="slow", timeout=0.3),
    }
    async with open_client(handle.socket) as client:
        for name, hook in hooks.items():
            session = f"cb-{name}"
            await client.register_session_hooks(
                session, {"PreToolUse": [{"hooks": [hook]}]}, project=str(handle.project())
            )
            for _ in range(THRESHOLD):
                reply = await client.fire("PreToolUse", event(session_id=session))
                assert reply.result.decision == "deny", (name, reply.result)
            reply = await client.fire("PreToolUse", event(session_id=session))
            assert reply.result.decision == "deny", (name, reply.result)
            [message] = reply.result.blocking_messages
            assert "paused by the circuit breaker" in message, message


async def test_a_paused_fail_closed_hook_blocks_also_on_events_that_run_nothing_else(
    daemon_factory: Any,
) -> None:
    """The only hook of the event is paused: the event is answered without a task
    (``answer_now``), and still blocks; another session is not paused at all."""
    handle = await daemon_factory(breaker_threshold=1, breaker_cooldown=3600)
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 1"}]}]})
    configure(
        handle,
        {
            "PreToolUse": [
                {"hooks": [{"type": "command", "command": "exit 1", "onFailure": "block"}]}
            ]
        },
    )

    def fire(session: str) -> FireResult:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(session_id=session)).result

    first = await trio.to_thread.run_sync(fire, "one")
    assert first.decision == "deny" and first.hooks[0].pid is not None
    held = await trio.to_thread.run_sync(fire, "one")
    assert held.decision == "deny" and held.hooks[0].pid is None
    other = await trio.to_thread.run_sync(fire, "two")  # its own breaker: the hook runs
    assert other.decision == "deny" and other.hooks[0].pid is not None

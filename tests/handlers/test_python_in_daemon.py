"""``inDaemon`` python policies: run as trio tasks in the daemon, still killable.

A real in-process daemon on its Unix socket, fired through the trio client.
What is observed: the hook outcomes, ``InDaemonPolicies.calls`` (calls that
never reached a worker), the worker pool's ``spawned`` count, and a second
session's event being answered while the first one's policy hangs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd.handlers.python import PythonRunner
from hookd_client.trio_client import open_client
from support.daemon import DaemonHandle, configure
from support.events import fixture_event as event

POLICIES = """
import time
import trio

async def deny_rm(event):
    if "rm -rf" in event.typed.tool_input.get("command", ""):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "IN-DAEMON-DENY"}}
    return None

async def hangs(event):
    await trio.sleep_forever()

async def raises(event):
    raise ValueError("IN-DAEMON-BROKE")

async def spins(event):
    end = time.monotonic() + 0.2
    while time.monotonic() < end:
        pass
    return {"systemMessage": "SPUN"}

def plain(event):
    return {"systemMessage": "PLAIN-DEF"}
"""


def _policy(path: Path, name: str, timeout: float = 10, **extra: Any) -> dict[str, Any]:
    return {
        "type": "python",
        "callable": f"{path}:{name}",
        "inDaemon": True,
        "timeout": timeout,
        **extra,
    }


def _runner(handle: DaemonHandle) -> PythonRunner:
    assert handle.daemon.handlers is not None
    runner = handle.daemon.handlers.python
    assert isinstance(runner, PythonRunner)
    return runner


async def _daemon(daemon_factory: Any, tmp_path: Path, hooks: list[dict[str, Any]]) -> DaemonHandle:
    handle: DaemonHandle = await daemon_factory()
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]})
    return handle


def _bash(command: str, session: str, handle: DaemonHandle) -> dict[str, Any]:
    return event(
        session_id=session,
        cwd=str(handle.project()),
        tool_input={"command": command, "description": "x"},
    )


async def test_deny_answers_in_the_daemon_and_wins_over_an_allow(
    daemon_factory: Any, tmp_path: Path
) -> None:
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    allow = {
        "type": "command",
        "command": 'echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
        '"permissionDecision":"allow"}}\'',
    }
    handle = await _daemon(daemon_factory, tmp_path, [allow, _policy(policies, "deny_rm")])
    async with open_client(handle.socket, connect=True) as client:
        denied = await client.fire("PreToolUse", _bash("rm -rf /", "s-deny", handle))
        allowed = await client.fire("PreToolUse", _bash("ls", "s-deny", handle))
    assert denied.result.decision == "deny"
    assert denied.result.reason == "IN-DAEMON-DENY"
    assert allowed.result.decision == "allow"
    runner = _runner(handle)
    assert runner.in_daemon.calls == 2
    assert runner.pool.spawned == 0  # no worker process was needed


async def test_a_hanging_policy_is_cut_at_its_timeout_and_the_daemon_keeps_serving(
    daemon_factory: Any, tmp_path: Path
) -> None:
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PreToolUse": [{"matcher": "Bash", "hooks": [_policy(policies, "hangs", timeout=2)]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [_policy(policies, "deny_rm")]}],
        },
    )
    replies: dict[str, Any] = {}
    async with (
        open_client(handle.socket, connect=True) as hung,
        open_client(handle.socket, connect=True) as other,
        trio.open_nursery() as nursery,
    ):

        async def fire_hanging() -> None:
            replies["hung"] = await hung.fire("PreToolUse", _bash("ls", "s-hang", handle))

        nursery.start_soon(fire_hanging)
        with trio.fail_after(30):
            while not handle.daemon.activity.running_hooks():
                await trio.sleep(0.01)
        # While the policy hangs, another session's event is answered.
        post = event("PostToolUse-Bash", session_id="s-other", cwd=str(handle.project()))
        answered = await other.fire("PostToolUse", post)
        assert "hung" not in replies
    assert [run.outcome for run in answered.result.hooks] == ["success"]
    (run,) = replies["hung"].result.hooks
    assert (run.outcome, run.error) == ("cancelled", "timed out")
    assert replies["hung"].result.decision is None  # a timeout is non-blocking
    assert _runner(handle).pool.spawned == 0


async def test_a_raising_policy_is_a_non_blocking_error(
    daemon_factory: Any, tmp_path: Path
) -> None:
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "raises")])
    async with open_client(handle.socket, connect=True) as client:
        reply = await client.fire("PreToolUse", _bash("ls", "s-raise", handle))
    (run,) = reply.result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error == "ValueError: IN-DAEMON-BROKE"
    assert "Traceback" in run.stderr
    assert reply.result.decision is None


async def test_a_policy_that_holds_the_loop_is_sent_to_the_workers(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """A busy loop cannot be cancelled in the daemon: after the first stall the callable
    runs in a worker process, where its deadline can kill it."""
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "spins")])
    runner = _runner(handle)
    async with open_client(handle.socket, connect=True) as client:
        first = await client.fire("PreToolUse", _bash("ls", "s-spin", handle))
        assert runner.in_daemon.demoted == {f"{policies}:spins"}
        assert runner.pool.spawned == 0
        second = await client.fire("PreToolUse", _bash("ls", "s-spin", handle))
    assert first.result.system_messages == ["SPUN"]
    assert second.result.system_messages == ["SPUN"]
    assert runner.in_daemon.calls == 1
    assert runner.pool.spawned == 1  # the second call went to a worker


async def test_a_plain_def_runs_in_a_worker(daemon_factory: Any, tmp_path: Path) -> None:
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "plain")])
    async with open_client(handle.socket, connect=True) as client:
        reply = await client.fire("PreToolUse", _bash("ls", "s-plain", handle))
    assert reply.result.system_messages == ["PLAIN-DEF"]
    runner = _runner(handle)
    assert runner.in_daemon.calls == 0
    assert runner.pool.spawned == 1

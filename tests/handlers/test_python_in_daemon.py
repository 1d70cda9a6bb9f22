"""``inDaemon`` python policies: run as trio tasks in the daemon, still killable.

A real in-process daemon on its Unix socket, fired through the trio client.
What is observed: the hook outcomes, ``InDaemonPolicies.calls`` (calls that
never reached a worker), the worker pool's ``spawned`` count, and a second
session's event being answered while the first one's policy hangs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import trio

from hookd.handlers.python import PythonRunner
from hookd.handlers.python_inline import _never_suspends
from hookd_client.trio_client import open_client
from support.daemon import DaemonHandle, configure
from support.events import fixture_event as event

POLICIES = """
import time
import msgspec
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

CALLS = {"stalls_later": 0}

async def stalls_later(event):
    CALLS["stalls_later"] += 1
    if CALLS["stalls_later"] == 2:
        end = time.monotonic() + 0.2
        while time.monotonic() < end:
            pass
    return {"systemMessage": f"CALL-{CALLS['stalls_later']}"}

async def awaits_then_denies(event):
    await trio.sleep(0)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "AWAITED"}}

async def rewrites(event):
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "updatedInput": {"command": "rm -rf /rewritten"}}}
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


async def test_a_policy_without_an_await_runs_in_one_step_and_is_still_demoted_when_it_stalls(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """From its second call on, a loaded policy with no ``await`` is called in one
    synchronous step, without a cancel scope; a step that holds the loop still demotes it."""
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "stalls_later")])
    runner = _runner(handle)
    async with open_client(handle.socket, connect=True) as client:
        replies = [
            await client.fire("PreToolUse", _bash("ls", "s-stall", handle)) for _ in range(3)
        ]
    assert [r.result.system_messages for r in replies] == [["CALL-1"], ["CALL-2"], ["CALL-1"]]
    # The third call ran in a fresh worker process (its own module state: CALL-1 again).
    assert runner.in_daemon.demoted == {f"{policies}:stalls_later"}
    assert runner.in_daemon.calls == 2
    assert runner.pool.spawned == 1


async def test_a_policy_that_awaits_keeps_running_under_its_deadline(
    daemon_factory: Any, tmp_path: Path
) -> None:
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "awaits_then_denies")])
    async with open_client(handle.socket, connect=True) as client:
        replies = [
            await client.fire("PreToolUse", _bash("ls", "s-await", handle)) for _ in range(3)
        ]
    assert [(r.result.decision, r.result.reason) for r in replies] == [("deny", "AWAITED")] * 3
    assert _runner(handle).in_daemon.calls == 3
    assert _runner(handle).pool.spawned == 0


async def test_an_edited_policy_file_is_reloaded_on_its_next_call(
    daemon_factory: Any, tmp_path: Path
) -> None:
    policies = tmp_path / "edited.py"
    policies.write_text('async def check(event):\n    return {"systemMessage": "V1"}\n')
    handle = await _daemon(daemon_factory, tmp_path, [_policy(policies, "check")])
    async with open_client(handle.socket, connect=True) as client:
        before = [await client.fire("PreToolUse", _bash("ls", "s-edit", handle)) for _ in range(2)]
        policies.write_text('async def check(event):\n    return {"systemMessage": "V2-EDITED"}\n')
        after = await client.fire("PreToolUse", _bash("ls", "s-edit", handle))
    assert [r.result.system_messages for r in before] == [["V1"], ["V1"]]
    assert after.result.system_messages == ["V2-EDITED"]


async def test_a_sequential_chain_shows_the_next_policy_the_rewritten_input(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """The second policy is called with the first one's ``updatedInput``, not with the
    event the daemon decoded (which it otherwise reuses)."""
    policies = tmp_path / "policies.py"
    policies.write_text(POLICIES)
    handle = await daemon_factory()
    group = {
        "matcher": "Bash",
        "sequential": True,
        "hooks": [_policy(policies, "rewrites"), _policy(policies, "deny_rm")],
    }
    configure(handle, {"PreToolUse": [group]})
    async with open_client(handle.socket, connect=True) as client:
        reply = await client.fire("PreToolUse", _bash("ls", "s-chain", handle))
    assert (reply.result.decision, reply.result.reason) == ("deny", "IN-DAEMON-DENY")


def test_only_an_async_def_without_a_suspension_point_is_called_in_one_step() -> None:
    import functools

    namespace: dict[str, Any] = {}
    exec(POLICIES, namespace)
    assert _never_suspends(namespace["deny_rm"])
    assert _never_suspends(namespace["spins"])
    assert not _never_suspends(namespace["hangs"])
    assert not _never_suspends(namespace["awaits_then_denies"])

    async def uses_async_with(event: Any) -> None:
        async with trio.open_nursery():
            pass

    async def uses_async_for(event: Any) -> None:
        async for _ in event:
            pass

    @functools.wraps(namespace["deny_rm"])
    def wrapper(event: Any) -> Any:
        return namespace["hangs"](event)

    assert not _never_suspends(uses_async_with)
    assert not _never_suspends(uses_async_for)
    assert not _never_suspends(wrapper)  # not an async def itself: its awaitable may suspend
    assert not _never_suspends(namespace["plain"])


def _worker_reply(value: Any, cap: int) -> Any:
    from hookd.handlers.pyworker import WorkerReply, encode_capped, hook_answer

    body = encode_capped(msgspec.json.Encoder(), hook_answer(value), cap)
    return msgspec.json.decode(body, type=WorkerReply)


def test_an_answer_reads_the_same_in_the_daemon_and_from_a_worker() -> None:
    """At the output cap an answer is whole, one byte over it is cut to the cap as text
    — in the daemon's shortcut and in the worker's frame alike; a non-JSON answer is
    the same error in both."""
    from hookd.handlers.python_inline import InDaemonPolicies

    cap = 200
    for extra, truncated in ((0, False), (1, True)):
        value = {"systemMessage": ""}
        value["systemMessage"] = "x" * (cap + extra - len(msgspec.json.encode(value)))
        assert len(msgspec.json.encode(value)) == cap + extra
        here = InDaemonPolicies(cap)._answer(value)
        there = _worker_reply(value, cap)
        assert here.truncated == there.truncated == truncated
        if truncated:
            assert here.stdout == there.value and len(there.value) == cap
        else:
            assert here.json_output == there.value == value
    odd = {"when": object()}
    here = InDaemonPolicies(cap)._answer(odd)
    assert here.failure == _worker_reply(odd, cap).error
    assert here.failure is not None and "non-JSON" in here.failure

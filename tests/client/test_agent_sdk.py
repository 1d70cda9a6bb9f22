"""``hookd_client.agent_sdk`` against a real daemon: the SDK's callbacks, called as the SDK does.

Each test takes the callback out of ``hookd_hooks()`` — the ``HookMatcher`` the SDK
would register — and awaits it with an input the real SDK handed a callback
(tests/data/agents/claude-agent-sdk-0.2.187/), on asyncio in a worker thread
while the daemon runs in the test's trio loop; the answer must be what the CLI
obeys.  tests/agents/test_agent_sdk.py runs the real SDK and CLI end to end.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import typing
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import claude_agent_sdk
import pytest
import trio

from hookd_client import protocol
from hookd_client.agent_sdk import (
    CALLBACK_EVENTS,
    SETTINGS_EVENTS,
    HookdHooks,
    hookd_hooks,
    hookd_settings,
    sdk_output,
)
from hookd_client.client import Client
from support.daemon import DaemonHandle, configure

T = TypeVar("T")
HANG_GUARD = 30
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-agent-sdk-0.2.187"


def sdk_input(event: str, project: Path, **fields: Any) -> dict[str, Any]:
    """A real SDK callback input, in a fresh session of ``project``."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{event}.json").read_text())
    data.update(session_id=str(uuid.uuid4()), cwd=str(project), **fields)
    return data


async def in_asyncio(main: Callable[[], Awaitable[T]]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(main(), HANG_GUARD)

    return await trio.to_thread.run_sync(asyncio.run, guarded())


async def call(hooks: HookdHooks, hook_input: dict[str, Any]) -> dict[str, Any]:
    """Await the event's one callback as the SDK does: (input, tool_use_id, context)."""
    matcher = hooks[hook_input["hook_event_name"]][0]
    answer = await matcher.hooks[0](hook_input, hook_input.get("tool_use_id"), {"signal": None})  # type: ignore[arg-type]
    return dict(answer)


def command(script: str) -> dict[str, Any]:
    return {"type": "command", "command": script}


def test_every_sdk_callback_event_is_forwarded() -> None:
    """CALLBACK_EVENTS is the installed SDK's HookEvent literal: a new SDK event fails here."""
    sdk_events = {
        arg
        for literal in typing.get_args(claude_agent_sdk.types.HookEvent)
        for arg in typing.get_args(literal)
    }
    assert set(CALLBACK_EVENTS) == sdk_events
    hooks = hookd_hooks()
    assert set(hooks) == sdk_events
    for matchers in hooks.values():
        (matcher,) = matchers
        # hookd matches (its config reloads); the SDK must not cut a hook hookd still runs.
        assert matcher.matcher is None and matcher.timeout == 630.0


def test_session_events_are_refused_with_the_way_to_reach_them() -> None:
    with pytest.raises(ValueError, match=r"SessionStart.*hookd_settings"):
        hookd_hooks(events=["SessionStart"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("event", "rendered", "expected"),
    [
        pytest.param("PreToolUse", protocol.ClaudeHookOutput(), {}, id="nothing"),
        pytest.param(
            "Stop",
            protocol.ClaudeHookOutput(stderr="[cmd]: go on\n", exit_code=2),
            {"decision": "block", "reason": "[cmd]: go on"},
            id="exit2-stop",
        ),
        pytest.param(
            "PreToolUse",
            protocol.ClaudeHookOutput(stderr="no\n", exit_code=2),
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
            id="exit2-pretooluse",
        ),
        pytest.param(
            "UserPromptSubmit",
            protocol.ClaudeHookOutput(stdout="plain context\n"),
            {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": "plain context",
                }
            },
            id="plain-context",
        ),
        pytest.param(
            "Stop", protocol.ClaudeHookOutput(stdout="not context\n"), {}, id="plain-elsewhere"
        ),
        pytest.param(
            "Stop",
            protocol.ClaudeHookOutput(stdout='{"continue": false, "stopReason": "halt"}\n'),
            {"continue_": False, "stopReason": "halt"},
            id="continue-python-name",
        ),
        pytest.param(
            "PreToolUse", protocol.ClaudeHookOutput(stderr="x", exit_code=1), {}, id="exit1"
        ),
    ],
)
def test_sdk_output(
    event: str, rendered: protocol.ClaudeHookOutput, expected: dict[str, Any]
) -> None:
    """What a callback cannot say (exit 2, plain stdout) becomes the JSON that means it."""
    assert sdk_output(event, rendered) == expected


async def test_a_deny_from_the_users_config_reaches_the_sdk(
    daemon_factory: Any,
) -> None:
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    configure(
        handle,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [command("echo no shell >&2; exit 2")]}]},
    )
    hooks = hookd_hooks(handle.socket)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with hooks:
            bash = await call(hooks, sdk_input("PreToolUse", project))
            read = await call(hooks, sdk_input("PreToolUse", project, tool_name="Read"))
            return bash, read

    bash, read = await in_asyncio(main)
    sessions = handle.daemon.sessions.all()
    assert [s.agent for s in sessions] == ["claude-agent-sdk"] * 2  # two fresh sessions
    specific = bash["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "no shell" in specific["permissionDecisionReason"]
    assert read == {}  # the matcher is hookd's: Read does not match Bash


async def test_stop_continuation_context_and_hot_reload(daemon_factory: Any) -> None:
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    configure(handle, {"Stop": [{"hooks": [command("echo keep going >&2; exit 2")]}]})
    hooks = hookd_hooks(handle.socket)
    stop = sdk_input("Stop", project)
    prompt = sdk_input("UserPromptSubmit", project)
    answers: list[dict[str, Any]] = []
    reloaded = trio.Event()
    answered = trio.Event()

    async def main() -> None:
        async with hooks:
            answers.append(await call(hooks, stop))
            trio.from_thread.run_sync(answered.set)
            trio.from_thread.run(reloaded.wait)  # the loop is idle meanwhile
            answers.append(await call(hooks, stop))
            answers.append(await call(hooks, prompt))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(in_asyncio, main)
        await answered.wait()
        # The user edits the config while the app runs: the next event obeys it.
        configure(handle, {"UserPromptSubmit": [{"hooks": [command("echo PLAIN-CONTEXT")]}]})
        reloaded.set()
    assert answers[0] == {"decision": "block", "reason": "keep going"}
    assert answers[1] == {}
    assert answers[2] == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "PLAIN-CONTEXT",
        }
    }


async def _wait_until_down(socket: Path) -> None:
    while True:
        try:
            stream = await trio.open_unix_socket(str(socket))
        except OSError:
            return
        await stream.aclose()
        await trio.sleep(0.01)


async def test_daemon_down_fails_open_except_where_a_hook_says_block(
    daemon_factory: Any,
) -> None:
    """Like the relay's --fail-closed: the events with an ``onFailure: "block"`` hook block
    when hookd cannot answer; every other event proceeds with a visible message."""
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    guard = {**command("true"), "onFailure": "block"}
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]})
    hooks = hookd_hooks(handle.socket)
    pre = sdk_input("PreToolUse", project)
    prompt = {**sdk_input("UserPromptSubmit", project), "session_id": pre["session_id"]}
    first: list[dict[str, Any]] = []
    up = trio.Event()
    down = trio.Event()

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with hooks:
            first.append(await call(hooks, pre))  # learns the listing
            trio.from_thread.run_sync(up.set)
            trio.from_thread.run(down.wait)  # the loop is idle meanwhile
            return await call(hooks, pre), await call(hooks, prompt)

    results: list[tuple[dict[str, Any], dict[str, Any]]] = []

    async def app() -> None:
        results.append(await in_asyncio(main))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(app)
        await up.wait()
        handle.cancel()
        await _wait_until_down(handle.socket)
        down.set()
    assert first == [{}]
    denied, proceeded = results[0]
    specific = denied["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].startswith("hookd unavailable (fail-closed): ")
    assert proceeded["systemMessage"].startswith("hookd unavailable: ")
    assert "decision" not in proceeded


async def test_never_reached_daemon_follows_on_unavailable(unused_socket: Path) -> None:
    project = unused_socket.parent

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with (
            hookd_hooks(unused_socket) as open_,
            hookd_hooks(unused_socket, on_unavailable="closed") as closed,
        ):
            return (
                await call(open_, sdk_input("Stop", project)),
                await call(closed, sdk_input("Stop", project)),
            )

    proceeded, blocked = await in_asyncio(main)
    assert proceeded["systemMessage"].startswith("hookd unavailable: ")
    assert blocked["decision"] == "block"
    assert blocked["reason"].startswith("hookd unavailable (fail-closed): ")


async def test_hooks_get_the_apps_environment_and_the_sdk_variables(
    daemon_factory: Any,
) -> None:
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    out = handle.root / "env.json"
    dump = (
        f'{sys.executable} -c \'import json,os; json.dump(dict(os.environ), open("{out}", "w"))\''
    )
    configure(handle, {"Stop": [{"hooks": [command(dump)]}]})

    async def main() -> dict[str, Any]:
        async with hookd_hooks(handle.socket, env={"FROM_OPTIONS_ENV": "yes"}) as hooks:
            return await call(hooks, sdk_input("Stop", project))

    assert await in_asyncio(main) == {}
    env = json.loads(out.read_text())
    assert env["FROM_OPTIONS_ENV"] == "yes"
    assert env["CLAUDE_PROJECT_DIR"] == str(project)
    assert env["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py"
    assert env["CLAUDE_AGENT_SDK_VERSION"] == claude_agent_sdk.__version__


async def test_outside_asyncio_it_says_so() -> None:
    hooks = hookd_hooks()
    with pytest.raises(RuntimeError, match="asyncio"):
        await call(hooks, sdk_input("Stop", Path("/tmp")))


async def test_session_start_reaches_hookd_through_the_settings_relay(
    daemon_factory: Any,
) -> None:
    """``hookd_settings()`` is what the CLI runs for SessionStart: its command, run here
    with a real SessionStart input, answers with the user's hook's context."""
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    configure(handle, {"SessionStart": [{"hooks": [command("echo SESSION-CONTEXT")]}]})
    settings = json.loads(hookd_settings(handle.socket, fail_closed=["SessionEnd"]))
    assert set(settings["hooks"]) == set(SETTINGS_EVENTS)
    (end,) = settings["hooks"]["SessionEnd"][0]["hooks"]
    assert end["args"][-1] == "--fail-closed"
    (start,) = settings["hooks"]["SessionStart"][0]["hooks"]
    hook_input = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": "",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = await trio.run_process(
        [start["command"], *start["args"]],
        stdin=json.dumps(hook_input).encode(),
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "SESSION-CONTEXT" in done.stdout.decode()
    (session,) = handle.daemon.sessions.all()
    assert session.agent == "claude-agent-sdk"


def test_settings_relay_fails_open_without_a_daemon(unused_socket: Path) -> None:
    settings = json.loads(hookd_settings(unused_socket))
    (start,) = settings["hooks"]["SessionStart"][0]["hooks"]
    done = subprocess.run(
        [start["command"], *start["args"]],
        input=b'{"hook_event_name": "SessionStart"}',
        capture_output=True,
        check=False,
        timeout=HANG_GUARD,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["systemMessage"].startswith("hookd is not running")


async def test_an_async_hooks_context_reaches_the_sdk_on_the_next_event(
    daemon_factory: Any,
) -> None:
    """Supervision the SDK has not got: a background hook's result, delivered once, as
    context of the session's next event (hookd's rule for Claude Code, docs/async.md)."""
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    late = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "LATE"}}
    background = {**command(f"echo '{json.dumps(late)}'"), "async": True}
    configure(handle, {"PostToolUse": [{"matcher": "Bash", "hooks": [background]}]})
    post = sdk_input("PostToolUse", project)
    prompt = {**sdk_input("UserPromptSubmit", project), "session_id": post["session_id"]}
    hooks = hookd_hooks(handle.socket)
    posted = trio.Event()
    finished = trio.Event()

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with hooks:
            first = await call(hooks, post)  # does not wait for the background hook
            trio.from_thread.run_sync(posted.set)
            trio.from_thread.run(finished.wait)  # the loop is idle meanwhile
            return first, await call(hooks, prompt), await call(hooks, prompt)

    def done() -> bool:
        with Client(handle.socket) as client:
            listing = client.call(
                protocol.AsyncList(id=client.next_id(), session_id=post["session_id"])
            )
        return bool(listing) and all(e["state"] == "finished" for e in listing)

    results: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = []

    async def app() -> None:
        results.append(await in_asyncio(main))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(app)
        await posted.wait()
        while not await trio.to_thread.run_sync(done):
            await trio.sleep(0.02)
        finished.set()
    first, next_event, again = results[0]
    assert first == {}
    assert next_event["hookSpecificOutput"]["additionalContext"] == "LATE"
    assert again == {}  # delivered once

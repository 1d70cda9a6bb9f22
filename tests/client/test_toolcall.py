"""The tool-call helper: PreToolUse → permission → tool → PostToolUse[Failure], for real."""

from __future__ import annotations

import json
from typing import Any

import trio

from hookd_client.client import Client
from hookd_client.toolcall import run_tool_call, run_tool_call_blocking
from hookd_client.trio_client import open_client
from support.daemon import configure


def _pre(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


def _post(event: str = "PostToolUse", **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def _record(calls: list[str], what: str) -> bool:
    """Note that ``what`` was asked, and allow it."""
    calls.append(what)
    return True


def _base(event: dict[str, Any]) -> dict[str, Any]:
    keys = ("session_id", "transcript_path", "cwd", "permission_mode")
    return {k: event[k] for k in keys}


async def test_rewrite_then_post_context_and_output(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    base = _base(make_event("PreToolUse-Bash"))
    ran: list[dict[str, Any]] = []
    checked: list[tuple[str, dict[str, Any], str | None]] = []
    post_saw: list[Any] = []

    def rewrite(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        command = payload["tool_input"]["command"]
        return _pre(updatedInput={"command": f"{command} --dry-run"}, additionalContext="pre-ctx")

    async def redact(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        post_saw.append(payload["tool_response"])
        return {
            "systemMessage": "output redacted",
            **_post(additionalContext="post-ctx", updatedToolOutput={"stdout": "[redacted]"}),
        }

    async def permission(tool: str, tool_input: dict[str, Any], decision: str | None) -> bool:
        checked.append((tool, tool_input, decision))
        return True

    async def bash(tool_input: dict[str, Any]) -> dict[str, Any]:
        ran.append(tool_input)
        return {"stdout": "secret"}

    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            base["session_id"],
            {
                "PreToolUse": [{"matcher": "Bash", "hooks": [rewrite]}],
                "PostToolUse": [{"matcher": "Bash", "hooks": [redact]}],
            },
        )
        outcome = await run_tool_call(
            client,
            base=base,
            tool_name="Bash",
            tool_input={"command": "deploy"},
            tool=bash,
            permission=permission,
            tool_use_id="toolu_1",
        )
    assert ran == [{"command": "deploy --dry-run"}]
    assert checked == [("Bash", {"command": "deploy --dry-run"}, None)]
    assert post_saw == [{"stdout": "secret"}]  # hooks see the real output
    assert outcome.status == "completed"
    assert outcome.tool_use_id == "toolu_1"
    assert outcome.input_rewritten and outcome.tool_input == {"command": "deploy --dry-run"}
    assert outcome.output_rewritten and outcome.output == {"stdout": "[redacted]"}
    assert outcome.additional_context == ["pre-ctx", "post-ctx"]
    assert outcome.system_messages == ["output redacted"]
    assert not outcome.stop


async def test_deny_skips_the_tool_and_the_permission_check(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    base = _base(make_event("PreToolUse-Bash"))
    calls: list[str] = []

    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            base["session_id"],
            {
                "PreToolUse": [
                    {
                        "hooks": [
                            lambda _p, _t: _pre(
                                permissionDecision="deny", permissionDecisionReason="not today"
                            )
                        ]
                    }
                ],
                "PostToolUse": [{"hooks": [lambda _p, _t: calls.append("post")]}],
            },
        )
        outcome = await run_tool_call(
            client,
            base=base,
            tool_name="Bash",
            tool_input={"command": "rm -rf /"},
            tool=lambda _i: calls.append("tool"),
            permission=lambda *_a: _record(calls, "permission"),
        )
    assert outcome.status == "denied"
    assert outcome.decision == "deny"
    assert outcome.reason == "not today"
    assert calls == []


async def test_ask_without_a_permission_check_denies(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    base = _base(make_event("PreToolUse-Bash"))
    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            base["session_id"],
            {"PreToolUse": [{"hooks": [lambda _p, _t: _pre(permissionDecision="ask")]}]},
        )
        asked = await run_tool_call(
            client, base=base, tool_name="Bash", tool_input={"command": "ls"}, tool=lambda _i: "x"
        )
        refused = await run_tool_call(
            client,
            base=base,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool=lambda _i: "x",
            permission=lambda _n, _i, decision: f"user said no to {decision}",
        )
    assert asked.status == "denied" and "no permission check" in (asked.reason or "")
    assert refused.status == "denied" and refused.reason == "user said no to ask"


async def test_tool_failure_goes_to_post_tool_use_failure(
    daemon_factory: Any, make_event: Any
) -> None:
    handle = await daemon_factory()
    base = _base(make_event("PreToolUse-Bash"))
    failures: list[str] = []

    def on_failure(payload: dict[str, Any], _tid: str | None) -> dict[str, Any]:
        failures.append(payload["error"])
        return {
            "continue": False,
            "stopReason": "too many failures",
            **_post("PostToolUseFailure", additionalContext="try --help"),
        }

    def broken(_input: dict[str, Any]) -> None:
        raise OSError("disk full")

    async with open_client(handle.socket) as client:
        await client.register_session_hooks(
            base["session_id"], {"PostToolUseFailure": [{"hooks": [on_failure]}]}
        )
        outcome = await run_tool_call(
            client, base=base, tool_name="Bash", tool_input={"command": "make"}, tool=broken
        )
    assert failures == ["OSError: disk full"]
    assert outcome.status == "failed" and outcome.error == "OSError: disk full"
    assert outcome.additional_context == ["try --help"]
    assert outcome.stop and outcome.stop_reason == "too many failures"


async def test_blocking_variant_with_config_hooks(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    rewrite = json.dumps(_pre(updatedInput={"file_path": "/tmp/safe.txt"}))
    configure(
        handle,
        {
            "PreToolUse": [{"hooks": [{"type": "command", "command": f"echo '{rewrite}'"}]}],
            "PostToolUse": [{"hooks": [{"type": "command", "command": "echo fix it >&2; exit 2"}]}],
        },
    )
    base = _base(make_event("PreToolUse-Read"))

    def run() -> Any:
        with Client(handle.socket) as client:
            return run_tool_call_blocking(
                client,
                base=base,
                tool_name="Read",
                tool_input={"file_path": "/etc/shadow"},
                tool=lambda i: f"read {i['file_path']}",
            )

    outcome = await trio.to_thread.run_sync(run)
    assert outcome.status == "completed"
    assert outcome.output == "read /tmp/safe.txt"
    assert outcome.feedback == ["[echo fix it >&2; exit 2]: fix it"]


async def test_unreachable_daemon_fails_open_or_closed(make_event: Any, unused_socket: Any) -> None:
    base = _base(make_event("PreToolUse-Bash"))
    ran: list[str] = []
    async with open_client(unused_socket, retries=0) as client:
        opened = await run_tool_call(
            client,
            base=base,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool=lambda _i: ran.append("open"),
            on_unavailable="open",
        )
        closed = await run_tool_call(
            client,
            base=base,
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool=lambda _i: ran.append("closed"),
            on_unavailable="closed",
        )
    assert opened.status == "completed" and ran == ["open"]
    assert opened.system_messages[0].startswith("hookd unavailable")
    assert closed.status == "denied" and "fail-closed" in (closed.reason or "")

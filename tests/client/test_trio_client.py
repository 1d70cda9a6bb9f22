"""The trio flavour against a real daemon: fires, concurrency, retry, policy, callbacks."""

from __future__ import annotations

from typing import Any

import trio

from hookd_client.trio_client import open_client


async def test_callback_denies_a_bash_call(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    seen: list[tuple[str, str | None]] = []

    def no_rm(payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        seen.append((payload["tool_input"]["command"], tool_use_id))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no echo here",
            }
        }

    async with open_client(handle.socket) as client:
        count = await client.register_session_hooks(
            event["session_id"],
            {"PreToolUse": [{"matcher": "Bash", "hooks": [no_rm]}]},
            project=str(handle.project()),
        )
        assert count == 1
        reply = await client.fire("PreToolUse", event)
    assert reply.result.decision == "deny"
    assert reply.result.reason == "no echo here"
    assert seen == [("echo from-sub", event["tool_use_id"])]

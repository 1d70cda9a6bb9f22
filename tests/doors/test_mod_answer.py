"""What hookd answers the Claude Code mod (``POST /mod/<Event>``).

The conversion from an http hook's output is checked rule by rule, then end to
end: a real daemon, real command hooks, requests over its real Unix socket.
"""

from __future__ import annotations

from typing import Any

import httpx

from hookd.doors.mod_answer import ModAnswer, mod_answer
from support.daemon import configure
from support.events import fixture_event


def _pre(specific: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **specific}, **top}


def test_a_deny_is_final_and_worded_as_a_settings_hooks_deny() -> None:
    answer = mod_answer(
        "PreToolUse", _pre({"permissionDecision": "deny", "permissionDecisionReason": "R"}), "Bash"
    )
    assert answer == ModAnswer(result={"deny": "PreToolUse:Bash hook error: R"}, final=True)


def test_the_legacy_block_is_a_deny_and_approve_an_allow() -> None:
    block = mod_answer("PreToolUse", {"decision": "block", "reason": "R"}, "Write")
    assert block == ModAnswer(result={"deny": "PreToolUse:Write hook error: R"}, final=True)
    approve = mod_answer("PreToolUse", {"decision": "approve"}, "Bash")
    assert approve == ModAnswer(result={"allow": True})


def test_ask_is_final_with_its_bare_reason() -> None:
    answer = mod_answer(
        "PreToolUse", _pre({"permissionDecision": "ask", "permissionDecisionReason": "sure?"}), "X"
    )
    assert answer == ModAnswer(result={"ask": "sure?"}, final=True)


def test_allow_with_a_rewrite_and_context_goes_on_with_the_new_input() -> None:
    output = _pre(
        {
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo safe"},
            "additionalContext": "C",
        }
    )
    assert mod_answer("PreToolUse", output, "Bash") == ModAnswer(
        result={"additionalContext": ["C"], "allow": True}, input={"command": "echo safe"}
    )


def test_block_is_final_and_context_and_tool_output_pass_through() -> None:
    block = mod_answer("PostToolUse", {"decision": "block", "reason": "B"}, "Bash")
    assert block == ModAnswer(result={"block": "B"}, final=True)
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "C",
            "updatedToolOutput": {"stdout": "x"},
        }
    }
    assert mod_answer("PostToolUse", output, "Bash") == ModAnswer(
        result={"additionalContext": ["C"], "updatedToolOutput": {"stdout": "x"}}
    )


def test_continue_false_stops_the_session() -> None:
    answer = mod_answer("PostToolBatch", {"continue": False, "stopReason": "S"}, None)
    assert answer == ModAnswer(result={"preventContinuation": True, "stopReason": "S"}, final=True)


def test_what_a_mod_cannot_carry_leaves_no_opinion() -> None:
    assert mod_answer("PostToolUse", {"systemMessage": "only for the user"}, "Bash") is None
    assert mod_answer("PreToolUse", {"suppressOutput": True}, "Bash") is None


async def test_the_daemon_answers_the_mod_over_its_socket(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PreToolUse": [
                {"hooks": [{"type": "command", "command": "echo NOPE >&2; exit 2"}]},
            ],
            "PostToolUse": [{"hooks": [{"type": "command", "command": "echo quiet"}]}],
        },
    )
    transport = httpx.AsyncHTTPTransport(uds=str(handle.daemon.http_socket))
    async with httpx.AsyncClient(transport=transport, base_url="http://hookd") as client:
        pre = await client.post("/mod/PreToolUse", json=fixture_event("PreToolUse-Bash"))
        post = await client.post("/mod/PostToolUse", json=fixture_event("PostToolUse-Bash"))
        wrong = await client.post("/mod/PostToolUse", json=fixture_event("PreToolUse-Bash"))
    assert pre.status_code == 200
    assert pre.json() == {
        "result": {"deny": "PreToolUse:Bash hook error: [echo NOPE >&2; exit 2]: NOPE"},
        "final": True,
    }
    assert post.status_code == 200 and post.content == b""  # plain stdout: no opinion
    assert wrong.status_code == 400
    assert wrong.json()["error"] == (
        "body is a 'PreToolUse' input but was posted to /mod/PostToolUse"
    )

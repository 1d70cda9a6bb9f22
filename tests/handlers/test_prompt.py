"""prompt hooks against a scripted Messages API on 127.0.0.1 (reference §9)."""

from __future__ import annotations

import json

import pytest

from handlers.rig import API_KEY, Rig, fixture_input, message_reply
from handlers.scripted_server import Reply
from hookd.handlers.prompt import render_prompt

REASON = "PROMPT-BLOCK-REASON"

# (fixture, decision, reason, continue) for ok:false without continueOnBlock.
DEFAULT_EFFECTS = [
    ("PreToolUse-Bash.json", "deny", REASON, False),
    ("PostToolUse-Bash.json", None, None, False),
    ("PostToolBatch.json", None, None, False),
    ("UserPromptSubmit.json", "block", REASON, True),
    ("Stop.json", "block", REASON, True),
    ("SubagentStop.json", "block", REASON, True),
    ("PostToolUseFailure-Bash.json", "block", REASON, True),
    ("PermissionRequest-Bash.json", None, None, True),
    ("TaskCreated.json", "block", REASON, True),
    ("TaskCompleted.json", "block", REASON, True),
    ("TeammateIdle.json", None, None, False),
]


@pytest.mark.parametrize(("fixture", "decision", "reason", "cont"), DEFAULT_EFFECTS)
async def test_ok_false_maps_per_event(
    rig: Rig, fixture: str, decision: str | None, reason: str | None, cont: bool
) -> None:
    rig.server.messages = [message_reply("block.json")]
    result = await rig.fire(rig.config("prompt-events.json"), fixture)
    assert result.decision == decision
    assert result.reason == reason
    assert result.continue_ is cont
    if not cont:
        assert result.stop_reason == REASON
    assert not result.errors


@pytest.mark.parametrize(
    ("fixture", "decision"),
    [
        ("PreToolUse-Bash.json", "deny"),
        ("PostToolUse-Bash.json", "block"),
        ("PostToolBatch.json", "block"),
        ("TeammateIdle.json", "block"),
    ],
)
async def test_continue_on_block_feeds_the_reason_back(
    rig: Rig, fixture: str, decision: str
) -> None:
    rig.server.messages = [message_reply("block.json")]
    result = await rig.fire(rig.config("prompt-continue.json"), fixture)
    assert result.decision == decision
    assert result.reason == REASON
    assert result.continue_ is True


async def test_ok_true_is_success_without_decision(rig: Rig) -> None:
    rig.server.messages = [message_reply("ok.json")]
    result = await rig.fire(rig.config("prompt-events.json"), "PreToolUse-Bash.json")
    (run,) = result.hooks
    assert run.outcome == "success"
    assert result.decision is None and result.continue_ is True


async def test_impossible_lets_stop_happen(rig: Rig) -> None:
    rig.server.messages = [message_reply("impossible.json")]
    result = await rig.fire(rig.config("prompt-events.json"), "Stop.json")
    assert result.decision is None
    assert result.hooks[0].outcome == "success"


async def test_impossible_does_not_soften_a_pre_tool_use_deny(rig: Rig) -> None:
    rig.server.messages = [message_reply("impossible.json")]
    result = await rig.fire(rig.config("prompt-events.json"), "PreToolUse-Bash.json")
    assert result.decision == "deny"


async def test_request_carries_key_version_prefill_and_rendered_prompt(rig: Rig) -> None:
    rig.server.messages = [message_reply("ok.json")]
    await rig.fire(rig.config("prompt-events.json"), "PreToolUse-Bash.json")
    (request,) = rig.server.message_requests()
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.json()
    assert body["model"] == "claude-haiku-4-5"
    user, assistant = body["messages"]
    assert assistant == {"role": "assistant", "content": "{"}
    prefix = "Check this event: "
    suffix = ". It costs $5."
    assert user["content"].startswith(prefix) and user["content"].endswith(suffix)
    sent_input = json.loads(user["content"][len(prefix) : -len(suffix)])
    assert sent_input["tool_input"] == fixture_input("PreToolUse-Bash.json")["tool_input"]


async def test_prompt_without_arguments_gets_the_input_appended_and_model_override(
    rig: Rig,
) -> None:
    rig.server.messages = [message_reply("ok.json")]
    await rig.fire(rig.config("prompt-model.json"), "PreToolUse-Bash.json")
    body = rig.server.message_requests()[0].json()
    assert body["model"] == "claude-custom-model"
    text = body["messages"][0]["content"]
    head, _, tail = text.partition("\n\n")
    assert head == "Is the command safe?"
    assert json.loads(tail)["hook_event_name"] == "PreToolUse"


@pytest.mark.parametrize("reply", ["malformed.json", "wrong-type.json"])
async def test_invalid_reply_is_a_non_blocking_error_not_an_allow(rig: Rig, reply: str) -> None:
    rig.server.messages = [message_reply(reply)]
    result = await rig.fire(rig.config("prompt-events.json"), "PreToolUse-Bash.json")
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "not a valid verdict" in run.error
    assert result.decision is None


async def test_api_error_status_is_a_non_blocking_error(rig: Rig) -> None:
    rig.server.messages = [Reply(status=529, body=b'{"type":"error"}')]
    result = await rig.fire(rig.config("prompt-events.json"), "Stop.json")
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "529" in run.error
    assert result.decision is None


async def test_missing_api_key_fails_before_any_request(rig: Rig) -> None:
    env = rig.env()
    del env["ANTHROPIC_API_KEY"]
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("ANTHROPIC_API_KEY", raising=False)
        result = await rig.fire(rig.config("prompt-events.json"), "Stop.json", env=env)
    assert result.hooks[0].outcome == "non_blocking_error"
    assert "ANTHROPIC_API_KEY" in (result.hooks[0].error or "")
    assert rig.server.message_requests() == []


async def test_timeout_is_cancelled_without_decision(rig: Rig) -> None:
    rig.server.messages = [message_reply("block.json", delay=30)]
    result = await rig.fire(rig.config("prompt-timeout.json"), "PreToolUse-Bash.json")
    assert result.hooks[0].outcome == "cancelled"
    assert result.decision is None  # the 30 s answer (a block) was not awaited


async def test_batch_context_does_not_call_the_api(rig: Rig) -> None:
    rig.server.messages = [message_reply("block.json")]
    result = await rig.fire(
        rig.config("prompt-events.json"), "PreToolUse-Bash.json", context="batch"
    )
    assert result.hooks[0].error == "unsupported in batch context"
    assert rig.server.message_requests() == []


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("a $ARGUMENTS b", "a {} b"),
        ("$ARGUMENTS and $ARGUMENTS", "{} and {}"),
        ("cost \\$5 for $ARGUMENTS", "cost $5 for {}"),
        ("literal \\$ARGUMENTS", "literal $ARGUMENTS\n\n{}"),
        ("no placeholder", "no placeholder\n\n{}"),
        ("$HOME stays", "$HOME stays\n\n{}"),
    ],
)
def test_render_prompt(template: str, expected: str) -> None:
    assert render_prompt(template, "{}") == expected

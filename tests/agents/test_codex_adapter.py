"""The Codex adapter on Codex 0.169.0's real hook inputs (tests/data/agents/codex-0.169.0), and
its answers checked against the rules Codex's own binary enforces (agents.md §1).  The e2e in
test_codex.py runs the real CLI; these pin each rule without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookd.agents.base import UnknownAgentEvent
from hookd.agents.capabilities import degrade
from hookd.agents.codex import DEFAULT_BLOCK_REASON, CodexAdapter
from hookd.agents.registry import adapter_for
from hookd_client.events import EventInputError, decode_event
from hookd_client.results import FireResult

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "codex-0.169.0"
CODEX = CodexAdapter()


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_real_input_decodes_to_a_valid_canonical_event(path: Path) -> None:
    raw = json.loads(path.read_text())
    event = CODEX.decode(raw["hook_event_name"], raw)
    assert event.agent == "codex" and event.event == raw["hook_event_name"]
    decoded = decode_event(event.input, event.event)  # what the pipeline validates
    assert decoded.typed.session_id == raw["session_id"]
    assert event.input.get("turn_id") == raw.get("turn_id")  # Codex's extra fields are kept


def test_shell_tool_stays_bash_and_apply_patch_keeps_its_name() -> None:
    shell = CODEX.decode("PreToolUse", fixture("PreToolUse"))
    patch = CODEX.decode("PreToolUse", fixture("PreToolUse-apply_patch"))
    assert shell.input["tool_name"] == "Bash" and "native_tool_name" not in shell.input
    assert patch.input["tool_name"] == "apply_patch"


def test_an_older_native_shell_name_is_mapped_and_kept() -> None:
    raw = fixture("PreToolUse") | {"tool_name": "exec_command"}
    event = CODEX.decode("PreToolUse", raw)
    assert event.input["tool_name"] == "Bash"
    assert event.input["native_tool_name"] == "exec_command"


def test_bad_inputs_are_named() -> None:
    with pytest.raises(UnknownAgentEvent, match="BeforeTool"):
        CODEX.decode("BeforeTool", fixture("PreToolUse"))
    with pytest.raises(EventInputError, match="hook_event_name"):
        CODEX.decode("Stop", fixture("PreToolUse"))


def encode(result: FireResult, native: str = "PreToolUse") -> tuple[dict[str, Any], str, int]:
    event = CODEX.decode(native, fixture(native))
    reply = CODEX.encode(degrade(result, event.spec), event)
    return (json.loads(reply.stdout) if reply.stdout else {}), reply.stderr, reply.exit_code


def test_deny_is_claude_codes_permission_decision_with_a_reason() -> None:
    out, _, code = encode(FireResult(event="PreToolUse", decision="deny", reason="no rm"))
    assert code == 0
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "no rm"
    # Codex rejects a deny without a reason: hookd always gives one.
    out, _, _ = encode(FireResult(event="PreToolUse", decision="deny"))
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == DEFAULT_BLOCK_REASON


def test_allow_alone_is_not_sent_codex_rejects_it() -> None:
    out, _, code = encode(FireResult(event="PreToolUse", decision="allow", reason="fine"))
    assert out == {} and code == 0


def test_a_rewrite_is_sent_as_allow_with_updated_input() -> None:
    rewrite = {"command": "echo safe"}
    out, _, _ = encode(FireResult(event="PreToolUse", decision="allow", updated_input=rewrite))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["updatedInput"] == {"command": "echo safe"}


def test_a_rewrite_without_a_decision_is_a_deny_saying_why() -> None:
    """Codex would ignore it and run the call as written; an allow would skip its approval."""
    out, _, _ = encode(FireResult(event="PreToolUse", updated_input={"command": "echo safe"}))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny" and "updatedInput" not in specific
    assert "without a permission decision" in specific["permissionDecisionReason"]
    # The call's own input handed back is no rewrite: dropped, as Codex drops it.
    same = fixture("PreToolUse")["tool_input"]
    out, _, _ = encode(FireResult(event="PreToolUse", updated_input=same))
    assert out == {}


def test_ask_becomes_a_deny_with_the_reason_said() -> None:
    out, _, _ = encode(FireResult(event="PreToolUse", decision="ask", reason="sure?"))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "sure?" in specific["permissionDecisionReason"]
    assert "cannot ask" in specific["permissionDecisionReason"]


def test_continue_false_on_pre_tool_use_denies_the_call() -> None:
    out, _, _ = encode(FireResult(event="PreToolUse", continue_=False, stop_reason="halt"))
    assert "continue" not in out and "stopReason" not in out
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "halt"


def test_post_tool_use_drops_updated_tool_output_but_keeps_a_block() -> None:
    result = FireResult(
        event="PostToolUse",
        decision="block",
        reason="secret in output",
        blocking_messages=["secret in output"],
        specific={"updatedToolOutput": "x"},
    )
    out, _, _ = encode(result, "PostToolUse")
    assert out["decision"] == "block" and out["reason"] == "secret in output"
    assert "hookSpecificOutput" not in out


def test_stop_exit_two_always_has_stderr() -> None:
    from hookd_client.results import HookRef, HookRun

    run = HookRun(
        hook=HookRef(name="x", type="command", scope="user", source="f", event="Stop"),
        outcome="blocking",
        exit_code=2,
        stderr="",
    )
    result = FireResult(event="Stop", decision="block", blocking_messages=[""], hooks=[run])
    _, stderr, code = encode(result, "Stop")
    assert code == 2 and stderr.strip() == DEFAULT_BLOCK_REASON


def test_context_on_user_prompt_submit_passes_through() -> None:
    out, _, _ = encode(
        FireResult(event="UserPromptSubmit", additional_context=["ctx"]), "UserPromptSubmit"
    )
    assert out["hookSpecificOutput"]["additionalContext"] == "ctx"


def test_registry_finds_codex_and_claude_is_the_default() -> None:
    assert adapter_for("codex").name == "codex"
    assert adapter_for(None).name == adapter_for("").name == "claude"


def test_wire_is_idempotent_keeps_other_settings_and_read_hooks_leaves_hookd_out(
    tmp_path: Path,
) -> None:
    user = {
        "other": 1,
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
        },
    }
    command = lambda spec: f"/venv/bin/hookd-relay --agent codex {spec.native}"  # noqa: E731
    wired = CODEX.wire(json.dumps(user), command)
    assert CODEX.wire(wired, command) == wired
    data = json.loads(wired)
    assert data["other"] == 1
    assert set(data["hooks"]) == {s.native for s in CODEX.events}
    assert CODEX.is_wired(wired) and not CODEX.is_wired(json.dumps(user))
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(user))
    assert CODEX.read_hooks(path).hooks == user["hooks"]
    path.write_text(wired)
    assert CODEX.read_hooks(path).hooks == {}


def test_plain_context_reaches_codex_as_plain_stdout() -> None:
    """A prompt's plain-text context (hooks that print text) is sent as Codex's plain
    stdout, as Claude Code's would be: never dropped."""
    event = CODEX.decode("UserPromptSubmit", fixture("UserPromptSubmit"))
    result = FireResult(event="UserPromptSubmit", plain_context=["PROJECT RULES"])
    reply = CODEX.encode(degrade(result, event.spec), event)
    assert reply.stdout == "PROJECT RULES\n" and reply.exit_code == 0


def test_interrupt_hooks_stay_in_codex_s_file(tmp_path: Path) -> None:
    """Codex's Interrupt has no Claude Code event: install leaves its hooks where Codex runs
    them (wired again, they are still there) and says so, rather than moving them to hookd."""
    interrupt = [{"hooks": [{"type": "command", "command": "on-interrupt.sh"}]}]
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps({"hooks": {"Interrupt": interrupt}}))
    found = CODEX.read_hooks(path)
    assert found.hooks == {} and any("stay in Codex's file" in w for w in found.warnings)
    wired = CODEX.wire(path.read_text(), lambda s: f"hookd-relay --agent codex {s.native}")
    assert json.loads(wired)["hooks"]["Interrupt"] == interrupt
    assert CODEX.is_wired(wired)
    assert CODEX.wire(wired, lambda s: f"hookd-relay --agent codex {s.native}") == wired

"""The Qwen Code adapter on Qwen Code 0.24.4's real hook inputs (tests/data/agents/qwen-code-0.24.4,
captured from the real CLI against the fake Responses API), and its answers checked against
what the real CLI was seen to do (tests/agents/test_qwen.py runs it; these pin each rule
without it): real command hooks through the engine, the reply in Qwen's words."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import answer, fire_decoded, group
from hookd.agents.base import AgentReply, EventSpec
from hookd.agents.capabilities import degrade
from hookd.agents.qwen import QwenAdapter
from hookd_client.events import decode_event

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "agents" / "qwen-code-0.24.4"
QWEN = QwenAdapter()


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def test_verified_at_the_pinned_version() -> None:
    pinned = json.loads((ROOT / "tests" / "e2e" / "package.json").read_text())
    assert QWEN.verified is True
    assert QWEN.tested_version == pinned["dependencies"]["@qwen-code/qwen-code"] == "0.24.4"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_real_input_decodes_to_a_valid_canonical_event(path: Path) -> None:
    raw = json.loads(path.read_text())
    event = QWEN.decode(raw["hook_event_name"], raw)
    assert event.agent == "qwen" and event.event == raw["hook_event_name"]
    decoded = decode_event(event.input, event.event)  # what the pipeline validates
    assert decoded.typed.session_id == raw["session_id"]
    assert event.input["timestamp"] == raw["timestamp"]  # Qwen's own fields are kept


@pytest.mark.parametrize(
    ("name", "tool", "native"),
    [
        ("PreToolUse", "Bash", "run_shell_command"),
        ("PostToolUse", "Bash", "run_shell_command"),
        ("PostToolUseFailure", "Read", "read_file"),
    ],
)
def test_qwen_s_tools_are_claude_code_s_with_the_native_name_kept(
    name: str, tool: str, native: str
) -> None:
    event = QWEN.decode(name, fixture(name))
    assert (event.input["tool_name"], event.input["native_tool_name"]) == (tool, native)


def test_the_subagent_tool_is_claude_code_s_agent() -> None:
    """Qwen renamed ``task`` to ``agent`` and names it so to hooks (a matcher ``task`` still
    matches it in Qwen: an alias, mapped when hooks move)."""
    event = QWEN.decode("PreToolUse", fixture("PreToolUse") | {"tool_name": "agent"})
    assert event.input["tool_name"] == "Agent"


def test_every_wired_event_is_one_qwen_fires() -> None:
    """Events Qwen 0.24.4 has and hookd now wires: they fired in the capture, or are in
    its bundle's HookEventName list."""
    natives = {s.native for s in QWEN.events}
    assert {"PostToolBatch", "InstructionsLoaded", "PostCompact", "PermissionDenied"} <= natives
    assert not natives & {"MessageDisplay", "StopFailure", "SessionDelete", "TodoCreated"}


# --- answers: real hooks through the engine ---------------------------------------------------


async def run(
    native: str, hooks: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> tuple[AgentReply, list[str]]:
    """Fire the captured input through the engine on ``hooks``; Qwen's reply and the losses."""
    event = QWEN.decode(native, {**fixture(native), "cwd": str(tmp_path)})
    result = await fire_decoded(event, hooks, tmp_path)
    return QWEN.encode(result, event), degrade(result, event.spec).errors


def specific(reply: AgentReply) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(reply.stdout)["hookSpecificOutput"]
    return out


async def test_an_exit_2_block_reads_as_qwen_s_own_stderr_trimmed(tmp_path: Path) -> None:
    """Qwen's reason for an exit-2 hook is its stderr, trimmed — the model reads it as the
    tool's result; hookd's engine labels it ``[<cmd>]: …`` as Claude Code does."""
    deny = group("echo '  no shell here  ' >&2; exit 2", "Bash")
    reply, _ = await run("PreToolUse", {"PreToolUse": [deny]}, tmp_path)
    assert specific(reply)["permissionDecision"] == "deny"
    assert specific(reply)["permissionDecisionReason"] == "no shell here"


async def test_several_blocks_one_reason_a_line_json_reasons_verbatim(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            group("echo first >&2; exit 2", "Bash"),
            group(answer("PreToolUse", permissionDecision="deny", permissionDecisionReason="[x]")),
        ]
    }
    reply, _ = await run("PreToolUse", hooks, tmp_path)
    assert specific(reply)["permissionDecisionReason"] == "first\n[x]"
    # What a hook wrote to stderr is its reason only where Qwen takes it: an exit 2
    # without JSON. A JSON deny that also wrote to stderr keeps its JSON reason.
    noisy = answer("PreToolUse", permissionDecision="deny", permissionDecisionReason="[y]")
    hooks = {"PreToolUse": [group(noisy.replace("echo ", "echo noise >&2; echo ", 1))]}
    reply, _ = await run("PreToolUse", hooks, tmp_path)
    assert specific(reply)["permissionDecisionReason"] == "[y]"


async def test_a_rewrite_qwen_cannot_apply_blocks_the_call_and_says_so(tmp_path: Path) -> None:
    """Qwen 0.24.4 runs the model's call when a PreToolUse hook answers ``updatedInput``:
    hookd blocks rather than let the unsanitised call run."""
    rewrite = answer("PreToolUse", permissionDecision="allow", updatedInput={"command": "true"})
    reply, losses = await run("PreToolUse", {"PreToolUse": [group(rewrite)]}, tmp_path)
    assert specific(reply)["permissionDecision"] == "deny"
    assert "rewrote" in specific(reply)["permissionDecisionReason"]
    assert "updatedInput" not in specific(reply)
    assert any("updatedInput" in loss for loss in losses)


async def test_a_post_tool_block_is_reported_lost_its_context_kept(tmp_path: Path) -> None:
    out = {
        "decision": "block",
        "reason": "POST-BLOCK",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX"},
    }
    hooks = {"PostToolUse": [group("echo " + shlex.quote(json.dumps(out)))]}
    reply, losses = await run("PostToolUse", hooks, tmp_path)
    assert specific(reply) == {"hookEventName": "PostToolUse", "additionalContext": "CTX"}
    assert any("cannot block" in loss for loss in losses)  # Qwen ignores it: said, not silent


async def test_a_stop_exit_2_continues_with_the_bare_stderr(tmp_path: Path) -> None:
    reply, _ = await run("Stop", {"Stop": [group("echo 'Also say DONE.' >&2; exit 2")]}, tmp_path)
    assert (reply.exit_code, reply.stderr.strip(), reply.stdout) == (2, "Also say DONE.", "")


# --- install side -------------------------------------------------------------------------


def command(spec: EventSpec) -> str:
    return f"/opt/hookd/bin/hookd-relay --agent qwen {spec.native}"


def moved(tmp_path: Path, groups: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model": {"name": "qwen3"}, "hooks": groups}))
    found = QWEN.read_hooks(path)
    return found.hooks, found.warnings


def test_qwen_hooks_move_with_their_matchers_in_claude_codes_names(tmp_path: Path) -> None:
    hook = {"type": "command", "command": "./check.sh", "timeout": 10}
    hooks, _ = moved(tmp_path, {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [hook]}]})
    assert hooks == {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
    path = tmp_path / "settings.json"
    wired = json.loads(QWEN.wire(path.read_text(), command))
    assert wired["model"] == {"name": "qwen3"}
    rewired = tmp_path / "wired.json"
    rewired.write_text(json.dumps(wired))
    assert QWEN.read_hooks(rewired).hooks == {}  # hookd's own entries are not the user's
    assert all(len(g) == 1 for g in wired["hooks"].values())
    assert set(wired["hooks"]) == {s.native for s in QWEN.events}


@pytest.mark.parametrize(
    ("matcher", "expected", "warned"),
    [
        ("Shell", "Bash", False),  # Qwen's display name
        ("Bash", "Bash", False),  # Claude Code's, which Qwen accepts too
        ("ReadFile|search_file_content", "Read|Grep", False),  # display and legacy names
        ("task", "Agent", False),
        # Qwen searches a name it does not know exactly: `edit` also matched notebook_edit.
        ("edit", "Edit|NotebookEdit", True),
        ("run_shell_command|edit", "Bash|Edit|NotebookEdit", True),
        ("mcp__srv__echo", "mcp__srv__echo", False),
    ],
)
def test_a_moved_matcher_names_the_tools_it_matched_in_qwen(
    tmp_path: Path, matcher: str, expected: str, warned: bool
) -> None:
    hook = {"type": "command", "command": "./check.sh"}
    hooks, warnings = moved(tmp_path, {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]})
    assert hooks["PreToolUse"][0]["matcher"] == expected
    assert bool(warnings) == warned, warnings


def test_a_timeout_of_1000_or_more_is_qwen_s_milliseconds(tmp_path: Path) -> None:
    def handler(timeout: float) -> dict[str, Any]:
        return {"type": "command", "command": "./check.sh", "timeout": timeout}

    groups = {"Stop": [{"hooks": [handler(30000), handler(999), handler(1500)]}]}
    hooks, warnings = moved(tmp_path, groups)
    assert [h["timeout"] for h in hooks["Stop"][0]["hooks"]] == [30, 999, 1.5]
    assert len(warnings) == 2 and "milliseconds" in warnings[0]


def test_trust_steps_say_folder_trust_is_opt_in() -> None:
    (step,) = QWEN.trust_steps("project")
    assert "security.folderTrust.enabled" in step
    assert QWEN.trust_steps("user") == []


def test_lint_finds_hooks_switched_off(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    found = QWEN.lint(path, json.dumps({"disableAllHooks": True, "hooks": {}}))
    assert [(f.severity, f.where) for f in found] == [("error", "disableAllHooks")]

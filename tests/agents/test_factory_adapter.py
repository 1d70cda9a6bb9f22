"""The Factory Droid adapter on Droid 0.225.2's real hook inputs (data/agents/factory-0.225.2),
its hook files as Droid reads them, and its answers as Droid obeys them.  The e2e in
test_factory.py runs the real CLI; these pin each rule without it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import fire_decoded
from hookd.agents.base import AgentReply
from hookd.agents.factory import FactoryAdapter
from hookd_client.events import decode_event

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "factory-0.225.2"
DROID = FactoryAdapter()


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def wired(spec_native: str) -> str:
    return f"/opt/hookd-relay --agent factory {spec_native}"


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_real_input_decodes_to_a_valid_canonical_event(path: Path) -> None:
    raw = json.loads(path.read_text())
    event = DROID.decode(raw["hook_event_name"], raw)
    decoded = decode_event(event.input, event.event)
    assert decoded.typed.session_id == raw["session_id"]
    assert event.input["permission_mode"] == "auto-high"  # Droid's own words, kept


def test_the_shell_is_bash_and_an_mcp_tool_is_claude_code_s_name() -> None:
    shell = DROID.decode("PreToolUse", fixture("PreToolUse"))
    assert (shell.input["tool_name"], shell.input["native_tool_name"]) == ("Bash", "Execute")
    mcp = DROID.decode("PreToolUse", fixture("PreToolUse-mcp"))
    assert mcp.input["tool_name"] == "mcp__srv__echo"
    assert mcp.input["native_tool_name"] == "srv___echo"
    assert "srv___echo" in mcp.input["tool_name_candidates"]
    assert DROID.native_tools("mcp__srv__echo") == ["srv___echo"]


def test_hooks_json_is_the_hooks_object_itself() -> None:
    """Droid reads ``~/.factory/hooks.json`` as ``{Event: [groups]}`` and ignores a file
    wrapped in ``{"hooks": …}`` (seen at 0.225.2): install writes the events at the top."""
    mine = {"PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "g"}]}]}
    text = DROID.wire_file(
        Path("/h/.factory/hooks.json"), json.dumps(mine), lambda s: wired(s.native)
    )
    data = json.loads(text)
    assert "hooks" not in data and set(data) == {s.native for s in DROID.events}
    assert data["Stop"] == [
        {"hooks": [{"type": "command", "command": wired("Stop"), "timeout": 600}]}
    ]
    assert DROID.is_wired(text) and not DROID.is_wired(json.dumps(mine))
    # settings.json keeps Claude Code's shape, its other settings untouched.
    settings = {"customModels": [], "hooks": mine}
    wired_settings = json.loads(
        DROID.wire_file(
            Path("/h/.factory/settings.json"), json.dumps(settings), lambda s: wired(s.native)
        )
    )
    assert wired_settings["customModels"] == [] and set(wired_settings["hooks"]) == set(data)


def test_both_files_are_installed_and_their_hooks_read(tmp_path: Path) -> None:
    """Droid merges the two files per event, hooks.json's groups replacing settings.json's:
    both are wired, so no hook of the user's is silenced by hookd's entries in hooks.json."""
    files = DROID.install_files("user", tmp_path, None)
    assert [p.name for p in files] == ["hooks.json", "settings.json"]
    hooks_json, settings_json = files
    hooks_json.parent.mkdir(parents=True)
    guard = {"matcher": "Execute", "hooks": [{"type": "command", "command": "guard.sh"}]}
    hooks_json.write_text(json.dumps({"PreToolUse": [guard]}))
    settings_json.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [guard["hooks"][0]]}]}}))
    assert DROID.read_hooks(hooks_json).hooks == {"PreToolUse": [{**guard, "matcher": "Bash"}]}
    assert list(DROID.read_hooks(settings_json).hooks) == ["Stop"]


async def fire(native: str, hooks: dict[str, Any], tmp_path: Path) -> AgentReply:
    """The real input of ``native`` through the engine on ``hooks``; Droid's reply."""
    event = DROID.decode(native, {**fixture(native), "cwd": str(tmp_path)})
    result = await fire_decoded(event, hooks, tmp_path)
    return DROID.encode(result, event)


def group(script: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": f"sh -c {shlex.quote(script)}"}]}


async def test_a_user_prompt_block_is_exit_two_which_droid_obeys(tmp_path: Path) -> None:
    """Droid blocks a prompt on exit 2 or ``continue: false`` only; ``decision: "block"``
    (Claude Code's answer) it ignores — the prompt would go through."""
    block = "echo " + shlex.quote(json.dumps({"decision": "block", "reason": "NO-PROMPT"}))
    reply = await fire("UserPromptSubmit", {"UserPromptSubmit": [group(block)]}, tmp_path)
    assert (reply.exit_code, reply.stderr, reply.stdout) == (2, "NO-PROMPT", "")
    exit_two = "echo 'not this prompt' >&2; exit 2"
    reply = await fire("UserPromptSubmit", {"UserPromptSubmit": [group(exit_two)]}, tmp_path)
    assert (reply.exit_code, reply.stderr) == (2, "not this prompt\n")


async def test_an_exit_two_deny_reads_as_a_native_one(tmp_path: Path) -> None:
    """Droid shows the model ``Error: <stderr>`` for a native exit-2 hook: hookd's deny carries
    the stderr as it was, not Claude Code's ``[<cmd>]: <stderr>`` label."""
    reply = await fire(
        "PreToolUse", {"PreToolUse": [group("echo 'EXIT2 blocked' >&2; exit 2")]}, tmp_path
    )
    specific = json.loads(reply.stdout)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"] == "EXIT2 blocked\n"


async def test_stop_continuation_is_claude_code_s(tmp_path: Path) -> None:
    block = "echo " + shlex.quote(json.dumps({"decision": "block", "reason": "keep going"}))
    reply = await fire("Stop", {"Stop": [group(block)]}, tmp_path)
    assert json.loads(reply.stdout) == {"decision": "block", "reason": "keep going"}


async def test_of_several_blocks_droid_is_given_the_one_reason_it_would_show_natively(
    tmp_path: Path,
) -> None:
    """Droid reads one hook's answer, not all: the first that denied in JSON (in the
    configuration's order), else the first that exited 2 — whatever the others said; a
    first JSON deny without a reason leaves the reason to a hook that gave one."""

    def deny(reason: str | None) -> str:
        out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
               **({"permissionDecisionReason": reason} if reason else {})}}  # fmt: skip
        return "echo " + shlex.quote(json.dumps(out))

    layouts = {
        "FIRST-JSON": [deny("FIRST-JSON"), "echo EXIT-TWO >&2; exit 2", deny("SECOND-JSON")],
        "EXIT-TWO\n": ["echo EXIT-TWO >&2; exit 2", "echo LATER >&2; exit 2"],
        # The first gave none: rather another's reason than none at all.
    }
    for expected, scripts in layouts.items():
        reply = await fire("PreToolUse", {"PreToolUse": [group(s) for s in scripts]}, tmp_path)
        specific = json.loads(reply.stdout)["hookSpecificOutput"]
        assert specific["permissionDecision"] == "deny", reply
        assert specific["permissionDecisionReason"] == expected, reply
    # The first JSON deny gave no reason: the reason an earlier hook gave stays.
    scripts = ["echo EXIT-TWO >&2; exit 2", deny(None)]
    reply = await fire("PreToolUse", {"PreToolUse": [group(s) for s in scripts]}, tmp_path)
    assert "EXIT-TWO" in json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecisionReason"]

"""Copilot CLI's adapter without the agent: real inputs in, real hooks run, Copilot's answer out.

Decoding is checked on every input Copilot CLI 1.0.102 really sent, in both of its
formats (``../shared/fixtures/agents/copilot-cli-1.0.102-*`` plus the apply_patch and
postToolUseFailure inputs recorded for this adapter, all in ``tests/data/agents``).
Encoding is checked on results the engine made from real command hooks written in
Claude Code's format, so each test is the daemon's path for one event minus the
socket: decode → engine → degrade → encode.  What Copilot then *does* with the
answer is the e2e test's job (tests/agents/test_copilot.py).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import fire_decoded, group
from hookd.agents.base import AgentEvent, EventSpec, UnknownAgentEvent
from hookd.agents.capabilities import degrade
from hookd.agents.copilot import DEFAULT_BLOCK_REASON, WIRED_TIMEOUT, CopilotAdapter
from hookd.agents.registry import adapter_for
from hookd_client.events import EventInputError, decode_event

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
NATIVE = DATA / "copilot-cli-1.0.102-native"
SHAPED = DATA / "copilot-cli-1.0.102-claude-shape"
COPILOT = CopilotAdapter()


def fixture(directory: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / f"{name}.json").read_text(encoding="utf-8"))
    return data


def native_event_of(path: Path) -> str:
    return path.stem.split("-")[0]


# --- decode -------------------------------------------------------------------------------


def test_the_registry_serves_copilot() -> None:
    assert isinstance(adapter_for("copilot"), CopilotAdapter)


@pytest.mark.parametrize(
    "path",
    sorted(NATIVE.glob("*.json")),
    ids=lambda p: p.stem,
)
def test_every_real_native_input_decodes_to_a_valid_canonical_event(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    event = COPILOT.decode(native_event_of(path), raw)
    assert event.agent == "copilot" and event.input["hook_event_name"] == event.event
    decoded = decode_event(event.input, event.event)  # what the pipeline validates
    assert decoded.typed.session_id == raw["sessionId"]
    assert event.input["timestamp"] == raw["timestamp"]  # Copilot's extra field is kept
    assert not any(k[:1].islower() and k != k.lower() for k in event.input), event.input


@pytest.mark.parametrize("path", sorted(SHAPED.glob("*.json")), ids=lambda p: p.stem)
def test_every_real_claude_shaped_input_decodes_to_a_valid_canonical_event(path: Path) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    event = COPILOT.decode(native_event_of(path), raw)
    decoded = decode_event(event.input, event.event)
    assert decoded.typed.session_id == raw["session_id"]


PAIRS = [
    ("sessionStart", "SessionStart"),
    ("userPromptSubmitted", "UserPromptSubmit"),
    ("preToolUse", "PreToolUse"),
    ("preToolUse-apply_patch", "PreToolUse-apply_patch"),
    ("postToolUse", "PostToolUse"),
    ("postToolUseFailure", "PostToolUseFailure"),
    ("agentStop", "Stop"),
    ("sessionEnd", "SessionEnd"),
]


@pytest.mark.parametrize(("native", "shaped"), PAIRS)
def test_both_formats_give_hooks_the_same_canonical_input(native: str, shaped: str) -> None:
    """A hook cannot tell which of Copilot's two formats the user wired: same keys, same
    tool name, same tool input (only ids, times and paths of the two recorded runs differ)."""
    a = COPILOT.decode(native.split("-")[0], fixture(NATIVE, native)).input
    b = COPILOT.decode(shaped.split("-")[0], fixture(SHAPED, shaped)).input
    assert sorted(a) == sorted(b)
    for key in ("hook_event_name", "tool_name", "native_tool_name", "tool_input", "source"):
        assert a.get(key) == b.get(key), key
    if "tool_result" in a:
        assert sorted(a["tool_result"]) == sorted(b["tool_result"])
        assert a["tool_response"] == b["tool_response"]


def test_the_shell_tool_is_bash_with_the_native_name_kept() -> None:
    event = COPILOT.decode("preToolUse", fixture(NATIVE, "preToolUse"))
    assert event.input["tool_name"] == "Bash"
    assert event.input["native_tool_name"] == "bash"
    assert event.input["tool_input"]["command"].startswith("echo hello-from-tool")


def test_apply_patch_is_apply_patch_with_the_patch_as_command_under_both_formats() -> None:
    for directory, native, name in (
        (NATIVE, "preToolUse", "preToolUse-apply_patch"),
        (SHAPED, "PreToolUse", "PreToolUse-apply_patch"),
    ):
        event = COPILOT.decode(native, fixture(directory, name))
        assert event.input["tool_name"] == "apply_patch"
        assert event.input["tool_input"]["command"].startswith("*** Begin Patch")


def test_a_tool_result_is_also_the_tool_response_string() -> None:
    event = COPILOT.decode("postToolUse", fixture(NATIVE, "postToolUse"))
    assert event.input["tool_response"] == "ran\n<shellId: 0 completed with exit code 0>"
    assert event.input["tool_result"]["result_type"] == "success"


def test_a_new_session_is_claude_code_s_startup_with_the_native_value_kept() -> None:
    event = COPILOT.decode("sessionStart", fixture(NATIVE, "sessionStart"))
    assert event.input["source"] == "startup" and event.input["native_source"] == "new"
    assert event.input["initial_prompt"] == "Please run the shell command for me."


def test_bad_inputs_are_named() -> None:
    with pytest.raises(UnknownAgentEvent, match="BeforeTool"):
        COPILOT.decode("BeforeTool", fixture(NATIVE, "preToolUse"))
    with pytest.raises(EventInputError, match="Claude-shaped input sent to the native door"):
        COPILOT.decode("preToolUse", fixture(SHAPED, "PreToolUse"))
    with pytest.raises(EventInputError, match=r"hook_event_name.*'PreToolUse'"):
        COPILOT.decode("Stop", fixture(SHAPED, "PreToolUse"))
    with pytest.raises(EventInputError, match=r"hookName.*'permissionRequest'"):
        COPILOT.decode("preToolUse", fixture(NATIVE, "permissionRequest"))
    with pytest.raises(EventInputError, match="apply_patch"):
        COPILOT.decode(
            "preToolUse", fixture(NATIVE, "preToolUse") | {"toolName": "apply_patch", "toolArgs": 3}
        )


# --- decode → real hooks → degrade → encode -----------------------------------------------


async def run(
    native: str,
    hooks: dict[str, list[dict[str, Any]]],
    tmp_path: Path,
    *,
    directory: Path = NATIVE,
    name: str | None = None,
) -> tuple[AgentEvent, dict[str, Any]]:
    """Fire ``native`` (its recorded input) through the engine on ``hooks`` (Claude Code's
    format); returns the decoded event and Copilot's reply, parsed (exit 0 and no stderr,
    always: a non-zero exit on preToolUse would deny the call as "hook errored")."""
    raw = {**fixture(directory, name or native), "cwd": str(tmp_path)}
    event = COPILOT.decode(native, raw)
    result = await fire_decoded(event, hooks, tmp_path)
    reply = COPILOT.encode(degrade(result, event.spec), event)
    assert (reply.exit_code, reply.stderr) == (0, "")
    out: dict[str, Any] = json.loads(reply.stdout) if reply.stdout else {}
    return event, out


def emit(out: dict[str, Any]) -> str:
    """A hook printing ``out`` (printf: dash's echo would expand the JSON's ``\\n``)."""
    return f"cat >/dev/null; printf '%s\\n' {shlex.quote(json.dumps(out))}"


def pre(**fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}}


async def test_a_deny_on_bash_is_copilot_s_permission_decision(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            group(emit(pre(permissionDecision="deny", permissionDecisionReason="no shell")), "Bash")
        ]
    }
    _, out = await run("preToolUse", hooks, tmp_path)
    assert out == {"permissionDecision": "deny", "permissionDecisionReason": "no shell"}


async def test_an_exit_2_deny_keeps_its_stderr_as_the_reason(tmp_path: Path) -> None:
    """Natively Copilot tells the model only "hook exited with code 2"; through hookd the
    hook's stderr reaches it, as Claude Code would show it (a documented difference)."""
    hooks = {"PreToolUse": [group("cat >/dev/null; echo 'no rm today' >&2; exit 2", "Bash")]}
    _, out = await run("preToolUse", hooks, tmp_path)
    assert out == {"permissionDecision": "deny", "permissionDecisionReason": "no rm today"}


async def test_a_matcher_on_bash_does_not_fire_for_other_tools(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            group(emit(pre(permissionDecision="deny", permissionDecisionReason="x")), "Bash")
        ]
    }
    _, out = await run("preToolUse", hooks, tmp_path, name="preToolUse-apply_patch")
    assert out == {}
    _, out = await run("preToolUse", hooks, tmp_path)
    assert out["permissionDecision"] == "deny"


async def test_a_rewrite_is_modified_args(tmp_path: Path) -> None:
    new = {"command": "echo safe", "description": "rewritten"}
    hooks = {"PreToolUse": [group(emit(pre(permissionDecision="allow", updatedInput=new)))]}
    _, out = await run("preToolUse", hooks, tmp_path)
    assert out == {"permissionDecision": "allow", "modifiedArgs": new}


async def test_a_patch_rewrite_goes_back_as_the_bare_patch(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: other.txt\n+x\n*** End Patch\n"
    hooks = {
        "PreToolUse": [
            group(
                emit(pre(permissionDecision="allow", updatedInput={"command": patch})),
                "apply_patch",
            )
        ]
    }
    _, out = await run("preToolUse", hooks, tmp_path, name="preToolUse-apply_patch")
    assert out == {"permissionDecision": "allow", "modifiedArgs": patch}


async def test_ask_is_copilot_s_ask(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [group(emit(pre(permissionDecision="ask", permissionDecisionReason="sure?")))]
    }
    _, out = await run("preToolUse", hooks, tmp_path)
    assert out == {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}


async def test_prompt_context_plain_or_json_and_a_prompt_block(tmp_path: Path) -> None:
    ctx = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "B"}}
    hooks = {"UserPromptSubmit": [group("cat >/dev/null; echo A"), group(emit(ctx))]}
    _, out = await run("userPromptSubmitted", hooks, tmp_path)
    assert out == {"additionalContext": "A\n\nB"}
    hooks = {"UserPromptSubmit": [group(emit({"decision": "block", "reason": "not today"}))]}
    _, out = await run("userPromptSubmitted", hooks, tmp_path)
    assert out == {"decision": "block", "reason": "not today"}


async def test_a_stop_block_is_an_agent_stop_block(tmp_path: Path) -> None:
    hooks = {"Stop": [group("cat >/dev/null; echo 'keep going' >&2; exit 2")]}
    _, out = await run("agentStop", hooks, tmp_path)
    assert out == {"decision": "block", "reason": "keep going"}


async def test_post_tool_use_block_context_and_rewritten_output(tmp_path: Path) -> None:
    hooks = {"PostToolUse": [group(emit({"decision": "block", "reason": "secret"}), "Bash")]}
    _, out = await run("postToolUse", hooks, tmp_path)
    assert out == {"decision": "block", "reason": "secret"}
    ctx = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "lint ok",
            "updatedToolOutput": "REDACTED",
        }
    }
    _, out = await run("postToolUse", {"PostToolUse": [group(emit(ctx))]}, tmp_path)
    assert out == {
        "additionalContext": "lint ok",
        "modifiedResult": {"resultType": "success", "textResultForLlm": "REDACTED"},
    }


async def test_session_start_context_only_at_the_native_door(tmp_path: Path) -> None:
    """Copilot drops SessionStart context from a Claude-shaped file: degrade records the
    loss there instead of sending what would vanish."""
    ctx = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}}
    hooks = {"SessionStart": [group(emit(ctx))]}
    _, out = await run("sessionStart", hooks, tmp_path)
    assert out == {"additionalContext": "hi"}
    _, out = await run("SessionStart", hooks, tmp_path, directory=SHAPED)
    assert out == {}


async def test_continue_false_denies_the_call_and_blocks_the_prompt(tmp_path: Path) -> None:
    stop = emit({"continue": False, "stopReason": "halt"})
    _, out = await run("preToolUse", {"PreToolUse": [group(stop)]}, tmp_path)
    assert out == {"permissionDecision": "deny", "permissionDecisionReason": "halt"}
    _, out = await run("userPromptSubmitted", {"UserPromptSubmit": [group(stop)]}, tmp_path)
    assert out == {"decision": "block", "reason": "halt"}


async def test_no_hook_no_output(tmp_path: Path) -> None:
    _, out = await run("preToolUse", {}, tmp_path)
    assert out == {}


def test_a_subagent_stop_block_always_has_a_reason() -> None:
    from hookd_client.results import FireResult

    raw = fixture(NATIVE, "agentStop")
    spec = COPILOT.event_spec("subagentStop")
    event = AgentEvent(
        agent="copilot",
        native_event="subagentStop",
        event="SubagentStop",
        input={**raw, "session_id": raw["sessionId"]},
        spec=spec,
    )
    reply = COPILOT.encode(FireResult(event="SubagentStop", decision="block"), event)
    assert json.loads(reply.stdout) == {"decision": "block", "reason": DEFAULT_BLOCK_REASON}


# --- install ------------------------------------------------------------------------------


def relay_for(spec: EventSpec) -> str:
    return f"/opt/hookd/bin/hookd-relay --agent copilot {spec.native}"


def test_wire_from_nothing_is_a_native_file_with_every_native_event() -> None:
    text = COPILOT.wire(None, relay_for)
    data = json.loads(text)
    assert data["version"] == 1
    assert list(data["hooks"]) == [
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "agentStop",
        "subagentStart",
        "subagentStop",
        "preCompact",
        "sessionEnd",
        "permissionRequest",
    ]
    assert data["hooks"]["preToolUse"] == [
        {
            "type": "command",
            "bash": "/opt/hookd/bin/hookd-relay --agent copilot preToolUse",
            "timeoutSec": WIRED_TIMEOUT,
        }
    ]
    assert COPILOT.is_wired(text)
    assert COPILOT.wire(text, relay_for) == text  # idempotent


USER_FILE = {
    "model": "gpt-5.4",
    "hooks": {
        "preToolUse": [{"type": "command", "bash": "./guard.sh", "timeoutSec": 5}],
        "errorOccurred": [{"type": "command", "bash": "./err.sh"}],
        "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
        "PreToolUse": [
            {"matcher": "bash", "hooks": [{"type": "command", "command": "./shell.sh"}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./files.sh"}]},
            {"hooks": [{"type": "command", "command": "hookd-relay --agent copilot PreToolUse"}]},
        ],
    },
}


def test_wire_moves_claude_shaped_hooks_and_keeps_native_ones_after_hookd() -> None:
    text = COPILOT.wire(json.dumps(USER_FILE), relay_for)
    data = json.loads(text)
    assert data["model"] == "gpt-5.4" and "version" not in data  # settings stay settings
    assert "Stop" not in data["hooks"] and "PreToolUse" not in data["hooks"]  # moved
    assert data["hooks"]["preToolUse"][1:] == [
        {"type": "command", "bash": "./guard.sh", "timeoutSec": 5}
    ]
    assert data["hooks"]["errorOccurred"] == [{"type": "command", "bash": "./err.sh"}]
    assert COPILOT.is_wired(text) and not COPILOT.is_wired(json.dumps(USER_FILE))
    assert COPILOT.wire(text, relay_for) == text


def test_read_hooks_moves_the_claude_shaped_ones_and_says_what_stays(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(json.dumps(USER_FILE))
    found = COPILOT.read_hooks(path)
    assert found.hooks == {
        "Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}],
        "PreToolUse": [
            # Copilot matched `bash` natively; hookd sees the shell as Bash.
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./shell.sh"}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "./files.sh"}]},
        ],
    }
    text = "\n".join(found.warnings)
    assert "hooks.preToolUse: 1 hook(s) in Copilot's native format stay" in text
    assert "hooks.errorOccurred: hookd does not take over" in text


def test_hook_files_and_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    hooks = tmp_path / "proj" / ".github" / "hooks"
    hooks.mkdir(parents=True)
    assert COPILOT.hook_files("project", tmp_path, tmp_path / "proj") == [hooks / "hooks.json"]
    (hooks / "a-empty.json").write_text("{}")
    (hooks / "team.json").write_text(json.dumps(USER_FILE))
    # The first file with the user's hooks is the one install wires (and moves them from).
    assert COPILOT.hook_files("project", tmp_path, tmp_path / "proj") == [
        hooks / "team.json",
        hooks / "a-empty.json",
    ]
    # Once a file is wired, it stays the first.
    (hooks / "z.json").write_text(COPILOT.wire(None, relay_for))
    assert COPILOT.hook_files("project", tmp_path, tmp_path / "proj")[0] == hooks / "z.json"
    assert COPILOT.hook_files("user", tmp_path, None) == [
        tmp_path / ".copilot" / "hooks" / "hooks.json",
        tmp_path / ".copilot" / "settings.json",
    ]
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "ch"))
    assert COPILOT.hook_files("user", tmp_path, None)[0] == tmp_path / "ch" / "hooks" / "hooks.json"
    assert COPILOT.hook_files("project", tmp_path, None) == []
    assert COPILOT.trust_steps("user") == []
    assert "trust" in COPILOT.trust_steps("project")[0]


def test_lint_names_what_copilot_would_skip_silently(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    text = json.dumps(
        {
            "disableAllHooks": True,
            "hooks": {"preToolUse": [{"type": "command", "bash": "x", "timeout": 5}]},
        }
    )
    found = COPILOT.lint(path, text)
    assert [(f.severity, f.where) for f in found] == [
        ("error", "disableAllHooks"),
        ("warning", "hooks.preToolUse[0].timeout"),
    ]
    broken = COPILOT.lint(path, '{"hooks": {')
    assert broken[0].severity == "error" and "line 1" in broken[0].message


def test_a_claude_shaped_permission_request_comes_camel_case_and_is_read_so() -> None:
    """Copilot 1.0.102 sends PermissionRequest's native stdin to a Claude-shaped hook too."""
    raw = fixture(NATIVE, "permissionRequest")
    for native in ("permissionRequest", "PermissionRequest"):
        event = COPILOT.decode(native, raw)
        assert event.event == "PermissionRequest"
        assert event.input["tool_name"] == "Bash" and event.input["permission_suggestions"] == []
        decode_event(event.input, event.event)


async def test_a_permission_request_deny_is_copilot_s_behavior(tmp_path: Path) -> None:
    def answer(**decision: Any) -> str:
        out = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
        return emit(out)

    hooks = {"PermissionRequest": [group(answer(behavior="deny", message="not now"), "Bash")]}
    _, out = await run("permissionRequest", hooks, tmp_path)
    assert out == {"behavior": "deny", "message": "not now"}
    hooks = {"PermissionRequest": [group(answer(behavior="allow"))]}
    _, out = await run("permissionRequest", hooks, tmp_path)
    assert out == {"behavior": "allow"}
    # Copilot applies no rewrite there: an allow that rewrote the call is a deny.
    rewrite = answer(behavior="allow", updatedInput={"command": "echo safe"})
    _, out = await run("permissionRequest", {"PermissionRequest": [group(rewrite)]}, tmp_path)
    assert out["behavior"] == "deny" and "cannot apply" in out["message"]


def test_read_hooks_says_every_native_entry_it_leaves_whatever_the_order(tmp_path: Path) -> None:
    """Claude-shaped groups move; every native entry that stays, and every event hookd
    does not take over, is said — before or after the Claude-shaped keys in the file."""
    claude = [{"hooks": [{"type": "command", "command": "guard"}]}]
    native = [{"type": "command", "bash": "mine"}]
    keys = [("PreToolUse", claude), ("preToolUse", native), ("someNewEvent", native)]
    for order in (keys, keys[::-1], [keys[1], keys[0], keys[2]]):
        path = tmp_path / "hooks.json"
        path.write_text(json.dumps({"version": 1, "hooks": dict(order)}))
        found = COPILOT.read_hooks(path)
        assert list(found.hooks) == ["PreToolUse"], order
        said = "\n".join(found.warnings)
        assert "hooks.preToolUse: 1 hook(s) in Copilot's native format stay" in said, order
        assert "hooks.someNewEvent: hookd does not take over" in said, order


def test_a_hooks_file_that_does_not_parse_is_the_one_install_must_stop_at(tmp_path: Path) -> None:
    """A file in the hooks directory that does not parse may hold the user's hooks: it is
    the one install wires first — and so refuses, naming it — never passed over for a new
    hooks.json beside it (a project install over a broken file must say so)."""
    hooks = tmp_path / "proj" / ".github" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "a-empty.json").write_text("{}")
    (hooks / "broken.json").write_text('{"hooks": {"preToolUse": [')
    assert COPILOT.hook_files("project", tmp_path, tmp_path / "proj")[0] == hooks / "broken.json"

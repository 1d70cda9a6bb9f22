"""Gemini CLI's adapter without the agent: real inputs in, real hooks run, Gemini's answer out.

Decoding is checked on every input Gemini CLI 0.61.0 really sent
(``../shared/fixtures/agents/gemini-cli-0.61.0``, copied into
``tests/data/agents/gemini-cli-0.61.0``).  Encoding is checked on results the
engine made from real command hooks (written in Claude Code's format, as a
hookd user writes them), so each test is the daemon's path for one event minus
the socket: decode → engine → encode.  What Gemini then *does* with the
answer is the e2e test's job (tests/agents/test_gemini.py).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import structlog

from agents.adapter_runs import fire_decoded
from hookd.agents.base import AgentEvent, EventSpec, Finding, UnknownAgentEvent
from hookd.agents.gemini import (
    HOOKD_TIMEOUT_MS,
    TOOLS,
    GeminiAdapter,
    SettingsError,
    canonical_matcher,
)
from hookd.cli.hookctl import main as hookctl
from hookd.config.assemble import load_config
from hookd.config.matching import compile_matcher, tool_aliases
from hookd_client.events import EVENT_NAMES, EventInputError, decode_event
from support.clis import require_cli

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "gemini-cli-0.61.0"
GEMINI = GeminiAdapter()


def fixture(native: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{native}.json").read_text(encoding="utf-8"))
    return data


# --- decode -------------------------------------------------------------------------------


RECORDED = [s for s in GEMINI.events if (FIXTURES / f"{s.native}.json").exists()]


def test_every_event_but_notification_was_recorded() -> None:
    """Notification fires only for permission prompts, which a --yolo run never shows;
    test_renamed_values_keep_the_native_one decodes one built from Gemini's docs."""
    assert {s.native for s in GEMINI.events} - {s.native for s in RECORDED} == {"Notification"}


@pytest.mark.parametrize("spec", RECORDED, ids=lambda s: s.native)
def test_every_real_input_decodes_to_a_valid_claude_code_event(spec: EventSpec) -> None:
    raw = fixture(spec.native)
    event = GEMINI.decode(spec.native, raw)
    assert event.event == spec.canonical in EVENT_NAMES
    assert event.input["hook_event_name"] == spec.canonical
    assert event.input["timestamp"] == raw["timestamp"]  # Gemini's extra field kept
    decoded = decode_event(event.input, event.event)  # what the daemon's pipeline does next
    assert decoded.typed.session_id == raw["session_id"]


def test_the_shell_tool_is_bash_with_the_native_name_kept() -> None:
    event = GEMINI.decode("BeforeTool", fixture("BeforeTool"))
    assert event.event == "PreToolUse"
    assert event.input["tool_name"] == "Bash"
    assert event.input["native_tool_name"] == "run_shell_command"
    assert event.input["tool_input"] == fixture("BeforeTool")["tool_input"]
    after = GEMINI.decode("AfterTool", fixture("AfterTool"))
    assert after.input["tool_response"] == fixture("AfterTool")["tool_response"]


def test_an_unmapped_tool_keeps_its_name_and_gets_no_native_copy() -> None:
    raw = {**fixture("BeforeTool"), "tool_name": "save_memory", "tool_input": {}}
    event = GEMINI.decode("BeforeTool", raw)
    assert event.input["tool_name"] == "save_memory"
    assert "native_tool_name" not in event.input


def test_an_mcp_tool_is_claude_code_s_mcp_name() -> None:
    """``mcp_files_read_tree`` split where ``mcp_context`` says (tests/agents/test_mcp_names.py
    has every agent's)."""
    raw = {**fixture("BeforeTool"), "tool_name": "mcp_files_read_tree", "tool_input": {}}
    raw["mcp_context"] = {"server_name": "files", "tool_name": "read_tree"}
    event = GEMINI.decode("BeforeTool", raw)
    assert event.input["tool_name"] == "mcp__files__read_tree"
    assert event.input["native_tool_name"] == "mcp_files_read_tree"


def test_after_agent_is_stop_with_the_response_as_last_assistant_message() -> None:
    event = GEMINI.decode("AfterAgent", fixture("AfterAgent"))
    assert event.event == "Stop"
    assert event.input["last_assistant_message"] == "All done."
    assert event.input["prompt_response"] == "All done."
    assert event.input["stop_hook_active"] is False


def test_renamed_values_keep_the_native_one() -> None:
    end = GEMINI.decode("SessionEnd", fixture("SessionEnd"))
    assert (end.input["reason"], end.input["native_reason"]) == ("other", "exit")
    note = {
        **fixture("SessionStart"),
        "hook_event_name": "Notification",
        "notification_type": "ToolPermission",
        "message": "Allow run_shell_command?",
        "details": {"tool": "run_shell_command"},
    }
    event = GEMINI.decode("Notification", note)
    assert event.input["notification_type"] == "permission_prompt"
    assert event.input["native_notification_type"] == "ToolPermission"
    assert event.input["details"] == {"tool": "run_shell_command"}


def test_bad_inputs_are_named() -> None:
    with pytest.raises(EventInputError, match=r"hook_event_name.*'AfterTool'.*'BeforeTool'"):
        GEMINI.decode("BeforeTool", fixture("AfterTool"))
    raw = {k: v for k, v in fixture("BeforeTool").items() if k != "tool_name"}
    with pytest.raises(EventInputError, match=r"\$\.tool_name"):
        GEMINI.decode("BeforeTool", raw)
    for native in ("BeforeModel", "PreToolUse", "beforeTool"):
        with pytest.raises(UnknownAgentEvent, match=native):
            GEMINI.decode(native, fixture("BeforeModel"))


# --- decode → real hooks → encode ---------------------------------------------------------


async def run(
    native: str, hooks: dict[str, list[dict[str, Any]]], tmp_path: Path, **patch: Any
) -> tuple[AgentEvent, dict[str, Any], int]:
    """Fire ``native`` (its recorded input, patched) through the engine on ``hooks`` (Claude
    Code's format); returns the decoded event and Gemini's reply, parsed."""
    event = GEMINI.decode(native, {**fixture(native), "cwd": str(tmp_path), **patch})
    result = await fire_decoded(event, hooks, tmp_path)
    reply = GEMINI.encode(result, event)
    assert reply.stderr == ""
    out: dict[str, Any] = json.loads(reply.stdout) if reply.stdout else {}
    return event, out, reply.exit_code


def command(script: str) -> dict[str, Any]:
    return {"type": "command", "command": f"sh -c {shlex.quote(script)}"}


def group(script: str, matcher: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"hooks": [command(script)]}
    if matcher is not None:
        found["matcher"] = matcher
    return found


def deny_json(reason: str) -> str:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return f"cat >/dev/null; echo {shlex.quote(json.dumps(out))}"


async def test_exit_2_deny_on_bash_reads_as_a_native_exit_2(tmp_path: Path) -> None:
    """Natively Gemini tells the model ``Tool execution blocked: <stderr, trimmed>``; hookd's
    engine labels the same block ``[<cmd>]: <stderr>``, so the reason is rebuilt."""
    hooks = {"PreToolUse": [group("echo '  no shell today  ' >&2; exit 2", "Bash")]}
    _, out, code = await run("BeforeTool", hooks, tmp_path)
    assert (out, code) == ({"decision": "deny", "reason": "no shell today"}, 0)


async def test_a_permission_decision_deny_becomes_gemini_s_decision(tmp_path: Path) -> None:
    """Gemini ignores ``hookSpecificOutput.permissionDecision`` (the tool would run)."""
    hooks = {"PreToolUse": [group(deny_json("policy says no"))]}
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out == {"decision": "deny", "reason": "policy says no"}


async def test_two_blocks_are_one_reason_a_line(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [group(deny_json("first")), group("echo second >&2; exit 2")]}
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out["decision"] == "deny"
    assert sorted(out["reason"].split("\n")) == ["first", "second"]


async def test_a_matcher_on_bash_does_not_fire_for_other_tools(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [group("exit 2", "Bash")]}
    _, out, code = await run(
        "BeforeTool", hooks, tmp_path, tool_name="read_file", tool_input={"file_path": "x"}
    )
    assert (out, code) == ({}, 0)
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out["decision"] == "deny"


async def test_a_rewrite_is_gemini_s_tool_input(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten"},
        }
    }
    hooks = {"PreToolUse": [group(f"echo {shlex.quote(json.dumps(answer))}", "Bash")]}
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "BeforeTool",
            "tool_input": {"command": "echo rewritten"},
        }
    }


async def test_ask_is_gemini_s_ask(tmp_path: Path) -> None:
    """Gemini's confirmation dialog shows the systemMessage (scheduler: hookSystemMessage)."""
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "sure?",
        }
    }
    hooks = {"PreToolUse": [group(f"echo {shlex.quote(json.dumps(answer))}")]}
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out == {"decision": "ask", "reason": "sure?", "systemMessage": "sure?"}


async def test_prompt_context_and_block(tmp_path: Path) -> None:
    """UserPromptSubmit's plain stdout is context in Claude Code; Gemini reads context only
    from JSON, so it travels as additionalContext."""
    hooks = {"UserPromptSubmit": [group("echo plain-context")]}
    _, out, _ = await run("BeforeAgent", hooks, tmp_path)
    assert out == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "plain-context"}
    }
    hooks = {"UserPromptSubmit": [group("echo 'not this prompt' >&2; exit 2")]}
    _, out, _ = await run("BeforeAgent", hooks, tmp_path)
    assert out == {"decision": "deny", "reason": "not this prompt"}


async def test_stop_block_is_an_after_agent_retry(tmp_path: Path) -> None:
    hooks = {"Stop": [group("echo 'say DONE too' >&2; exit 2")]}
    event, out, _ = await run("AfterAgent", hooks, tmp_path)
    assert event.spec.caps.continue_stop
    assert out == {"decision": "deny", "reason": "say DONE too"}


async def test_after_tool_context(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX"}}
    hooks = {"PostToolUse": [group(f"echo {shlex.quote(json.dumps(answer))}", "Bash")]}
    _, out, _ = await run("AfterTool", hooks, tmp_path)
    assert out == {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "CTX"}}


async def test_a_failing_hook_is_gemini_s_warning_and_the_event_goes_on(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [group("echo broken >&2; exit 1")]}
    _, out, _ = await run("BeforeTool", hooks, tmp_path)
    assert out == {"systemMessage": "Warning: broken"}


async def test_stop_the_agent(tmp_path: Path) -> None:
    answer = {"continue": False, "stopReason": "enough", "systemMessage": "bye"}
    hooks = {"PostToolUse": [group(f"echo {shlex.quote(json.dumps(answer))}")]}
    _, out, _ = await run("AfterTool", hooks, tmp_path)
    assert out == {"continue": False, "stopReason": "enough", "systemMessage": "bye"}


async def test_no_hook_no_output(tmp_path: Path) -> None:
    _, out, code = await run("PreCompress", {}, tmp_path)
    assert (out, code) == ({}, 0)


# --- matchers: Gemini's meaning kept under hookd's rules ---------------------------------

_PROBES = [*TOOLS, "read_many_files", "save_memory", "mcp_fs_read_tree", "mcp_shell_exec"]
"""Every name Gemini CLI calls a tool by (no tool of Gemini's is called ``Bash``)."""
_MATCHERS = [
    "run_shell_command",
    "shell",
    "read_file|write_file",
    "read_.*",
    "^(replace|write_file)$",
    "mcp_.*",
    "mcp_fs",
    "Bash",
    "e",
    "Ta",
    "(",
    ".*",
    "*",
    " run_shell_command ",
]


@pytest.mark.parametrize("matcher", _MATCHERS)
def test_a_moved_matcher_matches_exactly_the_tools_it_matched_in_gemini(matcher: str) -> None:
    """For every tool name Gemini may call: Gemini's matcher on the native name (an
    unanchored regex; exact name when it is no regex) fires exactly when hookd's
    translated matcher fires on the names decode gives hookd (with its legacy aliases, and an
    MCP tool's candidates: Gemini's own name among them)."""
    moved, _ = canonical_matcher(matcher)
    hookd = compile_matcher(moved, "PreToolUse")
    assert hookd.error is None
    text = matcher.strip()
    for native in _PROBES:
        try:
            natively = text in ("", "*") or re.search(text, native) is not None
        except re.error:
            natively = text == native
        canonical = GEMINI.canonical_tool(native)
        mcp = GEMINI.mcp_tool(native)
        names = (*tool_aliases(canonical), *(mcp.candidates if mcp is not None else ()))
        assert hookd.matches(names) == natively, (matcher, moved, native)


# --- install side -----------------------------------------------------------------------


def relay_for(spec: EventSpec) -> str:
    return f"/opt/hookd/bin/hookd-relay --agent gemini {spec.native}"


USER_SETTINGS = """{
  // Gemini accepts comments in settings.json
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooksConfig": {"enabled": true, "disabled": ["old-guard"]},
  "hooks": {
    "BeforeTool": [
      {"matcher": "run_shell_command", "sequential": true,
       "hooks": [{"type": "command", "command": "guard.sh", "timeout": 2500, "name": "guard"}]},
      {"matcher": "write_.*",
       "hooks": [{"type": "command", "command": "old.sh", "name": "old-guard"}]}
    ],
    "AfterAgent": [{"hooks": [{"type": "command", "command": "check.sh $GEMINI_PLANS_DIR"}]}],
    "SessionEnd": [{"matcher": "exit", "hooks": [{"type": "command", "command": "bye.sh"}]}],
    "BeforeModel": [{"hooks": [{"type": "command", "command": "model.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "claude-name.sh"}]}]
  }
}
"""


def test_read_hooks_moves_them_in_claude_code_s_shape(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(USER_SETTINGS, encoding="utf-8")
    found = GEMINI.read_hooks(path)
    guard = {"type": "command", "command": "guard.sh", "timeout": 2.5, "name": "guard"}
    check = {"type": "command", "command": "check.sh $GEMINI_PLANS_DIR", "timeout": 60.0}
    bye = {"type": "command", "command": "bye.sh", "timeout": 60.0}
    assert found.hooks == {
        "PreToolUse": [{"matcher": "Bash", "sequential": True, "hooks": [guard]}],
        "Stop": [{"hooks": [check]}],
        "SessionEnd": [{"matcher": "other", "hooks": [bye]}],
    }
    text = "\n".join(found.warnings)
    assert "hooks.BeforeTool[1].hooks[0]: disabled in hooksConfig.disabled" in text
    assert "hooks.BeforeModel: no Claude Code event runs these" in text
    assert "hooks.BeforeTool[0].sequential: Gemini runs every matching hook" in text
    assert "hooks.Stop: not a Gemini CLI 0.61 event" in text
    assert "$GEMINI_PLANS_DIR" in text
    # hookd's own config accepts what was moved
    config = load_config(None, str(tmp_path), [json.dumps({"hooks": found.hooks})])
    assert not config.errors, config.errors


def test_wire_sends_every_event_to_hookd_and_keeps_the_rest(tmp_path: Path) -> None:
    wired = GEMINI.wire(USER_SETTINGS, relay_for)
    settings = json.loads(wired)
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["hooksConfig"] == {"enabled": True, "disabled": ["old-guard"]}
    hooks = settings["hooks"]
    for spec in GEMINI.events:
        assert hooks[spec.native] == [
            {
                "hooks": [
                    {
                        "type": "command",
                        "name": "hookd",
                        "command": relay_for(spec),
                        "timeout": HOOKD_TIMEOUT_MS,
                    }
                ]
            }
        ]
    # Gemini-only model events stay Gemini's; a misnamed "Stop" Gemini skipped is dropped
    assert hooks["BeforeModel"] == [{"hooks": [{"type": "command", "command": "model.sh"}]}]
    assert set(hooks) == {s.native for s in GEMINI.events} | {"BeforeModel"}
    assert GEMINI.is_wired(wired) and not GEMINI.is_wired(USER_SETTINGS)
    assert GEMINI.wire(wired, relay_for) == wired  # idempotent
    path = tmp_path / "settings.json"
    path.write_text(wired, encoding="utf-8")
    again = GEMINI.read_hooks(path)  # hookd's own entries are not the user's hooks
    assert again.hooks == {}


def test_wire_from_nothing() -> None:
    for text in (None, "", "  \n"):
        wired = json.loads(GEMINI.wire(text, relay_for))
        assert set(wired) == {"hooks"}
        assert GEMINI.is_wired(json.dumps(wired))


def test_a_broken_file_is_named_with_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"settings\.json: line 3 column 1: "):
        GEMINI.wire('{"hooks": {}\n,\n}', relay_for)
    path = tmp_path / "settings.json"
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(SettingsError, match="top level, got an array"):
        GEMINI.read_hooks(path)
    assert not GEMINI.is_wired("{")


def test_a_disabled_hooks_feature_is_said(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"hooksConfig": {"enabled": false}}', encoding="utf-8")
    (warning,) = GEMINI.read_hooks(path).warnings
    assert "hooksConfig.enabled is false" in warning


def test_comment_markers_inside_strings_are_text(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", '
        '"command": "curl http://x/*y*/ # //z"}]}]}} // trailing',
        encoding="utf-8",
    )
    (moved,) = GEMINI.read_hooks(path).hooks["SessionStart"]
    assert moved["hooks"][0]["command"] == "curl http://x/*y*/ # //z"


def test_hook_files_and_trust(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    assert GEMINI.hook_files("user", home, None) == [home / ".gemini" / "settings.json"]
    assert GEMINI.hook_files("project", home, project) == [project / ".gemini" / "settings.json"]
    with pytest.raises(ValueError, match="project directory"):
        GEMINI.hook_files("project", home, None)
    assert "GEMINI_CLI_TRUST_WORKSPACE" in " ".join(GEMINI.trust_steps("project"))
    assert "--skip-trust" in " ".join(GEMINI.trust_steps("user"))


def test_lint_names_what_gemini_would_skip_silently(tmp_path: Path) -> None:
    project = tmp_path / "proj" / ".gemini"
    project.mkdir(parents=True)
    path = project / "settings.json"
    text = json.dumps(
        {
            "hooksConfig": {"enabled": False, "disabled": ["x.sh"]},
            "hooks": {
                "PreToolUse": [{"hooks": [{"type": "command", "command": "a.sh"}]}],
                "BeforeTool": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "b.sh"}]},
                    {"matcher": "shell", "hooks": [{"type": "command", "command": "c.sh"}]},
                    {"hooks": [{"type": "command", "command": "d.sh", "timeout": 30}]},
                ],
                "BeforeModel": [{"hooks": [{"type": "command", "command": "m.sh"}]}],
                "enabled": True,
            },
        }
    )
    found = {(f.severity, f.where): f.message for f in GEMINI.lint(path, text)}
    assert set(found) == {
        ("error", "hooksConfig.enabled"),
        ("info", "hooksConfig.disabled"),
        ("error", "hooks.PreToolUse"),
        ("warning", "hooks.BeforeTool[0].matcher"),
        ("warning", "hooks.BeforeTool[2].hooks[0].timeout"),
        ("info", "hooks"),
    }
    assert "Gemini calls it BeforeTool" in found[("error", "hooks.PreToolUse")]
    assert "'run_shell_command'" in found[("warning", "hooks.BeforeTool[0].matcher")]
    assert "0.03 s" in found[("warning", "hooks.BeforeTool[2].hooks[0].timeout")]
    (broken,) = GEMINI.lint(path, '{"hooks": ')
    assert broken.severity == "error" and "settings.json: line 1 column " in broken.message
    assert GEMINI.lint(path, GEMINI.wire(None, relay_for)) == [
        Finding(
            severity="info",
            message=found[("info", "hooks")],
            path=str(path),
            where="hooks",
        )
    ]


def test_a_moved_matcher_stays_readable_where_it_can() -> None:
    assert canonical_matcher("run_shell_command|replace") == ("Bash|Edit", None)
    moved, warning = canonical_matcher("shell")
    assert moved == "^(?:Bash)$|(?:shell)"
    assert warning is not None and "'shell'" in warning
    assert canonical_matcher("mcp_.*") == ("mcp_.*", None)
    assert canonical_matcher("mcp_fs") == ("(?:mcp_fs)", None)


def test_install_then_uninstall_gives_gemini_s_file_back_byte_for_byte(private_home: Path) -> None:
    """Through the real command: comments and all come back, the moved hooks leave hookd's
    config, the Gemini-only model hooks never left Gemini's file, and a second install
    changes nothing."""
    home = private_home
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(USER_SETTINGS, encoding="utf-8")
    settings.chmod(0o640)
    hookd_config = home / ".config" / "hookd" / "hooks.json"

    assert hookctl(["agents", "install", "gemini", "--python-relay"]) == 0
    wired = settings.read_text(encoding="utf-8")
    assert GEMINI.is_wired(wired)
    assert json.loads(wired)["hooks"]["BeforeModel"][0]["hooks"][0]["command"] == "model.sh"
    moved = json.loads(hookd_config.read_text(encoding="utf-8"))["hooks"]
    assert set(moved) == {"PreToolUse", "Stop", "SessionEnd"}
    assert hookctl(["agents", "install", "gemini", "--python-relay"]) == 0
    assert settings.read_text(encoding="utf-8") == wired
    assert json.loads(hookd_config.read_text(encoding="utf-8"))["hooks"] == moved

    assert hookctl(["agents", "uninstall", "gemini"]) == 0
    assert settings.read_text(encoding="utf-8") == USER_SETTINGS
    assert settings.stat().st_mode & 0o777 == 0o640
    left = json.loads(hookd_config.read_text()) if hookd_config.exists() else {}
    assert not left.get("hooks")


def test_a_hook_s_env_is_set_by_its_command_line_under_hookd(tmp_path: Path) -> None:
    """Gemini gives a hook the ``env`` of its config; hookd's command hooks have no such
    field, so the moved command exports the same variables (quoted: values stay literal)."""
    path = tmp_path / "settings.json"
    hook = {"type": "command", "command": 'echo "$MODE $X"', "env": {"MODE": "a b$c", "1x": "no"}}
    path.write_text(json.dumps({"hooks": {"BeforeAgent": [{"hooks": [hook]}]}}), encoding="utf-8")
    found = GEMINI.read_hooks(path)
    (moved,) = found.hooks["UserPromptSubmit"][0]["hooks"]
    assert moved["command"] == "export MODE='a b$c'; echo \"$MODE $X\""
    assert any("names that are no shell variable" in w for w in found.warnings)
    done = subprocess.run(
        ["sh", "-c", moved["command"]], capture_output=True, text=True, check=True, env={"X": "y"}
    )
    assert done.stdout == "a b$c y\n"


def test_detect_reads_the_version_from_the_npm_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """From the package the ``gemini`` on PATH belongs to: no node start-up (the pinned CLI)."""
    pinned = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "gemini"
    require_cli(pinned.exists(), "the pinned Gemini CLI")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to(pinned)
    monkeypatch.setenv("PATH", str(bin_dir))
    found = GEMINI.detect()
    assert (found.installed, found.binary, found.version) == (
        True,
        str(bin_dir / "gemini"),
        GEMINI.tested_version,
    )
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert not GEMINI.detect().installed


async def test_claude_code_fields_gemini_has_no_place_for_are_logged(tmp_path: Path) -> None:
    """``updatedToolOutput`` (Claude Code replaces the tool's output) has no Gemini
    counterpart: the answer goes on without it, and the daemon's log says so."""
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": "redacted",
            "additionalContext": "CTX",
        }
    }
    hooks = {"PostToolUse": [group(f"echo {shlex.quote(json.dumps(answer))}")]}
    with structlog.testing.capture_logs() as logs:
        _, out, _ = await run("AfterTool", hooks, tmp_path)
    assert out == {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "CTX"}}
    (entry,) = [e for e in logs if e["event"] == "gemini cannot apply"]
    assert (entry["native_event"], entry["fields"]) == ("AfterTool", ["updatedToolOutput"])


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("check.sh $GEMINI_PLANS_DIR", True),
        ("check.sh $GEMINI_SESSION_ID", True),
        ("check.sh $GEMINI_PROJECT_DIR", False),
        ("check.sh", False),
    ],
)
def test_a_moved_command_is_said_to_expand_geminis_variables_exactly_when_it_uses_them(
    tmp_path: Path, command: str, said: bool
) -> None:
    path = tmp_path / "settings.json"
    hook = {"type": "command", "command": command}
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"hooks": [hook]}]}}))
    warnings = GeminiAdapter().read_hooks(path).warnings
    assert any("substitutes" in w for w in warnings) == said, warnings


@pytest.mark.parametrize("matcher", ["Bash", "run_shell_command", "read_file|glob", ".*", "*", ""])
def test_a_moved_gemini_matcher_is_noted_exactly_when_its_meaning_changes(
    tmp_path: Path, matcher: str
) -> None:
    path = tmp_path / "settings.json"
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": "g"}]}
    path.write_text(json.dumps({"hooks": {"BeforeTool": [group]}}))
    warnings = [w for w in GeminiAdapter().read_hooks(path).warnings if ".matcher:" in w]
    note = canonical_matcher(matcher)[1]
    assert warnings == ([f"hooks.BeforeTool[0].matcher: {note}"] if note else [])


@pytest.mark.parametrize("nearest", ["not json", '{"name": "other-cli", "version": "5.0.0"}'])
def test_the_version_is_the_nearest_package_s_or_the_binary_s_never_one_further_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, nearest: str
) -> None:
    """The package a binary belongs to is the nearest ``package.json`` above it: when that
    one is not Gemini's (or does not parse), ``gemini --version`` says, not some
    ``@google/gemini-cli`` further up the tree."""
    outer = tmp_path / "outer"
    (outer / "inner" / "bin").mkdir(parents=True)
    (outer / "package.json").write_text('{"name": "@google/gemini-cli", "version": "9.9.9"}')
    (outer / "inner" / "package.json").write_text(nearest)
    binary = outer / "inner" / "bin" / "gemini"
    binary.write_text("#!/bin/sh\necho 1.2.3\n")
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(binary.parent))
    assert GEMINI.detect().version == "1.2.3"

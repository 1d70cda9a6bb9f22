"""The same hooks, native in Codex CLI 0.169.0 and through hookd, give the same run.

Each scenario runs the real ``codex exec`` twice against the scripted fake
Responses API (:mod:`agents.codex_harness`): once with the hooks in
``$CODEX_HOME/hooks.json``, once after ``hookctl agents install codex`` moved
them into hookd's config and wired ``hookd-relay --agent codex`` in their place.
The runs must agree on what the model received, which commands ran with which
input, the files the commands wrote, the final message and exit code — and on
the hooks' own marker lines, so a scenario whose hooks ran in neither mode
still fails.  Each scenario also asserts its point directly (the deny reached
the model, the rewrite ran, …).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agents.codex_harness import CodexRun, codex_available, run_codex
from agents.fake_responses import Patch, Shell, Text, ToolCall, Turn
from support.clis import require_cli
from support.together import together

pytestmark = [pytest.mark.slow, pytest.mark.codex]

COMMAND = "echo hello-from-tool > tool_out.txt; echo ran"
TURNS: list[Turn] = [Shell(COMMAND), Text("All done.")]


@pytest.fixture(autouse=True)
def _require_codex() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(codex_available(), "the Codex CLI or node")


def hook(script: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": script, **extra}


def record(mark: str) -> str:
    """Shell that reads the input and appends ``mark`` to the hooks' log."""
    return f'cat > /dev/null; echo {mark} >> "$HOOK_LOG"'


def emit(mark: str, output: dict[str, Any]) -> str:
    return f"{record(mark)}; printf '%s' '{json.dumps(output)}'"


@pytest.fixture(params=["compiled", "python"])
def relay(request: pytest.FixtureRequest) -> Path | None:
    """Every scenario through both relays: the compiled one (installed by default) and
    the Python one (where no C compiler was there to build it)."""
    if request.param == "python":
        return None
    path: Path = request.getfixturevalue("compiled_relay")
    return path


async def both(
    tmp_path: Path,
    relay: Path | None,
    hooks: dict[str, Any],
    turns: list[Turn] | None = None,
    model: str = "gpt-fake",
) -> tuple[CodexRun, CodexRun]:
    native, hookd = await together(
        partial(run_codex, tmp_path / "native", turns or TURNS, hooks, "native", model=model),
        partial(
            run_codex, tmp_path / "hookd", turns or TURNS, hooks, "hookd", relay=relay, model=model
        ),
    )
    want, got = native.comparable(), hookd.comparable()
    assert got == want, (
        f"native:\n{json.dumps(want, indent=1)}\nhookd:\n{json.dumps(got, indent=1)}\n"
        f"daemon log:\n{hookd.daemon_log[-3000:]}\ncodex stderr:\n{hookd.stderr[-2000:]}"
    )
    return native, hookd


async def test_shell_command_deny(tmp_path: Path, relay: Path | None) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "DENY-MARK no shell here",
        }
    }
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(emit("deny", deny))]}]}
    native, _ = await both(tmp_path, relay, hooks)
    assert native.commands() == [] and "tool_out.txt" not in native.files
    assert "DENY-MARK no shell here" in native.seen()[-1]["tool_outputs"][0]


async def test_shell_command_deny_by_exit_two(tmp_path: Path, relay: Path | None) -> None:
    script = f"{record('exit2')}; echo 'EXIT2-MARK blocked' >&2; exit 2"
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(script)]}]}
    native, _ = await both(tmp_path, relay, hooks)
    assert native.commands() == []
    assert "EXIT2-MARK blocked" in native.seen()[-1]["tool_outputs"][0]


async def test_input_rewrite(tmp_path: Path, relay: Path | None) -> None:
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten > rewritten.txt; echo REWRITE-MARK"},
        }
    }
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(emit("rewrite", rewrite))]}]}
    native, _ = await both(tmp_path, relay, hooks)
    assert "rewritten.txt" in native.files and "tool_out.txt" not in native.files


async def test_added_context(tmp_path: Path, relay: Path | None) -> None:
    def context(event: str, text: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}

    hooks = {
        "UserPromptSubmit": [
            {"hooks": [hook(emit("prompt", context("UserPromptSubmit", "PROMPT-CTX-MARK")))]}
        ],
        "PostToolUse": [
            {
                "matcher": "Bash",
                "hooks": [hook(emit("post", context("PostToolUse", "POST-CTX-MARK")))],
            }
        ],
    }
    native, _ = await both(tmp_path, relay, hooks)
    developer = [m for seen in native.seen() for m in seen["developer"]]
    assert any("PROMPT-CTX-MARK" in m for m in developer)
    assert any("POST-CTX-MARK" in m for m in developer)


async def test_stop_continuation(tmp_path: Path, relay: Path | None) -> None:
    script = (
        'input=$(cat); case "$input" in *\'"stop_hook_active":true\'*) exit 0;; esac; '
        'echo stop >> "$HOOK_LOG"; '
        'printf \'%s\' \'{"decision":"block","reason":"KEEP-GOING-MARK"}\''
    )
    hooks = {"Stop": [{"hooks": [hook(script)]}]}
    native, _ = await both(
        tmp_path, relay, hooks, [Shell(COMMAND), Text("First."), Text("Second.")]
    )
    assert native.final_message() == "Second."
    assert any("KEEP-GOING-MARK" in m for m in native.seen()[-1]["user"])


async def test_user_prompt_block(tmp_path: Path, relay: Path | None) -> None:
    block = {"decision": "block", "reason": "NO-PROMPT-MARK"}
    hooks = {"UserPromptSubmit": [{"hooks": [hook(emit("block", block))]}]}
    native, _ = await both(tmp_path, relay, hooks)
    assert native.requests == [] and native.commands() == []


async def test_matcher_on_the_shell_tool(tmp_path: Path, relay: Path | None) -> None:
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [hook(record("bash-matched"))]},
            {"matcher": "apply_patch", "hooks": [hook(record("patch-matched"))]},
            {"matcher": "exec_command", "hooks": [hook(record("native-name-matched"))]},
        ]
    }
    native, _ = await both(tmp_path, relay, hooks)
    assert native.records == ["bash-matched"]


async def test_timeout_fails_open(tmp_path: Path, relay: Path | None) -> None:
    slow = hook(f'{record("slow")}; sleep 30; echo never >> "$HOOK_LOG"', timeout=2)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [slow]}]}
    native, _ = await both(tmp_path, relay, hooks)
    assert native.records == ["slow"] and "tool_out.txt" in native.files


async def test_a_patch_keeps_its_tool_name_and_a_matcher_on_it_denies(
    tmp_path: Path, relay: Path | None
) -> None:
    """Codex's freeform apply_patch reaches hooks as ``apply_patch`` (not mapped to Edit: a patch
    has no file_path); a matcher naming it denies the patch, the ``Bash`` matcher stays quiet."""
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "PATCH-MARK no patches",
        }
    }
    hooks = {
        "PreToolUse": [
            {"matcher": "apply_patch", "hooks": [hook(emit("patch", deny))]},
            {"matcher": "Bash", "hooks": [hook(record("bash"))]},
        ]
    }
    patch = "*** Begin Patch\n*** Add File: patched.txt\n+hello from apply_patch\n*** End Patch\n"
    turns: list[Turn] = [Patch(patch), Text("All done.")]
    native, _ = await both(tmp_path, relay, hooks, turns, model="gpt-5.5")
    assert native.records == ["patch"] and "patched.txt" not in native.files
    assert "PATCH-MARK no patches" in native.seen()[-1]["tool_outputs"][0]


async def test_a_claude_code_mcp_matcher_guards_codex_s_mcp_tool(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Codex names MCP server ``srv``'s tool ``echo`` as Claude Code does,
    ``mcp__srv__echo`` (inside its ``mcp__srv`` namespace to the model): the guard on
    ``mcp__srv__.*`` denies the call natively and through hookd alike — the MCP server
    never runs it (no ``echo`` line among the records)."""
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "MCP-DENY no echo",
        }
    }
    hooks = {"PreToolUse": [{"matcher": "mcp__srv__.*", "hooks": [hook(emit("guard", deny))]}]}
    turns: list[Turn] = [ToolCall("^echo$", {"text": "MCP-MARK"}), Text("All done.")]
    native, hookd = await together(
        partial(
            run_codex, tmp_path / "native", turns, hooks, "native", relay=compiled_relay, mcp=True
        ),
        partial(
            run_codex, tmp_path / "hookd", turns, hooks, "hookd", relay=compiled_relay, mcp=True
        ),
    )
    assert native.records == ["guard"], native.stderr[-2000:]
    assert hookd.comparable() == native.comparable(), hookd.daemon_log[-3000:]
    assert "MCP-DENY no echo" in native.seen()[-1]["tool_outputs"][0]


async def test_a_rewrite_without_a_decision_is_denied_where_codex_would_ignore_it(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Natively Codex ignores an ``updatedInput`` without ``permissionDecision`` and runs
    the command the model wrote — the sanitising hook silently does nothing.  hookd
    deliberately denies instead (an allow would also skip Codex's approval), saying why;
    docs/agents.md and the PreToolUse note (explain, doctor) say so."""
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"command": "echo rewritten > rewritten.txt"},
        }
    }
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(emit("rewrite", rewrite))]}]}
    native, hookd = await together(
        partial(run_codex, tmp_path / "native", TURNS, hooks, "native"),
        partial(run_codex, tmp_path / "hookd", TURNS, hooks, "hookd", relay=compiled_relay),
    )
    assert native.records == hookd.records == ["rewrite"], hookd.daemon_log[-3000:]
    assert "tool_out.txt" in native.files and "rewritten.txt" not in native.files
    assert "tool_out.txt" not in hookd.files and "rewritten.txt" not in hookd.files
    assert hookd.commands() == []
    assert "without a permission decision" in hookd.seen()[-1]["tool_outputs"][0]


async def test_continue_false_on_pre_tool_use_denies_where_codex_would_ignore_it(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """``continue: false`` on PreToolUse: Codex ignores it natively (the call runs); hookd
    deliberately denies the call (never run after a hook said stop) — documented."""
    stop = {"continue": False, "stopReason": "STOP-MARK halt"}
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook(emit("stop", stop))]}]}
    native, hookd = await together(
        partial(run_codex, tmp_path / "native", TURNS, hooks, "native"),
        partial(run_codex, tmp_path / "hookd", TURNS, hooks, "hookd", relay=compiled_relay),
    )
    assert native.records == hookd.records == ["stop"], hookd.daemon_log[-3000:]
    assert hookd.commands() == [] and "tool_out.txt" not in hookd.files
    assert "STOP-MARK halt" in hookd.seen()[-1]["tool_outputs"][0]
    assert native.commands(), "Codex ran the call natively (it ignores continue: false)"


async def test_an_interrupt_runs_codex_s_own_interrupt_hooks_and_session_end_through_hookd(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Ctrl-C (SIGINT to ``codex exec``) mid-command fires Codex's Interrupt, then SessionEnd.
    Interrupt has no Claude Code event: its hooks stay in Codex's file after install and
    Codex keeps running them (before, install moved them where nothing runs them);
    SessionEnd's go through hookd."""
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [hook(record("pre"))]}],
        "Interrupt": [{"hooks": [hook(record("interrupt"))]}],
        "SessionEnd": [{"hooks": [hook(record("session-end"))]}],
    }
    turns: list[Turn] = [Shell("sleep 60; echo late > late.txt"), Text("All done.")]
    native, hookd = await together(
        partial(run_codex, tmp_path / "native", turns, hooks, "native", interrupt=True),
        partial(
            run_codex,
            tmp_path / "hookd",
            turns,
            hooks,
            "hookd",
            relay=compiled_relay,
            interrupt=True,
        ),
    )
    assert native.records == ["pre", "interrupt", "session-end"]
    assert hookd.records == native.records, hookd.daemon_log[-3000:]
    assert "late.txt" not in hookd.files
    assert "stay in Codex's file" in hookd.install_output

"""The same hooks, native in Factory Droid 0.225.2 and through hookd, give the same run.

Each scenario runs the real ``droid`` twice against the scripted fake Messages
API (:mod:`agents.factory_harness`, a BYOK custom model: no Factory account):
once with the hooks in ``~/.factory/hooks.json``, once after ``hookctl agents
install factory`` moved them into hookd's config and wired ``hookd-relay --agent
factory`` in their place.  The runs must agree on what the model received, the
files the commands wrote, the final text and exit code — and on the hooks' own
marker lines, so a scenario whose hooks ran in neither mode still fails.  Each
scenario also asserts its point directly.

One relay (the compiled one) per scenario: Droid's startup is slow (~8 s), and
the relays' equivalence is proved by the Codex, Gemini and Copilot modules.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agents.factory_harness import DroidRun, droid_available, run_droid
from e2e.fake_api import Turn
from support.clis import require_cli
from support.together import together

pytestmark = [pytest.mark.slow, pytest.mark.factory]

COMMAND = "echo hello-from-tool > tool_out.txt; echo ran"


def shell(command: str = COMMAND) -> Turn:
    args = {"command": command, "riskLevelReason": "harmless", "riskLevel": "low"}
    return Turn([{"type": "tool_use", "name": "Execute", "input": args}])


def text(words: str) -> Turn:
    return Turn([{"type": "text", "text": words}])


TURNS: list[Turn] = [shell(), text("All done.")]


@pytest.fixture(autouse=True)
def _require_droid() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(droid_available(), "the Factory Droid CLI or node")


def hook(script: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": script, **extra}


def record(mark: str) -> str:
    """Shell that reads the input and appends ``mark`` to the hooks' log."""
    return f'cat > /dev/null; echo {mark} >> "$HOOK_LOG"'


def emit(mark: str, output: dict[str, Any]) -> str:
    return f"{record(mark)}; printf '%s' '{json.dumps(output)}'"


async def both(
    tmp_path: Path,
    relay: Path,
    hooks: dict[str, Any],
    turns: list[Turn] | None = None,
    *,
    mcp: bool = False,
) -> tuple[DroidRun, DroidRun]:
    native, hookd = await together(
        partial(run_droid, tmp_path / "native", turns or TURNS, hooks, "native", mcp=mcp),
        partial(
            run_droid, tmp_path / "hookd", turns or TURNS, hooks, "hookd", relay=relay, mcp=mcp
        ),
    )
    want, got = native.comparable(), hookd.comparable()
    assert got == want, (
        f"native:\n{json.dumps(want, indent=1)}\nhookd:\n{json.dumps(got, indent=1)}\n"
        f"daemon log:\n{hookd.daemon_log[-3000:]}\ndroid stderr:\n{hookd.stderr[-2000:]}"
    )
    return native, hookd


def tool_results(run: DroidRun) -> list[str]:
    return [r for seen in run.seen() for r in seen["tool_results"]]


async def test_shell_command_deny(tmp_path: Path, compiled_relay: Path) -> None:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "DENY-MARK no shell here",
        }
    }
    hooks = {"PreToolUse": [{"matcher": "Execute", "hooks": [hook(emit("deny", deny))]}]}
    native, _ = await both(tmp_path, compiled_relay, hooks)
    assert native.records == ["deny"] and "tool_out.txt" not in native.files
    assert tool_results(native) == ["Error: DENY-MARK no shell here"]


async def test_shell_command_deny_by_exit_two(tmp_path: Path, compiled_relay: Path) -> None:
    script = f"{record('exit2')}; echo 'EXIT2-MARK blocked' >&2; exit 2"
    hooks = {"PreToolUse": [{"matcher": "Execute", "hooks": [hook(script)]}]}
    native, _ = await both(tmp_path, compiled_relay, hooks)
    assert "tool_out.txt" not in native.files
    assert tool_results(native) == ["Error: EXIT2-MARK blocked\n"]


async def test_allowed_call_and_added_context(tmp_path: Path, compiled_relay: Path) -> None:
    """An allowed call runs; SessionStart, UserPromptSubmit and PostToolUse context each
    reach the model as a user message of its own."""

    def context(event: str, words: str) -> dict[str, Any]:
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": words}}

    hooks = {
        "SessionStart": [{"hooks": [hook(emit("start", context("SessionStart", "START-MARK")))]}],
        "UserPromptSubmit": [
            {"hooks": [hook(emit("prompt", context("UserPromptSubmit", "PROMPT-MARK")))]}
        ],
        "PreToolUse": [{"matcher": "Execute", "hooks": [hook(record("pre"))]}],
        "PostToolUse": [
            {
                "matcher": "Execute",
                "hooks": [hook(emit("post", context("PostToolUse", "POST-MARK")))],
            }
        ],
    }
    native, _ = await both(tmp_path, compiled_relay, hooks)
    assert native.files == {"tool_out.txt": "hello-from-tool\n"}
    assert sorted(native.records) == ["post", "pre", "prompt", "start"]
    texts = native.seen()[-1]["texts"]
    assert "user: START-MARK" in texts and "user: PROMPT-MARK" in texts
    assert "user: POST-MARK" in texts


async def test_input_rewrite(tmp_path: Path, compiled_relay: Path) -> None:
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten > rewritten.txt; echo REWRITE-MARK"},
        }
    }
    hooks = {"PreToolUse": [{"matcher": "Execute", "hooks": [hook(emit("rewrite", rewrite))]}]}
    native, _ = await both(tmp_path, compiled_relay, hooks)
    assert "rewritten.txt" in native.files and "tool_out.txt" not in native.files


async def test_user_prompt_block_by_exit_two(tmp_path: Path, compiled_relay: Path) -> None:
    script = f"{record('block')}; echo 'NO-PROMPT-MARK' >&2; exit 2"
    hooks = {"UserPromptSubmit": [{"hooks": [hook(script)]}]}
    native, _ = await both(tmp_path, compiled_relay, hooks)
    assert native.api.requests == [] and native.files == {}


async def test_stop_continuation(tmp_path: Path, compiled_relay: Path) -> None:
    script = (
        'input=$(cat); case "$input" in *\'"stop_hook_active":true\'*) exit 0;; esac; '
        'echo stop >> "$HOOK_LOG"; '
        'printf \'%s\' \'{"decision":"block","reason":"KEEP-GOING-MARK"}\''
    )
    hooks = {"Stop": [{"hooks": [hook(script)]}]}
    turns = [shell(), text("First."), text("Second.")]
    native, _ = await both(tmp_path, compiled_relay, hooks, turns)
    assert native.final_text() == "Second." and native.records == ["stop"]
    assert any("KEEP-GOING-MARK" in t for t in native.seen()[-1]["texts"])


async def test_a_guard_on_an_mcp_tool_fires_for_droid_s_name(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Droid names the fake server's tool ``srv___echo``: natively a matcher must say so;
    through hookd the same guard is written once, as Claude Code's ``mcp__srv__echo``."""
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "MCP-MARK not this tool",
        }
    }
    call = Turn([{"type": "tool_use", "name": "srv___echo", "input": {"text": "hi"}}])
    turns = [call, text("All done.")]
    native, hookd = await together(
        partial(
            run_droid,
            tmp_path / "native",
            turns,
            {"PreToolUse": [{"matcher": "srv___echo", "hooks": [hook(emit("mcp", deny))]}]},
            "native",
            mcp=True,
        ),
        partial(
            run_droid,
            tmp_path / "hookd",
            turns,
            {"PreToolUse": [{"matcher": "mcp__srv__echo", "hooks": [hook(emit("mcp", deny))]}]},
            "hookd",
            relay=compiled_relay,
            mcp=True,
        ),
    )
    assert hookd.comparable() == native.comparable(), hookd.daemon_log[-3000:]
    assert native.records == ["mcp"]  # the tool never ran: no "echo hi" line
    assert tool_results(native) == ["Error: MCP-MARK not this tool"]

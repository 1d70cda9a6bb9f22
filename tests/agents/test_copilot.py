"""The same hooks, native in Copilot CLI 1.0.102 and through hookd, give the same run.

Each scenario runs the real ``copilot -p`` twice against the scripted fake
Responses API (:mod:`agents.copilot_harness`): once with the hooks in
``$COPILOT_HOME/hooks/hooks.json``, once after ``hookctl agents install copilot``
moved them into hookd's config and wired ``hookd-relay --agent copilot <event>``
(Copilot's native door) in their place.  The runs must agree on what the model
received, which tool calls ran with which arguments, the transcript Copilot
printed, its exit code, the files the commands wrote — and the hooks' own marker
lines, so a scenario whose hooks ran in neither mode still fails.  Each scenario
also asserts its point directly.

The hooks are written in Copilot's Claude-shaped format (the format hookd's
config has): what they print is what both Copilot and Claude Code read the
same way.  Where they do not — Copilot drops a Claude-shaped SessionStart's
context, ignores ``hookSpecificOutput.additionalContext`` outside PreToolUse
and tells the model only "hook exited with code 2" — a scenario pins the
documented difference instead (docs/agents.md).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11
import pytest
import trio

from agents.copilot_harness import (
    COPILOT_BIN,
    CopilotRun,
    Mode,
    copilot_available,
    run_copilot,
)
from agents.fake_responses import Shell, Text, ToolCall, Turn
from support.clis import require_cli
from support.fake_http import send_json, serve_loopback

pytestmark = [pytest.mark.slow, pytest.mark.copilot]

COMMAND = "echo hello-from-tool > tool_out.txt; echo ran"
TURNS: list[Turn] = [Shell(COMMAND), Text("All done.")]


@pytest.fixture(autouse=True)
def _require_copilot() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(copilot_available(), "the Copilot CLI or node")


@pytest.fixture(scope="session")
def copilot_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``XDG_CACHE_HOME`` for every run: Copilot unpacks its 190 MB package there once,
    here (``--version``), before two runs at once could both start unpacking it."""
    cache = tmp_path_factory.mktemp("copilot-cache")
    if copilot_available():
        home = tmp_path_factory.mktemp("copilot-unpack-home")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
        env |= {"XDG_CACHE_HOME": str(cache), "COPILOT_AUTO_UPDATE": "false"}
        subprocess.run(
            [str(COPILOT_BIN), "--version"], env=env, check=True, capture_output=True, timeout=120
        )
    return cache


@pytest.fixture
def compiled(request: pytest.FixtureRequest) -> Path:
    path: Path = request.getfixturevalue("compiled_relay")
    return path


@pytest.fixture(params=["compiled", "python"])
def relay(request: pytest.FixtureRequest) -> Path | None:
    """The scenarios that take it run through both relays: the compiled one (installed by
    default) and the Python one (where no C compiler was there to build it)."""
    if request.param == "python":
        return None
    path: Path = request.getfixturevalue("compiled_relay")
    return path


def hook(script: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": script, **extra}


def group(script: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"hooks": [hook(script, **extra)]}
    if matcher is not None:
        found["matcher"] = matcher
    return found


def record(mark: str) -> str:
    """Shell that reads the input and appends ``mark`` to the hooks' log."""
    return f'cat > /dev/null; echo {mark} >> "$HOOK_LOG"'


def emit(mark: str, output: dict[str, Any]) -> str:
    return f"{record(mark)}; printf '%s' '{json.dumps(output)}'"


async def run_both(
    tmp_path: Path,
    cache: Path,
    relay: Path | None,
    hook_file: dict[str, Any],
    turns: list[Turn] | None = None,
    *,
    mcp: bool = False,
    subdir: str = "",
) -> tuple[CopilotRun, CopilotRun]:
    """The native and the hookd run of one scenario, at once (each in its own HOME, with
    its own fake model server; ``mcp``: with the fake MCP server ``srv``; ``subdir``:
    Copilot started in that subdirectory of the project)."""
    runs: dict[str, CopilotRun] = {}

    async def one(mode: Mode) -> None:
        runs[mode] = await run_copilot(
            tmp_path / mode,
            turns or TURNS,
            hook_file,
            mode,
            cache=cache,
            relay=relay,
            mcp=mcp,
            subdir=subdir,
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "native")
        nursery.start_soon(one, "hookd")
    return runs["native"], runs["hookd"]


def explain(native: CopilotRun, hookd: CopilotRun) -> str:
    return (
        f"native:\n{json.dumps(native.comparable(), indent=1)}\n"
        f"hookd:\n{json.dumps(hookd.comparable(), indent=1)}\n"
        f"install:\n{hookd.install_output}\nwired:\n{hookd.wired}\n"
        f"daemon log:\n{hookd.daemon_log[-3000:]}\ncopilot stderr:\n{hookd.stderr[-2000:]}"
    )


async def both(
    tmp_path: Path,
    cache: Path,
    relay: Path | None,
    hooks: dict[str, Any],
    turns: list[Turn] | None = None,
) -> tuple[CopilotRun, CopilotRun]:
    native, hookd = await run_both(tmp_path, cache, relay, {"hooks": hooks}, turns)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert "--agent copilot preToolUse" in hookd.wired, hookd.wired
    return native, hookd


def deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


async def test_shell_command_deny(tmp_path: Path, copilot_cache: Path, relay: Path | None) -> None:
    hooks = {"PreToolUse": [group(emit("deny", deny("DENY-MARK no shell here")), "Bash")]}
    native, _ = await both(tmp_path, copilot_cache, relay, hooks)
    assert native.records == ["deny"] and "tool_out.txt" not in native.files
    assert native.seen()[-1]["tool_outputs"] == [
        "Denied by preToolUse hook: DENY-MARK no shell here"
    ]


async def test_shell_command_deny_by_exit_two(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Both deny the call; natively the model reads only "hook exited with code 2",
    through hookd the hook's stderr (Claude Code's semantics; a documented difference)."""
    script = f"{record('exit2')}; echo 'EXIT2-MARK blocked' >&2; exit 2"
    hooks = {"PreToolUse": [group(script, "Bash")]}
    native, hookd = await run_both(tmp_path, copilot_cache, compiled, {"hooks": hooks})
    for run in (native, hookd):
        assert run.records == ["exit2"] and "tool_out.txt" not in run.files, explain(native, hookd)
        assert run.exit_code == 0
    assert native.seen()[-1]["tool_outputs"] == [
        "Denied by preToolUse hook: hook exited with code 2"
    ]
    assert hookd.seen()[-1]["tool_outputs"] == ["Denied by preToolUse hook: EXIT2-MARK blocked"]


async def test_input_rewrite(tmp_path: Path, copilot_cache: Path, compiled: Path) -> None:
    new = {"command": "echo rewritten > rewritten.txt; echo REWRITE-MARK", "description": "rw"}
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": new,
        }
    }
    hooks = {"PreToolUse": [group(emit("rewrite", rewrite), "Bash")]}
    native, _ = await both(tmp_path, copilot_cache, compiled, hooks)
    assert "rewritten.txt" in native.files and "tool_out.txt" not in native.files
    assert native.calls() == [("bash", json.dumps(new, separators=(",", ":")))]


async def test_added_context(tmp_path: Path, copilot_cache: Path, relay: Path | None) -> None:
    """Context on the prompt, before and after the shell call.  Copilot reads a
    Claude-shaped hook's context from the top-level field (its own) except on
    PreToolUse, hookd from ``hookSpecificOutput`` (Claude Code's): these hooks say
    it both ways, as a hook written for both does."""

    def context(event: str, text: str) -> dict[str, Any]:
        return {
            "additionalContext": text,
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text},
        }

    pre = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "PRE-MARK"}}
    hooks = {
        "UserPromptSubmit": [group(emit("prompt", context("UserPromptSubmit", "PROMPT-MARK")))],
        "PreToolUse": [group(emit("pre", pre), "Bash")],
        "PostToolUse": [group(emit("post", context("PostToolUse", "POST-MARK")), "Bash")],
    }
    native, _ = await both(tmp_path, copilot_cache, relay, hooks)
    last = native.seen()[-1]
    assert "PROMPT-MARK" in last["user"][0]
    assert "POST-MARK" in last["tool_outputs"][0]
    assert any("PRE-MARK" in m for m in last["user"][1:])


async def test_stop_continuation(tmp_path: Path, copilot_cache: Path, compiled: Path) -> None:
    script = (
        'input=$(cat); case "$input" in *\'"stop_hook_active":true\'*) exit 0;; esac; '
        'echo stop >> "$HOOK_LOG"; '
        'printf \'%s\' \'{"decision":"block","reason":"KEEP-GOING-MARK"}\''
    )
    hooks = {"Stop": [group(script)]}
    turns: list[Turn] = [Shell(COMMAND), Text("First."), Text("Second.")]
    native, _ = await both(tmp_path, copilot_cache, compiled, hooks, turns)
    assert native.records == ["stop"]
    assert any("KEEP-GOING-MARK" in m for m in native.seen()[-1]["user"])
    assert "Second." in native.stdout


async def test_user_prompt_block(tmp_path: Path, copilot_cache: Path, compiled: Path) -> None:
    block = {"decision": "block", "reason": "NO-PROMPT-MARK"}
    hooks = {"UserPromptSubmit": [group(emit("block", block))]}
    native, _ = await both(tmp_path, copilot_cache, compiled, hooks)
    assert native.api.requests == [] and native.exit_code == 1
    assert "NO-PROMPT-MARK" in native.stderr


async def test_permission_request_deny(tmp_path: Path, copilot_cache: Path, compiled: Path) -> None:
    """Copilot reads a PermissionRequest answer from its top-level ``behavior`` (its own
    words), hookd from ``hookSpecificOutput.decision`` (Claude Code's): the hook says both."""
    answer = {
        "behavior": "deny",
        "message": "PERM-MARK",
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "PERM-MARK"},
        },
    }
    hooks = {"PermissionRequest": [group(emit("perm", answer))]}
    native, _ = await both(tmp_path, copilot_cache, compiled, hooks)
    assert native.records == ["perm"] and "tool_out.txt" not in native.files
    assert native.seen()[-1]["tool_outputs"] == [
        "Permission denied by a PermissionRequest hook: PERM-MARK"
    ]


async def test_matcher_on_the_shell_tool(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """``Bash`` and Copilot's own ``bash`` match the shell (install maps the latter),
    ``Edit`` does not."""
    hooks = {
        "PreToolUse": [
            group(record("Bash-matched"), "Bash"),
            group(record("bash-matched"), "bash"),
            group(record("edit-matched"), "Edit"),
        ]
    }
    native, hookd = await both(tmp_path, copilot_cache, compiled, hooks)
    assert sorted(native.records) == ["Bash-matched", "bash-matched"]
    assert '"matcher": "Bash"' in hookd.install_output or "moved" in hookd.install_output


async def test_timeout_fails_open(tmp_path: Path, copilot_cache: Path, compiled: Path) -> None:
    slow = f'{record("slow")}; sleep 8; echo never >> "$HOOK_LOG"'
    hooks = {"PreToolUse": [group(slow, "Bash", timeout=2)]}
    native, _ = await both(tmp_path, copilot_cache, compiled, hooks)
    assert native.records == ["slow"] and "tool_out.txt" in native.files


async def test_native_format_hooks_stay_in_copilot_s_file(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Hooks in Copilot's camelCase format answer in Copilot's dialect, so install leaves
    them where they are, after hookd's entry: the run is the native one."""
    hook_file = {
        "version": 1,
        "hooks": {
            "sessionStart": [
                {"type": "command", "bash": emit("start", {"additionalContext": "START-MARK"})}
            ],
            "preToolUse": [
                {
                    "type": "command",
                    "bash": emit(
                        "deny",
                        {"permissionDecision": "deny", "permissionDecisionReason": "NATIVE-MARK"},
                    ),
                }
            ],
        },
    }
    native, hookd = await run_both(tmp_path, copilot_cache, compiled, hook_file)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert sorted(native.records) == ["deny", "start"]
    assert native.seen()[0]["user"][0] == "START-MARK"
    assert "stay in this file" in hookd.install_output
    wired = json.loads(hookd.wired)["hooks"]["preToolUse"]
    assert "--agent copilot preToolUse" in wired[0]["bash"] and "NATIVE-MARK" in wired[1]["bash"]


async def test_session_start_context_reaches_the_model_only_through_hookd(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Copilot drops a Claude-shaped SessionStart hook's context; hookd's native door
    delivers it (a documented difference, in hookd's favour)."""
    start = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "S-MARK"}}
    hooks = {"SessionStart": [group(emit("start", start))]}
    native, hookd = await run_both(tmp_path, copilot_cache, compiled, {"hooks": hooks})
    assert native.records == hookd.records == ["start"], explain(native, hookd)
    assert not any("S-MARK" in m for m in native.seen()[0]["user"])
    assert hookd.seen()[0]["user"][0] == "S-MARK"


async def test_daemon_down_fails_open_visibly_and_closed_where_a_hook_says_so(
    tmp_path: Path, copilot_cache: Path, relay: Path | None
) -> None:
    """Wired, with no daemon: the prompt goes ahead with Copilot's warning on screen and the
    model told the call went unchecked; a PreToolUse hook marked ``onFailure: "block"``
    makes the relay deny the call instead, with the reason."""
    guard = {"PreToolUse": [group(record("never"), "Bash", onFailure="block")]}
    open_run, closed_run = await _down(tmp_path, copilot_cache, relay, {}, guard)
    assert open_run.exit_code == 0 and "tool_out.txt" in open_run.files
    assert "! hookd is not running" in open_run.stderr
    assert any("hookd is not running" in m for m in open_run.seen()[-1]["user"])
    assert "--fail-closed" in json.loads(closed_run.wired)["hooks"]["preToolUse"][0]["bash"]
    assert "tool_out.txt" not in closed_run.files and closed_run.records == []
    (output,) = closed_run.seen()[-1]["tool_outputs"]
    assert output.startswith("Denied by preToolUse hook: hookd is not running")


async def _down(
    tmp_path: Path, cache: Path, relay: Path | None, *hooks: dict[str, Any]
) -> list[CopilotRun]:
    runs: dict[int, CopilotRun] = {}

    async def one(index: int) -> None:
        runs[index] = await run_copilot(
            tmp_path / str(index),
            TURNS,
            {"hooks": hooks[index]},
            "hookd",
            cache=cache,
            relay=relay,
            daemon_up=False,
        )

    async with trio.open_nursery() as nursery:
        for index in range(len(hooks)):
            nursery.start_soon(one, index)
    return [runs[i] for i in range(len(hooks))]


async def test_the_claude_shaped_door_wired_by_hand(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """``hookd-relay --agent copilot PreToolUse`` (PascalCase) in a Claude-shaped file, as a
    user may wire it: Copilot sends that door its snake_case stdin, and hookd's answer
    (Copilot's native fields) is obeyed there too — the same run as the hooks native."""

    def context(event: str, text: str) -> dict[str, Any]:
        return {
            "additionalContext": text,
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text},
        }

    hooks = {
        "UserPromptSubmit": [group(emit("prompt", context("UserPromptSubmit", "PROMPT-MARK")))],
        "PreToolUse": [group(emit("deny", deny("DENY-MARK by hand")), "Bash")],
    }
    turns: list[Turn] = [Shell(COMMAND), Text("All done.")]
    runs: dict[str, CopilotRun] = {}

    async def one(mode: Mode) -> None:
        runs[mode] = await run_copilot(
            tmp_path / mode,
            turns,
            {"hooks": hooks},
            mode,
            cache=copilot_cache,
            relay=compiled,
            by_hand=True,
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "native")
        nursery.start_soon(one, "hookd")
    native, hookd = runs["native"], runs["hookd"]
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert '"PreToolUse"' in hookd.wired and "--agent copilot PreToolUse" in hookd.wired
    assert native.seen()[-1]["tool_outputs"] == ["Denied by preToolUse hook: DENY-MARK by hand"]
    assert "PROMPT-MARK" in native.seen()[0]["user"][0]


# --- one guard for MCP tools (issue 30) ------------------------------------------------------

MCP_TURNS: list[Turn] = [ToolCall("^srv-echo$", {"text": "MCP-MARK"}), Text("All done.")]


async def test_a_claude_code_mcp_matcher_guards_copilot_s_mcp_tool(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Copilot names MCP server ``srv``'s tool ``echo`` ``srv-echo`` (both formats); a
    native Claude-shaped hook must say ``srv-echo``, while hookd's config says it as Claude
    Code's docs do, ``mcp__srv__echo`` — and the same guard denies the same call: the MCP
    server never runs it (no ``echo`` line), the model reads the same denial."""
    native_hooks = {"PreToolUse": [group(emit("guard", deny("MCP-DENY no echo")), "srv-echo")]}
    hookd_hooks = {"PreToolUse": [group(emit("guard", deny("MCP-DENY no echo")), "mcp__srv__echo")]}
    runs: dict[str, CopilotRun] = {}

    async def one(mode: Mode, hooks: dict[str, Any]) -> None:
        runs[mode] = await run_copilot(
            tmp_path / mode,
            MCP_TURNS,
            {"hooks": hooks},
            mode,
            cache=copilot_cache,
            relay=compiled,
            mcp=True,
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "native", native_hooks)
        nursery.start_soon(one, "hookd", hookd_hooks)
    native, hookd = runs["native"], runs["hookd"]
    assert native.records == ["guard"], explain(native, hookd)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert native.seen()[-1]["tool_outputs"] == ["Denied by preToolUse hook: MCP-DENY no echo"]


async def test_copilot_s_own_mcp_matcher_moved_by_install_keeps_guarding(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """A Claude-shaped hook on Copilot's ``srv-echo``: ``install`` moves it into hookd's
    config as ``mcp__srv__echo`` (Claude Code's name, so it guards every agent), and it
    still fires for Copilot's call."""
    hooks = {"PreToolUse": [group(emit("guard", deny("MCP-DENY no echo")), "srv-echo")]}
    native, hookd = await run_both(
        tmp_path, copilot_cache, compiled, {"hooks": hooks}, MCP_TURNS, mcp=True
    )
    assert hookd.records == ["guard"], explain(native, hookd)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert "'mcp__srv__echo' in Claude Code's words" in hookd.install_output


async def test_hooks_run_in_the_project_root_when_copilot_starts_in_a_subdirectory(
    tmp_path: Path, copilot_cache: Path, relay: Path | None
) -> None:
    """Started in ``proj/sub``, Copilot names ``proj/sub`` as the input's ``cwd`` but runs
    its hooks in the project's root: a hook's relative paths resolve there, through hookd
    too (the hook still reads ``cwd`` = ``proj/sub``)."""
    script = (
        "cwd=$(python3 -c \"import json,sys; print(json.load(sys.stdin)['cwd'])\"); "
        'echo "pwd=$(basename "$(pwd)") cwd=$(basename "$cwd")" >> "$HOOK_LOG"'
    )
    hooks = {"PreToolUse": [group(script, "Bash")]}
    native, hookd = await run_both(tmp_path, copilot_cache, relay, {"hooks": hooks}, subdir="sub")
    assert native.records == ["pwd=proj cwd=sub"], explain(native, hookd)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)


async def test_two_hooks_contexts_are_joined_as_copilot_joins_them(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Two hooks each adding context on the prompt, before and after the call: the model
    reads them joined exactly as Copilot joins its own hooks' contexts."""

    def context(event: str, text: str) -> dict[str, Any]:
        return {
            "additionalContext": text,
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text},
        }

    hooks = {
        "UserPromptSubmit": [
            group(emit("prompt1", context("UserPromptSubmit", "PROMPT-ONE"))),
            group(emit("prompt2", context("UserPromptSubmit", "PROMPT-TWO"))),
        ],
        "PreToolUse": [
            group(emit("pre1", context("PreToolUse", "PRE-ONE")), "Bash"),
            group(emit("pre2", context("PreToolUse", "PRE-TWO")), "Bash"),
        ],
        "PostToolUse": [
            group(emit("post1", context("PostToolUse", "POST-ONE")), "Bash"),
            group(emit("post2", context("PostToolUse", "POST-TWO")), "Bash"),
        ],
    }
    native, hookd = await run_both(tmp_path, copilot_cache, compiled, {"hooks": hooks})
    assert sorted(native.records) == sorted(hookd.records), explain(native, hookd)
    mine, theirs = native.seen()[-1], hookd.seen()[-1]
    assert mine["tool_outputs"] == theirs["tool_outputs"], explain(native, hookd)
    assert mine["user"][1:] == theirs["user"][1:], explain(native, hookd)
    assert "POST-ONE\n\nPOST-TWO" in mine["tool_outputs"][0]
    assert any("PRE-ONE\n\nPRE-TWO" in m for m in mine["user"][1:])
    # The deliberate difference: Copilot keeps only the last prompt hook's context.
    assert "PROMPT-ONE" not in mine["user"][0] and "PROMPT-TWO" in mine["user"][0]
    assert "PROMPT-ONE\n\nPROMPT-TWO" in theirs["user"][0]


# --- Copilot runs Claude Code's hook files too (issue 30) ------------------------------------


async def test_with_claude_code_s_wiring_too_each_hook_runs_once_in_copilot_s_words(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Copilot reads the project's ``.claude/settings.json`` itself: after ``hookctl claude
    install --project`` *and* ``hookctl agents install copilot``, each event reaches hookd
    through both wirings (Copilot's http hooks run with ``COPILOT_HOOK_ALLOW_LOCALHOST=1``).
    The user's hooks must still run once per event, answered in Copilot's words — the same
    run as with the hooks native in Copilot's own file."""
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "ONCE-DENY",
        }
    }
    hooks = {
        "hooks": {
            "UserPromptSubmit": [group(record("prompt"))],
            "PreToolUse": [group(emit("pre", deny), "Bash")],
            "PostToolUse": [group(record("post"))],
            "Stop": [group(record("stop"))],
        }
    }
    allow_localhost = {"COPILOT_HOOK_ALLOW_LOCALHOST": "1"}
    runs: dict[str, CopilotRun] = {}

    async def one(mode: Mode) -> None:
        runs[mode] = await run_copilot(
            tmp_path / mode,
            TURNS,
            hooks,
            mode,
            cache=copilot_cache,
            relay=compiled,
            claude_wired="project" if mode == "hookd" else "",
            extra_env=allow_localhost,
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "native")
        nursery.start_soon(one, "hookd")
    native, hookd = runs["native"], runs["hookd"]
    assert sorted(native.records) == ["pre", "prompt", "stop"], explain(native, hookd)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert native.seen()[-1]["tool_outputs"] == ["Denied by preToolUse hook: ONCE-DENY"]
    assert "claude" in hookd.install_output and "through Claude Code" in hookd.daemon_log


async def test_through_claude_code_s_wiring_alone_copilot_gets_copilot_s_answers(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Only ``hookctl claude install --project``: Copilot's events reach hookd through the
    project's http hooks alone, with Copilot's payload.  They run as Copilot's and are
    answered in Copilot's words — context on the prompt and after the tool (which Copilot
    reads only from its own top-level field there) reaches the model as natively."""

    def context(event: str, text: str) -> dict[str, Any]:
        return {
            "additionalContext": text,
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text},
        }

    hooks = {
        "hooks": {
            "UserPromptSubmit": [group(emit("prompt", context("UserPromptSubmit", "HTTP-PROMPT")))],
            "PostToolUse": [group(emit("post", context("PostToolUse", "HTTP-POST")), "Bash")],
        }
    }
    runs: dict[str, CopilotRun] = {}

    async def one(mode: Mode) -> None:
        runs[mode] = await run_copilot(
            tmp_path / mode,
            TURNS,
            hooks,
            mode,
            cache=copilot_cache,
            relay=compiled,
            claude_wired="project" if mode == "hookd" else "",
            copilot_wired=False,
            extra_env={"COPILOT_HOOK_ALLOW_LOCALHOST": "1"},
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, "native")
        nursery.start_soon(one, "hookd")
    native, hookd = runs["native"], runs["hookd"]
    assert sorted(native.records) == ["post", "prompt"], explain(native, hookd)
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    last = native.seen()[-1]
    assert "HTTP-PROMPT" in last["user"][0] and "HTTP-POST" in last["tool_outputs"][0]


@dataclass
class HookServer:
    """A hook's http endpoint on loopback: records each input, answers with ``answer``."""

    answer: dict[str, Any]
    inputs: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0


async def _hook_answer(
    server: HookServer,
    stream: trio.SocketStream,
    conn: h11.Connection,
    request: h11.Request,
    body: bytes,
) -> None:
    del request
    server.inputs.append(json.loads(body))
    await send_json(stream, conn, 200, server.answer)


async def test_a_claude_shaped_http_hook_moves_into_hookd_and_denies_alike(
    tmp_path: Path, copilot_cache: Path, compiled: Path
) -> None:
    """Copilot's ``http`` hook (its input POSTed, the answer in the body; loopback allowed by
    ``COPILOT_HOOK_ALLOW_LOCALHOST=1``) in Claude Code's shape: install moves it into hookd's
    config as Claude Code's http hook, and the deny it answers reaches the model alike."""
    server = HookServer(deny("HTTP-MARK no shell"))
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_loopback, server, _hook_answer)
        url = f"http://127.0.0.1:{server.port}/hook"
        hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}]}
        runs = {
            mode: await run_copilot(
                tmp_path / mode,
                TURNS,
                {"hooks": hooks},
                mode,
                cache=copilot_cache,
                relay=compiled,
                extra_env={"COPILOT_HOOK_ALLOW_LOCALHOST": "1"},
            )
            for mode in ("native", "hookd")
        }
        nursery.cancel_scope.cancel()
    native, hookd = runs["native"], runs["hookd"]
    assert hookd.comparable() == native.comparable(), explain(native, hookd)
    assert "tool_out.txt" not in native.files and len(server.inputs) == 2
    assert "HTTP-MARK no shell" in native.seen()[-1]["tool_outputs"][0]
    assert [i.get("tool_name") for i in server.inputs] == ["Bash", "Bash"]

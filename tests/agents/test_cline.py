"""The same hooks, native in Cline CLI 3.0.65 and through hookd, give the same run.

Each scenario runs the real ``cline --json PROMPT`` twice against the scripted fake
Messages API (:mod:`agents.cline_harness`): once with a hook file of Cline's own in
``~/Documents/Cline/Hooks/`` answering in Cline's words (``{"cancel": true}``,
``contextModification``, ``overrideInput``), once with the same intent in Claude Code's
words in hookd's config, Cline wired by ``hookctl agents install cline``.  The runs must
agree on what the model received, how the run ended, the exit code, the files the
commands wrote and the hooks' own marker lines; each scenario also asserts its point.

What Cline does natively (seen here, pinned by these scenarios): a PreToolUse cancel
ends the whole task before the tool runs; context reaches the model as a
``<hook_context source=… tool_name=… tool_call_id=…>`` text beside the tool's result;
``overrideInput`` replaces the tool's input; the task events are fire-and-forget; a
hook's exit code means nothing.  Where hookd's answer differs by design — an exit-2
hook blocks through hookd (Claude Code's rule), natively Cline ignores exit codes — a
scenario pins the documented difference (docs/agents.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from agents.cline_harness import ClineRun, cline_available, run_cline
from e2e.fake_api import Turn
from support.clis import require_cli

pytestmark = [pytest.mark.slow, pytest.mark.cline]

COMMAND = "echo hello-from-tool > tool_out.txt; echo ran"


def shell(command: str) -> Turn:
    return Turn(
        [
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "name": "run_commands", "input": {"commands": [command]}},
        ]
    )


def done() -> Turn:
    return Turn([{"type": "text", "text": "All done."}])


TURNS = [shell(COMMAND), done()]
MCP_TURNS = [
    Turn(
        [
            {"type": "text", "text": "Echoing."},
            {"type": "tool_use", "name": "srv__echo", "input": {"text": "hi-mcp"}},
        ]
    ),
    done(),
]


@pytest.fixture(autouse=True)
def _require_cline() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(cline_available(), "the Cline CLI or node")


def record(mark: str) -> str:
    """Shell that reads the input and appends ``mark`` to the hooks' log."""
    return f'cat > /dev/null; echo {mark} >> "$HOOK_LOG"'


def emit(mark: str, output: dict[str, Any]) -> str:
    return f"{record(mark)}; printf '%s' '{json.dumps(output)}'"


def group(script: str, matcher: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"hooks": [{"type": "command", "command": script}]}
    if matcher is not None:
        found["matcher"] = matcher
    return found


def pre_tool(**output: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **output}}


async def run_both(
    tmp_path: Path,
    relay: Path,
    native: dict[str, str],
    claude: dict[str, Any],
    turns: list[Turn] | None = None,
    **options: Any,
) -> tuple[ClineRun, ClineRun]:
    """The native and the hookd run of one scenario, at once (each in its own HOME, with
    its own fake model server)."""
    runs: dict[str, ClineRun] = {}

    async def native_run() -> None:
        runs["native"] = await run_cline(
            tmp_path / "native", turns or TURNS, "native", native=native, relay=relay, **options
        )

    async def hookd_run() -> None:
        runs["hookd"] = await run_cline(
            tmp_path / "hookd", turns or TURNS, "hookd", claude=claude, relay=relay, **options
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(native_run)
        nursery.start_soon(hookd_run)
    return runs["native"], runs["hookd"]


def explain(native: ClineRun, hookd: ClineRun) -> str:
    return (
        f"native:\n{json.dumps(native.comparable(), indent=1)}\n"
        f"hookd:\n{json.dumps(hookd.comparable(), indent=1)}\n"
        f"install:\n{hookd.install_output}\nwired:\n{json.dumps(hookd.wired, indent=1)}\n"
        f"daemon log:\n{hookd.daemon_log[-3000:]}\ncline stderr:\n{hookd.stderr[-2000:]}"
    )


async def both(
    tmp_path: Path,
    relay: Path,
    native: dict[str, str],
    claude: dict[str, Any],
    turns: list[Turn] | None = None,
    **options: Any,
) -> tuple[ClineRun, ClineRun]:
    found_native, found_hookd = await run_both(tmp_path, relay, native, claude, turns, **options)
    assert found_hookd.comparable() == found_native.comparable(), explain(found_native, found_hookd)
    assert "--agent cline PreToolUse" in found_hookd.wired["PreToolUse"], found_hookd.wired
    return found_native, found_hookd


def tool_results(run: ClineRun) -> list[str]:
    """The tool results the model received, in order."""
    return [
        str(block.get("content"))
        for content in run.seen()[-1]
        if isinstance(content, list)
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def texts(run: ClineRun) -> list[str]:
    """The text blocks of the model's last request's user messages (prompt, context)."""
    return [
        str(block.get("text"))
        for content in run.seen()[-1]
        if isinstance(content, list)
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]


async def test_shell_command_deny_ends_the_task(tmp_path: Path, compiled_relay: Path) -> None:
    """A cancel (natively) and a deny (through hookd): the command never runs and Cline
    ends the task there — the model is not asked again."""
    native = {"PreToolUse": emit("deny", {"cancel": True, "errorMessage": "DENY-MARK no shell"})}
    claude = {
        "PreToolUse": [
            group(
                emit("deny", pre_tool(permissionDecision="deny", permissionDecisionReason="DENY")),
                "Bash",
            )
        ]
    }
    found, _ = await both(tmp_path, compiled_relay, native, claude)
    assert found.records == ["deny"] and "tool_out.txt" not in found.files
    assert found.result()["finishReason"] == "aborted" and len(found.api.requests) == 1


async def test_exit_two_blocks_through_hookd_where_cline_ignores_exit_codes(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """The documented difference: Cline reads only a hook's stdout, so natively an exit-2
    hook blocks nothing; through hookd exit 2 is Claude Code's block and cancels the call."""
    script = f"{record('exit2')}; echo 'EXIT2-MARK blocked' >&2; exit 2"
    native, hookd = await run_both(
        tmp_path, compiled_relay, {"PreToolUse": script}, {"PreToolUse": [group(script, "Bash")]}
    )
    assert native.records == hookd.records == ["exit2"], explain(native, hookd)
    assert "tool_out.txt" in native.files and native.result()["finishReason"] == "completed"
    assert "tool_out.txt" not in hookd.files and hookd.result()["finishReason"] == "aborted"


async def test_allowed_call_runs_with_the_hooks_in_the_session_s_directory(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """A hook that says nothing lets the call run; started in ``proj/sub``, Cline runs its
    hooks there (its input names only the repository's root) — through hookd too."""
    script = (
        'cat > /dev/null; echo "allow $(basename "$PWD") $(basename "$(pwd -P)")" >> "$HOOK_LOG"'
    )
    found, _ = await both(
        tmp_path,
        compiled_relay,
        {"PreToolUse": script},
        {"PreToolUse": [group(script, "Bash")]},
        subdir="sub",
    )
    assert found.records == ["allow sub sub"]
    assert found.result()["finishReason"] == "completed"
    assert tool_results(found) and "ran" in tool_results(found)[0]


async def test_context_before_and_after_the_tool(tmp_path: Path, compiled_relay: Path) -> None:
    """Context from PreToolUse and PostToolUse reaches the model as Cline frames it; two
    hooks' contexts are one ``<hook_context>``, joined by a newline, natively (two hook
    files, ``PreToolUse`` and ``PreToolUse.sh``) and through hookd (two groups)."""
    native = {
        "PreToolUse": emit("pre", {"contextModification": "CTX-PRE"}),
        "PreToolUse.sh": emit("pre2", {"contextModification": "CTX-PRE-2"}),
        "PostToolUse": emit("post", {"contextModification": "CTX-POST"}),
    }
    post = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX-POST"}}
    claude = {
        "PreToolUse": [
            group(emit("pre", pre_tool(additionalContext="CTX-PRE")), "Bash"),
            group(emit("pre2", pre_tool(additionalContext="CTX-PRE-2")), "Bash"),
        ],
        "PostToolUse": [group(emit("post", post), "Bash")],
    }
    found, _ = await both(tmp_path, compiled_relay, native, claude)
    assert sorted(found.records) == ["post", "pre", "pre2"]
    seen = "\n".join(texts(found))
    assert '<hook_context source="PreToolUse" tool_name="run__commands"' in seen
    assert "CTX-PRE\nCTX-PRE-2" in seen and "CTX-POST" in seen


async def test_input_rewrite(tmp_path: Path, compiled_relay: Path) -> None:
    """``overrideInput`` natively, ``updatedInput`` (Claude Code's ``command``) through
    hookd: the rewritten command runs, not the model's."""
    new = "echo rewritten > rewritten.txt; echo REWRITE-MARK"
    native = {"PreToolUse": emit("rw", {"overrideInput": {"commands": [new]}})}
    claude = {
        "PreToolUse": [
            group(
                emit("rw", pre_tool(permissionDecision="allow", updatedInput={"command": new})),
                "Bash",
            )
        ]
    }
    found, _ = await both(tmp_path, compiled_relay, native, claude)
    assert "rewritten.txt" in found.files and "tool_out.txt" not in found.files
    assert "REWRITE-MARK" in tool_results(found)[0]


async def test_mcp_guard_fires_for_cline_s_name_of_the_tool(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """One guard on ``mcp__srv__echo`` in hookd's config stops Cline's ``srv__echo``, as
    a native hook that cancels that tool does: the MCP server is never called."""
    native = {
        "PreToolUse": (
            'if grep -q \'"name":"srv__echo"\'; then echo guard >> "$HOOK_LOG"; '
            'printf \'%s\' \'{"cancel": true, "errorMessage": "no echo"}\'; fi'
        )
    }
    deny = pre_tool(permissionDecision="deny", permissionDecisionReason="no echo")
    claude = {"PreToolUse": [group(emit("guard", deny), "mcp__srv__echo")]}
    found, hookd = await both(tmp_path, compiled_relay, native, claude, MCP_TURNS, mcp=True)
    assert found.records == ["guard"], "the MCP tool ran: " + explain(found, hookd)
    assert found.result()["finishReason"] == "aborted"


async def test_task_events_fire_and_forget(tmp_path: Path, compiled_relay: Path) -> None:
    """TaskStart and TaskComplete run (SessionStart, Stop) but Cline does not wait for
    them: a Stop hook's exit-2 block cannot continue the task, natively or through hookd.
    The Stop hook reads the task's last answer (Cline's ``turn.outputText``, Claude Code's
    ``last_assistant_message``).  UserPromptSubmit does not fire for a headless
    ``cline PROMPT`` at 3.0.65, either way."""
    native_last = r"""sed -n 's/.*"outputText":"\([^"]*\)".*/\1/p'"""
    hookd_last = r"""sed -n 's/.*"last_assistant_message": *"\([^"]*\)".*/\1/p'"""
    stop = 'echo "stop $({read})" >> "$HOOK_LOG"; echo \'STOP-MARK go on\' >&2; exit 2'
    native = {
        "TaskStart": record("start"),
        "UserPromptSubmit": record("prompt"),
        "TaskComplete": stop.format(read=native_last),
    }
    claude = {
        "SessionStart": [group(record("start"))],
        "UserPromptSubmit": [group(record("prompt"))],
        "Stop": [group(stop.format(read=hookd_last))],
    }
    found, _ = await both(tmp_path, compiled_relay, native, claude, records=2)
    assert sorted(found.records) == ["start", "stop All done."]
    assert found.result() == {"finishReason": "completed", "text": "All done."}
    assert len(found.api.requests) == 2


async def test_a_write_guard_stops_cline_s_editor_creating_a_file(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Cline's ``editor`` edits and creates files: one guard on Claude Code's ``Write`` in
    hookd's config stops it, as a native hook that cancels ``editor`` does."""
    turns = [
        Turn(
            [
                {"type": "text", "text": "Writing."},
                {
                    "type": "tool_use",
                    "name": "editor",
                    "input": {"path": "new.txt", "new_text": "x\n"},
                },
            ]
        ),
        done(),
    ]
    native = {
        "PreToolUse": (
            'if grep -q \'"name":"editor"\'; then echo guard >> "$HOOK_LOG"; '
            'printf \'%s\' \'{"cancel": true, "errorMessage": "no writes"}\'; fi'
        )
    }
    deny = pre_tool(permissionDecision="deny", permissionDecisionReason="no writes")
    claude = {"PreToolUse": [group(emit("guard", deny), "Write")]}
    found, hookd = await both(tmp_path, compiled_relay, native, claude, turns)
    assert found.records == ["guard"] and "new.txt" not in found.files, explain(found, hookd)
    assert found.result()["finishReason"] == "aborted"

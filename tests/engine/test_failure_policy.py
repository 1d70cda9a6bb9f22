"""``onFailure``, timeouts that decide, and deaths by signal (reference §4.2, §4.7).

- ``onFailure: "block"`` turns a failure (exit other than 0/2, a timeout, bad
  JSON) into a block, *even when stdout carries schema-valid JSON* (which
  otherwise decides and makes the exit code irrelevant); on Stop, SubagentStop,
  TaskCompleted and TeammateIdle it is ignored.
- A timed-out PreModelSwitch hook blocks the switch (the one command-hook
  timeout that is not "no verdict").
- A hook killed by a signal is a failure named after the signal, with the
  exit code the process really had.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from hookd.engine.claude_output import render_claude
from hookd_client.results import FireResult

from .vectors import PY, VECTORS, fire_prepared, hook_command, prepare

TABLE: dict[str, dict[str, Any]] = json.loads(
    (VECTORS / "tables" / "exit_codes.json").read_text(encoding="utf-8")
)["events"]

ON_FAILURE_IGNORED = ["Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"]
ON_FAILURE_HONOURED = ["PreToolUse", "UserPromptSubmit", "PostToolUse", "PreCompact"]


def _input(event: str) -> Any:
    return TABLE[event].get("input") or {
        "session_id": "failure-policy",
        "transcript_path": "",
        "hook_event_name": event,
    }


async def _fire(
    tmp_path: Path, event: str, behaviour: dict[str, Any], **handler: Any
) -> FireResult:
    hook = {"type": "command", "command": "@HOOK:A@", **handler}
    vector = {
        "input": _input(event),
        "event": event,
        "settings": {"hooks": {event: [{"hooks": [hook]}]}},
        "behaviours": {"A": behaviour},
    }
    return await fire_prepared(prepare(vector, tmp_path))


VALID_JSON = {"systemMessage": "JSON-SAYS-HELLO"}


# --- schema-valid JSON on a non-zero exit ----------------------------------------------


async def test_valid_json_on_exit_1_decides_without_on_failure(tmp_path: Path) -> None:
    """§4.2: other non-zero with schema-valid JSON → the exit code is ignored, JSON decides."""
    result = await _fire(tmp_path, "PreToolUse", {"stdout": VALID_JSON, "exit": 1})
    (run,) = result.hooks
    assert run.outcome == "success"
    assert run.exit_code == 1
    assert result.system_messages == ["JSON-SAYS-HELLO"]
    assert result.decision is None


@pytest.mark.parametrize("event", ON_FAILURE_HONOURED)
async def test_on_failure_block_blocks_exit_1_even_with_valid_json(
    tmp_path: Path, event: str
) -> None:
    behaviour = {"stdout": VALID_JSON, "stderr": "ONFAIL-STDERR\n", "exit": 1}
    result = await _fire(tmp_path, event, behaviour, onFailure="block")
    (run,) = result.hooks
    assert run.outcome == "blocking"
    assert run.block_message == (
        f'[{hook_command("A")}]: failed; blocking because onFailure is "block"\nONFAIL-STDERR'
    )
    assert run.output is None  # the JSON of a failed run decides nothing


async def test_on_failure_block_without_stderr_names_the_failure(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "PreToolUse", {"exit": 3}, onFailure="block")
    (run,) = result.hooks
    assert run.outcome == "blocking"
    assert result.decision == "deny"
    assert run.block_message is not None
    assert run.block_message.endswith("Failed with non-blocking status code: No stderr output")


async def test_on_failure_continue_is_the_default(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "PreToolUse", {"exit": 1}, onFailure="continue")
    assert [r.outcome for r in result.hooks] == ["non_blocking_error"]
    assert result.decision is None


@pytest.mark.parametrize("event", ON_FAILURE_IGNORED)
@pytest.mark.parametrize(
    ("behaviour", "outcome"),
    [
        ({"stdout": VALID_JSON, "exit": 1}, "success"),  # JSON decides, as without onFailure
        ({"stderr": "broken\n", "exit": 1}, "non_blocking_error"),
        ({"stdout": "{not json}", "exit": 0}, "non_blocking_error"),
    ],
    ids=["valid-json-exit1", "exit1", "bad-json"],
)
async def test_on_failure_block_is_ignored_on_stop_like_events(
    tmp_path: Path, event: str, behaviour: dict[str, Any], outcome: str
) -> None:
    result = await _fire(tmp_path, event, behaviour, onFailure="block")
    (run,) = result.hooks
    assert run.outcome == outcome
    assert run.block_message is None
    assert result.decision is None


@pytest.mark.parametrize("event", ON_FAILURE_IGNORED)
async def test_on_failure_block_is_ignored_on_stop_like_events_when_timed_out(
    tmp_path: Path, event: str
) -> None:
    result = await _fire(tmp_path, event, {"sleep": 30}, onFailure="block", timeout=0.5)
    (run,) = result.hooks
    assert run.timed_out and run.outcome == "cancelled"
    assert result.decision is None


async def test_on_failure_block_blocks_bad_json_on_exit_0(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "PreToolUse", {"stdout": "{not json}"}, onFailure="block")
    (run,) = result.hooks
    assert run.outcome == "blocking"
    assert run.error == "hook output looks like a JSON object but is not valid JSON"


# --- PreModelSwitch timeouts -----------------------------------------------------------


async def test_a_timed_out_pre_model_switch_hook_blocks_the_switch(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "PreModelSwitch", {"sleep": 30}, timeout=0.5)
    (run,) = result.hooks
    assert run.timed_out
    assert run.outcome == "blocking"
    assert run.block_message == f"[{hook_command('A')}]: timed out"
    assert result.decision == "deny"
    # What the installed relay gives Claude Code: a deny of the switch, with the reason.
    rendered = json.loads(render_claude(result).stdout)
    assert rendered["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert rendered["hookSpecificOutput"]["permissionDecisionReason"] == run.block_message


async def test_a_timed_out_post_model_switch_hook_is_no_verdict(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "PostModelSwitch", {"sleep": 30}, timeout=0.5)
    (run,) = result.hooks
    assert run.timed_out and run.outcome == "cancelled"
    assert result.decision is None


# --- deaths by signal -----------------------------------------------------------------


def _suicide(tmp_path: Path, sig: signal.Signals) -> str:
    script = tmp_path / "suicide.py"
    script.write_text(
        "import os, signal, sys\n"
        "sys.stderr.write('about to die\\n'); sys.stderr.flush()\n"
        f"os.kill(os.getpid(), signal.{sig.name})\n"
    )
    return f"{PY} -I -S {script}"


async def _fire_command(
    tmp_path: Path, command: str, event: str = "PreToolUse", **handler: Any
) -> FireResult:
    hook = {"type": "command", "command": command, **handler}
    vector = {
        "input": _input(event),
        "event": event,
        "settings": {"hooks": {event: [{"hooks": [hook]}]}},
    }
    return await fire_prepared(prepare(vector, tmp_path))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV])
async def test_the_shell_itself_killed_by_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    """The hook process is the shell and it dies: the exit code is -N, the error names N."""
    result = await _fire_command(tmp_path, f"echo dying >&2; kill -{sig.name[3:]} $$")
    (run,) = result.hooks
    assert run.exit_code == -sig.value
    assert run.outcome == "non_blocking_error"
    assert run.error == f"killed by signal {sig.value}"
    assert result.decision is None


async def test_a_death_by_signal_blocks_with_on_failure_block(tmp_path: Path) -> None:
    result = await _fire_command(tmp_path, "kill -TERM $$", onFailure="block")
    (run,) = result.hooks
    assert run.exit_code == -signal.SIGTERM.value
    assert run.outcome == "blocking"
    assert result.decision == "deny"
    assert run.block_message is not None
    assert run.block_message.endswith(f"killed by signal {signal.SIGTERM.value}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGSEGV])
async def test_a_program_killed_by_a_signal_reads_as_the_shell_reports_it(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """A simple command that hookd starts without ``sh``: its death by signal N reads
    128+N, as ``/bin/sh -c`` would report it (docs/configuration.md) — a plain failure."""
    result = await _fire_command(tmp_path, _suicide(tmp_path, sig))
    (run,) = result.hooks
    assert run.exit_code == 128 + sig.value
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and run.error.startswith("Failed with non-blocking status code")

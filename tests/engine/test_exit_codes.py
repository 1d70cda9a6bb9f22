"""Every row of the exit-code tables (reference §4.2/§4.3), for every one of the 33 events.

The table lives in tests/data/vectors/tables/exit_codes.json; each event is
fired three times with one real hook that exits 0 (with plain stdout), 1 and 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookd.engine.claude_output import render_claude
from hookd_client.events import EVENT_NAMES

from .vectors import VECTORS, fire_prepared, prepare

TABLE = json.loads((VECTORS / "tables" / "exit_codes.json").read_text(encoding="utf-8"))
EVENTS: dict[str, dict[str, Any]] = TABLE["events"]
PLAIN_CONTEXT = set(TABLE["plain_context_events"])
CASES = [(event, code) for event in EVENTS for code in (0, 1, 2)]


def test_table_covers_every_event() -> None:
    assert set(EVENTS) == set(EVENT_NAMES)


def _vector(event: str, code: int) -> dict[str, Any]:
    row = EVENTS[event]
    source: Any = row.get("input") or {
        "session_id": "exit-code-table",
        "transcript_path": "",
        "hook_event_name": event,
    }
    return {
        "input": source,
        "event": event,
        "settings": {"hooks": {event: [{"hooks": [{"type": "command", "command": "@HOOK:A@"}]}]}},
        "behaviours": {
            "A": {"stdout": "OUT-MARKER\n", "stderr": "ERR-MARKER\nmore\n", "exit": code}
        },
    }


@pytest.mark.parametrize(("event", "code"), CASES, ids=[f"{e}-exit{c}" for e, c in CASES])
async def test_exit_code(event: str, code: int, tmp_path: Path) -> None:
    prepared = prepare(_vector(event, code), tmp_path)
    result = await fire_prepared(prepared)
    (run,) = result.hooks
    cls = EVENTS[event]["class"]
    cmd = prepared.vector["settings"]["hooks"][event][0]["hooks"][0]["command"]
    assert run.exit_code == code

    if code == 0:
        assert run.outcome == "success"
        assert result.decision is None
        if event in PLAIN_CONTEXT:
            assert result.plain_context == ["OUT-MARKER"]
        else:
            assert result.plain_context == []
        if event == "WorktreeCreate":  # the last stdout line is the worktree path
            assert result.specific == {"worktreePath": "OUT-MARKER"}
        return

    if code == 1:
        if event == "WorktreeCreate":  # any non-zero exit fails the creation (§4.3)
            assert run.outcome == "blocking"
            assert result.decision == "block"
            return
        assert run.outcome == "non_blocking_error"
        assert run.error == "Failed with non-blocking status code: ERR-MARKER"
        assert result.decision is None
        assert result.plain_context == []
        return

    # exit 2
    message = f"[{cmd}]: ERR-MARKER\nmore"
    if cls == "block":
        assert run.outcome == "blocking"
        assert run.block_message == message
        assert result.decision == ("deny" if event in ("PreToolUse", "PreModelSwitch") else "block")
        assert result.reason == message
    elif cls == "feedback":
        assert run.outcome == "blocking"
        assert result.decision == "block"
        assert result.blocking_messages == [message]
    else:
        assert run.outcome == "non_blocking_error"
        assert result.decision is None
        assert result.blocking_messages == []
        if cls == "nonblocking":
            assert run.error == "exit code 2: ERR-MARKER"
    assert result.plain_context == []


@pytest.mark.parametrize("event", ["TeammateIdle", "TaskCompleted"])
async def test_exit2_only_events_render_as_exit2(event: str, tmp_path: Path) -> None:
    """Claude Code reads these blocks only from exit 2 + stderr (§2.1)."""
    prepared = prepare(_vector(event, 2), tmp_path)
    rendered = render_claude(await fire_prepared(prepared))
    cmd = prepared.vector["settings"]["hooks"][event][0]["hooks"][0]["command"]
    assert rendered.exit_code == 2
    assert rendered.stderr == f"[{cmd}]: ERR-MARKER\nmore\n"
    assert rendered.stdout == ""


async def test_worktree_create_failure_renders_nonzero(tmp_path: Path) -> None:
    prepared = prepare(_vector("WorktreeCreate", 1), tmp_path)
    rendered = render_claude(await fire_prepared(prepared))
    assert rendered.exit_code != 0
    assert rendered.stdout == ""


async def test_worktree_create_success_prints_path(tmp_path: Path) -> None:
    prepared = prepare(_vector("WorktreeCreate", 0), tmp_path)
    rendered = render_claude(await fire_prepared(prepared))
    assert (rendered.exit_code, rendered.stdout) == (0, "OUT-MARKER\n")


async def test_pre_model_switch_exit2_renders_deny(tmp_path: Path) -> None:
    prepared = prepare(_vector("PreModelSwitch", 2), tmp_path)
    rendered = render_claude(await fire_prepared(prepared))
    out = json.loads(rendered.stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"

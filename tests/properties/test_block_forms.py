"""Every event's block survives every output form Claude Code accepts (issue 32).

The rule: on every event that can block (reference §4.2–4.4: the ``block`` and
``feedback`` classes of ``tests/data/vectors/tables/exit_codes.json``, plus the
permission events' own deny forms), a hook that blocks in *any* of the forms Claude
Code accepts — exit 2 with a message on stderr, exit 2 with nothing on stderr,
``{"decision": "block"}`` **without a reason**, with a reason, and the
``hookSpecificOutput`` deny forms where the event has them — makes the aggregated
result block, beside a second hook that has nothing to say, and what hookd hands
back still blocks in Claude Code's terms: the one installed command hook's output
(:func:`render_claude`: exit 2, or JSON that blocks or denies) and the http door's
body (:func:`render_http`: JSON only — an http hook cannot block by status).

The issue found a reason-less ``{"decision": "block"}`` that no longer blocked outside
PreToolUse unnoticed: users write it, and on ConfigChange Claude Code never shows the
reason anyway.  ``continue: false`` has its own rule below: it stops, whatever else.

Real hooks (``scripted.py``), a real engine; the whole class enumerated, not sampled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.vectors import VECTORS, fire_prepared, hook_command, prepare
from hookd.doors.http_endpoint import render_http
from hookd.engine.claude_output import render_claude
from hookd_client.results import FireResult

TABLE: dict[str, dict[str, Any]] = json.loads(
    (VECTORS / "tables" / "exit_codes.json").read_text(encoding="utf-8")
)["events"]

BLOCKING_EVENTS = sorted(
    e for e, v in TABLE.items() if v["class"] in ("block", "feedback") and e != "WorktreeCreate"
)
"""Every event on which exit 2 / ``decision: "block"`` blocks (or is fed back as a block).
WorktreeCreate blocks by any non-zero exit only (its stdout is the path): its own test."""

REASON = "BLOCKED-BY-FORM"

GENERIC_FORMS: dict[str, dict[str, Any]] = {
    "exit 2 with stderr": {"exit": 2, "stderr": REASON},
    "exit 2 with empty stderr": {"exit": 2},
    "decision block without a reason": {"stdout": {"decision": "block"}},
    "decision block with a reason": {"stdout": {"decision": "block", "reason": REASON}},
    "decision block as text": {"stdout": json.dumps({"decision": "block"}, indent=1)},
}


def _permission_deny(event: str, reason: bool) -> dict[str, Any]:
    specific: dict[str, Any] = {"hookEventName": event, "permissionDecision": "deny"}
    if reason:
        specific["permissionDecisionReason"] = REASON
    return {"stdout": {"hookSpecificOutput": specific}}


def _behavior_deny(reason: bool) -> dict[str, Any]:
    decision: dict[str, Any] = {"behavior": "deny"}
    if reason:
        decision["message"] = REASON
    specific = {"hookEventName": "PermissionRequest", "decision": decision}
    return {"stdout": {"hookSpecificOutput": specific}}


SPECIFIC_FORMS: list[tuple[str, str, dict[str, Any]]] = [
    *(
        (
            event,
            f"permissionDecision deny {'with' if r else 'without'} a reason",
            _permission_deny(event, r),
        )
        for event in ("PreToolUse", "PreModelSwitch")
        for r in (True, False)
    ),
    *(
        (
            "PermissionRequest",
            f"behavior deny {'with' if r else 'without'} a message",
            _behavior_deny(r),
        )
        for r in (True, False)
    ),
]

CASES = [
    pytest.param(event, form, behaviour, id=f"{event}-{form}")
    for event in BLOCKING_EVENTS
    for form, behaviour in GENERIC_FORMS.items()
] + [
    pytest.param(event, form, behaviour, id=f"{event}-{form}")
    for event, form, behaviour in SPECIFIC_FORMS
]


def _input(event: str) -> Any:
    return TABLE[event].get("input") or {
        "session_id": "block-forms",
        "transcript_path": "",
        "hook_event_name": event,
    }


async def _fire(tmp_path: Path, event: str, behaviour: dict[str, Any]) -> FireResult:
    """The blocking hook beside a silent one (both in one matcher group, run at once)."""
    vector = {
        "input": _input(event) if event in TABLE else event_fixture(event),
        "event": event,
        "settings": {
            "hooks": {
                event: [
                    {
                        "hooks": [
                            {"type": "command", "command": hook_command("QUIET")},
                            {"type": "command", "command": hook_command("BLOCK")},
                        ]
                    }
                ]
            }
        },
        "behaviours": {"BLOCK": behaviour, "QUIET": {}},
    }
    return await fire_prepared(prepare(vector, tmp_path))


def event_fixture(event: str) -> str:
    return {"PermissionRequest": "PermissionRequest-Bash"}.get(event, event)


def _claude_blocks(result: FireResult) -> bool:
    """What the installed command hook prints blocks in Claude Code's terms."""
    rendered = render_claude(result, "Bash")
    if rendered.exit_code == 2:
        return True
    if rendered.exit_code != 0 or not rendered.stdout.strip():
        return False
    return _json_blocks(json.loads(rendered.stdout))


def _json_blocks(out: dict[str, Any]) -> bool:
    specific = out.get("hookSpecificOutput") or {}
    decision = specific.get("decision")
    return (
        out.get("decision") == "block"
        or specific.get("permissionDecision") == "deny"
        or (isinstance(decision, dict) and decision.get("behavior") == "deny")
    )


@pytest.mark.parametrize(("event", "form", "behaviour"), CASES)
async def test_every_blocking_form_blocks_on_every_event(
    tmp_path: Path, event: str, form: str, behaviour: dict[str, Any]
) -> None:
    result = await _fire(tmp_path, event, behaviour)
    assert result.blocked, (event, form, result)
    assert _claude_blocks(result), (event, form, render_claude(result, "Bash"))
    body = render_http(result, "Bash")
    assert body, (event, form, "the http door answered nothing")
    assert _json_blocks(json.loads(body)), (event, form, body)
    if REASON in json.dumps(behaviour) and event != "ConfigChange":
        # Where the hook gave a reason, the agent is told it (ConfigChange shows none).
        shown = render_claude(result, "Bash")
        assert REASON in shown.stdout + shown.stderr, (event, form, shown)


CONTINUE_FALSE_DISCARDED = {
    "TaskCreated",
    "ConfigChange",
    "Elicitation",
    "ElicitationResult",
    "PreCompact",
}
"""Reference §4.4 (``continue``): ignored by TaskCreated; discarded by ConfigChange,
Elicitation*, PreCompact (and non-blocking events, WorktreeCreate/Remove, …)."""


@pytest.mark.parametrize("event", BLOCKING_EVENTS)
async def test_continue_false_stops_on_every_event_that_honours_it(
    tmp_path: Path, event: str
) -> None:
    behaviour = {"stdout": {"continue": False, "stopReason": REASON}}
    result = await _fire(tmp_path, event, behaviour)
    if event in CONTINUE_FALSE_DISCARDED:
        assert result.continue_ is True, (event, result)
        return
    assert result.continue_ is False, (event, result)
    rendered = render_claude(result, "Bash")
    out = json.loads(rendered.stdout)
    assert out.get("continue") is False, (event, rendered)
    assert REASON in out.get("stopReason", ""), (event, rendered)
    assert json.loads(render_http(result, "Bash")).get("continue") is False


@pytest.mark.parametrize(
    ("exit_code", "stderr"), [(1, REASON), (1, ""), (2, REASON), (2, ""), (7, "")]
)
async def test_a_failed_worktree_create_hook_fails_the_creation(
    tmp_path: Path, exit_code: int, stderr: str
) -> None:
    """WorktreeCreate: any non-zero exit fails creation (reference §4.2), with or without
    a message, beside a hook that has nothing to say."""
    result = await _fire(tmp_path, "WorktreeCreate", {"exit": exit_code, "stderr": stderr})
    assert result.decision == "block", result
    rendered = render_claude(result)
    assert rendered.exit_code != 0 and not rendered.stdout.strip(), rendered
    assert b"worktreePath" not in render_http(result)

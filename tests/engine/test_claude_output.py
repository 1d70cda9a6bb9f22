"""Where the Claude-format rendering may put context (reference §4.4).

``additionalContext`` goes into ``hookSpecificOutput`` only for events whose
output has that field — or that have no specific output at all, where Claude
Code reads the field generically; an event whose specific output lacks it
(PermissionRequest, CwdChanged, …) must not get one.
"""

from __future__ import annotations

import json

import pytest

from hookd.engine.claude_output import render_claude, says_nothing
from hookd_client.events import EVENT_NAMES
from hookd_client.protocol import ClaudeHookOutput
from hookd_client.results import FireResult


def _specific(event: str) -> dict[str, object]:
    rendered = render_claude(FireResult(event=event, additional_context=["LATE-CONTEXT"]))
    out: dict[str, object] = json.loads(rendered.stdout) if rendered.stdout.strip() else {}
    specific = out.get("hookSpecificOutput", {})
    assert isinstance(specific, dict)
    return specific


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"])
def test_context_goes_where_the_event_has_the_field(event: str) -> None:
    assert _specific(event).get("additionalContext") == "LATE-CONTEXT"


@pytest.mark.parametrize("event", ["TeammateIdle", "ConfigChange", "PostCompact"])
def test_context_goes_through_for_events_without_a_specific_output(event: str) -> None:
    assert _specific(event).get("additionalContext") == "LATE-CONTEXT"


@pytest.mark.parametrize("event", ["PermissionRequest", "CwdChanged", "MessageDisplay"])
def test_no_context_where_the_events_output_has_no_such_field(event: str) -> None:
    assert "additionalContext" not in _specific(event)


@pytest.mark.parametrize("event", sorted(EVENT_NAMES))
def test_a_result_that_says_nothing_renders_nothing_for_every_event(event: str) -> None:
    """The shortcut for most events (no hook, or no hook with anything to say) gives
    exactly what the full rendering gives: nothing, exit 0."""
    quiet = FireResult(event=event, errors=["h: timed out"], generation=7)
    assert says_nothing(quiet)
    assert render_claude(quiet) == ClaudeHookOutput()


@pytest.mark.parametrize(
    "field",
    [
        {"decision": "deny"},
        {"continue_": False},
        {"system_messages": ["m"]},
        {"additional_context": ["c"]},
        {"plain_context": ["p"]},
        {"async_results": ["late"]},
        {"specific": {"sessionTitle": "t"}},
        {"updated_input": {"command": "ls"}},
        {"reason": "r"},
        {"stop_reason": "s"},
        {"blocking_messages": ["b"]},
    ],
)
def test_any_field_an_agent_reads_takes_the_full_rendering(field: dict[str, object]) -> None:
    assert not says_nothing(FireResult(event="PreToolUse", **field))  # type: ignore[arg-type]

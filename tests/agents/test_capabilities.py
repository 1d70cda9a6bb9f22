"""degrade() and report(): what an agent cannot do is decided safely and said, never silent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hookd.agents.base import Capabilities, EventSpec
from hookd.agents.capabilities import AFTER_EVENTS, degrade, report
from hookd.agents.codex import CodexAdapter
from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.config.loader import build_config, load_source
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
from hookd_client.events import EVENT_NAMES
from hookd_client.results import FireResult

NO_REWRITE = EventSpec(native="BeforeTool", canonical="PreToolUse", caps=Capabilities(block=True))
EVERYTHING = EventSpec(
    native="PreToolUse",
    canonical="PreToolUse",
    caps=Capabilities(
        block=True, rewrite_input=True, ask=True, add_context=True, system_message=True
    ),
)


def test_a_rewrite_the_agent_cannot_apply_blocks_with_a_reason() -> None:
    result = FireResult(event="PreToolUse", decision="allow", updated_input={"command": "safe"})
    out = degrade(result, NO_REWRITE)
    assert out.decision == "deny" and out.updated_input is None
    assert out.reason is not None and "unsanitised" in out.reason
    assert any("updatedInput" in e for e in out.errors)


def test_a_rewrite_under_a_deny_stays_the_deny() -> None:
    result = FireResult(
        event="PreToolUse", decision="deny", reason="no", updated_input={"command": "x"}
    )
    out = degrade(result, NO_REWRITE)
    assert out.decision == "deny" and out.reason == "no"


def test_ask_where_the_agent_cannot_ask_is_a_deny() -> None:
    out = degrade(FireResult(event="PreToolUse", decision="ask", reason="sure?"), NO_REWRITE)
    assert out.decision == "deny" and out.reason is not None and "sure?" in out.reason


def test_losses_are_recorded_not_silent() -> None:
    result = FireResult(event="PreToolUse", additional_context=["ctx"], system_messages=["hi"])
    out = degrade(result, NO_REWRITE)
    assert out.additional_context == [] and out.system_messages == []
    assert len(out.errors) == 2


def test_nothing_changes_where_the_agent_can_do_everything() -> None:
    result = FireResult(
        event="PreToolUse", decision="ask", updated_input={"a": 1}, additional_context=["c"]
    )
    assert degrade(result, EVERYTHING) is result


def test_report_names_missing_events_and_after_only_events(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.json"
    hooks.write_text(
        '{"hooks": {"PreToolUse": [{"matcher": "Bash",'
        ' "hooks": [{"type": "command", "command": "g"}]}],'
        ' "Notification": [{"hooks": [{"type": "command", "command": "n"}]}]}}'
    )
    config = build_config([load_source(SourceSpec(hooks, Scope.USER))])
    found = report(CodexAdapter(), config.all_hooks())
    notification = [r for r in found if r.event == "Notification"]
    assert notification and "never runs" in notification[0].message
    pre = [r for r in found if r.event == "PreToolUse"]
    assert any("ask becomes a deny" in r.message for r in pre)


@pytest.mark.parametrize("agent", [a.name for a in ADAPTERS])
def test_every_event_an_agent_lacks_is_said_and_a_late_stand_in_is_a_warning(
    tmp_path: Path, agent: str
) -> None:
    """A hook on an event the agent never fires is reported for every such event: a
    warning where the agent has only the after-event in its place (a guard written for
    "before" would run too late), info otherwise — and never for an event it fires."""
    adapter = adapter_for(agent)
    hooks = tmp_path / "hooks.json"
    command = {"hooks": [{"type": "command", "command": "true"}]}
    hooks.write_text(json.dumps({"hooks": {event: [command] for event in EVENT_NAMES}}))
    config = build_config([load_source(SourceSpec(hooks, Scope.USER))])
    fired = {spec.canonical for spec in adapter.events}
    missing = {r.event: r for r in report(adapter, config.all_hooks()) if "never runs" in r.message}
    assert set(missing) == set(EVENT_NAMES) - fired
    for event, said in missing.items():
        late = AFTER_EVENTS.get(event) in fired
        assert said.severity == ("warning" if late else "info"), said
        assert ("after the fact" in said.message) == late, said


def _forms() -> list[FireResult]:
    """A result of every shape an agent may be unable to carry out, alone and together."""
    import itertools

    forms = []
    for decision, reason, rewrite, context, plain, message in itertools.product(
        (None, "allow", "ask", "deny", "block"),
        (None, "why"),
        (None, {"command": "safe"}),
        ([], ["ctx"]),
        ([], ["plain"]),
        ([], ["msg"]),
    ):
        forms.append(
            FireResult(
                event="PreToolUse",
                decision=decision,
                reason=reason,
                updated_input=rewrite,
                additional_context=context,
                plain_context=plain,
                system_messages=message,
                errors=["hook: earlier"],
            )
        )
    return forms


@pytest.mark.parametrize("agent", [a.name for a in ADAPTERS])
def test_degrade_is_never_less_safe_and_never_silent_for_any_agent_event_or_answer(
    agent: str,
) -> None:
    """For every event of every agent and every answer shape: a block stays a block with
    its reason; a rewrite the agent cannot apply, or an ask it cannot ask, becomes a
    deny/block with a reason; whatever the agent cannot carry out is removed *and* named
    in ``errors``; and an answer the agent can carry out whole is passed on untouched."""
    for spec in adapter_for(agent).events:
        caps = spec.caps
        for result in _forms():
            out = degrade(result, spec)
            where = (agent, spec.native, result)
            said = "\n".join(out.errors[1:])
            assert out.errors[:1] == ["hook: earlier"], where
            if result.decision in ("deny", "block"):
                assert (out.decision, out.reason) == (result.decision, result.reason), where
            rewrite_lost = result.updated_input is not None and not caps.rewrite_input
            ask_lost = result.decision == "ask" and not caps.ask
            if rewrite_lost or ask_lost:
                assert out.decision in ("deny", "block"), where
            if rewrite_lost:
                assert out.updated_input is None, where
            if (rewrite_lost or ask_lost) and result.decision not in ("deny", "block"):
                assert out.reason, where  # hookd's own block says why
            if ask_lost and result.reason and not rewrite_lost:
                assert result.reason in (out.reason or ""), where
            assert ("updatedInput" in said) == rewrite_lost, where
            assert ("permissionDecision ask" in said) == (ask_lost and not rewrite_lost), where
            context = bool(result.additional_context or result.plain_context)
            if context and not caps.add_context:
                assert out.additional_context == out.plain_context == [], where
                assert "context dropped" in said, where
            else:
                assert (out.additional_context, out.plain_context) == (
                    result.additional_context,
                    result.plain_context,
                ), where
            if result.system_messages and not caps.system_message:
                assert out.system_messages == [] and "message dropped" in said, where
            else:
                assert out.system_messages == result.system_messages, where
            blocks = out.decision in ("deny", "block")
            assert ("cannot block" in said) == (blocks and not caps.block), where
            stop_lost = spec.canonical in ("Stop", "SubagentStop") and out.decision == "block"
            assert ("cannot continue" in said) == (stop_lost and not caps.continue_stop), where
            if not said:
                assert out is result, where


@pytest.mark.parametrize("agent", [a.name for a in ADAPTERS])
def test_each_capability_note_is_said_exactly_where_it_applies(tmp_path: Path, agent: str) -> None:
    """For a hook on every event: "cannot apply updatedInput" exactly on the agent's
    PreToolUse events without rewrites, "cannot ask" exactly on its PreToolUse and
    PermissionRequest events without asks, "cannot continue" exactly on its stop events
    without a continuation — never on an event where the note means nothing."""
    adapter = adapter_for(agent)
    hooks = tmp_path / "hooks.json"
    command = {"hooks": [{"type": "command", "command": "true"}]}
    hooks.write_text(json.dumps({"hooks": {event: [command] for event in EVENT_NAMES}}))
    config = build_config([load_source(SourceSpec(hooks, Scope.USER))])
    said = report(adapter, config.all_hooks())
    notes: dict[str, Callable[[EventSpec], bool]] = {
        "cannot apply updatedInput": lambda s: (
            s.canonical == "PreToolUse" and not s.caps.rewrite_input
        ),
        "cannot ask the user": lambda s: (
            s.canonical in ("PreToolUse", "PermissionRequest") and not s.caps.ask
        ),
        "cannot continue after": lambda s: (
            s.canonical in ("Stop", "SubagentStop") and not s.caps.continue_stop
        ),
    }
    for note, applies in notes.items():
        expected = sorted(s.canonical for s in adapter.events if applies(s))
        assert sorted(r.event for r in said if note in r.message) == expected, note

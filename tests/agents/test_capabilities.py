"""degrade() and report(): what an agent cannot do is decided safely and said, never silent."""

from __future__ import annotations

from pathlib import Path

from hookd.agents.base import Capabilities, EventSpec
from hookd.agents.capabilities import degrade, report
from hookd.agents.codex import CodexAdapter
from hookd.config.loader import build_config, load_source
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
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

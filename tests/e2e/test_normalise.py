"""The e2e normalisations remove the expected differences between two runs, and only those.

These run without the CLI: they feed :func:`e2e.normalise.comparable` the message
shapes Claude Code sends (the reminder texts are copied from the pinned CLI) and
check that two runs that straddle midnight compare equal while a real difference
in the same messages still shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from e2e.harness import ClaudeRun
from e2e.normalise import comparable, normalise_text

RUN_DIR = Path("/tmp/run")

_CHANGED = (
    "<system-reminder>\nThe date has changed. Today's date is now {date}. No need to announce "
    "the new date \u2014 the user's own clock shows it.\n</system-reminder>"
)


def _context(date: str) -> str:
    return (
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:"
        f"\n# currentDate\nToday's date is {date}.\n</system-reminder>"
    )


def _run(date: str, *, changed_to: str | None = None, prompt: str = "ORIGINAL-PROMPT") -> ClaudeRun:
    first: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": _context(date)}, {"type": "text", "text": prompt}],
        }
    ]
    second_user: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
    ]
    if changed_to is not None:
        second_user.append({"type": "text", "text": _CHANGED.format(date=changed_to)})
    second = [
        *first,
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash"}]},
        {"role": "user", "content": second_user},
    ]
    return ClaudeRun(
        requests=[{"messages": first}, {"messages": second}],
        stream=[{"type": "result", "subtype": "success", "session_id": "s-1"}],
        exit_code=0,
        stderr="",
    )


def test_runs_on_either_side_of_midnight_compare_equal() -> None:
    before = comparable(_run("2026-11-23"), RUN_DIR, RUN_DIR)
    # The hookd run started after midnight, and a native run that straddled it got the reminder.
    after = comparable(_run("2026-11-24"), RUN_DIR, RUN_DIR)
    straddled = comparable(_run("2026-11-23", changed_to="2026-11-24"), RUN_DIR, RUN_DIR)
    assert before == after == straddled


def test_a_real_difference_next_to_the_date_still_shows() -> None:
    base = comparable(_run("2026-11-23", changed_to="2026-11-24"), RUN_DIR, RUN_DIR)
    other = comparable(
        _run("2026-11-23", changed_to="2026-11-24", prompt="OTHER"), RUN_DIR, RUN_DIR
    )
    assert base != other


def test_the_utc_forms_of_the_date_are_normalised() -> None:
    text = (
        "The UTC date is 2026-11-23. The user's local date can differ. "
        "The UTC date is now 2026-11-24. Today's date is now 2026-11-24."
    )
    assert normalise_text(text, RUN_DIR, None) == (
        "The UTC date is <DATE>. The user's local date can differ. "
        "The UTC date is now <DATE>. Today's date is now <DATE>."
    )


def test_the_date_change_reminder_inside_other_text_is_cut_out() -> None:
    text = "before " + _CHANGED.format(date="2026-11-24") + "after"
    assert normalise_text(text, RUN_DIR, None) == "before after"


def test_the_hook_name_in_exit_two_stop_feedback_is_normalised() -> None:
    """Natively the user's command, through hookd the relay's; the feedback itself stays."""
    native = "Stop hook feedback:\n[e2e-hook stop_exit2_once]: STOP-EXIT2-STDERR"
    relayed = (
        "Stop hook feedback:\n[/usr/bin/python3 -I -S -c import sys;sys.path.append('/x');"
        "import relay;sys.exit(relay.main()) Stop]: STOP-EXIT2-STDERR"
    )
    assert normalise_text(native, RUN_DIR, None) == normalise_text(relayed, RUN_DIR, None)
    other = "Stop hook feedback:\n[e2e-hook stop_exit2_once]: ANOTHER-STDERR"
    assert normalise_text(other, RUN_DIR, None) != normalise_text(relayed, RUN_DIR, None)


def test_adjacent_blocking_error_paragraphs_compare_in_any_order() -> None:
    """Claude Code writes one per blocking hook in completion order; hookd in config order."""
    a = 'PostToolUse:Bash hook blocking error from command: "<cmd>": POST-BLOCK-A'
    b = 'PostToolUse:Bash hook blocking error from command: "<cmd>": [e2e-hook b]: POST-EXIT2-B'
    native = f"result\n\n{b}\n\n{a}"
    hookd = f"result\n\n{a}\n\n{b}"
    assert normalise_text(native, RUN_DIR, None) == normalise_text(hookd, RUN_DIR, None)
    other = f"result\n\n{a}\n\n{a}"
    assert normalise_text(other, RUN_DIR, None) != normalise_text(hookd, RUN_DIR, None)


def test_the_hook_name_in_a_precompact_block_is_normalised() -> None:
    native = "Compaction blocked by PreCompact hook: [e2e-hook precompact_exit2]: NO"
    hookd = "Compaction blocked by PreCompact hook: [http://127.0.0.1:4747/hooks/PreCompact]: NO"
    assert normalise_text(native, RUN_DIR, None) == normalise_text(hookd, RUN_DIR, None)
    # The label is removed once: a reason that still carries a second one differs.
    twice = "Compaction blocked by PreCompact hook: [http://x/hooks/PreCompact]: [cmd]: NO"
    assert normalise_text(twice, RUN_DIR, None) != normalise_text(native, RUN_DIR, None)


def _hand_back(agent_id: str, ms: int, report: str = "SUBAGENT-DONE") -> str:
    return (
        f"The report follows:\n  {report}\nagentId: {agent_id} (use SendMessage with to: "
        f"'{agent_id}', summary: '<5-10 word recap>' to continue this agent)\n"
        f"<usage>subagent_tokens: 15\ntool_uses: 0\nduration_ms: {ms}</usage>"
    )


def test_a_sub_agents_id_and_duration_are_normalised_and_its_report_is_not() -> None:
    one = normalise_text(_hand_back("a7b3052a591141c28", 958), RUN_DIR, None)
    two = normalise_text(_hand_back("a487a8da93ded29f5", 1204), RUN_DIR, None)
    assert one == two
    assert "a7b3052a591141c28" not in one and "<AGENT>" in one
    other = normalise_text(_hand_back("a487a8da93ded29f5", 1204, "OTHER"), RUN_DIR, None)
    assert other != one

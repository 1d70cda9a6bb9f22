"""``hookctl fire --local``: a testing tool never says "allowed" when it read no hooks,
and never gives hooks another input than the one it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import CC_FIXTURES, hookctl

EVENT = str(CC_FIXTURES / "PreToolUse-Bash.json")
DENY_ALL = json.dumps(
    {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}}
)


def test_missing_settings_file_is_an_error(tmp_path: Path) -> None:
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", str(tmp_path / "hooks.json"),
        "--input", EVENT, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert f"{tmp_path / 'hooks.json'}: no such file" in done.stderr


def test_inline_json_that_does_not_parse_is_an_error(tmp_path: Path) -> None:
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", '{"hooks": {',
        "--input", EVENT, "--format", "claude", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert "<--settings #1>" in done.stderr


def test_a_file_with_schema_errors_is_an_error(tmp_path: Path) -> None:
    settings = tmp_path / "hooks.json"
    settings.write_text('{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}')
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", str(settings), "--input", EVENT,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "$.hooks.PreToolUse[0]" in done.stderr


def test_a_good_file_still_runs(tmp_path: Path) -> None:
    settings = tmp_path / "hooks.json"
    hook = {"type": "command", "command": "echo nope >&2; exit 2"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", str(settings), "--input", EVENT,
        "--format", "claude", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"].endswith("nope")


def _pairs(text: str) -> object:
    """JSON with every object as its list of (key, value) pairs: equal only in the same order."""
    return json.loads(text, object_pairs_hook=list)


RECORD_STDIN = "cat > {out}"


def _recording_settings(out: Path) -> str:
    """Settings with one hook on every event that writes its stdin to ``out``."""
    from hookd_client.events import EVENT_NAMES

    hook = {"type": "command", "command": RECORD_STDIN.format(out=out)}
    return json.dumps({"hooks": {event: [{"hooks": [hook]}] for event in EVENT_NAMES}})


@pytest.mark.parametrize("fixture", sorted(p.name for p in CC_FIXTURES.glob("*.json")))
def test_a_recorded_claude_code_input_reaches_the_hook_as_sent(
    tmp_path: Path, fixture: str
) -> None:
    """A complete input is passed on as the agent sent it: no field added (a SessionStart
    gained `model` and `permission_mode` before), none reordered, and nothing on stderr
    about filling."""
    sent = (CC_FIXTURES / fixture).read_text()
    event = json.loads(sent)["hook_event_name"]
    out = tmp_path / "stdin.json"
    done = hookctl(
        "fire", event, "--local", "--settings", _recording_settings(out),
        "--input", str(CC_FIXTURES / fixture), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 4), done.stderr
    assert "filled" not in done.stderr
    assert _pairs(out.read_text()) == _pairs(sent)


def test_a_partial_input_is_filled_and_the_filled_fields_are_named(tmp_path: Path) -> None:
    partial = tmp_path / "event.json"
    partial.write_text('{"tool_input": {"command": "ls"}, "extra": 1}')
    out = tmp_path / "stdin.json"
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", _recording_settings(out),
        "--input", str(partial), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "hookctl fire: filled from the example: session_id, transcript_path, cwd, "
        "permission_mode, hook_event_name, tool_name, tool_use_id\n"
    ) in done.stderr
    received = json.loads(out.read_text())
    # The example's order, the given fields where they were, unknown ones kept.
    assert list(received) == [
        "session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
        "tool_name", "tool_input", "extra", "tool_use_id",
    ]  # fmt: skip
    assert received["cwd"] == str(tmp_path) and received["session_id"].startswith("hookctl-")


@pytest.mark.parametrize("event", ["NoSuchEvent", "pretooluse"])
def test_an_unknown_event_is_an_error_with_a_suggestion(tmp_path: Path, event: str) -> None:
    done = hookctl("fire", event, "--local", "--settings", DENY_ALL, cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert f"unknown event {event!r}" in done.stderr
    if event == "pretooluse":
        assert "did you mean PreToolUse?" in done.stderr

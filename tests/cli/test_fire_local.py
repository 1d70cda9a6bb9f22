"""``hookctl fire --local``: a testing tool never says "allowed" when it read no hooks."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import CC_FIXTURES, hookctl

EVENT = str(CC_FIXTURES / "PreToolUse-Bash.json")


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

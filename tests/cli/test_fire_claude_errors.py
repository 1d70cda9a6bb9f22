"""``hookctl fire --format claude``: a failed hook is said on stderr, not silent."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import CC_FIXTURES, hookctl

EVENT = str(CC_FIXTURES / "PreToolUse-Bash.json")


def test_a_failed_prompt_hook_shows_its_error_on_stderr(tmp_path: Path) -> None:
    settings = tmp_path / "hooks.json"
    hook = {"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", str(settings), "--input", EVENT,
        "--format", "claude", cwd=tmp_path,
        # Nothing listens on port 9: the Messages API call fails.
        env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "test"},
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, ""), done.stderr  # no opinion on stdout …
    assert "Is this safe?" in done.stderr  # … but the failure is said: the hook, then why


def test_a_hook_with_nothing_to_say_still_exits_0(tmp_path: Path) -> None:
    settings = tmp_path / "hooks.json"
    hook = {"type": "command", "command": "true"}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", str(settings), "--input", EVENT,
        "--format", "claude", cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

"""``hookctl explain`` says how each command hook starts: warm Python, or cold and why."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from hookd.cli.hookctl import main as hookctl


def test_explain_says_which_hooks_start_warm(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    private_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = private_home
    python = os.path.realpath(sys.executable)
    monkeypatch.setenv("PATH", f"{os.path.dirname(python)}:/usr/bin:/bin")
    (tmp_path / "check.py").write_text("pass\n")
    hooks = [
        {"type": "command", "command": f"python3 {tmp_path}/check.py"},
        {"type": "command", "command": "python3 hooks/guard.py | cat"},
        {"type": "command", "command": "cat"},
    ]
    user = home / ".config" / "hookd" / "hooks.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": hooks}]}}))
    args = ["explain", "PreToolUse", "--agent", "claude", "--cwd", str(tmp_path)]
    assert hookctl([*args, "--json"]) == 0
    starts = [h["start"] for h in json.loads(capsys.readouterr().out)["hooks"]]
    assert starts == [
        f"warm Python ({python}), from its second run on",
        "cold: the command needs a shell",
        "cold: not a Python command",
    ]
    assert hookctl(args) == 0
    assert f"starts warm Python ({python})" in capsys.readouterr().out

"""The README's Install and Using-it blocks, run verbatim on a fresh HOME with a real daemon.

Every line runs (``bash -e``: the first failing command fails the test); nothing
is skipped or rewritten (tests/support/readme.py).  The Install block runs in the
checkout (it calls ``scripts/install``), Using-it in an empty working directory.
tests/e2e/test_readme_claude.py then drives the real Claude Code CLI through the
wiring these blocks made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.readme import fresh_home_dir, readme_block, readme_env, run_block, stop_group

from .helpers import ROOT


@pytest.fixture
def fresh_home() -> Iterator[Path]:
    with fresh_home_dir() as path:
        yield path


@pytest.mark.slow
def test_readme_install_and_usage_verbatim(fresh_home: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "hookctl").exists():
        pytest.fail("the checkout has no .venv (scripts/check creates it)")
    env = readme_env(fresh_home)
    install, out, err = run_block(readme_block("Install"), ROOT, env)
    assert install.returncode == 0, out + err
    assert (fresh_home / ".local" / "bin" / "hookctl").is_symlink()
    assert (fresh_home / ".config" / "hookd").is_dir()

    work = fresh_home / "work"
    work.mkdir()
    usage = readme_block("Using it")
    proc, out, err = run_block(usage, work, env)
    try:
        assert proc.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    finally:
        stop_group(proc.pid)
    # What each step should have shown.
    hooks = fresh_home / ".config" / "hookd" / "hooks.json"
    assert f"{hooks}: ok (1 hook)" in out  # validate
    assert re.search(rf"user\s+{re.escape(str(hooks))}\s+1\s+ok", out), out  # status
    event = json.loads((work / "event.json").read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["cwd"] == str(work)
    fired = json.loads(out[out.index('{\n  "event": "PreToolUse"') :].split("\n}\n", 1)[0] + "\n}")
    assert fired.get("decision") in (None, "allow")  # the example runs `echo hello`
    # claude install: the running daemon opened the port it wired, no restart.
    assert "serves http://127.0.0.1:47470: Claude Code's hooks run through it" in out, out + err
    assert "no silent failures found" in out, out  # doctor followed every door
    settings = json.loads((fresh_home / ".claude" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]

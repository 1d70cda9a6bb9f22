"""The README's Install and Using-it blocks, run verbatim on a fresh HOME with a real daemon.

Every line runs (``bash -e``: the first failing command fails the test); nothing
is skipped or rewritten.  The environment is what a new user's login gives:
a HOME with nothing in it, ``~/.local/bin`` on PATH (as distributions add it
once it exists), a private runtime directory for the socket.  The Install
block runs in the checkout (it calls ``scripts/install``), Using-it in an
empty working directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import ROOT

README = ROOT / "README.md"


def readme_block(heading: str) -> str:
    """The first fenced ``sh`` block under ``## heading``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, f"no sh block under ## {heading}"
    return match.group(1)


@pytest.fixture
def fresh_home() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hkr", dir="/tmp"))  # short: the socket lives below
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _env(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HOOKD_", "PYTHON"))}
    runtime = home / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {
        **keep,
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "PATH": f"{home / '.local' / 'bin'}:{os.environ['PATH']}",
        "NO_COLOR": "1",
    }


def _run(block: str, cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
    """Run a block as its own session and wait for the shell (not for its background
    daemon, which keeps the output files open: they are files, not pipes, for that)."""
    logs = Path(tempfile.mkdtemp(prefix="hkrlog"))
    with (logs / "out").open("w") as out, (logs / "err").open("w") as err:
        proc = subprocess.Popen(
            ["bash", "-e", "-c", block],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
        )
        proc.wait(timeout=300)
    texts = (logs / "out").read_text(), (logs / "err").read_text()
    shutil.rmtree(logs, ignore_errors=True)
    return proc, *texts


def _stop_group(pgid: int) -> None:
    """End the block's process group (the `hookd serve &` daemon) and wait until it is gone."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.killpg(pgid, signal.SIGKILL)


@pytest.mark.slow
def test_readme_install_and_usage_verbatim(fresh_home: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "hookctl").exists():
        pytest.fail("the checkout has no .venv (scripts/check creates it)")
    env = _env(fresh_home)
    install, out, err = _run(readme_block("Install"), ROOT, env)
    assert install.returncode == 0, out + err
    assert (fresh_home / ".local" / "bin" / "hookctl").is_symlink()
    assert (fresh_home / ".config" / "hookd").is_dir()

    work = fresh_home / "work"
    work.mkdir()
    usage = readme_block("Using it")
    proc, out, err = _run(usage, work, env)
    try:
        assert proc.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    finally:
        _stop_group(proc.pid)
    # What each step should have shown.
    hooks = fresh_home / ".config" / "hookd" / "hooks.json"
    assert f"{hooks}: ok (1 hook)" in out  # validate
    assert re.search(rf"user\s+{re.escape(str(hooks))}\s+1\s+ok", out), out  # status
    event = json.loads((work / "event.json").read_text())
    assert event["hook_event_name"] == "PreToolUse" and event["cwd"] == str(work)
    fired = json.loads(out[out.index('{\n  "event": "PreToolUse"') :].split("\n}\n", 1)[0] + "\n}")
    assert fired.get("decision") in (None, "allow")  # the example runs `echo hello`
    assert "hookd (pid " in out and "http://127.0.0.1:47470" in out  # claude install's door line
    settings = json.loads((fresh_home / ".claude" / "settings.json").read_text())
    assert "PreToolUse" in settings["hooks"]

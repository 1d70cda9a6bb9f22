"""The README's shell blocks, run verbatim on a fresh HOME: what tests/cli/test_readme.py and
tests/e2e/test_readme_claude.py share.

Every line runs (``bash -e``: the first failing command fails the block); nothing is
skipped or rewritten.  The environment is what a new user's login gives: a HOME with
nothing in it, ``~/.local/bin`` on PATH (as distributions add it once it exists), a
private runtime directory for the socket.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["README", "fresh_home_dir", "readme_block", "readme_env", "run_block", "stop_group"]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def readme_block(heading: str) -> str:
    """The first fenced ``sh`` block under ``## heading``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, f"no sh block under ## {heading}"
    return match.group(1)


PORT_LOCK = Path(tempfile.gettempdir()) / "hookd-tests-readme-port.lock"
"""Held while a README flow runs: its daemon serves the default http port (47470), which
only one daemon on the machine can have, and the suite's tests run side by side (pytest-xdist
workers, other checkouts' runs)."""


@contextmanager
def fresh_home_dir() -> Iterator[Path]:
    """A fresh HOME for the README's blocks, and the machine's default http port to itself
    until the block's daemon is gone: another README run waits (``flock``) rather than fail
    with "the port is in use by another process"."""
    lock = os.open(PORT_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = Path(tempfile.mkdtemp(prefix="hkr", dir="/tmp"))  # short: the socket lives below
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)
    finally:
        os.close(lock)  # releases the lock


def readme_env(home: Path) -> dict[str, str]:
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


def run_block(block: str, cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
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


def stop_group(pgid: int) -> None:
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

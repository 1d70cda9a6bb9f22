"""Stopping an idle daemon says what it did after "shutting down", and is quick to do it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hookd_client import protocol

from .helpers import cli_env, serving_client


def test_stop_logs_each_step_after_shutting_down() -> None:
    root = Path(tempfile.mkdtemp(prefix="hks", dir="/tmp"))
    sock = root / "s.sock"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "hookd", "serve", "--socket", str(sock), "--state-dir",
         str(root / "state"), "--no-watch", "--log-format", "json", "--user-file",
         str(root / "hooks.json"), "--policy-file", str(root / "policy.json")],
        env=cli_env(),
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        with serving_client(sock, daemon) as client:
            client.status()
            client.call(protocol.Shutdown(id=client.next_id()))
        _, err = daemon.communicate(timeout=60)
    finally:
        daemon.kill()
        shutil.rmtree(root, ignore_errors=True)
    assert daemon.returncode == 0
    events = [json.loads(line)["event"] for line in err.splitlines() if line.startswith("{")]
    after = events[events.index("shutting down") :]
    assert after[:3] == ["shutting down", "connections closed", "stopped"], events

"""systemd units verify, and the daemon speaks socket activation and sd_notify.

No running systemd is needed: ``systemd-socket-activate`` passes a listening
socket exactly as systemd does (``LISTEN_FDS``/``LISTEN_PID``), and the test
binds its own ``NOTIFY_SOCKET`` datagram socket to read what the daemon says.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookd.cli.systemd_cmd import render_unit
from hookd_client.client import Client

ROOT = Path(__file__).resolve().parents[2]


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is missing; scripts/check installs systemd in CI")
        pytest.skip(f"{tool} is not installed")
    return path


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hks", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_units_pass_systemd_analyze_verify(short_dir: Path) -> None:
    """The templates in hookd/units/, rendered as `hookctl systemd install` renders them."""
    analyze = _require("systemd-analyze")
    units = short_dir / "units"
    units.mkdir()
    for name in ("hookd.socket", "hookd.service"):
        (units / name).write_text(render_unit(name))
    runtime = short_dir / "run"
    runtime.mkdir()
    env = {**os.environ, "HOME": str(short_dir), "XDG_RUNTIME_DIR": str(runtime)}
    proc = subprocess.run(
        [analyze, "--user", "verify", str(units / "hookd.socket"), str(units / "hookd.service")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def _read_notifications(sock: socket.socket, until: str, deadline: float) -> list[str]:
    seen: list[str] = []
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = sock.recv(4096)
        except TimeoutError:
            break
        seen.append(data.decode())
        if until in seen[-1]:
            break
    return seen


def test_socket_activation_and_notify(short_dir: Path) -> None:
    activate = _require("systemd-socket-activate")
    sock_path = short_dir / "hookd.sock"
    notify_path = short_dir / "notify"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(notify_path))
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(short_dir / "cfg"),
        "XDG_STATE_HOME": str(short_dir / "state"),
        "HOME": str(short_dir),
    }
    proc = subprocess.Popen(
        [
            activate,
            "-l",
            str(sock_path),
            "-E",
            f"NOTIFY_SOCKET={notify_path}",
            "-E",
            "XDG_CONFIG_HOME",
            "-E",
            "XDG_STATE_HOME",
            "-E",
            "HOME",
            sys.executable,
            "-m",
            "hookd",
            "serve",
            "--policy-file",
            str(short_dir / "policy.json"),
            "--log-format",
            "json",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not sock_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        # The first connection makes systemd-socket-activate exec the daemon; the
        # client simply waits in the backlog meanwhile, as with real systemd.
        with Client(sock_path, timeout=30) as client:
            status = client.status()
        assert status["socket"] == str(sock_path)
        daemon_pid = status["pid"]
        seen = _read_notifications(notify, "READY=1", time.monotonic() + 10)
        assert any("READY=1" in s for s in seen), seen
        assert any(f"MAINPID={daemon_pid}" in s for s in seen), seen
        os.kill(daemon_pid, signal.SIGTERM)
        seen = _read_notifications(notify, "STOPPING=1", time.monotonic() + 10)
        assert any("STOPPING=1" in s for s in seen), seen
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()

"""``hookd serve`` as a user starts it: what it says when it cannot serve, the flags its help
offers, and its log lines on a terminal."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

from hookd_client.client import Client

from .helpers import cli_env, serving


def _serve(tmp_path: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hookd", "serve", "--socket", str(tmp_path / "s.sock"), *flags],
        env=cli_env({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), **env}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_taken_http_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        done = _serve(tmp_path, "--http-port", str(port), "--log-format", "json")
    assert done.returncode == 1
    text = [line for line in done.stderr.splitlines() if not line.startswith("{")]
    assert text == [
        f"hookd: cannot serve http://127.0.0.1:{port}: the port is in use by another process "
        "(setting http_port: --http-port, or http_port in hookd.toml)"
    ], done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.sock").exists()  # the socket it had bound is gone again


def test_http_port_none_turns_off_the_port_hookd_toml_sets(tmp_path: Path) -> None:
    """``--http-port None``, as the help's ``(default: None)`` offers: the flag beats the
    file, here to say "no http endpoint"."""
    (tmp_path / "cfg" / "hookd").mkdir(parents=True)
    (tmp_path / "cfg" / "hookd" / "hookd.toml").write_text("http_port = 47999\n")
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    with (
        serving(tmp_path / "s.sock", "--http-port", "None", env=env),
        Client(tmp_path / "s.sock") as client,
    ):
        status = client.status()
    assert status["http_port"] is None and status["http_wanted"] is None
    bad = _serve(tmp_path, "--http-port", "nine")
    assert bad.returncode == 2 and "invalid int value: 'nine'" in bad.stderr


def test_log_lines_on_a_terminal_honour_no_color(tmp_path: Path) -> None:
    """Console lines are coloured on a terminal, except with ``NO_COLOR`` (no-color.org)."""

    def first_lines(**env: str) -> bytes:
        leader, follower = os.openpty()
        daemon = subprocess.Popen(
            [sys.executable, "-m", "hookd", "serve", "--socket", str(tmp_path / "s.sock"),
             "--state-dir", str(tmp_path / "state"), "--log-format", "console"],
            env=cli_env({"HOME": str(tmp_path), "TERM": "xterm", **env}),
            stdout=subprocess.DEVNULL,
            stderr=follower,
        )  # fmt: skip
        os.close(follower)
        seen = b""
        try:
            deadline = time.monotonic() + 60
            while b"hookd serving" not in seen and time.monotonic() < deadline:
                ready, _, _ = select.select([leader], [], [], 1.0)
                if ready:
                    seen += os.read(leader, 65536)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
            os.close(leader)
        assert b"hookd serving" in seen, seen
        return seen

    assert b"\x1b[" in first_lines()  # a terminal: colour (cli_env drops NO_COLOR)
    assert b"\x1b[" not in first_lines(NO_COLOR="1")

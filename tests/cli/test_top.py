"""``hookctl top`` in a real terminal (tmux): it shows a hook running against its timeout,
then its outcome and latency, and quits on ``q``.  :func:`render` is checked directly too."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.cli.top import latency, render
from hookd_client.client import Client

from .helpers import CC_FIXTURES, cli_env


def test_render_fits_the_screen_and_orders_latency() -> None:
    status = {
        "version": "0.1.0", "pid": 1, "uptime": 5.0, "generation": 3, "connections": 1,
        "in_flight": 1,
        "sessions": [{"session_id": "s1", "agent": "codex", "agent_pid": 42, "project": "/p",
                      "events": 2,
                      "last_event": "PreToolUse", "last_event_at": 99.0}],
        "running": [{"hook": "slow.sh", "event": "PreToolUse", "session_id": "s1", "pid": 7,
                     "elapsed": 5.0, "timeout": 10.0, "source": "x"}],
    }  # fmt: skip
    records = [
        {"time": 0, "event": "Stop", "outcome": "success", "duration_ms": d, "hook": h}
        for h, d in (("fast", 1.0), ("slow", 30.0), ("slow", 50.0))
    ]
    lines = render(status, records, 80, 40, 100.0)
    assert all(len(line) <= 80 for line in lines)
    assert "SESSIONS 1   AGENTS 1" in lines
    session = next(line for line in lines if line.startswith("  s1 "))
    assert session.split()[:3] == ["s1", "codex", "42"]
    running = next(line for line in lines if "slow.sh" in line)
    assert "[" + "#" * 5 + "." * 5 + "] 5.0s / 10s" in running
    assert [row[0] for row in latency(records)] == ["slow", "fast"]
    assert len(render(status, records, 80, 5, 100.0)) == 5


async def _tmux(server: str, *args: str) -> str:
    done = await trio.run_process(
        ["tmux", "-L", server, *args], capture_stdout=True, capture_stderr=True, check=False
    )
    return done.stdout.decode()


async def _screen_until(server: str, wanted: str) -> str:
    screen = ""
    with trio.fail_after(60):
        while wanted not in screen:
            screen = await _tmux(server, "capture-pane", "-p", "-t", "top")
            await trio.sleep(0.05)
    return screen


async def test_top_in_tmux(daemon_factory: Any, tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is missing; scripts/check installs it in CI")
        pytest.skip("tmux is not installed")
    handle = await daemon_factory()
    go = tmp_path / "go"
    hook = {
        "type": "command",
        "command": f"while [ ! -e {go} ]; do sleep 0.05; done; echo done",
        "timeout": 30,
    }
    session = f"top-{uuid.uuid4().hex[:8]}"
    event = (CC_FIXTURES / "PreToolUse-Bash.json").read_text()
    payload = {**__import__("json").loads(event), "session_id": session}

    def fire() -> None:
        with Client(handle.socket) as client:
            client.register_session_hooks(session, {"PreToolUse": [{"hooks": [hook]}]})
            client.fire("PreToolUse", payload)

    server = f"hookd-{uuid.uuid4().hex[:8]}"
    env = " ".join(f"{k}={v}" for k, v in cli_env().items() if k in ("PYTHONPATH", "PATH"))
    command = (
        f"env {env} TERM=xterm-256color {sys.executable} -m hookd.cli.hookctl "
        f"--socket {handle.socket} top --interval 0.2"
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, fire)
        await _tmux(server, "new-session", "-d", "-s", "top", "-x", "150", "-y", "45", command)
        try:
            screen = await _screen_until(server, "RUNNING NOW 1")
            assert session[:12] in screen
            assert "/ 30s" in screen and "while [ ! -e" in screen  # in 80 columns
            go.touch()
            screen = await _screen_until(server, "RUNNING NOW 0")
            screen = await _screen_until(server, "success")
            assert "LATENCY PER HOOK" in screen
            assert "SESSIONS" in screen and session[:12] in screen
            await _tmux(server, "send-keys", "-t", "top", "q")
            with trio.fail_after(30):
                while "top" in await _tmux(server, "list-sessions", "-F", "#S"):
                    await trio.sleep(0.05)
        finally:
            await _tmux(server, "kill-server")

"""hookctl's daemon commands against a real daemon: exit codes, --json, header rows."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import trio

from .helpers import cli_env


async def _hookctl(socket: Path, *args: str) -> tuple[int, str]:
    done = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(socket), *args],
        capture_stdout=True,
        capture_stderr=True,
        env=cli_env(),
        check=False,
    )
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def test_status_exits_1_while_the_config_has_errors(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    code, out = await _hookctl(handle.socket, "status")
    assert code == 0, out
    handle.user_config.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}')
    code, out = await _hookctl(handle.socket, "reload", "--json")
    assert code == 1
    assert json.loads(out)["errors"]
    code, out = await _hookctl(handle.socket, "status")
    assert code == 1 and "config errors:" in out
    assert "\033[" not in out  # not a terminal: plain
    code, out = await _hookctl(handle.socket, "--color", "always", "status")
    assert "\033[1mconfig errors:\033[0m" in out
    assert any(line.startswith("\033[31m  ") for line in out.splitlines())


async def test_tail_has_a_header_and_stop_speaks_json(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    code, out = await _hookctl(handle.socket, "tail")
    assert code == 0
    assert out.splitlines()[0].split() == [
        "time",
        "session",
        "agent",
        "event",
        "outcome",
        "exit",
        "ms",
        "hook",
    ]
    code, out = await _hookctl(handle.socket, "stop", "--json")
    assert code == 0 and json.loads(out)["pid"] == os.getpid()

"""``hookctl async`` and ``hookctl status`` show the async registry (and take nothing)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import trio

from .helpers import async_hook, configure, event, poll_results, script

ROOT = Path(__file__).resolve().parent.parent.parent


async def _hookctl(socket: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    done = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(socket), *args],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
    )
    return done.stdout.decode()


async def test_hookctl_async_and_status_list_runs_by_agent_and_session(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(
        handle,
        {"PostToolUse": [{"hooks": [async_hook(script("wait_go.sh", go, "", "SEEN"))]}]},
    )
    agent = await wire(handle.socket, pid=777001)
    await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-cli"))
    await agent.fire("PostToolUse", event("PostToolUse-Bash", "s-cli-other"))

    rows = json.loads(await _hookctl(handle.socket, "async", "--session", "s-cli", "--json"))
    assert [(r["agent_pid"], r["session_id"], r["state"], r["delivered"]) for r in rows] == [
        (777001, "s-cli", "running", False)
    ]
    table = await _hookctl(handle.socket, "async")
    assert "agent pid 777001: 2 running" in table
    assert "s-cli-other" in table and "PostToolUse:Bash" in table

    go.touch()
    await poll_results(agent, "s-cli", 1)
    status = json.loads(await _hookctl(handle.socket, "status", "--json"))
    states = {r["session_id"]: (r["state"], r["delivered"]) for r in status["async_hooks"]}
    assert states["s-cli"] == ("delivered", True)
    # Listing is read-only: the other session's result is still waiting for its agent.
    others = await poll_results(agent, "s-cli-other", 1)
    assert others[0]["messages"] == ["SEEN"]
    text = await _hookctl(handle.socket, "status")
    assert "async hooks (2):" in text

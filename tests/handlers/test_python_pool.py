"""The python worker pool: sessions do not starve each other; no worker before a python hook.

Session A's hooks hold workers until the test releases them (a FIFO and a file:
no sleeps, no wall-clock bound).  Session B's python hook must finish while A's
are still held.  On the old pool (two workers, first come first served) B waited
until A's hooks were killed at their timeout, so "A is still running" failed.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client.client import Client
from hookd_client.results import FireResult
from reliability.helpers import event
from support.daemon import configure, configure_text

HELD = Path(__file__).resolve().parent.parent / "data" / "handlers" / "pyhooks" / "held.py"


def _config() -> dict[str, Any]:
    def py(function: str, timeout: float = 20) -> dict[str, Any]:
        return {"type": "python", "callable": f"{HELD}:{function}", "timeout": timeout}

    return {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Hold", "hooks": [py("blocked"), py("spinning")]},
                {"matcher": "Quick", "hooks": [py("quick")]},
            ]
        }
    }


def _fire(sock: Path, session: str, tool: str, cwd: Path) -> FireResult:
    with Client(sock) as client:
        raw = event(session_id=session, tool_name=tool, cwd=str(cwd))
        return client.fire("PreToolUse", raw).result


async def _open_for_writing(fifo: Path) -> None:
    """Open (and close) the FIFO's writing end once a reader has opened it: that
    releases the reader.  Without a reader a non-blocking open fails with ENXIO."""
    while True:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        await trio.sleep(0.01)


@pytest.mark.parametrize(
    "pool",
    [
        {},  # the defaults: the pool grows past the two workers A holds
        # The smallest pool that keeps the promise: two workers, one per session at most.
        {"python_workers": 2, "python_workers_per_session": 1},
    ],
)
async def test_one_sessions_stuck_hooks_do_not_stall_another_session(
    daemon_factory: Any, tmp_path: Path, pool: dict[str, int]
) -> None:
    handle = await daemon_factory(**pool)
    configure_text(handle, json.dumps(_config()))
    here = tmp_path / "a"
    here.mkdir()
    os.mkfifo(here / "fifo")
    held: list[FireResult] = []

    async def session_a() -> None:
        held.append(await trio.to_thread.run_sync(_fire, handle.socket, "A", "Hold", here))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(session_a)
        # A holds one worker (its own limit); its other hook waits for A's own slot.
        while not ((here / "blocked.started").exists() or (here / "spinning.started").exists()):
            await trio.sleep(0.01)
        quick = await trio.to_thread.run_sync(_fire, handle.socket, "B", "Quick", tmp_path)
        assert quick.system_messages == ["QUICK-B"]
        assert held == []  # B finished while A's hooks are still held
        (here / "release").write_text("")  # ends `spinning`
        await _open_for_writing(here / "fifo")  # ends `blocked`, whenever it opens its end
    [result] = held
    assert sorted(result.system_messages) == ["BLOCKED-DONE", "SPINNING-DONE"]
    assert [r.outcome for r in result.hooks] == ["success", "success"]


async def test_no_python_worker_until_a_python_hook_runs(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]})
    project = handle.project()
    await trio.to_thread.run_sync(_fire, handle.socket, "S", "Bash", project)
    pool = handle.daemon.handlers.pool
    assert pool.spawned == 0 and pool.pids() == []
    configure_text(handle, json.dumps(_config()))
    result = await trio.to_thread.run_sync(_fire, handle.socket, "S", "Quick", project)
    assert result.system_messages == ["QUICK-S"]
    assert pool.spawned >= 1

"""Faulty hooks: each gives its documented outcome and leaves no process behind.

Every event is fired with ``RELIABILITY_MARK=<uuid>`` in the agent environment,
which every process of the hook inherits; after the reply, /proc must hold no
process carrying it.  The one documented escape (a process that scrubs its
environment and calls setsid) is shown escaping, then cleaned up by the test.
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol
from hookd_client.client import Client
from reliability.helpers import DATA, event, processes_with, rss_kb
from support.daemon import configure_text


async def _daemon(daemon_factory: Any, **settings: Any) -> Any:
    handle = await daemon_factory(**settings)
    configure_text(handle, (DATA / "faulty.json").read_text().replace("{DATA}", str(DATA)))
    return handle


def _fire_sync(sock: Path, tool: str, env: dict[str, str], **changes: Any) -> protocol.FireReply:
    payload = event(tool_name=tool, session_id=f"faulty-{tool}", **changes)
    with Client(sock, timeout=60) as client:
        return client.fire("PreToolUse", payload, env=env)


async def fire(sock: Path, tool: str, **changes: Any) -> tuple[protocol.FireReply, str]:
    mark = f"RELIABILITY_MARK={uuid.uuid4().hex}"
    env = {**os.environ, mark.split("=")[0]: mark.split("=")[1]}
    reply = await trio.to_thread.run_sync(lambda: _fire_sync(sock, tool, env, **changes))
    return reply, mark


async def test_hang_is_killed_at_its_timeout(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    reply, mark = await fire(handle.socket, "Hang")
    run = reply.result.hooks[0]
    assert run.outcome == "cancelled" and run.timed_out and run.error == "timed out"
    assert reply.result.decision is None  # fail open: no decision
    assert processes_with(mark) == []


async def test_a_hook_that_ignores_sigterm_is_killed(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    reply, mark = await fire(handle.socket, "IgnoreTerm")
    assert reply.result.hooks[0].outcome == "cancelled"
    assert processes_with(mark) == []


async def test_setsid_grandchildren_are_found_by_their_marker_and_killed(
    daemon_factory: Any,
) -> None:
    handle = await _daemon(daemon_factory)
    reply, mark = await fire(handle.socket, "Setsid")
    assert reply.result.hooks[0].outcome == "cancelled"
    assert processes_with(mark) == []


async def test_documented_escape_scrubbed_env_plus_setsid_survives(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Not contained, and the docs say so: no marker, no process group, no cgroup."""
    handle = await _daemon(daemon_factory)
    pidfile = tmp_path / "escaped.pid"
    os.environ["ESCAPE_PIDFILE"] = str(pidfile)
    try:
        reply, mark = await fire(handle.socket, "Escape")
    finally:
        del os.environ["ESCAPE_PIDFILE"]
    assert reply.result.hooks[0].outcome == "success"
    assert processes_with(mark) == []  # nothing *marked* survives …
    pid = int(pidfile.read_text())
    try:
        assert Path(f"/proc/{pid}").exists()  # … but the scrubbed, setsid'd one does
    finally:
        os.kill(pid, signal.SIGKILL)


async def test_100_mb_of_stdout_is_capped_and_memory_stays_bounded(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory, output_cap=1024 * 1024)
    before = rss_kb()
    reply, mark = await fire(handle.socket, "Flood")
    run = reply.result.hooks[0]
    assert run.outcome == "success" and run.exit_code == 0
    assert run.truncated
    assert len(run.stdout) == 1024 * 1024
    # The daemon lives in this process: it held ~1 MiB of the 100, not 100.
    assert rss_kb() - before < 48 * 1024
    assert processes_with(mark) == []


async def test_invalid_utf8_is_replaced_not_fatal(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    reply, _ = await fire(handle.socket, "BadUtf8")
    run = reply.result.hooks[0]
    assert run.outcome == "success"
    assert "\ufffd" in run.stdout and "not utf-8" in run.stdout


async def test_broken_json_is_a_non_blocking_error(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    reply, _ = await fire(handle.socket, "BrokenJson")
    run = reply.result.hooks[0]
    assert run.outcome == "non_blocking_error"
    assert "not valid JSON" in (run.error or "")
    assert reply.result.decision is None


async def test_death_by_signal_is_a_non_blocking_error(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    reply, mark = await fire(handle.socket, "Signal")
    run = reply.result.hooks[0]
    assert run.outcome == "non_blocking_error"
    assert run.error == f"killed by signal {signal.SIGSEGV.value}"
    assert processes_with(mark) == []


async def test_closing_stdin_early_on_a_large_input_is_fine(daemon_factory: Any) -> None:
    handle = await _daemon(daemon_factory)
    big = {"command": "x" * (4 * 1024 * 1024)}
    reply, mark = await fire(handle.socket, "CloseStdin", tool_input=big)
    run = reply.result.hooks[0]
    assert run.outcome == "success", run
    assert reply.result.system_messages == ["closed stdin early"]
    assert processes_with(mark) == []


async def test_faulty_hooks_in_parallel_leave_nothing_and_the_daemon_serves_on(
    daemon_factory: Any,
) -> None:
    """All of them at once, twice: every process gone, memory flat between rounds."""
    handle = await _daemon(daemon_factory)
    tools = ["Hang", "IgnoreTerm", "Setsid", "Flood", "BadUtf8", "BrokenJson", "Signal"]
    marks: list[str] = []
    sizes = []
    for _round in range(2):

        async def one(tool: str) -> None:
            _reply, mark = await fire(handle.socket, tool)
            marks.append(mark)

        async with trio.open_nursery() as nursery:
            for tool in tools:
                nursery.start_soon(one, tool)
        sizes.append(rss_kb())
    assert all(processes_with(m) == [] for m in marks)
    assert sizes[1] - sizes[0] < 32 * 1024
    st = await trio.to_thread.run_sync(lambda: Client(handle.socket).connect().status())
    assert st["running"] == []

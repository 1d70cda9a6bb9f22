"""Crashes: SIGKILL the daemon under load; clients fail by policy; a restart serves them again
and delivers the async results it had persisted; nothing acknowledged is lost."""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.daemon.audit import AuditEvent, read_records
from hookd_client import protocol
from hookd_client.client import Client, DaemonUnavailable
from reliability.helpers import bench_module, event

fuzz = bench_module("fuzz")

HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}],
        "PostToolUse": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": 'echo \'{"systemMessage": "async-done"}\'',
                        "async": True,
                    }
                ]
            }
        ],
    }
}


class Agent:
    """A blocking client in a thread firing PreToolUse until told to stop (fail open)."""

    def __init__(self, sock: Path, name: str) -> None:
        self.sock = sock
        self.name = name
        self.acked: list[str] = []
        self.fallbacks = 0
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            nonce = uuid.uuid4().hex
            payload = event(session_id=self.name, tool_input={"command": f"echo {nonce}"})
            try:
                with Client(self.sock, timeout=30, retries=0) as client:
                    reply = client.fire("PreToolUse", payload, on_unavailable="open")
            except OSError as exc:  # DaemonUnavailable, or a reset during the handshake
                self.fallbacks += 1
                self.errors.append(f"handshake: {exc!r}")
                time.sleep(0.01)
                continue
            messages = reply.result.system_messages
            if messages and messages[0].startswith("hookd unavailable"):
                self.fallbacks += 1
                time.sleep(0.01)
            else:
                assert reply.result.hooks[0].outcome == "success"
                self.acked.append(nonce)


async def _until(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait for what the agent threads report (generous: they share 2 cores with everything)."""
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.02)


@pytest.mark.slow
async def test_sigkill_under_load_then_restart(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="hkcr", dir="/tmp"))
    daemon = fuzz.start_daemon(base, HOOKS)
    agents = [Agent(daemon.socket, f"crash-{i}") for i in range(6)]
    try:
        # An async hook finishes and is journaled, undelivered.
        def fire_async() -> None:
            with Client(daemon.socket) as client:
                client.fire("PostToolUse", event("PostToolUse-Bash", session_id="async-s"))

        await trio.to_thread.run_sync(fire_async)

        def finished() -> bool:
            with Client(daemon.socket) as client:
                listing = client.call(protocol.AsyncList(id=client.next_id(), session_id="async-s"))
            return bool(listing) and all(e.get("state") == "finished" for e in listing)

        with trio.fail_after(20):
            while not await trio.to_thread.run_sync(finished):
                await trio.sleep(0.05)

        async with trio.open_nursery() as nursery:
            for agent in agents:
                nursery.start_soon(trio.to_thread.run_sync, agent.run)
            # Under load: every agent has had replies from the live daemon.
            await _until(lambda: all(a.acked for a in agents))
            daemon.proc.send_signal(signal.SIGKILL)
            daemon.proc.wait()
            acked_before = sum(len(a.acked) for a in agents)
            # Every client meets the dead daemon and fails open.
            fallbacks_at_kill = [a.fallbacks for a in agents]
            await _until(
                lambda: all(a.fallbacks > n for a, n in zip(agents, fallbacks_at_kill, strict=True))
            )

            # What each policy gives while it is down.
            def down() -> tuple[Any, Any]:
                closed = Client(daemon.socket, retries=0).fire(
                    "PreToolUse", event(), on_unavailable="closed"
                )
                try:
                    Client(daemon.socket, retries=0).fire("PreToolUse", event())
                except DaemonUnavailable as exc:
                    return closed, exc
                return closed, None

            closed, raised = await trio.to_thread.run_sync(down)
            fallbacks_down = sum(a.fallbacks for a in agents)
            daemon = fuzz.start_daemon(base, HOOKS)  # restart on the same socket and state
            acked_at_restart = [len(a.acked) for a in agents]
            await _until(
                lambda: all(len(a.acked) > n for a, n in zip(agents, acked_at_restart, strict=True))
            )
            for agent in agents:
                agent.stop.set()

        assert closed.result.decision == "deny"
        assert "hookd unavailable (fail-closed)" in (closed.result.reason or "")
        assert isinstance(raised, DaemonUnavailable) and "hookd is not running" in str(raised)
        assert fallbacks_down > 0
        assert acked_before > 0
        assert sum(len(a.acked) for a in agents) > acked_before  # served again after restart

        # The persisted async result is delivered after the restart, exactly once.
        def collect() -> list[Any]:
            with Client(daemon.socket) as client:
                return client.check_for_new_responses("async-s")

        first = await trio.to_thread.run_sync(collect)
        assert [e["messages"] for e in first] == [["async-done"]]
        assert await trio.to_thread.run_sync(collect) == []

        # Nothing acknowledged is lost: every event a client got a real reply for
        # is in the audit log, across the crash.
        records = read_records(daemon.state / "audit").records
        audited = {
            (r.input or {}).get("tool_input", {}).get("command", "")[5:]
            for r in records
            if isinstance(r, AuditEvent)
        }
        acked = {n for a in agents for n in a.acked}
        assert acked <= audited, len(acked - audited)
    finally:
        for agent in agents:
            agent.stop.set()
        fuzz.stop_daemon(daemon)
        shutil.rmtree(base, ignore_errors=True)

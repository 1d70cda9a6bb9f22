"""The daemon starts with no config, answers status, fires events and reloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol
from hookd_client.client import Client
from support.daemon import configure

CC_FIXTURES = Path(__file__).resolve().parent.parent / "data" / "cc-fixtures"


def _fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CC_FIXTURES / f"{name}.json").read_text())
    return data


async def test_starts_without_config_and_reports_status(daemon_factory: Any) -> None:
    handle = await daemon_factory()

    def status() -> dict[str, Any]:
        with Client(handle.socket) as client:
            return client.status()

    st = await trio.to_thread.run_sync(status)
    assert st["generation"] >= 1
    assert st["socket"] == str(handle.socket)
    assert st["sessions"] == []
    assert [s["exists"] for s in st["sources"]] == [False, False]


async def test_fire_runs_user_hooks_and_tracks_the_session(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    blocks = {"type": "command", "command": "echo nope >&2; exit 2"}
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [blocks]}]})
    event = _fixture("PreToolUse-Bash")

    def fire() -> protocol.FireReply:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event, claude=True)

    reply = await trio.to_thread.run_sync(fire)
    assert reply.result.decision == "deny"
    assert reply.result.reason == "[echo nope >&2; exit 2]: nope"
    assert reply.claude is not None
    assert '"permissionDecision":"deny"' in reply.claude.stdout
    session = handle.daemon.sessions.get(event["session_id"])
    assert session is not None and session.events == 1 and session.outcomes["blocking"] == 1

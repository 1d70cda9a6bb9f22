"""The daemon's agent door: a ``fire`` (or relay) naming an agent is decoded by its adapter, run
on the canonical event, degraded to what the agent can do, encoded in its format — and the
session's agent shows in ``hookctl sessions``, ``status``, ``tail`` and the audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from cli.helpers import hookctl
from hookd.daemon.audit import AuditEvent, AuditRun, read_records
from hookd_client import protocol
from hookd_client.client import Client, DaemonError

CODEX = Path(__file__).resolve().parents[1] / "data" / "agents" / "codex-0.169.0"


def codex_input(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CODEX / f"{name}.json").read_text())
    return data | changes


def _write_hooks(handle: Any, hooks: dict[str, Any]) -> None:
    handle.user_config.write_text(json.dumps({"hooks": hooks}))
    handle.daemon.reload()


async def _hookctl(handle: Any, *args: str) -> str:
    """hookctl in a thread: the in-process daemon shares this test's trio loop."""
    env = {"XDG_CONFIG_HOME": str(handle.home / ".config")}
    done = await trio.to_thread.run_sync(
        lambda: hookctl("--socket", str(handle.socket), *args, env=env)
    )
    return done.stdout


def _fire(sock: Path, event: str, payload: dict[str, Any], agent: str) -> protocol.FireReply:
    with Client(sock) as client:
        return client.fire(event, payload, claude=True, agent=agent)


async def test_a_rewrite_reaches_codex_and_the_session_audit_and_tail_name_it(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    project = handle.project()
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo safe"},
        }
    }
    hook = {"type": "command", "command": f"cat >/dev/null; echo '{json.dumps(rewrite)}'"}
    _write_hooks(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})
    payload = codex_input("PreToolUse", cwd=str(project), session_id="codex-s1")
    reply = await trio.to_thread.run_sync(_fire, handle.socket, "PreToolUse", payload, "codex")
    assert reply.claude is not None
    out = json.loads(reply.claude.stdout)["hookSpecificOutput"]
    assert out == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "echo safe"},
    }
    sessions = await _hookctl(handle, "sessions")
    assert "codex-s1" in sessions and "codex" in sessions.split("codex-s1", 1)[1].split("\n")[0]
    status = await _hookctl(handle, "status", "--json")
    assert [s["agent"] for s in json.loads(status)["sessions"]] == ["codex"]
    tail = await _hookctl(handle, "tail", "--last", "5")
    assert "codex" in tail.splitlines()[-1]
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    events = [r for r in records if isinstance(r, AuditEvent)]
    runs = [r for r in records if isinstance(r, AuditRun)]
    assert [(e.agent, e.event) for e in events] == [("codex", "PreToolUse")]
    assert [r.agent for r in runs] == ["codex"]


async def test_an_ask_is_denied_for_codex_and_the_loss_is_audited(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    hook = {"type": "command", "command": f"cat >/dev/null; echo '{json.dumps(ask)}'"}
    _write_hooks(handle, {"PreToolUse": [{"hooks": [hook]}]})
    payload = codex_input("PreToolUse", cwd=str(handle.project()), session_id="codex-ask")
    reply = await trio.to_thread.run_sync(_fire, handle.socket, "PreToolUse", payload, "codex")
    assert reply.result.decision == "deny"
    assert reply.claude is not None
    assert json.loads(reply.claude.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    (recorded,) = [r for r in records if isinstance(r, AuditEvent)]
    assert recorded.decision == "deny"
    assert any("ask" in e for e in recorded.errors)


async def test_claude_events_without_an_agent_are_claude_codes(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    payload = codex_input("Stop", cwd=str(handle.project()), session_id="plain")
    await trio.to_thread.run_sync(_fire, handle.socket, "Stop", payload, "")
    assert [s.agent for s in handle.daemon.sessions.all()] == ["claude"]


async def test_an_unknown_agent_or_event_is_a_clear_error(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    payload = codex_input("Stop", cwd=str(handle.project()))
    with pytest.raises(DaemonError, match="unknown agent 'nobody'"):
        await trio.to_thread.run_sync(_fire, handle.socket, "Stop", payload, "nobody")
    with pytest.raises(DaemonError, match="AfterAgent"):
        await trio.to_thread.run_sync(_fire, handle.socket, "AfterAgent", payload, "codex")


async def test_the_first_event_of_an_agent_logs_what_it_cannot_run(
    daemon_factory: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    """Once per config generation and agent: goose (from its docs) cannot continue after
    Stop, so a Stop hook's block is lost there — a warning, logged once."""
    handle = await daemon_factory()
    stop = {"type": "command", "command": "true"}
    _write_hooks(handle, {"Stop": [{"hooks": [stop]}]})
    payload = {"session_id": "goose-log", "cwd": str(handle.project()), "hook_event_name": "Stop"}
    capfd.readouterr()
    for _ in range(2):
        await trio.to_thread.run_sync(_fire, handle.socket, "Stop", payload, "goose")
    captured = capfd.readouterr()
    found = [
        line
        for line in (captured.out + captured.err).splitlines()
        if "agent cannot run a hook as written" in line
    ]
    assert len(found) == 1, found
    assert "agent=goose" in found[0] and "hook_event=Stop" in found[0]
    assert "cannot continue" in found[0]

"""The audit log: every run and decision recorded; rotation; capped inputs; replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from hookd.daemon.audit import AuditEvent, AuditLog, AuditRun, json_diff, read_records
from hookd_client import protocol
from hookd_client.client import Client
from hookd_client.results import FireResult, HookRef, HookRun
from reliability.helpers import DATA, event
from support.daemon import configure_text


def _fire_sync(sock: Path, payload: dict[str, Any]) -> protocol.FireReply:
    with Client(sock) as client:
        return client.fire("PreToolUse", payload)


async def fire(handle: Any, **changes: Any) -> protocol.FireReply:
    payload = event(**{"session_id": "audited", **changes})
    return await trio.to_thread.run_sync(_fire_sync, handle.socket, payload)


def records(handle: Any) -> list[Any]:
    result = read_records(handle.daemon.settings.state_path() / "audit")
    assert result.bad_lines == []
    return result.records


def hookctl(handle: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(handle.home / ".config")}
    state = str(handle.daemon.settings.state_path())
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "hookd.cli.hookctl",
            "--socket",
            str(handle.socket),
            *args,
            "--state-dir",
            state,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


async def test_runs_and_decisions_are_recorded_with_the_rewrite_diff(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure_text(handle, (DATA / "rewrite.json").read_text())
    reply = await fire(handle)
    assert reply.result.updated_input == {"command": "ls -la", "timeout": 5}
    run, recorded = records(handle)
    assert isinstance(run, AuditRun) and isinstance(recorded, AuditEvent)
    assert run.event_id == recorded.id and run.input_hash == recorded.input_hash
    assert run.decision == "allow" and run.outcome == "success" and run.exit_code == 0
    assert run.source == str(handle.user_config) and run.scope == "user"
    original = event()["tool_input"]
    expected = [d for d in json_diff(original, {"command": "ls -la", "timeout": 5}, "$.tool_input")]
    assert run.updated_input_diff == expected == recorded.updated_input_diff
    assert any(d.path == "$.tool_input.command" and d.new == "ls -la" for d in expected)
    assert recorded.decision == "allow" and recorded.session_id == "audited"
    assert recorded.input == event(session_id="audited")
    out = hookctl(handle, "audit", "--session", "audited", "--runs")
    assert out.returncode == 0, out.stderr
    assert recorded.id in out.stdout and "rewrite change $.tool_input.command" in out.stdout
    assert "decision=allow" in out.stdout
    assert hookctl(handle, "audit", "--session", "nobody").stdout == ""


async def test_a_timeout_is_recorded_with_its_kill_reason(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    text = (DATA / "faulty.json").read_text().replace("{DATA}", str(DATA))
    configure_text(handle, text)
    await fire(handle, tool_name="Hang")
    [run] = [r for r in records(handle) if isinstance(r, AuditRun)]
    assert run.outcome == "cancelled" and run.kill_reason == "timeout"


async def test_large_inputs_are_capped_and_cannot_be_replayed(daemon_factory: Any) -> None:
    handle = await daemon_factory(audit_input_cap=2048)
    await fire(handle, tool_input={"command": "x" * 5000})
    [recorded] = [r for r in records(handle) if isinstance(r, AuditEvent)]
    assert recorded.input is None and recorded.input_truncated and recorded.input_size > 5000
    out = await trio.to_thread.run_sync(lambda: hookctl(handle, "replay", recorded.id))
    assert out.returncode == 1 and "cannot be replayed" in out.stderr


def test_the_log_rotates_by_size_and_keeps_n_files(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, max_bytes=4096, files=3)
    audit = log.begin("PreToolUse", event(), "s", "/p", "test")
    for _ in range(200):
        log.event(audit, FireResult(event="PreToolUse"))
    log.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]
    assert all(p.stat().st_size <= 4096 for p in tmp_path.iterdir())
    assert oct((tmp_path / "audit.jsonl").stat().st_mode & 0o777) == "0o600"
    result = read_records(tmp_path)
    assert result.bad_lines == [] and 0 < len(result.records) < 200


def test_a_runs_record_is_never_held_where_it_could_be_lost(tmp_path: Path) -> None:
    # An event of one hook (batch_runs): its run's record waits for the event's and goes
    # out in the same write, in order; cancelled (no record of its own), the event still
    # writes it.  Any other event writes each run when it ends — a sibling may run long
    # — as does a run that ends after its event's record (an async hook's).
    log = AuditLog(tmp_path)
    ref = HookRef(name="h", type="command", scope="user", source="/s", event="PreToolUse")

    def run(outcome: Any, exit_code: int = 0) -> HookRun:
        return HookRun(hook=ref, outcome=outcome, exit_code=exit_code)

    path = tmp_path / "audit.jsonl"
    one = log.begin("PreToolUse", event(), "s", "/p", "test", batch_runs=True)
    log.run(one, ref, run("blocking", 2))
    assert not path.exists() or path.read_bytes() == b""  # not yet: with the event
    log.event(one, FireResult(event="PreToolUse", decision="deny"))
    log.run(one, ref, run("success"))  # late: after its event
    cancelled = log.begin("PreToolUse", event(), "s", "/p", "test", batch_runs=True)
    log.run(cancelled, ref, run("non_blocking_error", 1))
    log.flush(cancelled)
    several = log.begin("PreToolUse", event(), "s", "/p", "test")
    log.run(several, ref, run("success"))
    written = len(read_records(tmp_path).records)
    log.close()
    records = read_records(tmp_path).records
    assert written == len(records) == 5  # the last run was out before its event ended
    kinds = [(type(r).__name__, getattr(r, "outcome", None)) for r in records]
    assert kinds == [
        ("AuditRun", "blocking"),
        ("AuditEvent", None),
        ("AuditRun", "success"),
        ("AuditRun", "non_blocking_error"),
        ("AuditRun", "success"),
    ]
    assert isinstance(records[0], AuditRun) and records[0].event_id == one.id
    assert isinstance(records[3], AuditRun) and records[3].event_id == cancelled.id
    assert log.written == 5 and log.failed == 0


def test_a_torn_line_is_reported_not_skipped(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    log.event(
        log.begin("Stop", {}, "s", "/p", "t"),
        __import__("hookd_client.results").results.FireResult(event="Stop"),
    )
    log.close()
    with (tmp_path / "audit.jsonl").open("ab") as fh:
        fh.write(b'{"kind":"event","time":1')  # a crash mid-write
    result = read_records(tmp_path)
    assert len(result.records) == 1
    assert len(result.bad_lines) == 1 and "audit.jsonl:2" in result.bad_lines[0]


async def test_replay_shows_what_the_current_config_changes(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure_text(handle, (DATA / "rewrite.json").read_text())
    await fire(handle)
    [recorded] = [r for r in records(handle) if isinstance(r, AuditEvent)]
    same = await trio.to_thread.run_sync(lambda: hookctl(handle, "replay", recorded.id[:8]))
    assert same.returncode == 0, same.stderr
    assert "no change" in same.stdout
    configure_text(handle, (DATA / "deny.json").read_text())
    changed = await trio.to_thread.run_sync(
        lambda: hookctl(handle, "replay", recorded.id, "--json")
    )
    assert changed.returncode == 0, changed.stderr
    data = json.loads(changed.stdout)
    assert "decision: allow -> deny" in data["changes"]
    assert any(c.startswith("updated input:") for c in data["changes"])
    assert any(c.startswith("hook now runs:") for c in data["changes"])
    assert any(c.startswith("hook no longer runs:") for c in data["changes"])

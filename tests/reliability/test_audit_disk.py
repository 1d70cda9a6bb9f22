"""A full disk: events are answered, their audit records are lost — and counted (issue 28, 12).

The audit log is written before each answer, but an agent must not stall on a
disk: a write that fails loses its records.  That used to be one error line per
event and nothing else; now ``hookctl status`` counts the records lost with the
last error, the log says it once when the failures begin and once when writes
resume, and a write cut short by the full disk leaves no torn line behind.

The disk is real: a 256 KiB tmpfs mounted by the test (root only; skipped with
the reason where mounting is refused).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.cli.remote import render_status
from hookd.daemon.audit import AuditEvent, read_records
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure

HOOK = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs (a disk that fills up) needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory: Path) -> Path:
    """Write a file until the file system is full; return it."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as fh:
        chunk = b"\0" * 4096
        while True:
            try:
                fh.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    return filler


def _fire(sock: Path, n: int) -> list[Any]:
    with Client(sock) as client:
        return [
            client.fire("PreToolUse", event(session_id="disk", prompt_id=f"p{i}")) for i in range(n)
        ]


def _status(sock: Path) -> dict[str, Any]:
    with Client(sock) as client:
        return client.status()


async def test_a_full_disk_loses_audit_records_counts_them_and_says_so_once(
    daemon_factory: Any, small_disk: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    handle = await daemon_factory(state_dir=str(small_disk / "state"))
    configure(handle, HOOK)
    filler = _fill(small_disk)
    capfd.readouterr()

    replies = await trio.to_thread.run_sync(_fire, handle.socket, 6)
    # Every event answered, its hook run: the full disk costs the record, not the answer.
    assert all([r.outcome for r in reply.result.hooks] == ["success"] for reply in replies)
    st = await trio.to_thread.run_sync(_status, handle.socket)
    assert st["audit"]["lost"] == 12, st["audit"]  # each event: its run and itself
    assert "No space left on device" in st["audit"]["last_error"]
    text = render_status(st)
    assert "audit errors:" in text and "12 record(s) lost (their events were answered)" in text
    logged = capfd.readouterr().err
    assert logged.count("audit write failed") == 1, logged

    filler.unlink()
    await trio.to_thread.run_sync(_fire, handle.socket, 1)
    st = await trio.to_thread.run_sync(_status, handle.socket)
    assert st["audit"]["lost"] == 12 and st["audit"]["written"] == 2
    logged = capfd.readouterr().err
    assert logged.count("audit writes resumed") == 1 and "lost=12" in logged, logged
    result = read_records(small_disk / "state" / "audit")
    assert result.bad_lines == []
    events = [r for r in result.records if isinstance(r, AuditEvent)]
    assert [e.input["prompt_id"] for e in events if e.input] == ["p0"]


async def test_a_write_cut_short_by_the_full_disk_leaves_no_torn_line(
    daemon_factory: Any, small_disk: Path
) -> None:
    """Room for part of a record: the part that went in is taken back."""
    handle = await daemon_factory(state_dir=str(small_disk / "state"))
    configure(handle, HOOK)
    await trio.to_thread.run_sync(_fire, handle.socket, 1)  # the file exists, a page used
    filler = _fill(small_disk)
    big = "x" * 20_000  # larger than what is left of the audit file's last page
    with Client(handle.socket) as client:
        reply = await trio.to_thread.run_sync(
            lambda: client.fire("PreToolUse", event(session_id="disk", prompt_id=big))
        )
    assert reply.result.hooks
    filler.unlink()
    await trio.to_thread.run_sync(_fire, handle.socket, 1)
    result = read_records(small_disk / "state" / "audit")
    assert result.bad_lines == [], result.bad_lines
    lines = (small_disk / "state" / "audit" / "audit.jsonl").read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)
    assert len([r for r in result.records if isinstance(r, AuditEvent)]) == 2

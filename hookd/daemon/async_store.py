"""The async registry's records and their journal on disk.

One JSON-lines journal, ``<state>/async/journal.jsonl``, that only grows
until it is compacted.  Each line is one tagged record:

* ``put``: the whole entry as it is now (queued, running, finished …);
* ``delivered``: these results were handed to their session;
* ``dropped``: these results expired undelivered (retention).

Why a journal and not a file per result: appends are one ``write`` each, and
an ``O_APPEND`` write of a line reaches the kernel whole, so a daemon killed
with SIGKILL loses nothing it had written — the page cache outlives the
process.  ``fsync`` is added where a machine crash must not lose a fact: when
a result finishes and when it is delivered (the mark that prevents a second
delivery).  Replaying the journal is replaying puts in order and applying
marks; a torn last line (power loss mid-write) is skipped and logged.

On startup :func:`AsyncStore.load` replays, turns every entry that was still
queued or running into ``cancelled`` (its daemon stopped or died under it),
and rewrites a compact journal (temp file, fsync, rename) holding only what
still has to be delivered.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Literal

import msgspec
import structlog

from hookd.safe_files import open_append, write_atomically

__all__ = ["AsyncEntry", "AsyncKind", "AsyncState", "AsyncStore"]

log = structlog.get_logger("hookd.async.store")

AsyncKind = Literal["async", "asyncRewake", "output"]
"""Config ``async: true``; config ``asyncRewake: true``; ``{"async": true}`` on stdout."""

AsyncState = Literal["queued", "running", "finished", "timed_out", "cancelled"]
"""Where a run is; whether its result was delivered is ``response_attachment_sent``."""

FINAL_STATES: frozenset[str] = frozenset({"finished", "timed_out", "cancelled"})


class AsyncEntry(msgspec.Struct, kw_only=True, rename="camel"):
    """One background hook run, from queued to delivered.

    Field names on the wire follow Claude Code's async registry
    (``processId``, ``hookName``, ``hookEvent``, ``toolName``, ``command``,
    ``startTime``, ``timeout``, ``stdout``, ``stderr``,
    ``responseAttachmentSent``); the rest is hookd's.
    """

    process_id: str
    kind: AsyncKind
    agent_pid: int | None
    session_id: str
    hook_name: str
    hook_event: str
    tool_name: str = ""
    command: str = ""
    source: str = ""
    queued_time: float
    """Wall-clock time the hook was handed to the async runner."""
    start_time: float | None = None
    """Wall-clock time its process started (None while queued)."""
    end_time: float | None = None
    timeout: float
    """Seconds this run may take once started (see docs/async.md for which applies)."""
    state: AsyncState = "queued"
    exit_code: int | None = None
    pid: int | None = None
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    error: str | None = None
    """Why it did not finish normally (timed out, cancelled, could not start …)."""
    messages: list[str] = msgspec.field(default_factory=list)
    """What the agent is told: additionalContext, systemMessage, or the rewake text."""
    rewake: bool = False
    """An asyncRewake hook exited 2: its message should wake the agent now."""
    response_attachment_sent: bool = False
    """Delivered to its session (once: by check_async, a fire reply, or a push)."""
    delivered_time: float | None = None
    run_id: str = ""
    """The run's ``HOOKD_RUN_ID``: after a crash, its orphaned processes are found by it."""
    agent: str = ""
    """The agent whose event started it (telemetry)."""
    prompt_id: str = ""
    """The starting event's ``prompt_id`` (telemetry: joins the agent's own traces)."""
    span: str = ""
    """With telemetry on: ``<trace>-<parent span>-<own span>`` in hex — the span this run
    will have, a child of the event that started it (hookd/daemon/telemetry.py)."""

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES


class _Put(msgspec.Struct, tag="put"):
    entry: AsyncEntry


class _Delivered(msgspec.Struct, tag="delivered"):
    ids: list[str]
    at: float


class _Dropped(msgspec.Struct, tag="dropped"):
    ids: list[str]


_Record = _Put | _Delivered | _Dropped
_decoder = msgspec.json.Decoder(_Record)
_encoder = msgspec.json.Encoder()

JOURNAL = "journal.jsonl"


class AsyncStore:
    """Appends records to the journal; replays and compacts it at startup."""

    def __init__(self, directory: Path, *, fsync: bool = True) -> None:
        self.directory = directory
        self.path = directory / JOURNAL
        self.fsync = fsync
        self._fd: int | None = None
        self.records = 0
        """Records in the journal file now (drives compaction)."""

    # --- startup -------------------------------------------------------------------

    def load(self, reason: str) -> list[AsyncEntry]:
        """Replay the journal; return the undelivered results, interrupted runs cancelled.

        ``reason`` is the error given to entries that were queued or running
        when the previous daemon stopped.  The journal is rewritten compactly.
        """
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        entries: dict[str, AsyncEntry] = {}
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            lines = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = _decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                log.warning("skipping a bad async journal line", line=number, error=str(exc))
                continue
            if isinstance(record, _Put):
                entries[record.entry.process_id] = record.entry
            elif isinstance(record, _Delivered):
                for pid in record.ids:
                    entry = entries.get(pid)
                    if entry is not None:
                        entry.response_attachment_sent = True
                        entry.delivered_time = record.at
            else:
                for pid in record.ids:
                    entries.pop(pid, None)
        now = time.time()
        pending: list[AsyncEntry] = []
        for entry in entries.values():
            if entry.response_attachment_sent:
                continue
            if entry.state in ("queued", "running"):
                entry.state = "cancelled"
                entry.error = reason
                entry.end_time = now
                entry.exit_code = None
            pending.append(entry)
        self._rewrite(pending)
        return pending

    def _rewrite(self, entries: list[AsyncEntry]) -> None:
        self.close()
        # Owner-only, like the appended journal: results may hold whatever a hook printed.
        body = b"".join(_encoder.encode(_Put(entry)) + b"\n" for entry in entries)
        write_atomically(self.path, body, 0o600)
        self.records = len(entries)

    def compact(self, live: list[AsyncEntry]) -> None:
        """Rewrite the journal as one ``put`` per entry that still matters."""
        self._rewrite(live)

    # --- appending -----------------------------------------------------------------

    def _open(self) -> int:
        if self._fd is None:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._fd = open_append(self.path, 0o600)
        return self._fd

    def _append(self, record: _Record, durable: bool) -> None:
        fd = self._open()
        data = _encoder.encode(record) + b"\n"
        written = os.write(fd, data)
        if written != len(data):  # regular files do not short-write short lines
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        self.records += 1
        if durable and self.fsync:
            os.fsync(fd)

    def put(self, entry: AsyncEntry, *, durable: bool = False) -> None:
        self._append(_Put(entry), durable)

    def delivered(self, ids: list[str], at: float) -> None:
        if ids:
            self._append(_Delivered(ids, at), durable=True)

    def dropped(self, ids: list[str]) -> None:
        if ids:
            self._append(_Dropped(ids), durable=False)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

"""The audit log: one JSON line per hook run, per event decision and per breaker change.

Why a file and not the in-memory ``tail`` ring: the audit log must answer
"what did the hooks decide about this tool call, and why" after the fact —
after a restart, after the session is gone — and ``hookctl replay`` must be
able to re-run a recorded event against today's configuration.  So an
``event`` record keeps the event's input (the hook input exactly as the
daemon validated it), capped at ``input_cap`` bytes: a larger input is
recorded by hash and size only and cannot be replayed.  The agent's
environment is *not* recorded (it holds secrets); replay supplies
``CLAUDE_PROJECT_DIR`` from the record and the caller's own environment.

Records are append-only and unbuffered: each hook run's record is written when
the run ends, the event's before the agent gets its answer — for an event of
one hook, the run's and the event's together in one ``write``, since nothing
happens between the two (no fsync: a daemon crash loses nothing the kernel has
accepted, a power loss may lose the last lines; a torn last line is reported by
the reader, never silently skipped).  The file rotates by size:
``audit.jsonl`` → ``.1`` … ``.N``, oldest dropped, so the log never holds more
than ``max_bytes × (files + 1)``.

Every record is a msgspec Struct in a tagged union (``kind``): the reader
decodes with the same types the writer encoded, so a field rename cannot go
unnoticed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import structlog

from hookd.safe_files import open_append
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = [
    "AuditBreaker",
    "AuditEvent",
    "AuditLog",
    "AuditRecord",
    "AuditRun",
    "DiffOp",
    "EventAudit",
    "hook_decision",
    "input_hash",
    "json_diff",
    "kill_reason",
    "read_records",
]

log = structlog.get_logger("hookd.audit")

_MISSING: Any = object()


class DiffOp(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One difference between two JSON values, at a JSONPath-like ``path``."""

    op: str
    """``add`` | ``remove`` | ``change``"""
    path: str
    old: Any = None
    new: Any = None


class AuditRun(msgspec.Struct, kw_only=True, omit_defaults=True, tag="run", tag_field="kind"):
    time: float
    event_id: str
    session_id: str
    event: str
    hook: str
    hook_type: str
    agent: str = ""
    """The agent whose event ran the hook (``claude``, ``codex``, …)."""
    scope: str
    source: str
    input_hash: str
    outcome: str
    exit_code: int | None = None
    duration_ms: float = 0.0
    decision: str | None = None
    """What this hook said: ``allow``/``deny``/``ask``/``defer``, or ``block``."""
    updated_input_diff: list[DiffOp] | None = None
    """This hook's ``updatedInput`` against the event's ``tool_input``."""
    kill_reason: str | None = None
    """``timeout``, ``signal N`` (died by a signal), or None."""
    error: str | None = None
    truncated: bool = False
    pid: int | None = None
    daemon_fault: bool = False
    """The daemon could not start the hook (out of processes, memory or descriptors)."""
    paused: bool = False
    """Not run: paused by the circuit breaker, and fail-closed, so a block stood for it."""
    launch: str | None = None
    """A command hook: ``warm`` or ``cold: <why>`` (docs/performance.md, "Warm Python")."""


class AuditEvent(msgspec.Struct, kw_only=True, omit_defaults=True, tag="event", tag_field="kind"):
    time: float
    id: str
    session_id: str
    event: str
    project: str
    client: str = ""
    agent: str = ""
    """The agent that fired the event; ``input`` is then the canonical (translated) input."""
    native_event: str = ""
    """The agent's own name for the event, when it differs (``BeforeTool``)."""
    input_hash: str
    input_size: int
    input: dict[str, Any] | None = None
    """The event input, or None when it was larger than the cap (then not replayable)."""
    input_truncated: bool = False
    decision: str | None = None
    reason: str | None = None
    stop: bool = False
    """True when the result said ``continue: false``."""
    updated_input_diff: list[DiffOp] | None = None
    hooks: int = 0
    outcomes: dict[str, int] = msgspec.field(default_factory=dict)
    errors: list[str] = msgspec.field(default_factory=list)
    generation: int = 0
    duration_ms: float = 0.0
    untrusted: int = 0
    """Hooks of the project that did not run because it is not trusted."""


class AuditBreaker(
    msgspec.Struct, kw_only=True, omit_defaults=True, tag="breaker", tag_field="kind"
):
    time: float
    key: str
    hook: str
    state: str
    """``paused`` | ``reset``"""
    error: str | None = None


AuditRecord = AuditRun | AuditEvent | AuditBreaker

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AuditRecord)


def input_hash(raw: dict[str, Any]) -> tuple[str, bytes]:
    """BLAKE2b-128 of the input's compact JSON (and the JSON itself, to size it).

    An identity for inputs, not a signature: 128 bits, as the sha256 prefix it
    replaced, from Python's own BLAKE2 — OpenSSL's sha256 costs a lookup or a
    context copy per hasher, a third of this function on every event."""
    data = _encoder.encode(raw)
    return hashlib.blake2b(data, digest_size=16).hexdigest(), data


def json_diff(old: Any, new: Any, path: str = "$") -> list[DiffOp]:
    """A structural diff: nested maps by key, everything else compared whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[DiffOp] = []
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{key}"
            if key not in new:
                ops.append(DiffOp(op="remove", path=sub, old=old[key]))
            elif key not in old:
                ops.append(DiffOp(op="add", path=sub, new=new[key]))
            else:
                ops.extend(json_diff(old[key], new[key], sub))
        return ops
    if old is _MISSING:
        return [DiffOp(op="add", path=path, new=new)]
    if old == new and type(old) is type(new):
        return []
    return [DiffOp(op="change", path=path, old=old, new=new)]


def hook_decision(run: HookRun) -> str | None:
    """The verdict one hook gave, in Claude Code's words, for the audit record."""
    output = run.output
    specific = output.hookSpecificOutput if output is not None else None
    decision: str | None = None
    if specific is not None:
        decision = specific.permissionDecision
        if decision is None and specific.decision is not None:
            decision = specific.decision.behavior
    if decision is None and output is not None:
        decision = output.decision
    if decision is None and run.outcome == "blocking":
        decision = "block"
    return decision


def kill_reason(run: HookRun) -> str | None:
    if run.timed_out:
        return "timeout"
    if run.exit_code is not None and run.exit_code < 0:
        return f"signal {-run.exit_code}"
    return None


@dataclass(slots=True)
class EventAudit:
    """One event being audited: its id and input hash, shared by its hook runs."""

    id: str
    session_id: str
    event: str
    project: str
    client: str
    raw: dict[str, Any]
    hash: str
    data: bytes
    """The input's compact JSON: hashed once, and written into the record as is — kept
    only when it is within the cap (a larger input is recorded by hash and size, and
    its JSON would be one more copy of it held while the event runs)."""
    size: int
    """Bytes of the input's compact JSON."""
    started: float
    """``time.perf_counter()`` when the event began (the record's ``duration_ms``)."""
    agent: str = ""
    native_event: str = ""
    pending: list[bytes] | None = None
    """Run records waiting to go out with the event's own, in one ``write`` — only for an
    event of one hook, where nothing awaits between its run's end and the event's
    record.  None: each run is written when it ends (an event of several hooks, a run
    after the event's record — an async hook's)."""


class AuditLog:
    """Appends records to ``<dir>/audit.jsonl`` and rotates it by size."""

    def __init__(
        self,
        directory: Path,
        *,
        max_bytes: int = 10 * 1024 * 1024,
        files: int = 5,
        input_cap: int = 64 * 1024,
        enabled: bool = True,
    ) -> None:
        self.directory = directory
        self.path = directory / "audit.jsonl"
        # Event ids: a random prefix per daemon run and a counter — unique across
        # restarts without a getrandom() system call on every event.
        self._id_prefix = uuid.uuid4().hex[:8]
        self._ids = itertools.count()
        self.max_bytes = max_bytes
        self.files = files
        self.input_cap = input_cap
        self.enabled = enabled
        self.written = 0
        self.failed = 0
        """Records lost: their write failed (a full disk, a file over its size limit)."""
        self.last_error: str | None = None
        self.last_error_at: float | None = None
        self._burst_lost: int | None = None
        """Records lost since writes began failing; None while they succeed."""
        self._fd: int | None = None
        self._size = 0

    # --- what the daemon calls -------------------------------------------------

    def begin(
        self,
        event: str,
        raw: dict[str, Any],
        session_id: str,
        project: str,
        client: str,
        agent: str = "",
        native_event: str = "",
        *,
        batch_runs: bool = False,
    ) -> EventAudit:
        """An event's audit.  ``batch_runs``: its runs' records wait for its own and go
        out with it in one ``write`` — for an event of one hook only, where nothing can
        happen between the run's end and the event's record."""
        digest, data = input_hash(raw) if self.enabled else ("", b"")
        size = len(data)
        return EventAudit(
            f"{self._id_prefix}{next(self._ids) & 0xFFFFFFFF:08x}",
            session_id,
            event,
            project,
            client,
            raw,
            digest,
            data if size <= self.input_cap else b"",
            size,
            time.perf_counter(),
            agent,
            native_event if native_event != event else "",
            [] if batch_runs else None,
        )

    def run(self, audit: EventAudit, ref: HookRef, run: HookRun) -> None:
        if not self.enabled:
            return
        record = AuditRun(
            time=time.time(),
            event_id=audit.id,
            session_id=audit.session_id,
            event=audit.event,
            hook=ref.name,
            hook_type=ref.type,
            agent=audit.agent,
            scope=ref.scope,
            source=ref.source,
            input_hash=audit.hash,
            outcome=run.outcome,
            exit_code=run.exit_code,
            duration_ms=run.duration_ms,
            pid=run.pid,
        )
        # The rest assigned, not passed (see ``event``: a call's keywords are what cost).
        record.decision = hook_decision(run)
        specific = run.output.hookSpecificOutput if run.output is not None else None
        if specific is not None and specific.updatedInput is not None:
            tool_input = audit.raw.get("tool_input", {})
            record.updated_input_diff = json_diff(tool_input, specific.updatedInput, "$.tool_input")
        record.kill_reason = kill_reason(run)
        record.error, record.truncated = run.error, run.truncated
        record.daemon_fault, record.paused = run.daemon_fault, run.paused
        record.launch = run.launch
        line = _encoder.encode(record) + b"\n"
        if audit.pending is None:
            self._append(line)
        else:
            audit.pending.append(line)

    def flush(self, audit: EventAudit) -> None:
        """Write the runs waiting for the event's record now (it was cancelled, or a
        breaker record must follow them); later runs are written as they end."""
        if audit.pending:
            self._append(b"".join(audit.pending), len(audit.pending))
        audit.pending = None

    def event(self, audit: EventAudit, result: FireResult, untrusted: int = 0) -> None:
        if not self.enabled:
            return
        size = audit.size
        keep = size <= self.input_cap
        now = time.perf_counter()
        record = AuditEvent(
            time=time.time(),
            id=audit.id,
            session_id=audit.session_id,
            event=audit.event,
            project=audit.project,
            client=audit.client,
            agent=audit.agent,
            native_event=audit.native_event,
            input_hash=audit.hash,
            input_size=size,
            input_truncated=not keep,
            generation=result.generation,
            duration_ms=round((now - audit.started) * 1000, 3),
            untrusted=untrusted,
        )
        if (
            result.hooks
            or result.errors
            or not result.continue_
            or result.decision is not None
            or result.reason is not None
            or result.updated_input is not None
        ):
            # What the hooks said.  Most events run none, and the defaults stand: set
            # here, not passed above — a call with all twenty-one keywords measured
            # 2.2 µs against 0.6 µs for these fourteen, three times the encode.
            record.decision, record.reason = result.decision, result.reason
            record.stop = not result.continue_
            if result.updated_input is not None:
                tool_input = audit.raw.get("tool_input", {})
                diff = json_diff(tool_input, result.updated_input, "$.tool_input")
                record.updated_input_diff = diff
            record.hooks = len(result.hooks)
            for run in result.hooks:
                record.outcomes[run.outcome] = record.outcomes.get(run.outcome, 0) + 1
            record.errors = result.errors
        line = _encoder.encode(record)
        if keep:
            # The input is already compact JSON (it was hashed): splice it in rather
            # than encode the dict a second time — on an event that runs no hook this
            # record is most of the daemon's work.
            line = b"".join((line[:-1], b',"input":', audit.data, b"}"))
        # One write: the event's runs (when it had any), then the event.
        if audit.pending:
            self._append(b"".join((*audit.pending, line, b"\n")), len(audit.pending) + 1)
        else:
            self._append(line + b"\n")
        audit.pending = None

    def breaker(self, key: str, hook: str, state: str, error: str | None = None) -> None:
        if self.enabled:
            self.write(AuditBreaker(time=time.time(), key=key, hook=hook, state=state, error=error))

    # --- the file ----------------------------------------------------------------

    def write(self, record: AuditRecord) -> None:
        """Append one record; an I/O error is logged and counted, never raised into an event."""
        self._append(_encoder.encode(record) + b"\n")

    def _append(self, lines: bytes, records: int = 1) -> None:
        """Write whole lines (newlines included), ``records`` of them, with one ``write``
        — more only if the kernel takes less (a full disk): never half a line and then
        another record after it.

        A failed write loses its records (the event is still answered: an agent
        must not stall on the disk), counts them (``hookctl status``: ``audit``),
        and logs once per run of failures, not once per event: a full disk under
        load would otherwise flood the log that shares it."""
        try:
            if self._fd is None:
                self._open()
            elif self._size + len(lines) > self.max_bytes:
                self._rotate()
            assert self._fd is not None
            self._write_whole(self._fd, lines)
        except OSError as exc:
            self._lost(records, exc)
            return
        self._size += len(lines)
        self.written += records
        if self._burst_lost is not None:
            log.warning("audit writes resumed", file=str(self.path), lost=self._burst_lost)
            self._burst_lost = None

    def _write_whole(self, fd: int, lines: bytes) -> None:
        view = memoryview(lines)
        try:
            while view:
                taken = os.write(fd, view)
                if not taken:
                    raise OSError(errno.EIO, "the audit file took no byte")
                view = view[taken:]
        except OSError:
            if len(view) < len(lines):
                # Part of it went in: take it back, so that no torn line sits between
                # the records written once there is room again.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self._size)
            raise

    def _lost(self, records: int, exc: OSError) -> None:
        self.failed += records
        self.last_error, self.last_error_at = str(exc), time.time()
        if self._burst_lost is None:
            self._burst_lost = 0
            log.error(
                "audit write failed: records are lost until a write succeeds "
                "(counted in hookctl status; logged again when writes resume)",
                file=str(self.path),
                error=str(exc),
            )
        self._burst_lost += records
        self.close()

    def _open(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._fd = open_append(self.path, 0o600)
        self._size = os.fstat(self._fd).st_size

    def _rotate(self) -> None:
        self.close()
        for i in range(self.files, 0, -1):
            src = self.path if i == 1 else self.path.with_name(f"audit.jsonl.{i - 1}")
            dst = self.path.with_name(f"audit.jsonl.{i}")
            if src.exists():
                os.replace(src, dst)
        self._open()

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


@dataclass
class ReadResult:
    records: list[AuditRecord]
    bad_lines: list[str]
    """``file:line: error`` for lines that did not decode (e.g. torn by a crash)."""


def audit_files(directory: Path) -> list[Path]:
    """Oldest first: ``audit.jsonl.N`` … ``.1``, then ``audit.jsonl``."""
    rotated = sorted(
        (p for p in directory.glob("audit.jsonl.*") if p.suffix[1:].isdigit()),
        key=lambda p: int(p.suffix[1:]),
        reverse=True,
    )
    current = directory / "audit.jsonl"
    return [*rotated, *([current] if current.exists() else [])]


def iter_records(directory: Path, bad: list[str]) -> Iterator[AuditRecord]:
    for path in audit_files(directory):
        with path.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield _decoder.decode(line)
                except msgspec.DecodeError as exc:
                    bad.append(f"{path}:{number}: {exc}")


def read_records(directory: Path) -> ReadResult:
    bad: list[str] = []
    records = list(iter_records(directory, bad))
    return ReadResult(records, bad)

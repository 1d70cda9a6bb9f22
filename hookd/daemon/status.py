"""The daemon's picture of itself, for ``hookctl status`` (table or ``--json``).

:func:`build_status` reads only what :class:`StatusSources` hands it — the
parts the server built — so status depends on those parts, never on the
server itself.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import msgspec

import hookd
from hookd.daemon import own_process
from hookd.daemon.activity import Activity, RunningHookInfo
from hookd.daemon.async_runner import AsyncRunner
from hookd.daemon.audit import AuditLog
from hookd.daemon.faults import Fault, FaultLog
from hookd.daemon.limits import BufferBudget
from hookd.daemon.registry import ConfigRegistry, SourceStatus
from hookd.daemon.sessions import SessionInfo, SessionTable
from hookd.daemon.telemetry import TelemetryStatus
from hookd.daemon.trust import TrustGate, UntrustedProject
from hookd.engine.breaker import BreakerState, CircuitBreaker
from hookd.subreaper import SUBREAPER

__all__ = [
    "AuditStatus",
    "DaemonStatus",
    "ProcessStatus",
    "ServerFacts",
    "StatusSources",
    "build_status",
]


class DaemonStatus(msgspec.Struct, kw_only=True):
    pid: int
    version: str
    socket: str
    started: float
    uptime: float
    generation: int
    reloaded_at: float
    sources: list[SourceStatus]
    config_errors: list[str]
    projects: list[str]
    sessions: list[SessionInfo]
    running: list[RunningHookInfo]
    counters: dict[str, int]
    connections: int
    in_flight: int
    async_hooks: list[dict[str, Any]] = msgspec.field(default_factory=list)
    breakers: list[BreakerState] = msgspec.field(default_factory=list)
    """Hooks with consecutive failures; ``paused`` ones are skipped (docs/reliability.md)."""
    untrusted: list[UntrustedProject] = msgspec.field(default_factory=list)
    """Projects whose own hooks do not run because the directory is not trusted."""
    http_port: int | None = None
    """The Claude Code http endpoint's port; None when it is off."""
    http_socket: str | None = None
    """The http API's owner-only Unix socket (the Claude Code mod's door); None when off."""
    http_wanted: int | None = None
    """The port the daemon's settings ask for (flags, else hookd.toml as last re-read)."""
    http_error: str | None = None
    """Why the http port the settings ask for is not served (taken, say); None when it is."""
    settings_error: str | None = None
    """Why the last reload could not re-read the daemon's settings file (the running
    settings stay); None when it could."""
    faults: list[Fault] = msgspec.field(default_factory=list)
    """Long-lived tasks that raised and were restarted (hookd/daemon/faults.py)."""
    subreaper: SubreaperStatus | None = None
    """Orphans of hooks the daemon adopted and reaped (hookd/subreaper.py); None when off."""
    process: ProcessStatus | None = None
    """The daemon's own process: memory, descriptors, the buffer budget, dumpability."""
    audit: AuditStatus | None = None
    """Audit records written and lost (a full disk); None when the audit log is off."""
    telemetry: TelemetryStatus | None = None
    """OpenTelemetry export: spans recorded, exported, dropped (hookd/daemon/telemetry.py);
    None when off."""


class ProcessStatus(msgspec.Struct, kw_only=True):
    """What the daemon reads of itself (its ``/proc`` is closed to the rest of its user:
    hookd/daemon/own_process.py)."""

    rss_kb: int
    fds: int
    dumpable: bool | None
    """False: hooks cannot trace the daemon (``prctl(PR_SET_DUMPABLE, 0)``); None: unknown."""
    buffer_budget: int
    """The ``buffer_budget`` setting: bytes large frames and their events may hold."""
    buffer_held: int
    """Bytes of it held now (large frames arriving, and their events until answered)."""
    buffer_refused: int
    """Large frames refused for want of budget (``busy``) since the daemon started."""
    buffer_outputs_cut: int = 0
    """Hook outputs cut short (``truncated``) for want of budget since the daemon started."""


class AuditStatus(msgspec.Struct, kw_only=True):
    written: int
    """Records written since the daemon started."""
    lost: int
    """Records whose write failed (a full disk): their events were answered all the same."""
    last_error: str | None = None
    last_error_at: float | None = None


class SubreaperStatus(msgspec.Struct, kw_only=True):
    adopted: int
    """Adopted orphans alive at the last sweep (background jobs of hooks that exited)."""
    reaped: int
    """Adopted zombies reaped since the daemon started being a subreaper."""
    runs: int
    """Runs (command hooks, async hooks, python workers) whose process trees are tracked."""
    late_kills: int = 0
    """Processes of killed runs that a sweep found alive after the kill, and killed."""


class ServerFacts(Protocol):
    """The facts only the server knows (the socket may be systemd's; the port bound)."""

    @property
    def socket_path(self) -> Path: ...

    @property
    def started(self) -> float: ...

    @property
    def http_port(self) -> int | None: ...

    @property
    def http_socket(self) -> Path | None: ...

    @property
    def http_wanted(self) -> int | None: ...

    @property
    def http_error(self) -> str | None: ...

    @property
    def settings_error(self) -> str | None: ...

    def telemetry_status(self) -> TelemetryStatus | None: ...


class AgentConnection(Protocol):
    @property
    def agent_pid(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class StatusSources:
    """What status reads: the parts the server built, handed over once."""

    server: ServerFacts
    registry: ConfigRegistry
    sessions: SessionTable
    activity: Activity
    connections: Collection[AgentConnection]
    async_runner: AsyncRunner
    breaker: CircuitBreaker
    trust: TrustGate
    faults: FaultLog
    budget: BufferBudget | None = None
    audit: AuditLog | None = None


def build_status(parts: StatusSources) -> DaemonStatus:
    registry = parts.registry
    connected = {c.agent_pid for c in parts.connections if c.agent_pid is not None}
    return DaemonStatus(
        pid=os.getpid(),
        version=hookd.__version__,
        socket=str(parts.server.socket_path),
        started=parts.server.started,
        uptime=round(time.time() - parts.server.started, 3),
        generation=registry.generation,
        reloaded_at=registry.reloaded_at,
        sources=registry.sources(),
        config_errors=registry.errors(),
        projects=registry.projects(),
        sessions=[s.info(s.agent_pid in connected) for s in parts.sessions.all()],
        running=parts.activity.running_hooks(),
        counters=dict(parts.activity.counters),
        connections=len(parts.connections),
        in_flight=parts.activity.in_flight,
        async_hooks=parts.async_runner.listing(None),
        breakers=parts.breaker.states(),
        http_port=parts.server.http_port,
        http_socket=None if parts.server.http_socket is None else str(parts.server.http_socket),
        http_wanted=parts.server.http_wanted,
        http_error=parts.server.http_error,
        settings_error=parts.server.settings_error,
        faults=parts.faults.all(),
        telemetry=parts.server.telemetry_status(),
        subreaper=SubreaperStatus(
            adopted=SUBREAPER.adopted,
            reaped=SUBREAPER.reaped,
            runs=len(SUBREAPER.runs),
            late_kills=SUBREAPER.late_kills,
        )
        if SUBREAPER.enabled
        else None,
        untrusted=parts.trust.report(
            {p: registry.config_for(p, use=False) for p in registry.projects()}
        ),
        process=_process(parts.budget),
        audit=_audit(parts.audit),
    )


def _process(budget: BufferBudget | None) -> ProcessStatus:
    return ProcessStatus(
        rss_kb=own_process.rss_kb(),
        fds=own_process.open_fds(),
        dumpable=own_process.dumpable(),
        buffer_budget=budget.total if budget is not None else 0,
        buffer_held=budget.used if budget is not None else 0,
        buffer_refused=budget.refused if budget is not None else 0,
        buffer_outputs_cut=budget.outputs_cut if budget is not None else 0,
    )


def _audit(audit: AuditLog | None) -> AuditStatus | None:
    if audit is None or not audit.enabled:
        return None
    return AuditStatus(
        written=audit.written,
        lost=audit.failed,
        last_error=audit.last_error,
        last_error_at=audit.last_error_at,
    )

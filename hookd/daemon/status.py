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
from hookd.daemon.activity import Activity, RunningHookInfo
from hookd.daemon.async_runner import AsyncRunner
from hookd.daemon.faults import Fault, FaultLog
from hookd.daemon.registry import ConfigRegistry, SourceStatus
from hookd.daemon.sessions import SessionInfo, SessionTable
from hookd.daemon.telemetry import TelemetryStatus
from hookd.daemon.trust import TrustGate, UntrustedProject
from hookd.engine.breaker import BreakerState, CircuitBreaker
from hookd.subreaper import SUBREAPER

__all__ = ["DaemonStatus", "ServerFacts", "StatusSources", "build_status"]


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
    faults: list[Fault] = msgspec.field(default_factory=list)
    """Long-lived tasks that raised and were restarted (hookd/daemon/faults.py)."""
    subreaper: SubreaperStatus | None = None
    """Orphans of hooks the daemon adopted and reaped (hookd/subreaper.py); None when off."""
    telemetry: TelemetryStatus | None = None
    """OpenTelemetry export: spans recorded, exported, dropped (hookd/daemon/telemetry.py);
    None when off."""


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
    )

"""The daemon's picture of itself, for ``hookctl status`` (table or ``--json``)."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import msgspec

import hookd
from hookd.daemon.registry import SourceStatus
from hookd.daemon.sessions import SessionInfo
from hookd.daemon.trust import UntrustedProject
from hookd.engine.breaker import BreakerState

if TYPE_CHECKING:
    from hookd.daemon.server import Daemon, RunningHookInfo

__all__ = ["DaemonStatus", "build_status"]


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


def build_status(daemon: Daemon) -> DaemonStatus:
    connected = {c.agent_pid for c in daemon.connections if c.agent_pid is not None}
    supervisor = getattr(daemon, "async_supervisor", None)
    return DaemonStatus(
        pid=os.getpid(),
        version=hookd.__version__,
        socket=str(daemon.socket_path),
        started=daemon.started,
        uptime=round(time.time() - daemon.started, 3),
        generation=daemon.registry.generation,
        reloaded_at=daemon.registry.reloaded_at,
        sources=daemon.registry.sources(),
        config_errors=daemon.registry.errors(),
        projects=daemon.registry.projects(),
        sessions=[s.info(s.agent_pid in connected) for s in daemon.sessions.all()],
        running=daemon.running_hooks(),
        counters=dict(daemon.counters),
        connections=len(daemon.connections),
        in_flight=daemon.in_flight,
        async_hooks=supervisor.listing(None) if supervisor is not None else [],
        breakers=daemon.breaker.states(),
        untrusted=daemon.trust.report(
            {p: daemon.registry.config_for(p, use=False) for p in daemon.registry.projects()}
        ),
    )

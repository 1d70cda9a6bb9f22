"""Sessions: who is talking to the daemon, about which project, and what they registered.

A session is known by ``session_id``.  It is tied to the agent process that
sent its events (the peer pid of the connection, or the pid a relay or an
HTTP request reports) and to its project (``CLAUDE_PROJECT_DIR`` or cwd).
The engine's per-session memory (``once``, the Stop-block counter) and the
session-scoped hooks (including client callbacks) live here.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import msgspec

from hookd.config.model import GroupSpec
from hookd.engine.engine import SessionState
from hookd.handlers.callback import CallbackPeer

__all__ = ["Session", "SessionInfo", "SessionTable"]


class SessionInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``hookctl status`` / ``sessions`` show for one session."""

    session_id: str
    agent_pid: int | None
    project: str
    client: str = ""
    agent: str = ""
    """The agent whose events these are (``claude``, ``codex``, …)."""
    started: float
    last_event: str | None = None
    last_event_at: float | None = None
    events: int = 0
    hook_runs: int = 0
    outcomes: dict[str, int] = msgspec.field(default_factory=dict)
    session_hooks: int = 0
    connected: bool = True


@dataclass
class Session:
    session_id: str
    project: str
    agent_pid: int | None
    client: str = ""
    agent: str = ""
    started: float = field(default_factory=time.time)
    last_event: str | None = None
    last_event_at: float | None = None
    events: int = 0
    hook_runs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    state: SessionState = field(default_factory=SessionState)
    hooks: dict[str, list[GroupSpec]] = field(default_factory=dict)
    """Session-registered hook groups, by registration source."""
    callback_owners: dict[str, CallbackPeer] = field(default_factory=dict)
    """callback_id → the connection that registered it (calls go back to that one)."""
    in_flight: int = 0

    def extra_groups(self) -> list[GroupSpec]:
        return [g for groups in self.hooks.values() for g in groups]

    def info(self, connected: bool) -> SessionInfo:
        return SessionInfo(
            session_id=self.session_id,
            agent_pid=self.agent_pid,
            project=self.project,
            client=self.client,
            agent=self.agent,
            started=self.started,
            last_event=self.last_event,
            last_event_at=self.last_event_at,
            events=self.events,
            hook_runs=self.hook_runs,
            outcomes=dict(self.outcomes),
            session_hooks=sum(len(g.hooks) for g in self.extra_groups()),
            connected=connected,
        )


class SessionTable:
    def __init__(self, limit: int = 10_000) -> None:
        self._sessions: dict[str, Session] = {}
        self.limit = limit

    def touch(
        self,
        session_id: str,
        project: str,
        agent_pid: int | None,
        client: str,
        agent: str = "",
    ) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            if len(self._sessions) >= self.limit:
                self._evict_oldest()
            session = Session(session_id, project, agent_pid, client, agent)
            self._sessions[session_id] = session
        if agent_pid is not None:
            session.agent_pid = agent_pid
        if client:
            session.client = client
        if agent:
            session.agent = agent
        return session

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def all(self) -> list[Session]:
        return list(self._sessions.values())

    def callback_peer(self, session_id: str, callback_id: str) -> CallbackPeer | None:
        """The connection that registered ``callback_id`` for the session (the callback
        handler's :class:`~hookd.handlers.callback.CallbackPeers`)."""
        session = self._sessions.get(session_id)
        return session.callback_owners.get(callback_id) if session is not None else None

    def forget_peer(self, peer: CallbackPeer) -> None:
        """A connection closed: its callbacks can no longer be called."""
        for session in self._sessions.values():
            for callback_id, owner in list(session.callback_owners.items()):
                if owner is peer:
                    del session.callback_owners[callback_id]

    def projects_in_use(self) -> set[str]:
        return {s.project for s in self._sessions.values()}

    def end(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def _evict_oldest(self) -> None:
        idle = [s for s in self._sessions.values() if s.in_flight == 0]
        if idle:
            oldest = min(idle, key=lambda s: s.last_event_at or s.started)
            del self._sessions[oldest.session_id]

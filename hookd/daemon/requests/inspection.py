"""Inspection requests: ``status``, ``sessions``, ``tail``, ``async_list``.

Read-only views of the daemon for ``hookctl``: they change nothing, and all
but ``tail -f`` are answered from memory at once.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import trio

from hookd.daemon.activity import Activity
from hookd.daemon.async_runner import AsyncRunner
from hookd.daemon.connection import Connection
from hookd.daemon.sessions import SessionTable
from hookd.daemon.status import StatusSources, build_status
from hookd_client import protocol

from .answers import Answer, Later

__all__ = ["InspectionRequests"]


class InspectionRequests:
    def __init__(
        self,
        status: StatusSources,
        sessions: SessionTable,
        activity: Activity,
        connections: Collection[Connection],
        async_runner: AsyncRunner,
    ) -> None:
        self.status_sources = status
        self.sessions = sessions
        self.activity = activity
        self.connections = connections
        self.async_runner = async_runner

    def status(self, conn: Connection, msg: protocol.Status) -> Answer:
        return protocol.StatusReply(id=msg.id, data=build_status(self.status_sources))

    def list_sessions(self, conn: Connection, msg: protocol.Sessions) -> Answer:
        connected = {c.agent_pid for c in self.connections if c.agent_pid is not None}
        return protocol.SessionsReply(
            id=msg.id,
            data=[
                s.info(s.agent_pid is not None and s.agent_pid in connected)
                for s in self.sessions.all()
            ],
        )

    def async_list(self, conn: Connection, msg: protocol.AsyncList) -> Answer:
        return protocol.AsyncResultsReply(id=msg.id, data=self.async_runner.listing(msg.session_id))

    def tail(self, conn: Connection, msg: protocol.Tail) -> Answer:
        """The last ``last`` runs; with ``follow``, every new one until cancelled."""
        for record in list(self.activity.recent)[-msg.last :] if msg.last > 0 else []:
            conn.send(protocol.TailItem(id=msg.id, record=record))
        if not msg.follow:
            return protocol.TailEndReply(id=msg.id, data=protocol.TailEnd(end=True))

        async def follow() -> None:
            conn.streams.add(msg.id)
            send, receive = trio.open_memory_channel[dict[str, Any]](256)
            self.activity.follow(send)
            try:
                async with receive:
                    async for record in receive:
                        conn.send(protocol.TailItem(id=msg.id, record=record))
            finally:
                self.activity.unfollow(send)

        return Later(follow)

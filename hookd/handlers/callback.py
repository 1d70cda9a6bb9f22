"""``type: "callback"`` hooks: the client connection that registered the hook runs it.

A client registers session hooks whose handler is a callback id; when one is
selected, the daemon sends a ``callback`` request down *that* connection and
waits for its ``callback_result`` (:meth:`CallbackPeer.call_back`).  Which
connection registered which id is the session table's knowledge; the runner
asks it through :class:`CallbackPeers`, so this module knows nothing of
sessions or sockets.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

import structlog
import trio

from hookd.config.schema import CallbackHandler
from hookd.handlers.base import HandlerResult, Invocation
from hookd_client.protocol import CallbackResult

__all__ = ["CallbackPeer", "CallbackPeers", "CallbackRunner"]

log = structlog.get_logger("hookd.handlers.callback")


class CallbackPeer(Protocol):
    """The connection that registered a callback (``hookd.daemon.connection.Connection``)."""

    @property
    def closed(self) -> bool: ...

    async def call_back(
        self, callback_id: str, payload: dict[str, Any], tool_use_id: str | None, timeout: float
    ) -> CallbackResult: ...


class CallbackPeers(Protocol):
    """Who registered ``callback_id`` for a session (``hookd.daemon.sessions.SessionTable``)."""

    def callback_peer(self, session_id: str, callback_id: str) -> CallbackPeer | None: ...


class CallbackRunner:
    def __init__(self, peers: CallbackPeers) -> None:
        self.peers = peers

    async def run(self, handler: CallbackHandler, inv: Invocation) -> HandlerResult:
        owner = self.peers.callback_peer(inv.session_id, handler.callback_id)
        if owner is None or owner.closed:
            return HandlerResult(exit_code=None, failure="the client that registered it is gone")
        started = time.monotonic()
        with trio.move_on_after(inv.timeout) as scope:
            tool_use_id = inv.input.get("tool_use_id")
            answer = await owner.call_back(
                handler.callback_id,
                inv.input,
                tool_use_id if isinstance(tool_use_id, str) else None,
                inv.timeout,
            )
        if scope.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        if answer.error is not None:
            return HandlerResult(exit_code=None, failure=f"callback raised: {answer.error}")
        log.debug("callback answered", ms=round((time.monotonic() - started) * 1000, 2))
        return HandlerResult(exit_code=0, json_output=answer.output)

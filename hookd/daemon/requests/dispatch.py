"""Serve one connection: the handshake, then every request through one table.

The reader task decodes each frame (a bad one gets an ``error`` reply naming
what was wrong, and the connection goes on) and looks its type up in
:attr:`Dispatcher.table`, the one map from request type to handler.  The
handler answers at once — most requests, and every event that runs no hook —
or returns :class:`~hookd.daemon.requests.answers.Later`, whose work runs in
its own task in the connection's nursery, so a slow ``fire`` never holds up
a ``status`` on the same connection; replies carry the request's ``id``.
Nothing a client sends can raise out of here: a bug fails that one request
with ``internal``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import structlog
import trio

import hookd
from hookd.daemon.activity import Activity
from hookd.daemon.connection import Connection, PeerCred
from hookd.daemon.limits import BufferBudget
from hookd.daemon.sessions import SessionTable
from hookd.daemon.settings import DaemonSettings
from hookd_client import protocol
from hookd_client.events import EventInputError

from .answers import Handler, Later, RequestError
from .config import ConfigRequests
from .control import ControlRequests
from .events import EventRequests
from .inspection import InspectionRequests

__all__ = ["Dispatcher"]

log = structlog.get_logger("hookd.requests")


class Dispatcher:
    """Routes a connection's requests to their families; one per daemon."""

    def __init__(
        self,
        settings: DaemonSettings,
        *,
        events: EventRequests,
        config: ConfigRequests,
        inspection: InspectionRequests,
        control: ControlRequests,
        sessions: SessionTable,
        activity: Activity,
        connections: set[Connection],
        buffer_budget: BufferBudget,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.activity = activity
        self.connections = connections
        self.buffer_budget = buffer_budget
        self.table: dict[type[Any], Handler] = {
            protocol.Fire: events.route,
            protocol.Relay: events.route,
            protocol.CheckAsync: events.check_async,
            protocol.SubscribeAsync: events.subscribe_async,
            protocol.Hooks: config.hooks,
            protocol.Validate: config.validate,
            protocol.Reload: config.reload,
            protocol.RegisterSessionHooks: config.register,
            protocol.ClearSessionHooks: config.clear,
            protocol.Status: inspection.status,
            protocol.Sessions: inspection.list_sessions,
            protocol.Tail: inspection.tail,
            protocol.AsyncList: inspection.async_list,
            protocol.Shutdown: control.shutdown,
            protocol.ResetBreakers: control.reset_breakers,
            protocol.StatusLine: control.status_line,
        }

    async def serve(self, stream: trio.SocketStream, peer: PeerCred | None) -> None:
        """One connection, from accept to close (the server starts one task per connection)."""
        conn = Connection(
            stream,
            peer,
            max_frame=self.settings.max_frame,
            send_queue=self.settings.send_queue,
            send_timeout=self.settings.send_timeout,
            hello_timeout=self.settings.hello_timeout,
            frame_timeout=self.settings.frame_timeout,
            budget=self.buffer_budget,
        )
        self.connections.add(conn)
        try:
            with conn.cancel_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.writer)
                    with conn.reader_scope:
                        try:
                            async for body, held in conn.frames():
                                self._dispatch(conn, body, nursery, held)
                                del body  # an idle connection keeps no frame
                        except protocol.FrameError as exc:
                            # bad_frame, or a limit (hookd/daemon/limits.py): timeout, busy.
                            conn.send(protocol.Error(code=exc.code, message=str(exc)))
                            log.warning("closing a connection", conn=conn.number, error=str(exc))
                        except (trio.BrokenResourceError, trio.ClosedResourceError):
                            pass
                    # EOF, lost framing or a graceful end: in-flight requests still finish
                    # (a relay half-closes right after sending), then the writer flushes.
                    conn.fail_callbacks()
                    await conn.wait_requests()
                    conn.finish_sending()
        finally:
            self.connections.discard(conn)
            conn.release_buffer()
            conn.closed = True
            conn.fail_callbacks()
            self.sessions.forget_peer(conn)
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()

    def _dispatch(
        self, conn: Connection, body: bytes, nursery: trio.Nursery, held: int = 0
    ) -> None:
        """Decode and route one frame.  ``held``: the bytes of the buffer budget its
        frame holds (a large one), given back when its request is answered — a request
        that runs in a task keeps them until then, since its event holds the input."""
        later = False
        try:
            later = self._route(conn, body, nursery, held)
        finally:
            if not later:
                self.buffer_budget.give(held)

    def _route(self, conn: Connection, body: bytes, nursery: trio.Nursery, held: int) -> bool:
        """True when a task took the request (and with it ``held``)."""
        try:
            message = protocol.decode_client(body)
        except protocol.FrameError as exc:
            conn.send(
                protocol.Error(id=protocol.request_id_of(body), code=exc.code, message=str(exc))
            )
            self.activity.counters["bad_frames"] += 1
            if not conn.greeted:
                conn.end()  # docs/protocol.md: anything but a good `hello` first closes
            return False
        if isinstance(message, protocol.Hello):
            self._hello(conn, message)
            return False
        if not conn.greeted:
            conn.send(
                protocol.Error(code="bad_request", message="the first message must be `hello`")
            )
            conn.end()
            return False
        if isinstance(message, protocol.CallbackResult):
            if not conn.deliver_callback_result(message):
                log.info("late or unknown callback result", conn=conn.number, id=message.id)
            return False
        if isinstance(message, protocol.Cancel):
            scope = conn.requests.get(message.target)
            if scope is not None:
                scope.cancel()
            return False
        request_id: int = message.id
        if request_id in conn.requests:
            conn.send(
                protocol.Error(
                    id=request_id, code="bad_request", message=f"id {request_id} is in use"
                )
            )
            return False
        handler = self.table[type(message)]
        try:
            answer = handler(conn, message)
        except Exception as exc:
            conn.send(_error_reply(request_id, exc, message, conn))
            return False
        if isinstance(answer, Later):
            nursery.start_soon(self._run_later, conn, answer.work, message, request_id, held)
            return True
        if answer is not None:
            conn.send(answer)
        return False

    def _hello(self, conn: Connection, message: protocol.Hello) -> None:
        if message.version != protocol.PROTOCOL_VERSION:
            conn.send(
                protocol.Error(
                    code="version",
                    message=f"protocol version {message.version} is not supported; "
                    f"this daemon speaks {protocol.PROTOCOL_VERSION}",
                )
            )
            conn.end()
            return
        conn.greeted = True
        conn.client = message.client
        if message.pid is not None:
            conn.agent_pid = message.pid
        conn.env = message.env
        conn.send(
            protocol.Welcome(
                version=protocol.PROTOCOL_VERSION,
                server=f"hookd/{hookd.__version__}",
                pid=os.getpid(),
                max_frame=self.settings.max_frame,
            )
        )

    async def _run_later(
        self,
        conn: Connection,
        work: Callable[[], Awaitable[msgspec.Struct | None]],
        message: Any,
        request_id: int,
        held: int = 0,
    ) -> None:
        scope = trio.CancelScope()
        conn.add_request(request_id, scope)
        try:
            with scope:
                reply = await work()
                if reply is not None:
                    conn.send(reply)
            if scope.cancelled_caught:
                conn.send(
                    protocol.Error(id=request_id, code="cancelled", message="request cancelled")
                )
        except Exception as exc:
            conn.send(_error_reply(request_id, exc, message, conn))
        finally:
            conn.remove_request(request_id)
            self.buffer_budget.give(held)


def _error_reply(request_id: int, exc: Exception, message: Any, conn: Connection) -> protocol.Error:
    """What a failed request answers: the client's fault by name, a bug as ``internal``."""
    if isinstance(exc, RequestError):
        return protocol.Error(id=request_id, code=exc.code, message=exc.message)
    if isinstance(exc, EventInputError):
        return protocol.Error(id=request_id, code="bad_input", message=str(exc))
    log.exception("request failed", kind=type(message).__name__, conn=conn.number)
    return protocol.Error(id=request_id, code="internal", message=repr(exc))

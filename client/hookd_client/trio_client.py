"""The trio flavour: one connection, many requests in flight, callbacks served as they come.

Only trio programs import this module (it imports trio; the rest of the
package needs msgspec alone)::

    async with open_client() as client:
        reply = await client.fire("PreToolUse", payload, on_unavailable="open")

The client owns a nursery.  In it run, per connection, a *reader* that routes
each incoming message to the request waiting for its ``id`` (or starts the
callback the daemon asked for) and a *writer* that drains an unbounded outbox,
so sending is synchronous and never interleaves two frames.  A request that is
cancelled tells the daemon with a ``cancel`` frame; a ``callback_cancel`` from
the daemon cancels the running callback's scope.  The connection is opened on
first use, with retry and exponential backoff, and opened again after it is
lost; session-hook registrations are replayed on the new connection because
callbacks belong to the connection that registered them.
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import trio

from hookd_client import _core, protocol
from hookd_client._core import CallbackHook, FailurePolicy, HookCallbackFn
from hookd_client.client import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BACKOFF,
    DEFAULT_RETRIES,
    DaemonError,
    DaemonUnavailable,
)
from hookd_client.framing import FrameReader

__all__ = [
    "CallbackHook",
    "DaemonError",
    "DaemonUnavailable",
    "HookCallbackFn",
    "TrioClient",
    "open_client",
]

_Interim = _core.Interim


class _Connection:
    """One socket and what is in flight on it; dies as a whole."""

    def __init__(self, stream: trio.SocketStream, max_frame: int) -> None:
        self.stream = stream
        self.frames = FrameReader(max_frame)
        self.outbox, self._outbox_receive = trio.open_memory_channel[bytes](math.inf)
        self.pending: dict[int, trio.MemorySendChannel[protocol.ServerMessage]] = {}
        self.callbacks: dict[int, trio.CancelScope] = {}
        self.closed = False
        self.welcome: protocol.Welcome | None = None

    def send(self, message: msgspec.Struct) -> None:
        """Queue one frame; on a dead connection the waiting request sees it close instead."""
        if self.closed:
            return
        self.outbox.send_nowait(protocol.encode(message))

    async def receive(self) -> list[protocol.ServerMessage]:
        """The next whole messages (every one already buffered); [] at EOF."""
        while True:
            messages: list[protocol.ServerMessage] = []
            body = self.frames.next_frame()
            while body is not None:
                messages.append(protocol.decode_server(body))
                body = self.frames.next_frame()
            if messages:
                return messages
            data = await self.stream.receive_some(65536)
            if not data:
                return []
            self.frames.feed(data)

    async def writer(self) -> None:
        async with self._outbox_receive:
            async for data in self._outbox_receive:
                try:
                    await self.stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    self.close()
                    return

    def close(self) -> None:
        """Fail every waiting request (they raise DaemonUnavailable) and stop callbacks."""
        if self.closed:
            return
        self.closed = True
        self.outbox.close()
        for channel in self.pending.values():
            channel.close()
        self.pending.clear()
        for scope in self.callbacks.values():
            scope.cancel()


class TrioClient(_core.RequestMethods):
    """An async hookd client for trio; make one with :func:`open_client`.

    Or run it in a nursery of your own: ``await nursery.start(client.run)``
    starts the task that owns the client's reader, writer and callback tasks,
    and :meth:`aclose` ends it.  The tasks live in a nursery of their own, not
    in the caller's, so closing the client never cancels the caller's code.
    """

    def __init__(
        self,
        socket_path: str | Path | None = None,
        *,
        name: str = "hookd-client/trio",
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        on_unavailable: FailurePolicy = "raise",
        max_frame: int = protocol.MAX_FRAME,
    ) -> None:
        super().__init__(
            socket_path,
            name=name,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            on_unavailable=on_unavailable,
            max_frame=max_frame,
            connect_lock=trio.Lock(),
        )
        self._conn: _Connection | None = None
        self._nursery: trio.Nursery | None = None
        self._scope = trio.CancelScope()

    # --- connection ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the client's background tasks until :meth:`aclose`."""
        with self._scope:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                await trio.sleep_forever()

    def _spawn(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        if self._nursery is None:
            raise RuntimeError("TrioClient is not running: use open_client() or nursery.start")
        self._nursery.start_soon(fn, *args)

    def _start(self, conn: _Connection) -> None:
        self._spawn(conn.writer)
        self._spawn(self._reader, conn)

    async def _dial(self) -> trio.SocketStream:
        return await trio.open_unix_socket(str(self.path))

    async def _greet(self, raw: trio.SocketStream) -> _Connection:
        conn = _Connection(raw, self.max_frame)
        try:
            await self._handshake(conn)
        except BaseException:
            with trio.CancelScope(shield=True):
                await raw.aclose()
            raise
        return conn

    async def _sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    async def _handshake(self, conn: _Connection) -> None:
        hello = protocol.Hello(client=self.name, pid=os.getpid(), env=_core.agent_environment())
        try:
            await conn.stream.send_all(protocol.encode(hello))
            messages = await conn.receive()
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise DaemonUnavailable(self.path, f"handshake failed: {exc}") from None
        if not messages:
            raise DaemonUnavailable(self.path, "the daemon closed the connection")
        welcome = _core.expect(messages[0], protocol.Welcome)
        conn.welcome = welcome
        conn.frames.max_frame = max(conn.frames.max_frame, welcome.max_frame)

    async def _reader(self, conn: _Connection) -> None:
        try:
            while True:
                try:
                    messages = await conn.receive()
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                except protocol.FrameError:
                    return  # framing is lost: the connection is useless; close() below
                if not messages:
                    return
                for message in messages:
                    self._route(conn, message)
        finally:
            conn.close()
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()

    def _route(self, conn: _Connection, message: protocol.ServerMessage) -> None:
        if isinstance(message, protocol.Callback):
            scope = trio.CancelScope()
            conn.callbacks[message.id] = scope
            self._spawn(self._serve_callback, conn, message, scope)
            return
        if isinstance(message, protocol.CallbackCancel):
            running = conn.callbacks.get(message.id)
            if running is not None:
                running.cancel()
            return
        if isinstance(message, protocol.AsyncResult):
            if self._on_async_result is not None:
                self._spawn(_core.deliver_async_result, self._on_async_result, message)
            return
        rid = getattr(message, "id", None)
        if rid is None:
            # A connection-level error (e.g. the daemon could not read a frame): no one
            # request owns it, and the daemon closes the connection after the worst ones.
            return
        channel = conn.pending.get(rid)
        if channel is not None:
            channel.send_nowait(message)

    async def _serve_callback(
        self, conn: _Connection, message: protocol.Callback, scope: trio.CancelScope
    ) -> None:
        """Run one callback; the daemon's ``callback_cancel`` cancels ``scope``.

        A cancelled callback sends nothing: the daemon stopped waiting (its
        timeout fired, or the event was cancelled) and records that itself.
        """
        answer: protocol.CallbackResult | None = None
        try:
            with scope:
                fn = self._callbacks.get(message.callback_id)
                if fn is None:
                    answer = protocol.CallbackResult(
                        id=message.id, error=f"unknown callback {message.callback_id!r}"
                    )
                else:
                    try:
                        output = await _core.invoke_callback(fn, message)
                    except Exception as exc:  # the user's bug becomes the hook's error
                        answer = protocol.CallbackResult(id=message.id, error=_core.error_text(exc))
                    else:
                        answer = protocol.CallbackResult(id=message.id, output=output)
        finally:
            conn.callbacks.pop(message.id, None)
        if answer is not None:
            conn.send(answer)

    async def aclose(self) -> None:
        """Close the connection and stop the reader, writer and running callbacks."""
        self._closed = True
        conn = self._conn
        if conn is not None:
            conn.close()
            with trio.CancelScope(shield=True):
                await conn.stream.aclose()
        self._scope.cancel()

    # --- requests ------------------------------------------------------------------

    async def _request_on(
        self,
        conn: _Connection,
        make: Callable[[int], msgspec.Struct],
        on_interim: Callable[[_Interim], Any] | None = None,
    ) -> protocol.ServerMessage:
        """Send one request; wait for its final reply, passing interim messages on.

        If the caller is cancelled first, the daemon is told (``cancel``) so it
        stops the work instead of finishing an event nobody waits for.
        """
        rid = next(self._ids)
        send, receive = trio.open_memory_channel[protocol.ServerMessage](math.inf)
        if conn.closed:
            raise DaemonUnavailable(self.path, "the daemon closed the connection")
        conn.pending[rid] = send
        answered = False
        try:
            conn.send(make(rid))
            async with receive:
                async for message in receive:
                    if isinstance(message, protocol.Progress | protocol.TailItem):
                        if on_interim is not None:
                            await _core.maybe_await(on_interim(message))
                        continue
                    answered = True
                    if isinstance(message, protocol.Error):
                        raise DaemonError(message.code, message.message)
                    return message
            answered = True
            raise DaemonUnavailable(self.path, "the daemon closed the connection")
        finally:
            conn.pending.pop(rid, None)
            if not answered:
                conn.send(protocol.Cancel(id=next(self._ids), target=rid))


@asynccontextmanager
async def open_client(
    socket_path: str | Path | None = None,
    *,
    name: str = "hookd-client/trio",
    retries: int = DEFAULT_RETRIES,
    backoff: float = DEFAULT_BACKOFF,
    max_backoff: float = DEFAULT_MAX_BACKOFF,
    on_unavailable: FailurePolicy = "raise",
    connect: bool = False,
) -> AsyncIterator[TrioClient]:
    """A client whose tasks live in a nursery scoped to the ``async with`` block.

    With ``connect=True`` the connection is made on entry (raising
    DaemonUnavailable there); otherwise on the first request, so a client
    that fails open never raises for a missing daemon.
    """
    async with trio.open_nursery() as nursery:
        client = TrioClient(
            socket_path,
            name=name,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            on_unavailable=on_unavailable,
        )
        await nursery.start(client.run)
        try:
            if connect:
                await client.connect()
            yield client
        finally:
            await client.aclose()

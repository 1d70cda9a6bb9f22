"""The asyncio flavour: one connection, many requests in flight, callbacks served as they come.

::

    async with AsyncClient() as client:
        reply = await client.fire("PreToolUse", payload, on_unavailable="open")

Per connection, a *reader* task routes each incoming message to the queue of
the request waiting for its ``id``, or starts a task for the callback the
daemon asked for.  ``StreamWriter.write`` appends a whole frame at once, so
concurrent requests never interleave bytes.  A request that is cancelled tells
the daemon with a ``cancel`` frame; a ``callback_cancel`` from the daemon
cancels the callback's task.  The connection is opened on first use, with
retry and exponential backoff, and again after it is lost; session-hook
registrations are replayed on the new connection because callbacks belong to
the connection that registered them.  All tasks belong to the client and are
cancelled and awaited by :meth:`AsyncClient.aclose`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import msgspec

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
    "AsyncClient",
    "CallbackHook",
    "DaemonError",
    "DaemonUnavailable",
    "HookCallbackFn",
]

_Interim = _core.Interim


class _Connection:
    """One socket and what is in flight on it; dies as a whole."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_frame: int
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.frames = FrameReader(max_frame)
        self.pending: dict[int, asyncio.Queue[protocol.ServerMessage | None]] = {}
        self.callbacks: dict[int, asyncio.Task[None]] = {}
        self.cancelled_by_daemon: set[int] = set()
        self.closed = False
        self.welcome: protocol.Welcome | None = None
        self.reader_task: asyncio.Task[None] | None = None

    def send(self, message: msgspec.Struct) -> None:
        """Queue one frame (the transport buffers it); a dead connection drops it."""
        if self.closed or self.writer.is_closing():
            return
        self.writer.write(protocol.encode(message))

    async def flush(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError:
            self.close()

    async def receive(self) -> protocol.ServerMessage | None:
        """The next message; None at EOF."""
        while True:
            body = self.frames.next_frame()
            if body is not None:
                return protocol.decode_server(body)
            try:
                data = await self.reader.read(65536)
            except ConnectionError:
                return None
            if not data:
                return None
            self.frames.feed(data)

    def close(self) -> None:
        """Fail every waiting request (they raise DaemonUnavailable) and stop callbacks."""
        if self.closed:
            return
        self.closed = True
        for queue in self.pending.values():
            queue.put_nowait(None)
        self.pending.clear()
        for task in self.callbacks.values():
            task.cancel()
        self.writer.close()


class AsyncClient(_core.RequestMethods):
    """An async hookd client for asyncio; use it as ``async with AsyncClient(...)``."""

    def __init__(
        self,
        socket_path: str | Path | None = None,
        *,
        name: str = "hookd-client/asyncio",
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
            connect_lock=asyncio.Lock(),
        )
        self._conn: _Connection | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- connection ------------------------------------------------------------

    def _start(self, conn: _Connection) -> None:
        conn.reader_task = self._spawn(self._reader(conn))

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dial(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_unix_connection(str(self.path))

    async def _greet(self, raw: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> _Connection:
        reader, writer = raw
        conn = _Connection(reader, writer, self.max_frame)
        try:
            await self._handshake(conn)
        except BaseException:
            writer.close()
            raise
        return conn

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _handshake(self, conn: _Connection) -> None:
        conn.send(protocol.Hello(client=self.name, pid=os.getpid(), env=_core.agent_environment()))
        await conn.flush()
        try:
            message = await conn.receive()
        except protocol.FrameError as exc:
            raise DaemonError("bad_reply", str(exc)) from None
        if message is None:
            raise DaemonUnavailable(self.path, "the daemon closed the connection")
        welcome = _core.expect(message, protocol.Welcome)
        conn.welcome = welcome
        conn.frames.max_frame = max(conn.frames.max_frame, welcome.max_frame)

    async def _reader(self, conn: _Connection) -> None:
        try:
            while True:
                try:
                    message = await conn.receive()
                except protocol.FrameError:
                    return  # framing is lost: the connection is useless; close() below
                if message is None:
                    return
                self._route(conn, message)
        finally:
            conn.close()

    def _route(self, conn: _Connection, message: protocol.ServerMessage) -> None:
        if isinstance(message, protocol.Callback):
            conn.callbacks[message.id] = self._spawn(self._serve_callback(conn, message))
            return
        if isinstance(message, protocol.CallbackCancel):
            task = conn.callbacks.get(message.id)
            if task is not None:
                conn.cancelled_by_daemon.add(message.id)
                task.cancel()
            return
        if isinstance(message, protocol.AsyncResult):
            if self._on_async_result is not None:
                self._spawn(_core.deliver_async_result(self._on_async_result, message))
            return
        rid = getattr(message, "id", None)
        if rid is None:
            # A connection-level error: no one request owns it, and the daemon closes
            # the connection after the ones that matter.
            return
        queue = conn.pending.get(rid)
        if queue is not None:
            queue.put_nowait(message)

    async def _serve_callback(self, conn: _Connection, message: protocol.Callback) -> None:
        """Run one callback; the daemon's ``callback_cancel`` cancels this task.

        A callback the daemon cancelled sends nothing: the daemon stopped
        waiting (its timeout fired, or the event was cancelled).
        """
        try:
            fn = self._callbacks.get(message.callback_id)
            if fn is None:
                answer = protocol.CallbackResult(
                    id=message.id, error=f"unknown callback {message.callback_id!r}"
                )
            else:
                try:
                    output = await _core.invoke_callback(fn, message)
                except asyncio.CancelledError:
                    if message.id in conn.cancelled_by_daemon:
                        return
                    raise
                except Exception as exc:  # the user's bug becomes the hook's error
                    answer = protocol.CallbackResult(id=message.id, error=_core.error_text(exc))
                else:
                    answer = protocol.CallbackResult(id=message.id, output=output)
            conn.send(answer)
            await conn.flush()
        finally:
            conn.callbacks.pop(message.id, None)
            conn.cancelled_by_daemon.discard(message.id)

    async def aclose(self) -> None:
        """Close the connection; cancel and await the reader and running callbacks."""
        self._closed = True
        if self._conn is not None:
            self._conn.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for task in tasks:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error  # a crash in the reader is a client bug: surface it
        if self._conn is not None:
            with contextlib.suppress(ConnectionError):
                await self._conn.writer.wait_closed()

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
        queue: asyncio.Queue[protocol.ServerMessage | None] = asyncio.Queue()
        if conn.closed:
            raise DaemonUnavailable(self.path, "the daemon closed the connection")
        conn.pending[rid] = queue
        answered = False
        try:
            conn.send(make(rid))
            await conn.flush()
            while True:
                message = await queue.get()
                if message is None:
                    answered = True
                    raise DaemonUnavailable(self.path, "the daemon closed the connection")
                if isinstance(message, protocol.Progress | protocol.TailItem):
                    if on_interim is not None:
                        await _core.maybe_await(on_interim(message))
                    continue
                answered = True
                if isinstance(message, protocol.Error):
                    raise DaemonError(message.code, message.message)
                return message
        finally:
            conn.pending.pop(rid, None)
            if not answered:
                conn.send(protocol.Cancel(id=next(self._ids), target=rid))

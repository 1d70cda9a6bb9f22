"""The loopback http door: Claude Code's http hooks, opened, moved or closed while hookd runs.

``hookctl claude install`` wires Claude Code's http hooks to a port and puts
``http_port`` into ``hookd.toml``.  A daemon that read the port only at start
would leave every one of those hooks failing open — Claude Code treats a
refused connection as a non-blocking error — until someone restarted it, and
nothing would look wrong.  So the daemon reads ``http_port`` again on every
reload (``hookd.toml`` is watched like a hook file; SIGHUP and ``hookctl
reload`` too) and :class:`HttpDoor` follows it: it opens the wanted port, closes
the one no longer wanted, and retries a port it could not bind at the next
reload.

A port the door cannot bind while running is recorded (``error``, shown by
``hookctl status`` as ``http_error``) and logged — the daemon keeps serving its
socket.  At start-up it is fatal instead (:func:`bind`, :class:`HttpPortTaken`):
a daemon that cannot serve what it was told to is misconfigured, and the user
gets one line saying which port and why.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable

import structlog
import trio

from hookd.doors.http_endpoint import open_http_listeners

__all__ = ["HttpDoor", "HttpPortTaken", "bind"]

log = structlog.get_logger("hookd.http_door")

StartFn = Callable[[int, list[trio.SocketListener], trio.Nursery], Awaitable[int]]
"""Serve the endpoint on bound listeners in the nursery given; returns the bound port."""


class HttpPortTaken(RuntimeError):
    """The http port cannot be bound (taken, privileged, out of range)."""


def _why(port: int, exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        reason = "the port is in use by another process"
    elif isinstance(exc, OSError) and exc.errno == errno.EACCES:
        reason = "permission denied (a privileged port)"
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
    else:
        reason = str(exc)
    return f"cannot serve http://127.0.0.1:{port}: {reason}"


async def bind(port: int) -> list[trio.SocketListener]:
    """Bind the loopback port, or raise :class:`HttpPortTaken` saying which and why."""
    try:
        return await open_http_listeners(port)
    except (OSError, OverflowError, ValueError) as exc:
        raise HttpPortTaken(
            _why(port, exc) + " (setting http_port: --http-port, or http_port in hookd.toml)"
        ) from None


def _close(listeners: list[trio.SocketListener]) -> None:
    for listener in listeners:
        listener.socket.close()


class HttpDoor:
    """The TCP endpoint's lifetime: which port is wanted, which is served, what failed."""

    def __init__(self, start: StartFn, wanted: int | None) -> None:
        self._start = start
        self.wanted = wanted
        """The port the settings ask for (None: no TCP endpoint)."""
        self.port: int | None = None
        """The port served now (bound; ``0`` wanted means any free one)."""
        self.error: str | None = None
        """Why the wanted port is not served, when it is not."""
        self._serving_for: int | None = None
        self._scope: trio.CancelScope | None = None
        self._changed = trio.Event()

    def want(self, port: int | None) -> None:
        """Serve ``port`` from now on (None: close the endpoint).  Called by every reload;
        a port that failed to bind is tried again."""
        if port != self.wanted or (port is not None and self.port is None):
            self.wanted = port
            self._changed.set()

    async def run(
        self,
        first: list[trio.SocketListener] | None,
        *,
        task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve until cancelled; ``first``: the listeners bound at start-up, if any."""
        async with trio.open_nursery() as nursery:
            if first is not None and self.wanted is not None:
                await self._open(nursery, self.wanted, first)
            task_status.started()
            while True:
                await self._changed.wait()
                self._changed = trio.Event()
                await self._follow(nursery)

    async def _follow(self, nursery: trio.Nursery) -> None:
        wanted = self.wanted
        if self.port is not None and wanted == self._serving_for:
            return
        self._close_current()
        if wanted is None:
            self.error = None
            log.info("http hook endpoint closed (http_port unset)")
            return
        try:
            listeners = await open_http_listeners(wanted)
        except (OSError, OverflowError, ValueError) as exc:
            self.error = _why(wanted, exc)
            log.error("http hook endpoint not served", port=wanted, error=self.error)
            return
        await self._open(nursery, wanted, listeners)

    async def _open(
        self, nursery: trio.Nursery, wanted: int, listeners: list[trio.SocketListener]
    ) -> None:
        scope = trio.CancelScope()

        async def serve(*, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
            try:
                with scope:
                    async with trio.open_nursery() as inner:
                        task_status.started(await self._start(wanted, listeners, inner))
            finally:
                _close(listeners)

        try:
            self.port = await nursery.start(serve)
        except Exception as exc:  # the token file, say: the daemon keeps its socket
            self.error = f"cannot serve http://127.0.0.1:{wanted}: {exc}"
            log.error("http hook endpoint not served", port=wanted, error=self.error)
            return
        self._scope = scope
        self._serving_for = wanted
        self.error = None

    def _close_current(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
            log.info("http hook endpoint closing", port=self.port)
        self._scope = None
        self.port = None
        self._serving_for = None

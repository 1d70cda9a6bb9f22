"""The blocking client: connect, handshake, request/reply — for CLIs and simple agents.

``Client`` speaks one request at a time over one connection (the protocol
allows many in flight; the async flavours use that).  When the daemon cannot
be reached the caller gets :class:`DaemonUnavailable`, and
``fire(..., on_unavailable=...)`` turns that into the caller's chosen failure policy:
fail open (an empty result with a visible system message) or fail closed (a
block).
"""

from __future__ import annotations

import errno
import itertools
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from hookd_client import protocol
from hookd_client.events import BaseHookInput, event_payload
from hookd_client.framing import FrameReader
from hookd_client.results import FireResult
from hookd_client.sockpath import default_socket_path, unsafe_reason

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_FIRE_TIMEOUT",
    "DEFAULT_MAX_BACKOFF",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "UNAVAILABLE_CODES",
    "Client",
    "DaemonError",
    "DaemonUnavailable",
    "UnsafeSocket",
    "agent_environment",
    "default_socket_path",
    "fallback_result",
    "retry_delay",
]

T = TypeVar("T")


class DaemonUnavailable(ConnectionError):
    """The daemon is not running (or not reachable) at the socket path."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"hookd is not running at {path} ({reason}); start it with `hookd serve` "
            "or `systemctl --user start hookd.socket`"
        )
        self.path = path
        self.reason = reason


class UnsafeSocket(DaemonUnavailable):
    """The socket, or a directory on the way to it, is not the caller's own.

    Nothing was sent: connecting would hand hook inputs (and the agent's
    environment) to whoever made it — :func:`hookd_client.sockpath.unsafe_reason`,
    the one rule every client and both relays apply before they connect.  A
    subclass of :class:`DaemonUnavailable` so that callers' fail-open/closed
    policies treat it as "no daemon".
    """

    def __init__(self, path: Path, reason: str) -> None:
        ConnectionError.__init__(self, f"refusing to connect to {path}: {reason}")
        self.path = path
        self.reason = reason


def check_socket(path: Path) -> None:
    """Raise :class:`UnsafeSocket` when ``path`` is not provably the caller's (lstat only)."""
    reason = unsafe_reason(str(path))
    if reason is not None:
        raise UnsafeSocket(path, reason)


UNAVAILABLE_CODES = frozenset({"shutting_down", "internal", "busy"})
"""Daemon error codes that mean "hookd could not decide", not "your request is wrong".

A fire that gets one of these is treated like an unreachable daemon by the
``on_unavailable`` policy; ``bad_input`` and the like still raise, because
failing open on a malformed request would hide the caller's bug.  ``busy``: the
daemon refused the event for want of memory (``buffer_budget``, too many
connections) — the same event may well pass a moment later.
"""

DEFAULT_RETRIES = 3
"""Connect attempts after the first, in every flavour (blocking, asyncio, trio)."""
DEFAULT_BACKOFF = 0.05
"""Seconds before the first retry; each next one waits twice as long."""
DEFAULT_MAX_BACKOFF = 2.0

_NOBODY_LISTENS = frozenset(
    {
        errno.ENOENT,  # no socket file: no daemon (socket activation keeps one listening)
        errno.ECONNREFUSED,  # a socket file nobody listens on: a daemon that is gone
        errno.ENOTDIR,
        errno.ENOTSOCK,
        errno.EACCES,
        errno.EPERM,
        errno.ENAMETOOLONG,
    }
)


def retry_delay(exc: OSError, attempt: int, retries: int, backoff: float, maximum: float) -> float:
    """Seconds to wait before connecting again after ``exc`` (attempt 0 is the first),
    or -1: give up now.

    The one retry policy of every client flavour.  Only a daemon that is there
    but cannot take the connection yet is worth waiting for (a full listen
    backlog, ``EAGAIN``; an interrupted or timed-out connect).  A missing
    socket file or a refused connection means nobody serves the path: waiting
    would only delay the caller's ``on_unavailable`` answer (it cost an asyncio
    client 1.55 s per fire while the daemon was down), and a daemon started by
    socket activation is listening before it runs, so no retry is needed for it.
    """
    if attempt >= retries or exc.errno in _NOBODY_LISTENS:
        return -1.0
    return float(min(backoff * 2**attempt, maximum))


class DaemonError(RuntimeError):
    """The daemon answered a request with an error."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def agent_environment() -> dict[str, str]:
    """This process's environment, sent once per connection in ``hello``: the
    client lives in the agent, and hooks must run with the agent's environment
    (its PATH, tokens, virtualenv), not with the daemon's — a daemon started by
    a service manager has a plain PATH and none of the user's variables."""
    return dict(os.environ)


def fallback_result(event: str, policy: Literal["open", "closed"], reason: str) -> FireResult:
    """What a caller applies when the daemon is unreachable.

    ``open``: proceed, but say so (a system message the user sees).
    ``closed``: block with the reason (deny for PreToolUse).
    """
    if policy == "open":
        return FireResult(event=event, system_messages=[f"hookd unavailable: {reason}"])
    decision = "deny" if event in ("PreToolUse", "PreModelSwitch") else "block"
    message = f"hookd unavailable (fail-closed): {reason}"
    return FireResult(event=event, decision=decision, reason=message, blocking_messages=[message])


DEFAULT_TIMEOUT = 10.0
"""Seconds to connect, handshake, or get the reply to any request but ``fire``."""
DEFAULT_FIRE_TIMEOUT = 630.0
"""Seconds a ``fire`` may wait for its reply: longer than the longest *default* hook
timeout (600 s, Claude Code's), so hookd's own per-hook timeouts always fire first.
A daemon that stops answering cannot hold the agent longer than this."""


class Client:
    """One blocking connection to the daemon, opened on first use.

    Nothing connects in ``__init__`` or ``__enter__``: the first request does,
    so ``with Client() as c: c.fire(..., on_unavailable="open")`` fails open
    when the daemon is down instead of raising before ``fire`` can apply the
    policy.  Every wait has a deadline (``timeout``, ``fire_timeout``): an agent
    blocked on a socket read is an agent hung for good, so a silent daemon is
    treated as an unavailable one.
    """

    def __init__(
        self,
        socket_path: str | Path | None = None,
        *,
        name: str = "hookd-client",
        timeout: float | None = DEFAULT_TIMEOUT,
        fire_timeout: float | None = DEFAULT_FIRE_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
    ) -> None:
        self.path = Path(socket_path or default_socket_path())
        self.name = name
        self.timeout = timeout
        self.fire_timeout = fire_timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sock: socket.socket | None = None
        self._frames = FrameReader(protocol.MAX_FRAME)
        """Bytes read past the last reply stay here for the next (a new connection, a new one)."""
        self._ids = itertools.count(1)
        self.welcome: protocol.Welcome | None = None
        self.connect_attempts = 0
        """Socket connects tried so far (each retry counts), as the async flavours count."""

    # --- connection ----------------------------------------------------------

    def connect(self) -> Client:
        """Connect, retrying what is worth it (:func:`retry_delay`), then handshake.

        The delay doubles after each failed attempt, up to ``max_backoff``.
        """
        last: OSError | None = None
        for attempt in range(self.retries + 1):
            self.connect_attempts += 1
            check_socket(self.path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(str(self.path))
            except OSError as exc:
                sock.close()
                last = exc
                delay = retry_delay(exc, attempt, self.retries, self.backoff, self.max_backoff)
                if delay < 0:
                    break
                time.sleep(delay)
                continue
            self._sock = sock
            self._frames = FrameReader(protocol.MAX_FRAME)
            try:
                self._send(
                    protocol.Hello(client=self.name, pid=os.getpid(), env=agent_environment())
                )
                reply = self._receive()
            except DaemonUnavailable:
                self.close()
                raise
            except TimeoutError:
                self.close()
                raise DaemonUnavailable(
                    self.path, f"no handshake within {self.timeout:g} s"
                ) from None
            except OSError as exc:
                self.close()
                raise DaemonUnavailable(self.path, str(exc)) from None
            except protocol.FrameError as exc:
                self.close()
                raise DaemonError("bad_reply", str(exc)) from None
            if isinstance(reply, protocol.Error):
                self.close()
                raise DaemonError(reply.code, reply.message)
            if not isinstance(reply, protocol.Welcome):
                self.close()
                raise DaemonError("bad_reply", f"expected welcome, got {type(reply).__name__}")
            self.welcome = reply
            self._frames.max_frame = max(self._frames.max_frame, reply.max_frame)
            return self
        raise DaemonUnavailable(self.path, str(last.strerror if last else "unknown"))

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.welcome = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- framing ---------------------------------------------------------------

    def _send(self, message: msgspec.Struct) -> None:
        assert self._sock is not None, "not connected"
        self._sock.sendall(protocol.encode(message))

    def _receive(self) -> protocol.ServerMessage:
        assert self._sock is not None, "not connected"
        while True:
            body = self._frames.next_frame()
            if body is not None:
                return protocol.decode_server(body)
            chunk = self._sock.recv(65536)
            if not chunk:
                raise DaemonUnavailable(self.path, "the daemon closed the connection")
            self._frames.feed(chunk)

    def request(self, message: Any, timeout: float | None = None) -> protocol.ServerMessage:
        """Send one request and return its reply (raises DaemonError on an error reply).

        ``timeout`` bounds the wait for the reply (default: the client's
        ``timeout``); past it the connection is closed — a late reply would be
        read as the answer to the next request — and DaemonUnavailable raised.
        """
        if self._sock is None:
            self.connect()
        assert self._sock is not None
        wait = self.timeout if timeout is None else timeout
        self._sock.settimeout(wait)
        try:
            self._send(message)
            reply = self._receive()
        except DaemonUnavailable:
            self.close()
            raise
        except TimeoutError:
            self.close()
            raise DaemonUnavailable(self.path, f"no reply within {wait:g} s") from None
        except OSError as exc:
            self.close()
            raise DaemonUnavailable(self.path, str(exc)) from None
        except protocol.FrameError as exc:  # framing is lost: the connection is useless
            self.close()
            raise DaemonError("bad_reply", str(exc)) from None
        finally:
            if self._sock is not None:
                self._sock.settimeout(self.timeout)
        if isinstance(reply, protocol.Error):
            raise DaemonError(reply.code, reply.message)
        return reply

    def next_id(self) -> int:
        return next(self._ids)

    # --- requests ----------------------------------------------------------------

    def fire(
        self,
        event: str | BaseHookInput,
        payload: dict[str, Any] | BaseHookInput | None = None,
        *,
        env: dict[str, str] | None = None,
        context: Literal["interactive", "batch"] = "interactive",
        claude: bool = False,
        on_unavailable: Literal["open", "closed", "raise"] = "raise",
        agent: str = "",
        once: bool = False,
    ) -> protocol.FireReply:
        """Run one event's hooks.

        ``once``: a one-shot fire, as ``hookctl fire`` makes (``protocol.Fire.once``):
        a session the daemon did not know is forgotten after the event.

        ``agent`` (``codex``, ``gemini``, …; empty: Claude Code) says whose event
        this is: ``event`` and ``payload`` are then that agent's own, and with
        ``claude=True`` the reply's ``claude`` is that agent's hook output.

        ``on_unavailable`` says what an unreachable daemon (or one that is
        stopping or failed internally) means for this event: ``"raise"``
        (DaemonUnavailable / DaemonError), or a reply carrying
        :func:`fallback_result` — ``"open"`` proceeds with a visible system
        message, ``"closed"`` blocks.  Errors about the request itself
        (``bad_input``…) always raise: failing open would hide the caller's bug.
        ``event`` may be a typed event (``PreToolUse(...)``) instead of a name and
        a mapping.
        """
        event, payload = event_payload(event, payload)
        try:
            reply = self.request(
                protocol.Fire(
                    id=self.next_id(),
                    event=event,
                    input=payload,
                    env=env,
                    context=context,
                    format="claude" if claude else "result",
                    agent=agent,
                    once=once,
                ),
                timeout=self.fire_timeout,
            )
        except DaemonUnavailable as exc:
            if on_unavailable == "raise":
                raise
            return protocol.FireReply(
                id=0, result=fallback_result(event, on_unavailable, exc.reason)
            )
        except DaemonError as exc:
            if on_unavailable == "raise" or exc.code not in UNAVAILABLE_CODES:
                raise
            return protocol.FireReply(id=0, result=fallback_result(event, on_unavailable, str(exc)))
        if not isinstance(reply, protocol.FireReply):
            raise DaemonError("bad_reply", f"expected fire_reply, got {type(reply).__name__}")
        return reply

    def register_session_hooks(
        self,
        session_id: str,
        hooks: dict[str, Any],
        *,
        project: str | None = None,
        source: str = "session",
        scope: Literal["session", "skill"] = "session",
    ) -> int:
        """Add settings-shaped hooks (command, http, …) for one session.

        The blocking client cannot serve Python callbacks — it only reads when
        it waits for a reply — so callables are refused; use the asyncio or
        trio client for those.
        """
        for groups in hooks.values():
            for group in groups:
                if any(callable(h) or not isinstance(h, dict) for h in group.get("hooks", [])):
                    raise TypeError(
                        "the blocking client cannot serve Python callbacks; "
                        "use hookd_client.aio or hookd_client.trio_client"
                    )
        message = protocol.RegisterSessionHooks(
            id=self.next_id(),
            session_id=session_id,
            hooks=hooks,
            source=source,
            scope=scope,
            project=project,
        )
        return self.call_as(message, protocol.Registered).registered

    def clear_session_hooks(self, session_id: str, source: str | None = None) -> int:
        message = protocol.ClearSessionHooks(
            id=self.next_id(), session_id=session_id, source=source
        )
        return self.call_as(message, protocol.Removed).removed

    def check_for_new_responses(self, session_id: str) -> list[Any]:
        """Finished async-hook results for the session, each returned once."""
        message = protocol.CheckAsync(id=self.next_id(), session_id=session_id)
        return self.call_as(message, list[dict[str, Any]])

    def call(self, message: Any) -> Any:
        """A request answered by a generic ``reply``: returns its data as plain data."""
        reply = self.request(message)
        if not isinstance(reply, protocol.Reply):
            raise DaemonError("bad_reply", f"expected reply, got {type(reply).__name__}")
        return reply.data

    def call_as(self, message: Any, kind: type[T]) -> T:
        """A request answered by a ``reply``: its data as the request's payload type
        (``protocol.Reloaded``, ``protocol.HookListing`` …)."""
        reply = self.request(message)
        if not isinstance(reply, protocol.Reply):
            raise DaemonError("bad_reply", f"expected reply, got {type(reply).__name__}")
        try:
            return protocol.reply_data(reply, kind)
        except protocol.InvalidMessage as exc:
            raise DaemonError("bad_reply", str(exc)) from None

    def reload(self) -> protocol.Reloaded:
        """Re-read every config source now (as a file change or SIGHUP does)."""
        return self.call_as(protocol.Reload(id=self.next_id()), protocol.Reloaded)

    def hooks(self, cwd: str, session_id: str | None = None) -> protocol.HookListing:
        """Every hook the project's config (and the session) has, and whether it runs."""
        message = protocol.Hooks(id=self.next_id(), cwd=cwd, session_id=session_id)
        return self.call_as(message, protocol.HookListing)

    def validate(self, files: list[str]) -> list[protocol.ValidatedFile]:
        """The daemon's verdict on config files (errors with file, line and path)."""
        message = protocol.Validate(id=self.next_id(), files=files)
        return self.call_as(message, list[protocol.ValidatedFile])

    def reset_breakers(self, hook: str | None = None) -> list[str]:
        """Close circuit breakers (all, or those matching ``hook``); the keys reset."""
        message = protocol.ResetBreakers(id=self.next_id(), hook=hook)
        return self.call_as(message, protocol.BreakersReset).reset

    def shutdown(self) -> protocol.Stopping:
        """Ask the daemon to stop gracefully."""
        return self.call_as(protocol.Shutdown(id=self.next_id()), protocol.Stopping)

    def status_line(
        self, cwd: str, payload: dict[str, Any], env: dict[str, str] | None = None
    ) -> str | None:
        """The line the project's ``statusLine`` command prints (None: keep the old one)."""
        message = protocol.StatusLine(id=self.next_id(), cwd=cwd, input=payload, env=env)
        return self.call_as(message, protocol.StatusLineText).line

    def file_suggestion(self, cwd: str, query: str, env: dict[str, str] | None = None) -> list[str]:
        """Paths the project's ``fileSuggestion`` command suggests for ``query``."""
        message = protocol.StatusLine(
            id=self.next_id(), cwd=cwd, input={"query": query}, which="fileSuggestion", env=env
        )
        return self.call_as(message, protocol.FileSuggestions).paths

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = self.call(protocol.Status(id=self.next_id()))
        return data

    def tail(self, follow: bool = False, last: int = 20) -> Iterator[dict[str, Any]]:
        """Recent hook runs; with ``follow`` keeps yielding new ones (no read deadline)."""
        if self._sock is None:
            self.connect()
        assert self._sock is not None
        rid = self.next_id()
        self._send(protocol.Tail(id=rid, follow=follow, last=last))
        if follow:
            self._sock.settimeout(None)  # waiting for the next run is the point
        while True:
            message = self._receive()
            if isinstance(message, protocol.TailItem):
                yield message.record
            elif isinstance(message, protocol.Error):
                raise DaemonError(message.code, message.message)
            else:
                return

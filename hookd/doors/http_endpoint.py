"""The endpoint Claude Code's ``http`` hooks post to: ``POST /hooks/<Event>``.

Claude Code (2.1.330) sends each hook input as a JSON body over a keep-alive
HTTP/1.1 connection (axios); hookd fires the event through the daemon and
answers ``200`` with one JSON document that makes Claude Code apply the
aggregated result of every hook hookd ran.

Why the answer is always JSON: an http hook cannot block through its status
code (any non-2xx is a non-blocking error, reference §4.5) and a non-JSON body
is an error too, so every verdict — deny, ask, block, a Stop continuation —
travels in the body, and plain-text context (which a command hook may print
on UserPromptSubmit) is turned into ``additionalContext``.  An empty body
means "no opinion", exactly like a command hook that printed nothing.

Security: the TCP listener only binds loopback addresses, and every request
there must carry the token from :func:`load_or_create_token`
(``Authorization: Bearer`` or ``X-Hookd-Token``), compared in constant time.
Without it, any local process — or a web page doing DNS rebinding — could run
the user's hooks with input of its choosing.  It is checked at each request's
head, before the body is read.  Until one of its requests shows it, a
connection is *pending*: one of a small pool where a newcomer evicts the
oldest, with a deadline for its request head, never counted against
``http_max_connections`` (:mod:`hookd.doors.http_admission`) — so another
local user, without the token, cannot take the door away (issue 28).  Every
error answer closes its connection.

The same app is also served on a Unix socket (:func:`start_http_socket_endpoint`,
``http.sock`` beside the daemon's socket): the door of the Claude Code mod,
which reaches it through Claude Code's ``$.http.fetch(…, {socketPath})``.
There the socket file is the authentication — created mode 0600 in a
directory only the user may write, so no other user can connect, and a
browser cannot reach a Unix socket at all — and each peer's uid is checked
again (``SO_PEERCRED``); no token is asked for.  The peer's pid comes from
the kernel with it, instead of a search.

Which agent sent a request: Claude Code puts ``CLAUDE_PID`` only in its hook
*subprocess* environment, so ``$CLAUDE_PID`` in an http hook's headers is
interpolated to an empty string (observed with 2.1.330).  The endpoint
therefore finds the peer process of the TCP connection (Linux:
:mod:`hookd.doors.tcp_peer`, in a worker thread) and passes its pid as
``agent_pid``; elsewhere, or when it cannot, the pid is ``None``.  It does so
only when the event pipeline asks — a new session, or hooks to run — and at
most once per connection: a known session's tool call that no hook matches,
most of the traffic, costs no search at all.

Which environment its hooks get: the agent's, as natively — read from the
peer's ``/proc/<pid>/environ`` in the same search, with the variables Claude
Code adds for its hook subprocesses (:mod:`hookd.doors.agent_env`), rather
than the daemon's own (a service manager's plain ``PATH``) — but only from a
peer process of the daemon's own uid, pinned against pid reuse
(:func:`hookd.agent_process.own_process`); another user's process, token or
not, gets the daemon's environment.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import math
import os
import re
import secrets
import socket
import stat
import struct
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Protocol

import h11
import msgspec
import structlog
import trio

from hookd.agent_process import AgentInfo, AgentLookup, own_process
from hookd.dirs import config_dir
from hookd.doors import http_wire
from hookd.doors.agent_env import ClaudeAgentEnv, agent_env_of
from hookd.doors.http_admission import DoorAdmission
from hookd.doors.mod_answer import render_mod
from hookd.doors.tcp_peer import PeerFinder, peer_uid
from hookd.engine.claude_output import carries_late_context, render_claude
from hookd.fdio import read_when_ready, write_nowait
from hookd.unix_sockets import answers
from hookd_client.events import EVENT_NAMES, EventInputError
from hookd_client.output import HOOK_SPECIFIC_OUTPUTS
from hookd_client.results import FireResult

__all__ = [
    "MAX_BODY",
    "FireFn",
    "HttpLimits",
    "UnsafeHttpSocket",
    "load_or_create_token",
    "open_http_listeners",
    "open_unix_http_listener",
    "render_http",
    "serve_http",
    "start_http_endpoint",
    "start_http_socket_endpoint",
    "token_path",
]

log = structlog.get_logger("hookd.doors.http")

MAX_BODY = 16 * 1024 * 1024
"""Largest request body accepted (Claude Code sends 200 KB tool inputs intact)."""
CLIENT_NAME = "claude-code-http"
MOD_CLIENT_NAME = "claude-code-mod"
_YIELD_EVERY = 64
"""h11 events handled between two checkpoints: a body of 100,000 one-byte chunks
arrives in a few reads, and parsing it without yielding held the loop for seconds."""


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What one client may cost (the daemon fills these from its settings).

    Idle keep-alive connections that showed the token are never timed out —
    closing one at the moment axios reuses it would turn a hook call into a
    connection error — so their number is capped instead (``max_connections``).
    A connection that has not shown the token yet is *pending*
    (:mod:`hookd.doors.http_admission`): at most ``max_unauthenticated`` of
    them, the oldest evicted by a newcomer, and each of its request heads must be
    complete within ``first_request_timeout`` of the connection being ready
    for it (its accept, or its last answer).  A request, once its first byte
    arrived, must be complete in time: headers within ``header_timeout``, then
    the body within ``body_timeout`` (totals, not per read: a byte every few
    seconds does not keep a request alive).
    """

    max_connections: int | None = None
    header_timeout: float = math.inf
    body_timeout: float = math.inf
    max_unauthenticated: int = 32
    first_request_timeout: float = math.inf
    budget: MemoryBudget | None = None
    """The daemon's buffer budget, shared with its Unix socket: a body over 64 KiB is
    charged from its head until its answer is sent, and one that does not fit is
    answered ``503``."""


class MemoryBudget(Protocol):
    """What the endpoint asks of the daemon's buffer budget (hookd/daemon/limits.py)."""

    async def hold(self, size: int) -> int: ...

    def give(self, size: int) -> None: ...

    def refusal(self, size: int) -> str: ...


_SMALL_BODY = 65536
"""Bodies up to this size are not charged to the budget (the connection cap bounds them)."""


class FireFn(Protocol):
    """The event pipeline's ``fire``: the one service the endpoint uses."""

    def __call__(
        self,
        event: str,
        raw: dict[str, Any],
        /,
        *,
        agent: AgentLookup,
        client: str = "",
        deliver_async: bool = False,
        agent_caps_stop: bool = False,
        hangup: Callable[[], Awaitable[None]] | None = None,
    ) -> Awaitable[FireResult | bytes | None]: ...  # bytes: another agent's own answer


async def start_http_endpoint(
    port: int,
    fire: FireFn,
    nursery: trio.Nursery,
    limits: HttpLimits = HttpLimits(),
    serve_under: Callable[..., Awaitable[None]] | None = None,
    counters: Counter[str] | None = None,
    listeners: list[trio.SocketListener] | None = None,
) -> int:
    """The daemon's hook: serve http hooks in its nursery; returns the bound port.

    ``fire`` is the event pipeline's door; the endpoint needs nothing else of
    the daemon.  The token is created on first use, so ``hookctl claude
    install`` and the daemon agree on it without any other coordination.
    ``serve_under``: a supervisor the listener runs under (the daemon's
    ``supervise``: a listener that raises is restarted and reported, not
    allowed to stop the daemon), called as ``serve_under(serve_http, *args)``.
    ``counters``: where the endpoint counts its connections and agent lookups
    (the daemon's activity counters, shown by ``hookctl status``).
    ``listeners``: already bound to ``port`` (the daemon binds before it serves, so a
    taken port is one clear error, not a task failing in its nursery).
    """
    token = load_or_create_token()
    if listeners is None:
        listeners = await open_http_listeners(port)
    args = (listeners, fire, token, limits, counters)
    if serve_under is None:
        await nursery.start(serve_http, *args)
    else:
        await nursery.start(serve_under, serve_http, *args)
    bound = int(listeners[0].socket.getsockname()[1])
    log.info(
        "http hook endpoint listening", host="127.0.0.1", port=bound, token_file=str(token_path())
    )
    return bound


async def start_http_socket_endpoint(
    path: Path,
    fire: FireFn,
    nursery: trio.Nursery,
    limits: HttpLimits = HttpLimits(),
    serve_under: Callable[..., Awaitable[None]] | None = None,
    counters: Counter[str] | None = None,
) -> Path:
    """The same app on a Unix socket at ``path`` (owner-only; no token); returns the path.

    The first socket is bound here, so an unsafe place is the caller's error
    (:class:`UnsafeHttpSocket`) rather than a task restarting forever; a
    restart under ``serve_under`` binds afresh.  The socket file is removed
    when its serving task ends (if it is still the one bound).
    """
    first = [open_unix_http_listener(path)]

    async def serve(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listener = first.pop() if first else open_unix_http_listener(path)
        inode = path.lstat().st_ino
        try:
            await serve_http([listener], fire, None, limits, counters, task_status=task_status)
        finally:
            listener.socket.close()
            _unlink_if_ours(path, inode)

    if serve_under is None:
        await nursery.start(serve)
    else:
        await nursery.start(serve_under, serve)
    log.info("http hook endpoint listening", socket=str(path))
    return path


# --- the token ---------------------------------------------------------------------


def token_path() -> Path:
    """``$XDG_CONFIG_HOME/hookd/http-token`` (default ``~/.config/hookd/http-token``)."""
    return config_dir() / "http-token"


def load_or_create_token(path: Path | None = None) -> str:
    """Read the endpoint token, creating it (mode 0600, 256 random bits) if missing.

    Created with ``O_EXCL`` so two processes racing to create it agree on one
    value; a token file readable by others is refused rather than trusted.
    """
    path = path or token_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise PermissionError(f"{path} is readable by others (mode {mode:o}); chmod 600 it")
    token = path.read_text(encoding="ascii").strip()
    if not token:
        raise ValueError(f"{path} is empty; delete it to have a new token made")
    return token


# --- listening ---------------------------------------------------------------------


async def open_http_listeners(port: int, host: str = "127.0.0.1") -> list[trio.SocketListener]:
    """Listen on a loopback address only; anything else is refused, not warned about."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if host != "localhost":
            raise ValueError(f"the hook endpoint only listens on loopback, not {host!r}") from None
        address = ipaddress.ip_address("127.0.0.1")
    if not address.is_loopback:
        raise ValueError(f"the hook endpoint only listens on loopback, not {host!r}")
    listeners = await trio.open_tcp_listeners(port, host=str(address))
    for listener in listeners:
        # Answers go out in one write each: no Nagle delay.  Set here, on the
        # listening socket, because accepted connections inherit it (Linux) —
        # no system call per connection.
        listener.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listeners


class UnsafeHttpSocket(ValueError):
    """The http socket's place could let another user reach or replace it."""


def open_unix_http_listener(path: Path) -> trio.SocketListener:
    """Bind ``path`` as an owner-only (0600) Unix socket; refuse any place another user controls.

    Checked before binding: the directory is the user's own and writable by
    nobody else (else someone could swap the socket); a leftover socket that
    no process answers on is replaced, anything else at ``path`` — a file, a
    live socket — is refused.  The socket is bound under umask ``0177``, so
    it is never, not even for a moment, connectable by others, and its mode is
    checked after binding.
    """
    directory = path.parent
    try:
        info = directory.stat()
    except FileNotFoundError:
        raise UnsafeHttpSocket(f"{directory} does not exist (http socket {path})") from None
    if info.st_uid != os.getuid():
        raise UnsafeHttpSocket(
            f"{directory} belongs to uid {info.st_uid}, not to hookd's user (uid {os.getuid()}); "
            f"refusing to put the http socket there (setting http_socket_path)"
        )
    if stat.S_IMODE(info.st_mode) & 0o022:
        raise UnsafeHttpSocket(
            f"{directory} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}); "
            f"refusing to put the http socket there (setting http_socket_path)"
        )
    try:
        existing = path.lstat()
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(existing.st_mode):
            raise UnsafeHttpSocket(f"{path} exists and is not a socket; refusing to replace it")
        if answers(path):
            raise UnsafeHttpSocket(f"{path} is already served by another process")
        path.unlink()  # left behind by a daemon that crashed
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            path.unlink()
            raise UnsafeHttpSocket(f"{path} was created mode {mode:o}, not 600; removed it")
        sock.listen(512)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(trio.socket.from_stdlib_socket(sock))


def _unlink_if_ours(path: Path, inode: int) -> None:
    try:
        if path.lstat().st_ino == inode:
            path.unlink()
    except OSError as exc:
        log.debug("http socket already gone", socket=str(path), error=str(exc))


def _unix_peer(sock: socket.socket) -> tuple[int, int] | None:
    """``(pid, uid)`` of a Unix-socket peer (``SO_PEERCRED``, Linux); None for TCP or elsewhere."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if sock.family != socket.AF_UNIX or opt is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return pid, uid


# --- rendering ---------------------------------------------------------------------


def render_http(result: FireResult, tool_name: str | None = None) -> bytes:
    """The response body for one event: JSON, or empty for "no opinion".

    Built on :func:`render_claude` (what one command hook would print) and
    adjusted for what an http hook may answer: plain-text context becomes
    ``additionalContext``; a verdict that a command hook would express only
    through exit 2 becomes ``decision: "block"``.
    """
    rendered = render_claude(result, tool_name)
    text = rendered.stdout.strip()
    if text.startswith("{"):
        return text.encode()
    out: dict[str, Any] = {}
    if text:
        variant = HOOK_SPECIFIC_OUTPUTS.get(result.event)
        if variant is None or "additionalContext" in variant.__struct_fields__:
            out["hookSpecificOutput"] = {"hookEventName": result.event, "additionalContext": text}
    if rendered.exit_code == 2:
        # The reason with its ``[<cmd>]: `` prefix: Claude Code adds none to JSON.
        out["decision"] = "block"
        joined = "\n\n".join(m for m in result.blocking_messages if m)
        out["reason"] = joined or result.reason or rendered.stderr.strip()
    return msgspec.json.encode(out) if out else b""


# --- serving -----------------------------------------------------------------------


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def serve_http(
    listeners: Sequence[trio.SocketListener],
    fire: FireFn,
    token: str | None,
    limits: HttpLimits = HttpLimits(),
    counters: Counter[str] | None = None,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``POST /hooks/<Event>`` on ``listeners`` until cancelled.

    Meant for ``await nursery.start(serve_http, listeners, pipeline.fire, token)``:
    ``started()`` fires once every listener is accepting.  Who may hold a
    connection is :class:`DoorAdmission`'s: a request that shows the token while
    ``limits.max_connections`` trusted connections are open is answered ``503``
    (a JSON error naming the setting) and its connection closed.  ``counters``
    gets ``http_connections`` (accepted), ``http_evicted`` (pending connections
    pushed out by newer ones) and ``http_agent_lookups`` (peer searches: at most
    one per connection, none for one whose events need nothing of the agent).
    ``token``: None on a Unix socket, whose file mode is the authentication
    (a peer of another uid is refused with ``403``; the owner's are trusted).
    """
    expected = token.encode() if token is not None else None
    finder = PeerFinder()
    counted: Counter[str] = Counter() if counters is None else counters
    admission = DoorAdmission(limits.max_connections, limits.max_unauthenticated, peer_uid, counted)
    me = os.getuid()
    first_heads = http_wire.HeadMemo()
    """Shared by new connections: a one-shot client (``curl``, a hook relay) sends the
    head the last one did, and a connection of its own has nothing to compare with."""

    async def serve(conn: socket.socket, agent: _HttpAgent, trusted: bool) -> None:
        wire = _Wire(conn, limits, first_heads, admission, expected, trusted)
        try:
            await _serve_connection(wire, fire, agent)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.debug("http client went away")
        except Exception:
            log.exception("http connection failed")
        finally:
            admission.leave(conn)
            # Synchronous, and past trio: nothing waits on the socket any more (this
            # task was its only reader), so there is no waiter to wake and no
            # registration to drop — a system call and an exception less than trio's.
            conn.close()

    def admit(conn: socket.socket, nursery: trio.Nursery) -> None:
        """A new connection, in the order they were accepted: refused, pending, or trusted.

        On the loopback port every connection starts pending (nobody knows yet
        whether it has the token) and is never refused here; on the Unix socket
        the owner's peers are trusted at once and count against the cap."""
        if expected is not None:
            admission.admit_pending(conn)
            counted["http_connections"] += 1
            nursery.start_soon(serve, conn, _HttpAgent(conn, finder, counted), False)
            return
        unix_peer = _unix_peer(conn)
        if unix_peer is None or unix_peer[1] != me:
            # Unreachable while the socket is 0600 — unless someone loosened it.
            uid = None if unix_peer is None else unix_peer[1]
            message = f"hookd serves only its own user (uid {me}), not uid {uid}"
            nursery.start_soon(_refuse, _stream(conn), 403, message)
            return
        refused = admission.admit_trusted(conn)
        if refused is not None:
            nursery.start_soon(_refuse, _stream(conn), 503, refused)
            return
        counted["http_connections"] += 1
        agent = _HttpAgent(conn, finder, counted, unix_peer[0])
        nursery.start_soon(serve, conn, agent, True)

    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept_forever, listener, admit, nursery)
        task_status.started()


_ACCEPT_CAPACITY_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})
"""``accept`` failures that mean "out of resources now": wait and retry, as trio does."""
_ACCEPT_IGNORED_ERRNOS = frozenset(
    getattr(errno, name)
    for name in (
        "EPERM",  # Linux: a connection the firewall denied
        "ECONNABORTED",
        "EPROTO",
        "ENETDOWN",
        "ENOPROTOOPT",
        "EHOSTDOWN",
        "ENONET",
        "EHOSTUNREACH",
        "EOPNOTSUPP",
        "ENETUNREACH",
        "ENOSR",
        "ESOCKTNOSUPPORT",
        "EPROTONOSUPPORT",
        "ETIMEDOUT",
        "ECONNRESET",
    )
    if hasattr(errno, name)
)
"""``accept`` failures of one pending connection, not of the listener (trio's list):
that connection is gone, the next is accepted."""


async def _accept_forever(
    listener: trio.SocketListener,
    admit: Callable[[socket.socket, trio.Nursery], None],
    nursery: trio.Nursery,
) -> None:
    """Accept connections and hand each to ``admit`` (in accept order), which starts its
    task in ``nursery``: ``trio.serve_listeners`` made cheaper per connection.

    trio's loop adds a pass through the scheduler after every ``accept`` and an
    ``aclose_forcefully`` (a cancel scope and two checkpoints) around every
    handler — on a connection that carries one request (``curl``, a one-shot
    client) a good part of the daemon's whole cost.  Here a second descriptor
    of the listening socket is waited on and accepted from; each connection's
    task closes its socket synchronously when it ends.
    Admission happens here, not in the tasks: trio runs the tasks started in one
    pass in any order, and the connection cap must refuse the newest, not any.
    The loop owns its descriptor: the listening socket stays open until the loop
    is cancelled, whoever closes ``listener``.
    """
    accepting = socket.socket(fileno=os.dup(listener.socket.fileno()))
    accepting.setblocking(False)
    try:
        while True:
            # One accept per readiness: a client that connects, asks and waits (most
            # do) costs no accept that fails with EAGAIN (a system call and an
            # exception); a burst is still taken in order, each wait returning at
            # once while connections are pending, and its handlers run in between.
            await trio.lowlevel.wait_readable(accepting)
            try:
                conn, _ = accepting.accept()
            except BlockingIOError:
                continue  # a spurious wake-up: nothing pending after all
            except OSError as exc:
                if exc.errno in _ACCEPT_IGNORED_ERRNOS:
                    log.debug("http connection gone before accept", error=str(exc))
                    continue
                if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                    raise
                log.error("http accept failed; retrying in 0.1 s", error=os.strerror(exc.errno))
                await trio.sleep(0.1)
                continue
            try:
                conn.setblocking(False)  # read and written at the descriptor (hookd.fdio)
                admit(conn, nursery)
            except BaseException:
                conn.close()  # not handed to a task: nobody else would close it
                raise
    finally:
        accepting.close()


def _stream(conn: socket.socket) -> trio.SocketStream:
    """A trio stream over an accepted socket, for the paths that are not the fast one."""
    return trio.SocketStream(trio.socket.from_stdlib_socket(conn))


async def _serve_connection(wire: _Wire, fire: FireFn, agent: _HttpAgent) -> None:
    """Serve one connection's requests until it closes, or until an error answer.

    Every error answer — ``401``, ``404``, ``408``, a hook input refused with
    ``400`` — ends the connection: a client that got one has nothing more to
    say on it that hookd wants to hear, and a connection that keeps being
    refused must not keep a place (issue 28).  A large body's share of the buffer
    budget is held from its head until its answer is sent (issue 28.9)."""
    try:
        while await _serve_one(wire, fire, agent):
            pass
    finally:
        wire.release()


async def _serve_one(wire: _Wire, fire: FireFn, agent: _HttpAgent) -> bool:
    """One request and its answer; False when the connection is done."""
    try:
        request, body = await wire.read_request()
        if request is None:
            return False
        status, payload = await _dispatch(wire, request, body, fire, agent)
    except _HttpError as exc:
        await _fail(wire, exc.status, exc.message)
        return False
    except h11.RemoteProtocolError as exc:
        await _fail(wire, exc.error_status_hint, f"bad HTTP request: {exc}")
        return False
    del body  # the event is answered: its input is held no longer
    if payload is None:  # the client left while the hooks ran; nobody to answer
        return False
    # A HEAD answer has the GET answer's head and no body (RFC 9110 §9.3.2; h11
    # refuses to send one, which cut the connection instead of answering).
    await wire.send(status, payload, head_only=request.method == b"HEAD")
    wire.release()
    return wire.next_cycle()


async def _fail(wire: _Wire, status: int, message: str) -> None:
    """Answer with a JSON error and ``connection: close``, then let the answer be read."""
    await wire.send_error(status, message)
    await _linger(wire.stream)


@dataclass(slots=True)
class _Request:
    """A request head, whichever reader read it (header names lowercased)."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]
    event: str | None = None
    """The hook event posted to (None: the health check), set by :meth:`_Wire.check_head`."""
    for_mod: bool = False
    """Posted to ``/mod/<Event>`` (the Claude Code mod's door)."""


class _Wire:
    """One connection's HTTP/1.1 framing: the simple reader first, h11 from the first
    request it declines on (:mod:`hookd.doors.http_wire`).

    Once h11 has a connection it keeps it: the bytes it buffered belong to it,
    and a connection that sent one unusual request may send more.
    """

    def __init__(
        self,
        conn: socket.socket,
        limits: HttpLimits,
        first_heads: http_wire.HeadMemo | None = None,
        admission: DoorAdmission | None = None,
        token: bytes | None = None,
        trusted: bool = True,
    ) -> None:
        self.conn = conn
        self.admission = admission
        self.token = token
        """What each request must show (None: the Unix socket, whose mode is the check)."""
        self.trusted = trusted
        """A request of this connection showed the token (or its peer is the owner's, on
        the Unix socket): it may idle for ever, and counts against the cap."""
        self.fd = conn.fileno()
        self._stream: trio.SocketStream | None = None
        self.first_heads = first_heads
        self.heads = http_wire.HeadMemo() if first_heads is None else first_heads
        """The server's memo for the first head, then the connection's own (a copy)."""
        self.fresh = True
        """No byte read yet: a new connection's first request is usually here already."""
        self.limits = limits
        self.buffer = bytearray()
        self.h11: h11.Connection | None = None
        self.close_after = False
        self.held = 0
        """Bytes of the budget the request being read or answered holds."""
        self._held_for = 0
        """The body size those bytes were charged for."""

    async def hold(self, size: int) -> None:
        """Charge a body of ``size`` bytes (as its head announces it, or as a chunked
        one grows) to the budget; ``503`` when it does not fit."""
        budget = self.limits.budget
        if budget is None or size <= max(_SMALL_BODY, self._held_for):
            return
        size = max(size, 2 * self._held_for)  # a growing chunked body: in doubling steps
        charged = await budget.hold(size - self._held_for)
        if not charged:
            raise _HttpError(503, budget.refusal(size))
        self.held += charged
        self._held_for = size

    def release(self) -> None:
        if self.held and self.limits.budget is not None:
            self.limits.budget.give(self.held)
        self.held = self._held_for = 0

    @property
    def stream(self) -> trio.SocketStream:
        """The connection as a trio stream, made when first needed: h11's reader, an
        answer that does not fit the socket buffer, an error's linger.  The fast path
        reads and writes the descriptor (hookd.fdio) and never makes one."""
        if self._stream is None:
            self._stream = _stream(self.conn)
        return self._stream

    def keep(self, data: bytes) -> None:
        """Bytes the client sent while its request was being answered (pipelining)."""
        if self.h11 is not None:
            self.h11.receive_data(data)
        else:
            self.buffer += data

    async def read_request(self) -> tuple[_Request | None, bytes]:
        """One whole request; ``(None, b"")`` when the client closed an idle connection."""
        # Trusted: idle as long as it takes.  Pending: the whole head by a deadline.
        idle_deadline = (
            math.inf if self.trusted else trio.current_time() + self.limits.first_request_timeout
        )
        if self.h11 is not None:
            return await _read_request(
                self.stream, self.h11, self.limits, idle_deadline=idle_deadline, wire=self
            )
        if self.buffer.startswith((b"\r\n", b"\n")):
            # Empty lines between requests are to be ignored (RFC 9112 §2.2): a
            # client that ends a body with an extra CRLF is not starting a request.
            del self.buffer[: len(self.buffer) - len(self.buffer.lstrip(b"\r\n"))]
        if self.buffer:
            # The client pipelined: its next request is already here, and nothing
            # on the way to it waits — let the other connections run first.
            await trio.lowlevel.checkpoint()
        else:
            data = b""
            while not data:
                if idle_deadline == math.inf:
                    data = await self.receive()
                else:
                    data = await self._receive_pending(idle_deadline)
                if not data:
                    return None, b""
                if data[:1] in (b"\r", b"\n"):
                    data = data.lstrip(b"\r\n")  # empty lines before a request: ignored
            whole = self._one_whole_request(data)
            if whole is not None:
                return whole
            self.buffer += data
        return await self._read_buffered(idle_deadline)

    async def _read_buffered(self, idle_deadline: float) -> tuple[_Request | None, bytes]:
        """The general path: a request that did not arrive whole in one read, read
        through the buffer (or handed to h11 when it is not the simple shape)."""
        closed = False
        deadline, setting = _head_deadline(self.limits, idle_deadline)
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0 or len(self.buffer) > http_wire.MAX_HEAD:
                break
            data = await self._receive_by(deadline, setting)
            if not data:
                if self.buffer:  # closed mid-head: h11 says what that is
                    closed = True
                    break
                return None, b""
            self.buffer += data
        head = None
        if 0 <= end <= http_wire.MAX_HEAD:
            head = self._parse_head(bytes(self.buffer[:end]))
        if head is None or head.content_length > MAX_BODY:
            if head is not None:
                raise _HttpError(413, f"request body over {MAX_BODY} bytes")
            self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=http_wire.MAX_HEAD)
            self.h11.receive_data(bytes(self.buffer))
            if closed:
                self.h11.receive_data(b"")
            self.buffer.clear()
            return await _read_request(
                self.stream, self.h11, self.limits, deadline, setting=setting, wire=self
            )
        request = self.check_head(_Request(head.method, head.target, head.headers))
        need = end + 4 + head.content_length
        await self.hold(head.content_length)
        deadline = trio.current_time() + self.limits.body_timeout
        while len(self.buffer) < need:
            data = await self._receive_by(deadline, "http_body_timeout")
            if not data:
                return None, b""  # closed mid-body: nobody to answer
            self.buffer += data
        body = bytes(self.buffer[end + 4 : need])
        del self.buffer[:need]
        self.close_after = head.close
        return request, body

    def _one_whole_request(self, data: bytes) -> tuple[_Request, bytes] | None:
        """``data`` is exactly one whole request of the simple shape (what one read of a
        client that waits for each answer brings): the request, without copying it
        through the buffer.  None for anything else — the general path reads it."""
        end = data.find(b"\r\n\r\n")
        if end < 0 or end > http_wire.MAX_HEAD:
            return None
        head = self._parse_head(data[:end])
        if head is None or len(data) != end + 4 + head.content_length:
            return None
        self.close_after = head.close
        return self.check_head(_Request(head.method, head.target, head.headers)), data[end + 4 :]

    def check_head(self, request: _Request) -> _Request:
        """Route a request and check its token at its head, before its body is read:
        a request without the token costs no body and no wait (``401``, then closed).

        The first request that shows the token makes a pending connection trusted
        (:meth:`DoorAdmission.promote`) — or gets ``503`` when the trusted ones are
        at the cap.  Raises :class:`_HttpError` for anything hookd will not serve."""
        target = request.target.decode("latin-1").split("?", 1)[0]
        if target == "/health" and request.method in (b"GET", b"HEAD"):
            if not self.trusted and _has_body(request):
                # The one request served without the token: its body would be read
                # into memory for nothing, by up to http_max_unauthenticated peers.
                raise _HttpError(413, "a health check without the token carries no body")
            return request
        prefix, _, event = target[1:].partition("/")
        if prefix not in ("hooks", "mod") or not event:
            raise _HttpError(
                404, f"no such endpoint {target!r}; hooks post to /hooks/<Event> (or /mod/<Event>)"
            )
        if request.method != b"POST":
            raise _HttpError(405, "hooks must be sent with POST")
        if self.token is not None:
            if not _authorized(request, self.token):
                raise _HttpError(401, "missing or wrong hookd token")
            if not self.trusted and self.admission is not None:
                refused = self.admission.promote(self.conn)
                if refused is not None:
                    raise _HttpError(503, refused)
            self.trusted = True
        if event not in EVENT_NAMES:
            raise _HttpError(404, f"unknown hook event {event!r}")
        request.event = event
        request.for_mod = prefix == "mod"
        return request

    def _parse_head(self, head: bytes) -> http_wire.SimpleRequest | None:
        parsed = self.heads.parse(head)
        if self.heads is self.first_heads:
            self.heads = self.heads.copy()  # from the second request on: its own
        return parsed

    async def _receive_pending(self, deadline: float) -> bytes:
        """:meth:`receive` for a connection that has not shown the token: by ``deadline``,
        else ``b""`` (closed without an answer).  A new connection's request is nearly
        always here already: that first read is tried before any cancel scope is made."""
        if self.fresh:
            self.fresh = False
            try:
                return os.read(self.fd, 65536)
            except BlockingIOError:
                pass
            except OSError as exc:  # reset by the client
                raise trio.BrokenResourceError(f"http client: {exc}") from exc
        with trio.move_on_at(deadline):
            return await self.receive()
        _log_silent(self.limits)
        return b""

    async def _receive_by(self, deadline: float, setting: str) -> bytes:
        with trio.move_on_at(deadline):
            return await self.receive()
        raise _timed_out(self.limits, setting)

    async def receive(self) -> bytes:
        """The client's next bytes (b"" when it closed): wait until readable, then one
        read (:func:`hookd.fdio.read_when_ready`).  trio's ``receive_some`` reads first
        — on a keep-alive connection nearly always "would block" — and adds a pass
        through the scheduler after every read: a system call and a pass per request.
        Only a new connection's first read is tried at once: its client sent the
        request right after connecting, before its handler ran."""
        try:
            if self.fresh:
                self.fresh = False
                try:
                    return os.read(self.fd, 65536)
                except BlockingIOError:
                    pass
            return await read_when_ready(self.fd, 65536)
        except OSError as exc:  # reset by the client
            raise trio.BrokenResourceError(f"http client: {exc}") from exc

    async def send(self, status: int, payload: bytes, *, head_only: bool = False) -> None:
        if self.h11 is not None:
            await _send(self.stream, self.h11, status, payload, head_only=head_only)
            return
        data = http_wire.response_bytes(status, _reason(status), payload, self.close_after)
        if head_only and payload:
            data = data[: -len(payload)]
        try:
            sent = write_nowait(self.fd, data)  # an answer nearly always fits at once
        except OSError as exc:
            raise trio.BrokenResourceError(f"http client: {exc}") from exc
        if sent < len(data):
            await self.stream.send_all(data[sent:])

    async def send_error(self, status: int, message: str) -> None:
        """The error answer; logged as a warning for a trusted connection, and for one
        without the token only as a count, the first and every thousandth logged: a
        peer without the token must not be able to write the log without end."""
        if self.trusted or self.admission is None or status == 503:  # 503: had the token
            await _send_error(self.stream, self.h11, status, message)
            return
        counters = self.admission.counters
        counters["http_refused_unauthenticated"] += 1
        refused = counters["http_refused_unauthenticated"]
        if refused == 1 or refused % 1000 == 0:
            log.warning(
                "http request without the token refused",
                status=status,
                reason=message,
                refused_so_far=refused,
            )
        await _send_error(self.stream, self.h11, status, message, quiet=True)

    def next_cycle(self) -> bool:
        """Ready for the connection's next request (False: close it)."""
        if self.h11 is None:
            return not self.close_after
        conn = self.h11
        if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
            return False
        try:
            conn.start_next_cycle()
        except h11.LocalProtocolError:
            return False
        return True


async def _read_request(
    stream: trio.abc.ReceiveStream,
    conn: h11.Connection,
    limits: HttpLimits = HttpLimits(),
    deadline: float = math.inf,
    *,
    setting: str = "http_header_timeout",
    idle_deadline: float = math.inf,
    wire: _Wire | None = None,
) -> tuple[_Request | None, bytes]:
    """One whole request through h11; ``(None, b"")`` when the client closed an idle
    connection.  ``deadline``: the head's, when the simple reader started the clock
    (``setting`` names it); ``idle_deadline``: a pending connection's for its whole
    head.  ``wire``: checks the head (:meth:`_Wire.check_head`) before the body."""
    request: _Request | None = None
    body = bytearray()
    events = 0
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            if request is None and not conn.trailing_data[0] and deadline == math.inf:
                data: bytes | bytearray = b""
                with trio.move_on_at(idle_deadline) as idle:  # trusted: as long as it takes
                    data = await stream.receive_some(65536)
                if idle.cancelled_caught:
                    _log_silent(limits)
                deadline, setting = _head_deadline(limits, idle_deadline)
            else:
                if request is None and deadline == math.inf:  # a head begun in buffered bytes
                    deadline, setting = _head_deadline(limits, idle_deadline)
                data = await _receive_by(stream, limits, deadline, setting)
            conn.receive_data(bytes(data))
            continue
        events += 1
        if events % _YIELD_EVERY == 0:
            await trio.lowlevel.checkpoint()
        if isinstance(event, h11.Request):
            request = await _h11_head(event, wire)
            deadline = trio.current_time() + limits.body_timeout
            setting = "http_body_timeout"
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY:
                raise _HttpError(413, f"request body over {MAX_BODY} bytes")
            if wire is not None:
                await wire.hold(len(body))
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return request, bytes(body)
        elif isinstance(event, h11.ConnectionClosed):
            return None, b""


async def _h11_head(event: h11.Request, wire: _Wire | None) -> _Request:
    """A head h11 read: its size checked, routed and authorized, its body charged."""
    request = _Request(event.method, event.target, list(event.headers))
    length = _content_length(event)
    if length is not None and length > MAX_BODY:
        raise _HttpError(413, f"request body over {MAX_BODY} bytes")
    if wire is not None:
        wire.check_head(request)
        if length is not None:
            await wire.hold(length)
    return request


def _log_silent(limits: HttpLimits) -> None:
    """A pending connection sent no byte in time: closed without an answer, as a server
    closes an idle keep-alive connection — an answer nobody asked for could be read
    as the answer to the client's next request."""
    log.info(
        "http connection without the token closed: no request in time",
        setting=f"http_first_request_timeout = {limits.first_request_timeout:g}",
    )


def _head_deadline(limits: HttpLimits, idle_deadline: float) -> tuple[float, str]:
    """When a head whose first byte arrived now must be complete, and the setting that
    says so: ``http_header_timeout``, or a pending connection's own earlier deadline."""
    deadline = trio.current_time() + limits.header_timeout
    if idle_deadline < deadline:
        return idle_deadline, "http_first_request_timeout"
    return deadline, "http_header_timeout"


async def _receive_by(
    stream: trio.abc.ReceiveStream, limits: HttpLimits, deadline: float, setting: str
) -> bytes | bytearray:
    with trio.move_on_at(deadline):
        return await stream.receive_some(65536)
    raise _timed_out(limits, setting)


def _timed_out(limits: HttpLimits, setting: str) -> _HttpError:
    limit = getattr(limits, setting.removeprefix("http_"))
    if setting == "http_first_request_timeout":
        message = f"no whole request within {limit:g} s of the connection being ready for one"
    else:
        message = f"request not completed within {limit:g} s"
    return _HttpError(408, f"{message} (setting {setting})")


def _content_length(request: h11.Request | _Request) -> int | None:
    for name, value in request.headers:
        if name == b"content-length":
            return int(value)
    return None


def _has_body(request: _Request) -> bool:
    for name, value in request.headers:
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip(b"0")):
            return True
    return False


def _header(request: _Request, name: bytes) -> bytes | None:
    for key, value in request.headers:
        if key == name:
            return bytes(value)
    return None


def _authorized(request: _Request, token: bytes) -> bool:
    given = _header(request, b"x-hookd-token")
    if given is None:
        auth = _header(request, b"authorization") or b""
        scheme, _, value = auth.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        given = value.strip()
    return hmac.compare_digest(given, token)


async def _dispatch(
    wire: _Wire,
    request: _Request,
    body: bytes,
    fire: FireFn,
    agent: _HttpAgent,
) -> tuple[int, bytes | None]:
    """Fire a request's event (routed and authorized at its head: :meth:`_Wire.check_head`)."""
    event = request.event
    if event is None:
        return _health(request, wire.token)
    for_mod = request.for_mod
    prefix = "mod" if for_mod else "hooks"
    raw = _decode_json(body)
    if not isinstance(raw, dict):
        raise _HttpError(400, "body must be a JSON object (the hook input)")
    named = raw.get("hook_event_name")
    if named is not None and named != event:
        raise _HttpError(400, f"body is a {named!r} input but was posted to /{prefix}/{event}")

    async def hangup() -> None:
        # Claude Code closes the connection when its hook timeout expires: the
        # pipeline then cancels the hooks (hookd kills their process trees)
        # instead of letting them run for nobody.  Pipelined bytes are kept.
        try:
            while data := await wire.receive():
                wire.keep(bytes(data))
        except trio.BrokenResourceError:
            pass  # reset instead of closed: hung up all the same
        log.info("http client hung up; cancelling hooks", hook_event=event)

    try:
        result = await fire(
            event,
            raw,
            agent=agent,
            client=MOD_CLIENT_NAME if for_mod else CLIENT_NAME,
            deliver_async=carries_late_context(event),
            agent_caps_stop=True,  # Claude Code overrides the 9th block itself
            hangup=hangup,
        )
    except EventInputError as exc:
        raise _HttpError(400, str(exc)) from None
    if result is None:
        return 200, None
    if isinstance(result, bytes):
        return 200, result  # another agent's own answer (hookd.agents.guests)
    tool = raw.get("tool_name")
    tool_name = tool if isinstance(tool, str) else None
    rendered = render_http(result, tool_name)
    return 200, render_mod(rendered, event, tool_name) if for_mod else rendered


def _health(request: _Request, token: bytes | None) -> tuple[int, bytes]:
    """``GET /health``: ``{"ok":true}``; with the token (or on the owner-only socket) also
    the daemon's pid, so ``hookctl doctor`` can tell that the port a wiring names is
    served by *this* daemon with *that* token.  A wrong token is a 401, as on a hook."""
    if token is None:
        return 200, b'{"ok":true,"pid":%d}' % os.getpid()
    if _header(request, b"x-hookd-token") is None and _header(request, b"authorization") is None:
        return 200, b'{"ok":true}'
    if not _authorized(request, token):
        raise _HttpError(401, "missing or wrong hookd token")
    return 200, b'{"ok":true,"pid":%d}' % os.getpid()


def _decode_json(body: bytes) -> Any:
    """The body as JSON: msgspec (a few µs), and the standard library where msgspec
    refuses what Python's JSON accepts (``NaN``, ``1e400``, lone surrogates), so a
    hook input is never refused for which decoder read it.

    A lone surrogate (``"\\ud800"``: JavaScript strings may hold one, and
    ``JSON.stringify`` escapes it) becomes U+FFFD — what Claude Code's own command
    hooks get when it writes the same string to their stdin as UTF-8 — since no
    hook, audit line or worker frame can carry it as UTF-8."""
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    try:
        return json.loads(body, object_pairs_hook=_without_surrogates_pairs)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _HttpError(400, f"body is not JSON: {exc}") from None
    except RecursionError:
        raise _HttpError(400, "body is not JSON hookd can read: nested too deeply") from None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""After ``json.loads`` a valid pair is one code point: any surrogate left is lone."""


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def _without_surrogates_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' object hook: each object's keys and values, lone surrogates replaced
    (nested objects were built by this hook already)."""
    return {_without_surrogates(k): _without_surrogates(v) for k, v in pairs}


_REASONS = {int(status): status.phrase.encode() for status in HTTPStatus}


def _reason(status: int) -> bytes:
    return _REASONS.get(status, b"")


def _error_body(message: str) -> bytes:
    return msgspec.json.encode({"error": message})


async def _send(
    stream: trio.SocketStream,
    conn: h11.Connection,
    status: int,
    payload: bytes,
    *,
    head_only: bool = False,
) -> None:
    headers = [("content-length", str(len(payload)))]
    if payload:
        headers.append(("content-type", "application/json"))
    data = conn.send(h11.Response(status_code=status, headers=headers, reason=_reason(status)))
    data = data or b""
    if payload and not head_only:
        data += conn.send(h11.Data(data=payload)) or b""
    data += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(data)


async def _refuse(stream: trio.SocketStream, status: int, message: str) -> None:
    """Answer a connection hookd will not serve with one error, then close it.

    The answer gets a second to go out and the client a second to read it
    (:func:`_linger`); a client that already left is not an error.
    """
    try:
        with trio.move_on_after(1.0):
            await _send_error(stream, h11.Connection(h11.SERVER), status, message)
        await _linger(stream)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass
    finally:
        await trio.aclose_forcefully(stream)


async def _linger(stream: trio.SocketStream, seconds: float = 1.0) -> None:
    """After an error response: stop sending, read and drop what the client still sends
    (up to ``seconds``), then let the caller close.  Closing a socket with unread bytes
    resets the connection, and a reset can destroy the response before the client reads it."""
    with trio.move_on_after(seconds):
        try:
            await stream.send_eof()
            while await stream.receive_some(65536):
                pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def _send_error(
    stream: trio.SocketStream,
    conn: h11.Connection | None,
    status: int,
    message: str,
    quiet: bool = False,
) -> None:
    """Answer a request that could not be served, then the caller closes the connection.

    After a protocol error h11 may refuse to produce a response (its state
    machine is in ERROR); the few bytes of a ``connection: close`` response
    are then written by hand, so the client still learns what was wrong.
    ``quiet``: the caller logged it (or counted it) already.
    """
    if not quiet:
        log.warning("http hook request refused", status=status, reason=message)
    payload = _error_body(message)
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(payload))),
        ("connection", "close"),
    ]
    try:
        if conn is None:  # the simple reader's request: no h11 state to keep
            raise h11.LocalProtocolError("no h11 connection")
        response = h11.Response(status_code=status, headers=headers, reason=_reason(status))
        data = conn.send(response) or b""
        data += conn.send(h11.Data(data=payload)) or b""
        data += conn.send(h11.EndOfMessage()) or b""
    except h11.LocalProtocolError:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers)
        data = b"HTTP/1.1 %d %s\r\n%s\r\n" % (status, _reason(status), head.encode()) + payload
    await stream.send_all(data)


# --- the agent ---------------------------------------------------------------------


class _HttpAgent:
    """The agent at the other end of one http connection (:class:`AgentLookup`).

    Found on the first :meth:`resolve` only — the pipeline asks when a session
    is new or hooks run — and then kept: the peer of a kept-alive connection is
    one process, whose command line and start-up environment are fixed.  One
    worker thread does the whole search (``/proc`` reads can block on a busy
    machine).  Requests on one connection are served one after another, so two
    resolves never overlap.  A Unix-socket peer's pid is ``known`` from
    ``SO_PEERCRED`` when it connects; only its context and environment are read.
    """

    def __init__(
        self,
        conn: socket.socket,
        finder: PeerFinder,
        counters: Counter[str],
        known: int | None = None,
    ):
        self._conn = conn
        self._finder = finder
        self._counters = counters
        self._known = known
        self._found: tuple[int | None, str, ClaudeAgentEnv] | None = None

    async def resolve(self, event: str, raw: Mapping[str, Any]) -> AgentInfo:
        if self._found is None:
            self._found = await trio.to_thread.run_sync(self._search)
            self._counters["http_agent_lookups"] += 1
        pid, context, env = self._found
        return AgentInfo(pid, context, env.for_event(event, raw))

    def _search(self) -> tuple[int | None, str, ClaudeAgentEnv]:
        """The peer process, pinned (:func:`own_process`): one of the daemon's own uid
        that still holds this connection's socket — else no agent at all (pid None,
        the daemon's environment): a peer of another uid, even one with the token,
        does not choose what the hooks run with (issue 28)."""
        pid, holding = self._known, None
        if pid is None:
            try:
                local = self._conn.getsockname()
                peer = self._conn.getpeername()
            except OSError:
                pass
            else:
                found = self._finder.find_peer((peer[0], peer[1]), (local[0], local[1]))
                if found is not None:
                    pid, holding = found
        view = None if pid is None else own_process(pid, holding)
        if view is None:
            return None, "interactive", agent_env_of(None, "interactive")
        with view:
            context = view.context()
            return pid, context, agent_env_of(view, context)

"""What the async flavours share and that needs no event loop: framing, callbacks, policy.

The asyncio and trio clients differ only in how they read, write and spawn
tasks.  Everything else — turning Python callables into ``callback`` hook
handlers, remembering registrations so a reconnect can replay them, calling
a user's callback and checking what it returned, and the fail-open /
fail-closed answer — lives here once, so the two flavours cannot drift apart.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

import msgspec

from hookd_client import protocol
from hookd_client.client import (
    UNAVAILABLE_CODES,
    DaemonError,
    DaemonUnavailable,
    agent_environment,
    check_socket,
    fallback_result,
    retry_delay,
)
from hookd_client.events import BaseHookInput, event_payload
from hookd_client.sockpath import default_socket_path

__all__ = [
    "UNAVAILABLE_CODES",
    "CallbackHook",
    "CallbackTable",
    "FailurePolicy",
    "HookCallbackFn",
    "Interim",
    "ProgressFn",
    "Registration",
    "RequestMethods",
    "agent_environment",
    "expect",
    "fallback_reply",
    "invoke_callback",
    "maybe_await",
]

FailurePolicy: TypeAlias = Literal["open", "closed", "raise"]
"""What ``fire`` does when the daemon cannot answer: proceed, block, or raise."""

HookCallbackFn: TypeAlias = Callable[[dict[str, Any], str | None], Any]
"""``fn(input, tool_use_id)`` returning a hook-output dict (or Struct) or None, or an
awaitable of one.  ``None`` and ``{}`` both mean "no opinion"."""

ProgressFn: TypeAlias = Callable[[protocol.Progress], Any]
"""Called with each ``progress`` message of a Fire; may return an awaitable."""

M = TypeVar("M")
T = TypeVar("T")


@dataclass(frozen=True)
class CallbackHook:
    """A callable plus the handler fields a bare function cannot carry.

    Put one in a group's ``hooks`` list instead of the bare function to set a
    ``timeout`` (seconds; the daemon cancels the callback after it — and, as
    the Agent SDK does, a callback that did not answer denies a PreToolUse and
    blocks a UserPromptSubmit/UserPromptExpansion; elsewhere the event proceeds),
    ``onFailure: "block"`` or a readable ``name`` for status and logs.
    """

    fn: HookCallbackFn
    timeout: float | None = None
    name: str | None = None
    on_failure: Literal["continue", "block"] | None = None


@dataclass
class Registration:
    """One ``register_session_hooks`` call, kept so a reconnect can send it again.

    Callback hooks call back into the connection that registered them; a new
    connection (after the daemon restarted) starts with none, so the client
    replays every registration it still holds before serving new requests.
    """

    session_id: str
    source: str
    scope: Literal["session", "skill"]
    project: str | None
    hooks: dict[str, Any]
    callback_ids: list[str] = field(default_factory=list)

    def message(self, rid: int) -> protocol.RegisterSessionHooks:
        return protocol.RegisterSessionHooks(
            id=rid,
            session_id=self.session_id,
            hooks=self.hooks,
            source=self.source,
            scope=self.scope,
            project=self.project,
        )


class CallbackTable:
    """The client's callbacks by id, and the registrations that introduced them."""

    def __init__(self) -> None:
        self._fns: dict[str, HookCallbackFn] = {}
        self._numbers = itertools.count(1)
        self.registrations: dict[tuple[str, str], Registration] = {}

    def get(self, callback_id: str) -> HookCallbackFn | None:
        return self._fns.get(callback_id)

    def prepare(
        self,
        session_id: str,
        hooks: Mapping[str, Sequence[Mapping[str, Any]]],
        *,
        source: str,
        scope: Literal["session", "skill"],
        project: str | None,
    ) -> Registration:
        """Turn callables into ``{"type": "callback", "callback_id": …}`` handlers.

        Other handler entries (plain dicts such as ``{"type": "command", …}``)
        pass through untouched, so one registration can mix both.  The
        callables are not live until :meth:`commit` (after the daemon accepted).
        """
        converted: dict[str, Any] = {}
        registration = Registration(session_id, source, scope, project, converted)
        for event, groups in hooks.items():
            out_groups: list[dict[str, Any]] = []
            for group in groups:
                handlers = []
                for entry in group.get("hooks", []):
                    handlers.append(self._handler(entry, registration))
                out_groups.append({**group, "hooks": handlers})
            converted[event] = out_groups
        return registration

    def _handler(self, entry: Any, registration: Registration) -> Any:
        if isinstance(entry, CallbackHook):
            hook = entry
        elif callable(entry):
            hook = CallbackHook(entry)
        else:
            return entry
        label = hook.name or getattr(hook.fn, "__qualname__", None) or type(hook.fn).__name__
        callback_id = f"{label}#{next(self._numbers)}"
        registration.callback_ids.append(callback_id)
        self._fns[callback_id] = hook.fn
        handler: dict[str, Any] = {"type": "callback", "callback_id": callback_id}
        if hook.timeout is not None:
            handler["timeout"] = hook.timeout
        if hook.name is not None:
            handler["name"] = hook.name
        if hook.on_failure is not None:
            handler["onFailure"] = hook.on_failure
        return handler

    def commit(self, registration: Registration) -> None:
        """The daemon accepted: it replaces any earlier registration with the same source."""
        key = (registration.session_id, registration.source)
        old = self.registrations.pop(key, None)
        if old is not None:
            self._drop(old)
        self.registrations[key] = registration

    def discard(self, registration: Registration) -> None:
        """The daemon refused: its callables were never reachable."""
        self._drop(registration)

    def clear(self, session_id: str, source: str | None) -> None:
        for key in list(self.registrations):
            if key[0] == session_id and (source is None or key[1] == source):
                self._drop(self.registrations.pop(key))

    def _drop(self, registration: Registration) -> None:
        for callback_id in registration.callback_ids:
            self._fns.pop(callback_id, None)


async def invoke_callback(fn: HookCallbackFn, message: protocol.Callback) -> dict[str, Any] | None:
    """Run one callback and check its answer; the caller turns exceptions into errors.

    A sync function runs right here, on the event loop: it should be quick
    (pattern checks, lookups).  Slow work belongs in an ``async`` callback,
    which the daemon can cancel when the hook times out.
    """
    value = fn(message.input, message.tool_use_id)
    if inspect.isawaitable(value):
        value = await value
    return output_dict(value)


def output_dict(value: Any) -> dict[str, Any] | None:
    """A callback's return value as the hook-output map the daemon validates."""
    if value is None:
        return None
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if not isinstance(value, dict):
        raise TypeError(
            f"a hook callback must return a dict, a Struct or None, not {type(value).__name__}"
        )
    return value


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def expect(reply: protocol.ServerMessage, kind: type[M]) -> M:
    """The reply as ``kind``, or DaemonError for an error reply or a surprise."""
    if isinstance(reply, protocol.Error):
        raise DaemonError(reply.code, reply.message)
    if not isinstance(reply, kind):
        raise DaemonError("bad_reply", f"expected {kind.__name__}, got {type(reply).__name__}")
    return reply


def fallback_reply(
    event: str, policy: Literal["open", "closed"], reason: str
) -> protocol.FireReply:
    """The reply a fire returns when the daemon could not answer (``id`` 0: none was sent)."""
    return protocol.FireReply(id=0, result=fallback_result(event, policy, reason))


AsyncResultFn: TypeAlias = Callable[[protocol.AsyncResult], Any]
"""Receives a pushed async hook result (sync, or returning an awaitable)."""


async def deliver_async_result(fn: AsyncResultFn, message: protocol.AsyncResult) -> None:
    await maybe_await(fn(message))


async def maybe_await(value: Any) -> None:
    """Await ``value`` if a user's callable returned an awaitable."""
    if inspect.isawaitable(value):
        await value


Interim: TypeAlias = protocol.Progress | protocol.TailItem
"""The messages a request may get before its final reply."""


class RequestMethods:
    """The request methods both async flavours offer, written once.

    A flavour supplies :meth:`_open` (connect and handshake), :meth:`_start`
    (its reader/writer tasks for a new connection), :meth:`_request_on` (send
    one request on a connection and wait for the final reply, passing interim
    messages on), ``on_unavailable``, a ``_callbacks`` table and a connect
    lock; the methods here only ``await``, so they run on asyncio and trio alike.
    """

    def __init__(
        self,
        socket_path: str | Path | None,
        *,
        name: str,
        retries: int,
        backoff: float,
        max_backoff: float,
        on_unavailable: FailurePolicy,
        max_frame: int,
        connect_lock: Any,
    ) -> None:
        self.path = Path(socket_path or default_socket_path())
        self.name = name
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.on_unavailable: FailurePolicy = on_unavailable
        self.max_frame = max_frame
        self._ids = itertools.count(1)
        self._conn: Any = None
        self._connect_lock = connect_lock
        self._callbacks = CallbackTable()
        self._closed = False
        self.connect_attempts = 0
        """Socket connects tried so far (each retry counts): for status and tests."""

    _async_subscription: Callable[[int], protocol.SubscribeAsync] | None = None
    """Replayed on a new connection, like callback registrations."""
    _on_async_result: AsyncResultFn | None = None

    # --- the connection, opened on first use and again after a loss --------------

    async def _open(self) -> Any:
        """Connect, retrying what is worth it (the blocking client's policy,
        :func:`hookd_client.client.retry_delay`), then handshake.

        Only connecting is retried; a failed handshake is an answer, not a miss.
        """
        last: OSError | None = None
        for attempt in range(self.retries + 1):
            self.connect_attempts += 1
            check_socket(self.path)
            try:
                raw = await self._dial()
            except OSError as exc:
                last = exc
                delay = retry_delay(exc, attempt, self.retries, self.backoff, self.max_backoff)
                if delay < 0:
                    break
                await self._sleep(delay)
                continue
            return await self._greet(raw)
        reason = (last.strerror or str(last)) if last else "unknown"
        raise DaemonUnavailable(self.path, reason)

    async def _dial(self) -> Any:
        """Open the socket (the flavour's stream type); OSError when nobody listens."""
        raise NotImplementedError

    async def _greet(self, raw: Any) -> Any:
        """Wrap the stream in the flavour's connection and handshake (closing it on failure)."""
        raise NotImplementedError

    async def _sleep(self, seconds: float) -> None:
        raise NotImplementedError

    def _start(self, conn: Any) -> None:
        raise NotImplementedError

    async def _request_on(
        self,
        conn: Any,
        make: Callable[[int], msgspec.Struct],
        on_interim: Callable[[Interim], Any] | None = None,
    ) -> protocol.ServerMessage:
        raise NotImplementedError

    @property
    def welcome(self) -> protocol.Welcome | None:
        """The daemon's ``welcome`` on the current connection (None when not connected)."""
        conn = self._conn
        if conn is None or conn.closed:
            return None
        welcome: protocol.Welcome | None = conn.welcome
        return welcome

    async def connect(self) -> None:
        """Connect now rather than on first use (raises DaemonUnavailable after the retries)."""
        await self._connection()

    async def _connection(self) -> Any:
        """The live connection, opened if needed; a new one is told again what the
        old one had registered (callbacks belong to a connection)."""
        conn = self._conn
        if conn is not None and not conn.closed:
            return conn
        if self._closed:
            raise DaemonUnavailable(self.path, "the client is closed")
        async with self._connect_lock:
            if self._conn is not None and not self._conn.closed:
                return self._conn
            conn = await self._open()
            self._conn = conn
            self._start(conn)
            for registration in list(self._callbacks.registrations.values()):
                await self._request_on(conn, registration.message)
            if self._async_subscription is not None:
                await self._request_on(conn, self._async_subscription)
            return conn

    async def _request(
        self,
        make: Callable[[int], msgspec.Struct],
        on_interim: Callable[[Interim], Any] | None = None,
    ) -> protocol.ServerMessage:
        """One request on the live connection (opened, or re-opened, as needed)."""
        conn = await self._connection()
        return await self._request_on(conn, make, on_interim)

    async def _call(self, make: Callable[[int], msgspec.Struct]) -> Any:
        return expect(await self._request(make), protocol.Reply).data

    async def _call_as(self, make: Callable[[int], msgspec.Struct], kind: type[T]) -> T:
        """A request answered by a ``reply``: its data as the request's payload type."""
        reply = expect(await self._request(make), protocol.Reply)
        try:
            return protocol.reply_data(reply, kind)
        except protocol.InvalidMessage as exc:
            raise DaemonError("bad_reply", str(exc)) from None

    async def reload(self) -> protocol.Reloaded:
        """Re-read every config source now (as a file change or SIGHUP does)."""
        return await self._call_as(lambda rid: protocol.Reload(id=rid), protocol.Reloaded)

    async def hooks(self, cwd: str, session_id: str | None = None) -> protocol.HookListing:
        """Every hook the project's config (and the session) has, and whether it runs."""
        return await self._call_as(
            lambda rid: protocol.Hooks(id=rid, cwd=cwd, session_id=session_id),
            protocol.HookListing,
        )

    async def reset_breakers(self, hook: str | None = None) -> list[str]:
        """Close circuit breakers (all, or those matching ``hook``); the keys reset."""
        reset = await self._call_as(
            lambda rid: protocol.ResetBreakers(id=rid, hook=hook), protocol.BreakersReset
        )
        return reset.reset

    async def fire(
        self,
        event: str | BaseHookInput,
        payload: dict[str, Any] | BaseHookInput | None = None,
        *,
        env: dict[str, str] | None = None,
        context: Literal["interactive", "batch"] = "interactive",
        claude: bool = False,
        on_progress: ProgressFn | None = None,
        on_unavailable: FailurePolicy | None = None,
        agent_pid: int | None = None,
        agent: str = "",
    ) -> protocol.FireReply:
        """Run one event's hooks.  ``on_unavailable`` (default: the client's) decides
        what an unreachable or failing daemon means: ``"open"`` (proceed, with a
        system message), ``"closed"`` (block/deny) or ``"raise"``.  ``event`` may be a
        typed event (``PreToolUse(...)``) instead of a name and a mapping.  ``agent``
        (``codex``, …; empty: Claude Code): the event and payload are that agent's own."""
        policy = on_unavailable or self.on_unavailable
        event, payload = event_payload(event, payload)

        def make(rid: int) -> protocol.Fire:
            return protocol.Fire(
                id=rid,
                event=event,
                input=payload,
                env=env,
                context=context,
                format="claude" if claude else "result",
                progress=on_progress is not None,
                agent_pid=agent_pid,
                agent=agent,
            )

        async def interim(message: Interim) -> None:
            if on_progress is not None and isinstance(message, protocol.Progress):
                await maybe_await(on_progress(message))

        try:
            reply = await self._request(make, interim)
        except DaemonUnavailable as exc:
            if policy == "raise":
                raise
            return fallback_reply(event, policy, exc.reason)
        except DaemonError as exc:
            if policy == "raise" or exc.code not in UNAVAILABLE_CODES:
                raise
            return fallback_reply(event, policy, str(exc))
        return expect(reply, protocol.FireReply)

    async def register_session_hooks(
        self,
        session_id: str,
        hooks: Mapping[str, Sequence[Mapping[str, Any]]],
        *,
        project: str | None = None,
        source: str = "session",
        scope: Literal["session", "skill"] = "session",
    ) -> int:
        """Add settings-shaped hooks for one session; callables become callback hooks.

        Returns how many hooks the daemon registered.  Registering the same
        ``source`` again replaces the earlier set.
        """
        registration = self._callbacks.prepare(
            session_id, hooks, source=source, scope=scope, project=project
        )
        try:
            data = await self._call_as(registration.message, protocol.Registered)
        except BaseException:
            self._callbacks.discard(registration)
            raise
        self._callbacks.commit(registration)
        return data.registered

    async def clear_session_hooks(self, session_id: str, source: str | None = None) -> int:
        """Remove a session's registered hooks (one ``source``, or all); returns how many."""
        data = await self._call_as(
            lambda rid: protocol.ClearSessionHooks(id=rid, session_id=session_id, source=source),
            protocol.Removed,
        )
        self._callbacks.clear(session_id, source)
        return data.removed

    async def subscribe_async(
        self, on_result: AsyncResultFn, session_id: str | None = None
    ) -> None:
        """Have the daemon push ``asyncRewake`` wake-ups to ``on_result`` at once.

        ``session_id`` None: every session of this client's agent process.  A
        pushed result counts as delivered (``check_for_new_responses`` and the
        next fire do not repeat it).  ``on_result`` may be sync or async.
        """
        self._on_async_result = on_result

        def make(rid: int) -> protocol.SubscribeAsync:
            return protocol.SubscribeAsync(id=rid, session_id=session_id)

        self._async_subscription = make
        await self._call_as(make, protocol.Subscribed)

    async def check_for_new_responses(self, session_id: str) -> list[Any]:
        """Finished async-hook results for the session, each returned once."""
        return await self._call_as(
            lambda rid: protocol.CheckAsync(id=rid, session_id=session_id), list[dict[str, Any]]
        )

    async def status(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._call(lambda rid: protocol.Status(id=rid))
        return data

    async def sessions(self) -> list[dict[str, Any]]:
        data: list[dict[str, Any]] = await self._call(lambda rid: protocol.Sessions(id=rid))
        return data

    async def tail(
        self,
        *,
        last: int = 20,
        follow: bool = False,
        on_record: Callable[[dict[str, Any]], Any] | None = None,
    ) -> list[dict[str, Any]]:
        """The last ``last`` hook-run records; with ``follow``, also every new one.

        Records go to ``on_record`` as they arrive and are also returned (when
        not following).  A follow runs until the caller cancels it.
        """
        records: list[dict[str, Any]] = []

        async def interim(message: Interim) -> None:
            if isinstance(message, protocol.TailItem):
                if on_record is not None:
                    await maybe_await(on_record(message.record))
                if not follow:
                    records.append(message.record)

        await self._request(lambda rid: protocol.Tail(id=rid, follow=follow, last=last), interim)
        return records

"""Serve one connection: handshake, then one handler function per request kind.

Each request runs in its own task inside the connection's nursery, so a slow
Fire never holds up a Status on the same connection; replies carry the
request's ``id``.  Adding a request kind is adding a function to
``HANDLERS``.  Every error a client can cause becomes an ``error`` reply
naming what was wrong; nothing a client sends can raise out of here.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec
import structlog
import trio
import trio.lowlevel

import hookd
from hookd.agent_process import agent_context
from hookd.config.assemble import explicit_sources
from hookd.config.loader import load_source
from hookd.config.model import HookConfig, HookSpec, Scope
from hookd.config.schema import CallbackHandler, handler_label
from hookd.config.timeouts import command_setting_timeout
from hookd.daemon.async_store import AsyncEntry
from hookd.daemon.connection import Connection, PeerCred
from hookd.daemon.registry import session_groups
from hookd.daemon.trust import Verdict, needs_trust
from hookd.engine.claude_output import carries_late_context, render_claude
from hookd.engine.engine import ProgressFn
from hookd.handlers.base import HandlerResult, Invocation
from hookd.handlers.statusline import run_file_suggestion, run_status_line
from hookd_client import protocol
from hookd_client.events import EventInputError
from hookd_client.paths import path_problem
from hookd_client.results import FireResult, HookRef, HookRun

if TYPE_CHECKING:
    from hookd.daemon.pipeline import PreparedEvent
    from hookd.daemon.server import Daemon

__all__ = ["HANDLERS", "serve_connection"]

log = structlog.get_logger("hookd.requests")

Handler = Callable[["Daemon", Connection, Any], Awaitable[None]]


async def serve_connection(
    daemon: Daemon, stream: trio.SocketStream, peer: PeerCred | None
) -> None:
    conn = Connection(
        stream,
        peer,
        max_frame=daemon.settings.max_frame,
        send_queue=daemon.settings.send_queue,
        send_timeout=daemon.settings.send_timeout,
        hello_timeout=daemon.settings.hello_timeout,
        frame_timeout=daemon.settings.frame_timeout,
        budget=daemon.buffer_budget,
    )
    daemon.connections.add(conn)
    try:
        with conn.cancel_scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(conn.writer)
                with conn.reader_scope:
                    try:
                        async for body in conn.frames():
                            _dispatch(daemon, conn, body, nursery)
                    except protocol.FrameError as exc:
                        # bad_frame, or a limit (hookd/daemon/limits.py): timeout, busy.
                        code = getattr(exc, "code", "bad_frame")
                        conn.send(protocol.Error(code=code, message=str(exc)))
                        log.warning("closing a connection", conn=conn.number, error=str(exc))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                # EOF, lost framing or a graceful end: in-flight requests still finish
                # (a relay half-closes right after sending), then the writer flushes.
                conn.fail_callbacks()
                await conn.wait_requests()
                conn.finish_sending()
    finally:
        daemon.connections.discard(conn)
        conn.release_buffer()
        conn.closed = True
        conn.fail_callbacks()
        _forget_callbacks(daemon, conn)
        with trio.CancelScope(shield=True):
            await conn.stream.aclose()


def _dispatch(daemon: Daemon, conn: Connection, body: bytes, nursery: trio.Nursery) -> None:
    try:
        message = protocol.decode_client(body)
    except protocol.FrameError as exc:
        code = (
            "unknown_kind" if "Invalid value" in str(exc) and "kind" in str(exc) else "bad_request"
        )
        conn.send(protocol.Error(id=protocol.request_id_of(body), code=code, message=str(exc)))
        daemon.activity.counters["bad_frames"] += 1
        if not conn.greeted:
            conn.end()  # docs/protocol.md: anything but a good `hello` first closes
        return
    if isinstance(message, protocol.Hello):
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
                max_frame=daemon.settings.max_frame,
            )
        )
        return
    if not conn.greeted:
        conn.send(protocol.Error(code="bad_request", message="the first message must be `hello`"))
        conn.end()
        return
    if isinstance(message, protocol.CallbackResult):
        if not conn.deliver_callback_result(message):
            log.info("late or unknown callback result", conn=conn.number, id=message.id)
        return
    if isinstance(message, protocol.Cancel):
        scope = conn.requests.get(message.target)
        if scope is not None:
            scope.cancel()
        return
    handler = HANDLERS.get(type(message))
    if handler is None:  # pragma: no cover - every ClientMessage kind has a handler
        conn.send(protocol.Error(id=_id(message), code="unknown_kind", message="unsupported"))
        return
    request_id = _id(message)
    if request_id in conn.requests:
        conn.send(
            protocol.Error(id=request_id, code="bad_request", message=f"id {request_id} is in use")
        )
        return
    if isinstance(message, protocol.Fire | protocol.Relay):
        try:
            prepared = _answer_inline(daemon, conn, message)
        except Exception as exc:  # as in _run_request: a bug fails this request, nothing more
            log.exception("request failed", kind=type(message).__name__, conn=conn.number)
            conn.send(protocol.Error(id=request_id, code="internal", message=repr(exc)))
            return
        if prepared is None:
            return
        handler = functools.partial(_run_with, handler, prepared)
    nursery.start_soon(_run_request, daemon, conn, handler, message, request_id)


async def _run_with(
    handler: Callable[..., Awaitable[None]],
    prepared: PreparedEvent,
    daemon: Daemon,
    conn: Connection,
    message: Any,
) -> None:
    await handler(daemon, conn, message, prepared)


def _id(message: Any) -> int:
    rid = getattr(message, "id", 0)
    return rid if isinstance(rid, int) else 0


async def _run_request(
    daemon: Daemon, conn: Connection, handler: Handler, message: Any, request_id: int
) -> None:
    scope = trio.CancelScope()
    conn.add_request(request_id, scope)
    try:
        with scope:
            await handler(daemon, conn, message)
        if scope.cancelled_caught:
            conn.send(protocol.Error(id=request_id, code="cancelled", message="request cancelled"))
    except EventInputError as exc:
        conn.send(protocol.Error(id=request_id, code="bad_input", message=str(exc)))
    except Exception as exc:
        log.exception("request failed", kind=type(message).__name__, conn=conn.number)
        conn.send(protocol.Error(id=request_id, code="internal", message=repr(exc)))
    finally:
        conn.remove_request(request_id)


# --- one function per request kind ------------------------------------------------


# --- Fire and Relay: prepared synchronously, answered inline when no hook runs ---------


def _prepare_fire(daemon: Daemon, conn: Connection, msg: protocol.Fire) -> PreparedEvent:
    return daemon.pipeline.prepare(
        msg.event,
        msg.input,
        env=msg.env if msg.env is not None else conn.env,
        agent_pid=msg.agent_pid or conn.agent_pid,
        client=conn.client,
        # An answer rendered for Claude Code goes back to Claude Code, which caps
        # Stop loops itself (`hookctl fire --format claude` as a command hook).
        agent_caps_stop=msg.format == "claude",
    )


def _relay_input(msg: protocol.Relay) -> dict[str, Any]:
    try:
        raw = msgspec.json.decode(msg.input)
    except msgspec.DecodeError as exc:
        raise EventInputError(f"hook input: {exc}") from None
    if not isinstance(raw, dict):
        raise EventInputError("hook input is not an object")
    return raw


def _prepare_relay(daemon: Daemon, conn: Connection, msg: protocol.Relay) -> PreparedEvent:
    return daemon.pipeline.prepare(
        msg.event,
        _relay_input(msg),
        env=msg.env if msg.env is not None else conn.env,
        agent_pid=msg.pid or conn.agent_pid,
        client=conn.client or "hookd-relay",
        agent_caps_stop=True,  # the relay is a Claude Code hook: Claude Code caps Stop loops
    )


def _reply_fire(conn: Connection, msg: protocol.Fire, result: FireResult) -> None:
    claude = render_claude(result) if msg.format == "claude" else None
    conn.send(protocol.FireReply(id=msg.id, result=result, claude=claude))


def _reply_relay(conn: Connection, msg: protocol.Relay, result: FireResult) -> None:
    if carries_late_context(msg.event):
        result.additional_context.extend(result.async_results)
    out = render_claude(result)
    conn.send(
        protocol.RelayReply(
            id=msg.id, stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code
        )
    )


def _answer_inline(
    daemon: Daemon, conn: Connection, msg: protocol.Fire | protocol.Relay
) -> PreparedEvent | None:
    """Prepare a Fire/Relay in the reader task; answer it right here when no hook runs.

    Most events match no hook.  Answering those without starting a task saves
    trips through trio's scheduler, and they cannot block, so the reader is not
    held up.  Returns the prepared event when hooks must run (the caller starts
    a task for it), None when the request was answered (or refused).
    """
    if daemon.shutting_down:
        conn.send(protocol.Error(id=msg.id, code="shutting_down", message="hookd is stopping"))
        return None
    try:
        if isinstance(msg, protocol.Fire):
            prepared = _prepare_fire(daemon, conn, msg)
        else:
            prepared = _prepare_relay(daemon, conn, msg)
    except EventInputError as exc:
        conn.send(protocol.Error(id=msg.id, code="bad_input", message=str(exc)))
        return None
    progress_wanted = isinstance(msg, protocol.Fire) and msg.progress
    if progress_wanted:
        return prepared
    result = daemon.pipeline.answer_now(prepared, deliver_async=_delivers(msg))
    if result is None:
        return prepared
    if isinstance(msg, protocol.Fire):
        _reply_fire(conn, msg, result)
    else:
        _reply_relay(conn, msg, result)
    return None


def _delivers(msg: protocol.Fire | protocol.Relay) -> bool:
    """May this reply carry late async results?  Claude Code reads them only as
    additionalContext, so a relay takes them only on events whose output has it."""
    return isinstance(msg, protocol.Fire) or carries_late_context(msg.event)


async def handle_fire(
    daemon: Daemon, conn: Connection, msg: protocol.Fire, prepared: PreparedEvent | None = None
) -> None:
    if daemon.shutting_down:
        conn.send(protocol.Error(id=msg.id, code="shutting_down", message="hookd is stopping"))
        return
    progress: ProgressFn | None = None
    if msg.progress:

        def progress(phase: str, ref: HookRef, run: HookRun | None, _inv: Invocation) -> None:
            conn.send(
                protocol.Progress(
                    id=msg.id,
                    phase="started" if phase == "started" else "finished",
                    hook=ref.name,
                    source=ref.source,
                    outcome=run.outcome if run else None,
                )
            )

    result = await daemon.pipeline.run(
        prepared or _prepare_fire(daemon, conn, msg),
        context=msg.context,
        progress=progress,
        deliver_async=_delivers(msg),
    )
    _reply_fire(conn, msg, result)


async def handle_relay(
    daemon: Daemon, conn: Connection, msg: protocol.Relay, prepared: PreparedEvent | None = None
) -> None:
    if daemon.shutting_down:
        conn.send(protocol.Error(id=msg.id, code="shutting_down", message="hookd is stopping"))
        return
    prepared = prepared or _prepare_relay(daemon, conn, msg)
    result = await daemon.pipeline.run(
        prepared,
        context=agent_context(prepared.agent_pid),
        deliver_async=_delivers(msg),
    )
    _reply_relay(conn, msg, result)


async def handle_status(daemon: Daemon, conn: Connection, msg: protocol.Status) -> None:
    from hookd.daemon.status import build_status

    conn.send(
        protocol.Reply(id=msg.id, data=msgspec.to_builtins(build_status(daemon.status_sources)))
    )


async def handle_reload(daemon: Daemon, conn: Connection, msg: protocol.Reload) -> None:
    changed = daemon.reload()
    conn.send(
        protocol.Reply(
            id=msg.id,
            data={
                "changed": changed,
                "generation": daemon.registry.generation,
                "errors": daemon.registry.errors(),
            },
        )
    )


async def handle_validate(daemon: Daemon, conn: Connection, msg: protocol.Validate) -> None:
    files = []
    for spec in explicit_sources(msg.files):
        loaded = load_source(spec)
        files.append(
            {
                "file": str(spec.path),
                "exists": loaded.exists,
                "hooks": sum(len(g.hooks) for _, _, g in loaded.groups),
                "errors": [str(e) for e in loaded.errors],
                "warnings": [str(w) for w in loaded.warnings],
            }
        )
    conn.send(protocol.Reply(id=msg.id, data=files))


async def handle_hooks(daemon: Daemon, conn: Connection, msg: protocol.Hooks) -> None:
    project = msg.cwd
    session = daemon.sessions.get(msg.session_id) if msg.session_id else None
    if session is not None:
        project = session.project
    config = daemon.registry.config_for(project)
    verdict = daemon.trust.verdict(project)
    # Listed from the full config (held-back hooks show, with why), judged by the config
    # that runs: an untrusted project's disableAllHooks does not switch off user hooks.
    gated = daemon.trust.apply(config, project)
    hooks = []
    extra = session.extra_groups() if session else []
    for event, groups in sorted({**config.groups}.items()):
        for group in (*groups, *(g for g in extra if g.event == event)):
            for spec in group.hooks:
                hooks.append(
                    {
                        "event": event,
                        "matcher": group.matcher,
                        "type": spec.ref().type,
                        "hook": handler_label(spec.handler),
                        "scope": spec.scope.label,
                        "source": spec.source,
                        "timeout": spec.timeout,
                        **_why_not(daemon, gated, spec, project, verdict, msg.session_id),
                    }
                )
    conn.send(
        protocol.Reply(
            id=msg.id,
            data={"project": project, "generation": config.generation, "hooks": hooks},
        )
    )


def _why_not(
    daemon: Daemon,
    config: HookConfig,
    spec: HookSpec,
    project: str,
    verdict: Verdict,
    session_id: str | None,
) -> dict[str, Any]:
    """``runs`` and, when it does not, ``why``: scope switches, trust, the breaker."""
    why: str | None = None
    if not config.scope_allowed(spec.scope):
        why = "disabled by disableAllHooks or allowManagedHooksOnly"
    elif not verdict.trusted and needs_trust(spec, project):
        why = verdict.reason
    else:
        why = daemon.breaker.skip_reason(spec, session_id or "")
    return {"runs": why is None, "why": why} if why else {"runs": True}


async def handle_reset_breakers(
    daemon: Daemon, conn: Connection, msg: protocol.ResetBreakers
) -> None:
    conn.send(protocol.Reply(id=msg.id, data={"reset": daemon.pipeline.reset_breakers(msg.hook)}))


async def handle_sessions(daemon: Daemon, conn: Connection, msg: protocol.Sessions) -> None:
    conn.send(
        protocol.Reply(
            id=msg.id,
            data=[
                msgspec.to_builtins(s.info(_connected(daemon, s.agent_pid)))
                for s in daemon.sessions.all()
            ],
        )
    )


def _connected(daemon: Daemon, pid: int | None) -> bool:
    return pid is not None and any(c.agent_pid == pid for c in daemon.connections)


async def handle_tail(daemon: Daemon, conn: Connection, msg: protocol.Tail) -> None:
    for record in list(daemon.activity.recent)[-msg.last :] if msg.last > 0 else []:
        conn.send(protocol.TailItem(id=msg.id, record=record))
    if not msg.follow:
        conn.send(protocol.Reply(id=msg.id, data={"end": True}))
        return
    conn.streams.add(msg.id)
    send, receive = trio.open_memory_channel[dict[str, Any]](256)
    daemon.activity.follow(send)
    try:
        async with receive:
            async for record in receive:
                conn.send(protocol.TailItem(id=msg.id, record=record))
    finally:
        daemon.activity.unfollow(send)


async def handle_register(
    daemon: Daemon, conn: Connection, msg: protocol.RegisterSessionHooks
) -> None:
    scope = Scope.SKILL if msg.scope == "skill" else Scope.SESSION
    groups, errors = session_groups(msg.source, scope, msg.hooks)
    if errors:
        conn.send(
            protocol.Error(id=msg.id, code="bad_request", message="; ".join(str(e) for e in errors))
        )
        return
    existing = daemon.sessions.get(msg.session_id)
    project = existing.project if existing else (msg.project or os.getcwd())
    session = daemon.sessions.touch(msg.session_id, project, conn.agent_pid, conn.client)
    session.hooks[msg.source] = groups
    callback_ids = [
        s.handler.callback_id
        for g in groups
        for s in g.hooks
        if isinstance(s.handler, CallbackHandler)
    ]
    for callback_id in callback_ids:
        session.callback_owners[callback_id] = conn
    if callback_ids:
        _ensure_callback_handler(daemon)
    count = sum(len(g.hooks) for g in groups)
    conn.send(protocol.Reply(id=msg.id, data={"registered": count}))


async def handle_clear(daemon: Daemon, conn: Connection, msg: protocol.ClearSessionHooks) -> None:
    session = daemon.sessions.get(msg.session_id)
    removed = 0
    if session is not None:
        keys = [msg.source] if msg.source is not None else list(session.hooks)
        for key in keys:
            removed += sum(len(g.hooks) for g in session.hooks.pop(key, []))
    conn.send(protocol.Reply(id=msg.id, data={"removed": removed}))


async def handle_shutdown(daemon: Daemon, conn: Connection, msg: protocol.Shutdown) -> None:
    conn.send(protocol.Reply(id=msg.id, data={"stopping": True, "pid": os.getpid()}))
    daemon.stop_requested.set()


async def handle_check_async(daemon: Daemon, conn: Connection, msg: protocol.CheckAsync) -> None:
    supervisor = getattr(daemon, "async_supervisor", None)
    results = supervisor.collect(msg.session_id) if supervisor is not None else []
    conn.send(protocol.Reply(id=msg.id, data=results))


async def handle_subscribe_async(
    daemon: Daemon, conn: Connection, msg: protocol.SubscribeAsync
) -> None:
    """asyncRewake wake-ups are pushed to this connection from now on (until it closes)."""

    def push(entry: AsyncEntry) -> bool:
        if conn.closed:
            return False
        conn.send(
            protocol.AsyncResult(
                session_id=entry.session_id,
                process_id=entry.process_id,
                hook=entry.hook_name,
                event=entry.hook_event,
                hook_kind=entry.kind,
                exit_code=entry.exit_code,
                state=entry.state,
                messages=entry.messages,
                rewake=entry.rewake,
            )
        )
        return not conn.closed

    conn.send(protocol.Reply(id=msg.id, data={"subscribed": True}))
    daemon.async_supervisor.subscribe(conn.agent_pid, msg.session_id, push, lambda: not conn.closed)


async def handle_async_list(daemon: Daemon, conn: Connection, msg: protocol.AsyncList) -> None:
    supervisor = getattr(daemon, "async_supervisor", None)
    listing = supervisor.listing(msg.session_id) if supervisor is not None else []
    conn.send(protocol.Reply(id=msg.id, data=listing))


async def handle_status_line(daemon: Daemon, conn: Connection, msg: protocol.StatusLine) -> None:
    """statusLine / fileSuggestion: the command of the project's config, 5 s by default.

    Like hooks, they are off under ``disableAllHooks`` and need a trusted project
    when they come from a project file.
    """
    project = (msg.env or {}).get("CLAUDE_PROJECT_DIR") or msg.cwd
    problem = path_problem(project)
    if problem is not None:
        conn.send(
            protocol.Error(id=msg.id, code="bad_request", message=f"CLAUDE_PROJECT_DIR {problem}")
        )
        return
    config = daemon.trust.apply(daemon.registry.config_for(project), project)
    setting = config.status_line if msg.which == "statusLine" else config.file_suggestion
    disabled = config.policy_disables_all or config.disable_all_hooks
    key = "line" if msg.which == "statusLine" else "paths"
    if setting is None or disabled:
        conn.send(protocol.Reply(id=msg.id, data={key: None if key == "line" else []}))
        return
    timeout = command_setting_timeout(setting)
    if msg.which == "statusLine":
        line = await run_status_line(setting.command, msg.input, timeout, cwd=msg.cwd, env=msg.env)
        conn.send(protocol.Reply(id=msg.id, data={"line": line}))
    else:
        paths = await run_file_suggestion(
            setting.command, msg.input, timeout, cwd=msg.cwd, env=msg.env
        )
        conn.send(protocol.Reply(id=msg.id, data={"paths": paths}))


HANDLERS: dict[type[Any], Handler] = {
    protocol.Fire: handle_fire,
    protocol.Relay: handle_relay,
    protocol.StatusLine: handle_status_line,
    protocol.Status: handle_status,
    protocol.Reload: handle_reload,
    protocol.Validate: handle_validate,
    protocol.Hooks: handle_hooks,
    protocol.Sessions: handle_sessions,
    protocol.Tail: handle_tail,
    protocol.RegisterSessionHooks: handle_register,
    protocol.ClearSessionHooks: handle_clear,
    protocol.Shutdown: handle_shutdown,
    protocol.CheckAsync: handle_check_async,
    protocol.AsyncList: handle_async_list,
    protocol.SubscribeAsync: handle_subscribe_async,
    protocol.ResetBreakers: handle_reset_breakers,
}


# --- client callbacks ---------------------------------------------------------------


def _ensure_callback_handler(daemon: Daemon) -> None:
    """Route ``type: "callback"`` hooks to the connection that registered them."""

    async def run_callback(handler: CallbackHandler, inv: Invocation) -> HandlerResult:
        session = daemon.sessions.get(inv.session_id)
        owner = session.callback_owners.get(handler.callback_id) if session else None
        if not isinstance(owner, Connection) or owner.closed:
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

    daemon.engine.register_handler(CallbackHandler, run_callback)


def _forget_callbacks(daemon: Daemon, conn: Connection) -> None:
    for session in daemon.sessions.all():
        for callback_id, owner in list(session.callback_owners.items()):
            if owner is conn:
                del session.callback_owners[callback_id]

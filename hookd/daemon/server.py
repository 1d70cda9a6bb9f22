"""The daemon: listen on the Unix socket, serve many sessions, reload, shut down cleanly.

Lifecycle (``Daemon.run``): bind (or adopt systemd's socket) → start the
watcher, signal handler and accept loop in one nursery → ``READY=1`` →
serve.  SIGHUP reloads.  SIGTERM/SIGINT stop accepting, give in-flight events
``shutdown_grace`` seconds to finish, then cancel the rest.

The server never runs a hook itself: a request goes to
:mod:`hookd.daemon.requests`, which asks the engine, which asks a handler.
"""

from __future__ import annotations

import collections
import errno
import os
import signal
import socket
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import structlog
import trio

import hookd
from hookd.config.model import HookConfig, HookSpec
from hookd.config.sources import SourceLayout
from hookd.daemon import systemd
from hookd.daemon.async_store import AsyncStore
from hookd.daemon.async_supervisor import AsyncLimits, AsyncSupervisor
from hookd.daemon.audit import AuditLog, EventAudit
from hookd.daemon.connection import Connection, peer_credentials
from hookd.daemon.registry import ConfigRegistry
from hookd.daemon.sessions import Session, SessionTable
from hookd.daemon.settings import DaemonSettings
from hookd.daemon.trust import TrustGate, TrustStore
from hookd.daemon.watcher import watch_sources
from hookd.engine.breaker import CircuitBreaker, breaker_key
from hookd.engine.engine import Engine, EngineSettings, Plan, ProgressFn
from hookd.engine.selection import index_for
from hookd.handlers.base import Invocation
from hookd.handlers.command import CommandRunner
from hookd.handlers.registry import HandlerOptions, open_handlers
from hookd_client import protocol
from hookd_client.events import DecodedEvent, decode_event
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = ["AlreadyRunning", "Daemon", "RunningHook"]

log = structlog.get_logger("hookd.server")


class AlreadyRunning(RuntimeError):
    """Another daemon answers on the socket; we refuse to steal it."""


@dataclass(frozen=True, slots=True)
class PreparedEvent:
    """One event, validated and planned, waiting for its hooks to run."""

    event: DecodedEvent
    session: Session
    full_config: HookConfig
    config: HookConfig
    """``full_config`` with the trust gate applied: what actually runs."""
    plan: Plan
    audit: EventAudit
    env: dict[str, str] | None
    agent_pid: int | None


@dataclass
class RunningHook:
    ref: HookRef
    session_id: str
    started: float
    timeout: float
    invocation: Invocation


class RunningHookInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    hook: str
    event: str
    source: str
    session_id: str
    pid: int | None
    elapsed: float
    timeout: float


class Daemon:
    def __init__(self, settings: DaemonSettings, layout: SourceLayout | None = None) -> None:
        self.settings = settings
        self.layout = layout or SourceLayout(
            policy=tuple(settings.policy_files),
            user=tuple(settings.user_files),
            claude_settings=settings.claude_settings,
        )
        self.registry = ConfigRegistry(self.layout, settings.project_idle_seconds)
        self.sessions = SessionTable()
        runner = CommandRunner(
            output_cap=settings.output_cap,
            kill_grace=settings.kill_grace,
            direct=settings.command_without_shell,
        )
        state = settings.state_path()
        self.engine = Engine(
            EngineSettings(
                command_runner=runner,
                stop_block_cap=settings.stop_block_cap,
                spill_dir=str(state / "spill"),
                env_file_dir=str(state / "env"),
            )
        )
        # Reliability (docs/reliability.md): trust gate, circuit breaker, audit log.
        self.trust = TrustGate(
            TrustStore(state / "trust.json"), self.layout, required=settings.require_trust
        )
        self.breaker = CircuitBreaker(settings.breaker_threshold, settings.breaker_cooldown)
        self.engine.gate = self._gate
        self.audit = AuditLog(
            state / "audit",
            max_bytes=settings.audit_max_bytes,
            files=settings.audit_files,
            input_cap=settings.audit_input_cap,
            enabled=settings.audit,
        )
        self.async_supervisor = AsyncSupervisor(
            AsyncLimits.from_settings(settings),
            AsyncStore(state / "async", fsync=settings.async_fsync),
        )
        self.socket_path = settings.socket_path()
        self.started = time.time()
        self.running: dict[int, RunningHook] = {}
        self.counters: collections.Counter[str] = collections.Counter()
        self.recent: collections.deque[dict[str, Any]] = collections.deque(
            maxlen=settings.tail_buffer
        )
        self.followers: set[trio.MemorySendChannel[dict[str, Any]]] = set()
        self.connections: set[Connection] = set()
        self.in_flight = 0
        self._idle = trio.Event()
        self._idle.set()
        self.shutting_down = False
        self.stop_requested = trio.Event()
        self.reload_requested: Callable[[], None] = lambda: None
        self.listening = False

    # --- the one thing every front door calls ----------------------------------

    async def fire(
        self,
        event_name: str,
        raw: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        agent_pid: int | None = None,
        context: str = "interactive",
        client: str = "",
        progress: ProgressFn | None = None,
        deliver_async: bool = False,
    ) -> FireResult:
        """Run one event for its session; raises EventInputError for bad input.

        ``deliver_async``: the caller can carry ``async_results`` (late async
        hook context) to its agent, so the session's waiting results are
        taken onto this reply; otherwise they keep waiting for one that can.
        """
        prepared = self.prepare(event_name, raw, env=env, agent_pid=agent_pid, client=client)
        return await self.run_prepared(
            prepared, context=context, progress=progress, deliver_async=deliver_async
        )

    def prepare(
        self,
        event_name: str,
        raw: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        agent_pid: int | None = None,
        client: str = "",
    ) -> PreparedEvent:
        """Everything before the hooks run, synchronously: validate the input, find
        the session and its config generation (trust applied), plan the hooks."""
        event = decode_event(raw, event_name)
        project = (env or {}).get("CLAUDE_PROJECT_DIR") or event.typed.cwd
        session = self.sessions.touch(event.typed.session_id, project, agent_pid, client)
        full_config = self.registry.config_for(session.project)
        config = self.trust.apply(full_config, session.project)
        plan = self.engine.plan(config, event, session.extra_groups(), session.state)
        audit = self.audit.begin(event_name, raw, session.session_id, session.project, client)
        return PreparedEvent(event, session, full_config, config, plan, audit, env, agent_pid)

    def answer_now(self, prepared: PreparedEvent, deliver_async: bool = False) -> FireResult | None:
        """The result of an event that runs no hook, computed without awaiting (None
        when hooks must run).  The connection answers such events inline."""
        if prepared.plan.units:
            return None
        result = self.engine.answer_without_hooks(
            prepared.config, prepared.event, prepared.plan, prepared.session.state
        )
        return self._finish(prepared, result, deliver_async)

    async def run_prepared(
        self,
        prepared: PreparedEvent,
        *,
        context: str = "interactive",
        progress: ProgressFn | None = None,
        deliver_async: bool = False,
    ) -> FireResult:
        now = self.answer_now(prepared, deliver_async)
        if now is not None:
            return now
        session = prepared.session
        session.in_flight += 1
        self._begin()
        try:
            result = await self.engine.fire(
                prepared.config,
                prepared.event,
                session=session.state,
                extra_groups=session.extra_groups(),
                env=prepared.env,
                context=context,
                async_sink=self.async_supervisor.sink(prepared.agent_pid),
                progress=self._progress(session, progress, prepared.audit),
                plan=prepared.plan,
            )
        finally:
            session.in_flight -= 1
            self._end()
        return self._finish(prepared, result, deliver_async)

    def _finish(
        self, prepared: PreparedEvent, result: FireResult, deliver_async: bool
    ) -> FireResult:
        session, event_name = prepared.session, prepared.event.name
        held_back = _held_back(prepared.full_config, prepared.config, event_name)
        self.audit.event(prepared.audit, result, held_back)
        if deliver_async:
            self.async_supervisor.attach(result, session.session_id)
        session.events += 1
        session.last_event = event_name
        session.last_event_at = time.time()
        self.counters["events"] += 1
        # One record per event (each hook run has its own, from the engine).  Events
        # that ran no hook — most tool calls — log at debug to keep the hot path lean.
        (log.info if result.hooks else log.debug)(
            "event",
            session=session.session_id,
            hook_event=event_name,
            agent_pid=prepared.agent_pid,
            hooks=len(result.hooks),
            decision=result.decision,
            generation=result.generation,
        )
        if event_name == "SessionEnd":
            self.sessions.end(session.session_id)
        return result

    def _begin(self) -> None:
        self.in_flight += 1
        if self._idle.is_set():
            self._idle = trio.Event()

    def _end(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    def _progress(
        self, session: Session, extra: ProgressFn | None, audit: EventAudit | None = None
    ) -> ProgressFn:
        def on_progress(
            phase: str, ref: HookRef, run: HookRun | None, invocation: Invocation
        ) -> None:
            if phase == "started":
                self.running[id(ref)] = RunningHook(
                    ref, session.session_id, time.time(), invocation.timeout, invocation
                )
            else:
                self.running.pop(id(ref), None)
                if run is not None:
                    self._record(session, ref, run)
                    self._account(invocation.spec, session.session_id, ref, run, audit)
            if extra is not None:
                extra(phase, ref, run, invocation)

        return on_progress

    def _record(self, session: Session, ref: HookRef, run: HookRun) -> None:
        session.hook_runs += 1
        session.outcomes[run.outcome] += 1
        self.counters[f"outcome.{run.outcome}"] += 1
        record = {
            "time": time.time(),
            "session_id": session.session_id,
            "event": ref.event,
            "hook": ref.name,
            "source": ref.source,
            "outcome": run.outcome,
            "exit_code": run.exit_code,
            "duration_ms": run.duration_ms,
        }
        self.recent.append(record)
        for follower in list(self.followers):
            try:
                follower.send_nowait(record)
            except trio.WouldBlock:
                pass  # a slow tail reader misses records rather than slowing hooks
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self.followers.discard(follower)

    def _gate(self, spec: HookSpec, session_id: str) -> str | None:
        return self.breaker.paused(breaker_key(spec, session_id))

    def _account(
        self, spec: HookSpec, session_id: str, ref: HookRef, run: HookRun, audit: EventAudit | None
    ) -> None:
        """Feed one finished run to the circuit breaker and the audit log."""
        key = breaker_key(spec, session_id)
        if self.breaker.record(key, ref.name, run) == "paused":
            log.warning(
                "hook paused by the circuit breaker", hook=ref.name, key=key, error=run.error
            )
            self.counters["breaker_paused"] += 1
            self.audit.breaker(key, ref.name, "paused", run.error)
        if audit is not None:
            self.audit.run(audit, ref, run)

    def reset_breakers(self, pattern: str | None) -> list[str]:
        keys = self.breaker.reset(pattern)
        for key in keys:
            self.audit.breaker(key, key, "reset")
        return keys

    def running_hooks(self) -> list[RunningHookInfo]:
        now = time.time()
        return [
            RunningHookInfo(
                hook=r.ref.name,
                event=r.ref.event,
                source=r.ref.source,
                session_id=r.session_id,
                pid=r.invocation.pid,
                elapsed=round(now - r.started, 3),
                timeout=r.timeout,
            )
            for r in self.running.values()
        ]

    def reload(self) -> bool:
        systemd.reloading()
        try:
            return self.registry.reload()
        finally:
            systemd.notify("READY=1")

    # --- serving -----------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listener = self._listen()
        options = HandlerOptions(
            messages_api_base_url=self.settings.messages_api_base_url,
            default_model=self.settings.default_model,
            kill_grace=self.settings.kill_grace,
        )
        try:
            # The handlers' shared resources (http client, python workers) outlive
            # every task that may use them, so they are entered first.
            async with open_handlers(self.engine, options), trio.open_nursery() as nursery:
                await nursery.start(self.async_supervisor.run)
                nursery.start_soon(self._signals, nursery.cancel_scope)
                if self.settings.watch:
                    await nursery.start(
                        watch_sources, self.registry, self.settings.watch_debounce_ms, self
                    )
                nursery.start_soon(self._sweep_idle_projects)
                interval = systemd.watchdog_interval()
                if interval:
                    nursery.start_soon(systemd.watchdog_loop, interval)
                accept_scope = trio.CancelScope()
                clients_done = trio.Event()

                async def serve_clients() -> None:
                    # Connections live outside the accept scope: stopping accepting
                    # must not cut off replies still on their way out.
                    try:
                        async with trio.open_nursery() as connections:
                            with accept_scope:
                                await self._accept(listener, connections)
                    finally:
                        clients_done.set()

                nursery.start_soon(serve_clients)
                if self.settings.http_port is not None:
                    await self._start_http(nursery)
                self.listening = True
                log.info(
                    "hookd serving",
                    socket=str(self.socket_path),
                    pid=os.getpid(),
                    version=hookd.__version__,
                    generation=self.registry.generation,
                )
                systemd.notify(f"READY=1\nMAINPID={os.getpid()}")
                task_status.started()
                await self.stop_requested.wait()
                await self._shutdown(accept_scope, clients_done)
                # Still-running async hooks are killed by this cancel and journaled
                # as cancelled for their sessions (docs/async.md).
                self.async_supervisor.stop()
                nursery.cancel_scope.cancel()
        finally:
            listener.close()
            self._unlink_socket()

    async def _shutdown(self, accept_scope: trio.CancelScope, clients_done: trio.Event) -> None:
        """Stop accepting; let in-flight events finish (up to the grace); flush replies.

        Connections are ended gracefully (reading stops, queued replies are still
        written); whatever is left after the grace is cancelled by the caller.
        """
        systemd.notify("STOPPING=1")
        self.shutting_down = True
        log.info("shutting down", in_flight=self.in_flight, grace=self.settings.shutdown_grace)
        accept_scope.cancel()
        with trio.move_on_after(self.settings.shutdown_grace):
            await self._idle.wait()
        for conn in list(self.connections):
            conn.end()
        with trio.move_on_after(min(2.0, self.settings.shutdown_grace)):
            await clients_done.wait()

    async def _accept(self, listener: socket.socket, connections: trio.Nursery) -> None:
        from hookd.daemon.requests import serve_connection

        sock = trio.socket.from_stdlib_socket(listener)
        while True:
            try:
                client, _ = await sock.accept()
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    log.error("accept failed, backing off", error=str(exc))
                    await trio.sleep(0.1)
                    continue
                raise
            if self.shutting_down:
                client.close()
                continue
            stream = trio.SocketStream(client)
            peer = peer_credentials(stream)
            if peer is not None and peer.uid != os.getuid():
                log.warning("refused a connection from another user", uid=peer.uid, pid=peer.pid)
                self.counters["refused"] += 1
                await _refuse(stream)
                continue
            connections.start_soon(serve_connection, self, stream, peer)

    async def _signals(self, cancel_scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for signum in signals:
                if signum == signal.SIGHUP:
                    log.info("SIGHUP: reloading")
                    self.reload()
                elif self.stop_requested.is_set():
                    log.warning("second stop signal: cancelling everything now")
                    cancel_scope.cancel()
                else:
                    self.stop_requested.set()

    async def _sweep_idle_projects(self) -> None:
        while True:
            await trio.sleep(min(60.0, max(1.0, self.settings.project_idle_seconds / 2)))
            dropped = self.registry.drop_idle_projects(self.sessions.projects_in_use())
            if dropped:
                log.info("projects unloaded", projects=dropped)

    async def _start_http(self, nursery: trio.Nursery) -> None:
        try:
            from hookd.bridge.http_endpoint import start_http_endpoint
        except ImportError:
            log.error("http endpoint requested but hookd.bridge is not available")
            return
        await start_http_endpoint(self, nursery)

    # --- the socket --------------------------------------------------------------

    def _listen(self) -> socket.socket:
        passed = systemd.listen_fds()
        if passed:
            sock = passed[0]
            sock.setblocking(False)
            name = sock.getsockname()
            if isinstance(name, str) and name:
                self.socket_path = Path(name)
            self._owns_socket = False
            return sock
        path = self.socket_path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.parent.stat()
        if info.st_uid != os.getuid():
            raise PermissionError(f"{path.parent} belongs to another user; refusing to use it")
        if stat.S_IMODE(info.st_mode) & 0o077:
            path.parent.chmod(0o700)
        if path.exists() or path.is_symlink():
            if _answers(path):
                raise AlreadyRunning(
                    f"another hookd is already serving {path}; "
                    "stop it first (hookctl stop) or pick another --socket"
                )
            path.unlink()  # stale socket left by a crash
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        sock.listen(512)
        sock.setblocking(False)
        self._owns_socket = True
        self._socket_inode = path.stat().st_ino
        return sock

    def _unlink_socket(self) -> None:
        if not getattr(self, "_owns_socket", False):
            return
        try:
            if self.socket_path.stat().st_ino == self._socket_inode:
                self.socket_path.unlink()
        except OSError:
            pass


def _held_back(full: HookConfig, used: HookConfig, event: str) -> int:
    """How many of ``event``'s hooks the trust gate held back (0 when trusted)."""
    if full is used:
        return 0
    return index_for(full).hook_count(event) - index_for(used).hook_count(event)


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


async def _refuse(stream: trio.SocketStream) -> None:
    with trio.move_on_after(1.0):
        try:
            await stream.send_all(
                protocol.encode(
                    protocol.Error(code="refused", message="hookd serves only its own user")
                )
            )
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
    await stream.aclose()

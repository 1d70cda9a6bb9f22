"""The server: listen on the Unix socket, accept, check peers, handle signals, shut down.

Lifecycle (``Daemon.run``): bind (or adopt systemd's socket) → start the
watcher, signal handler, sweeper and accept loop in one nursery →
``READY=1`` → serve.  SIGHUP reloads.  SIGTERM/SIGINT stop accepting, give
in-flight events ``shutdown_grace`` seconds to finish, then cancel the rest.

The server only serves (uvicorn's ``Server``): it builds the parts once, in
``__init__`` and ``run``, and hands each front door the narrow service it
uses — a socket connection goes to :mod:`hookd.daemon.requests`, an http hook
to :mod:`hookd.doors.http_endpoint` with the pipeline's ``fire``.  What an
event does is :class:`~hookd.daemon.pipeline.EventPipeline`'s business.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import socket
import stat
import time
from pathlib import Path

import structlog
import trio

import hookd
from hookd.config.sources import SourceLayout
from hookd.daemon import systemd
from hookd.daemon.activity import Activity
from hookd.daemon.async_runner import AsyncLimits, AsyncRunner
from hookd.daemon.async_store import AsyncEntry, AsyncStore
from hookd.daemon.audit import AuditLog
from hookd.daemon.connection import Connection, PeerCred, peer_credentials
from hookd.daemon.faults import FaultLog, supervise
from hookd.daemon.http_door import HttpDoor, HttpPortTaken, bind
from hookd.daemon.lifecycle import Lifecycle
from hookd.daemon.limits import BufferBudget, ConnectionLimits
from hookd.daemon.options import command_runner, engine_settings, handler_options
from hookd.daemon.pipeline import EventPipeline
from hookd.daemon.registry import ConfigRegistry
from hookd.daemon.requests.config import ConfigRequests
from hookd.daemon.requests.control import ControlRequests
from hookd.daemon.requests.dispatch import Dispatcher
from hookd.daemon.requests.events import EventRequests
from hookd.daemon.requests.inspection import InspectionRequests
from hookd.daemon.sessions import SessionTable
from hookd.daemon.settings import DaemonSettings, SettingsError, SettingsSource, source_layout
from hookd.daemon.status import StatusSources
from hookd.daemon.telemetry import (
    Gauges,
    Telemetry,
    TelemetryStatus,
    gauges_from,
    otel_installed,
    resolve_config,
)
from hookd.daemon.trust import TrustGate, TrustStore
from hookd.daemon.watcher import watch_sources
from hookd.doors.http_endpoint import (
    HttpLimits,
    UnsafeHttpSocket,
    start_http_endpoint,
    start_http_socket_endpoint,
)
from hookd.engine.breaker import CircuitBreaker
from hookd.engine.engine import Engine
from hookd.fdio import write_nowait
from hookd.handlers.callback import CallbackRunner
from hookd.handlers.registry import Handlers, open_handlers
from hookd.subreaper import SUBREAPER, SWEEP_INTERVAL
from hookd.unix_sockets import answers
from hookd_client import protocol, sockpath

__all__ = ["AlreadyRunning", "Daemon", "HttpPortTaken", "UnsafeSocketPath"]

log = structlog.get_logger("hookd.server")


class AlreadyRunning(RuntimeError):
    """Another daemon answers on the socket; we refuse to steal it."""


class UnsafeSocketPath(RuntimeError):
    """The socket's directory (or a socket in it) belongs to someone else; we refuse to use it."""


class Daemon:
    def __init__(
        self,
        settings: DaemonSettings,
        layout: SourceLayout | None = None,
        source: SettingsSource | None = None,
    ) -> None:
        self.settings = settings
        self.settings_source = source
        """Where ``settings`` came from: each reload reads it again for ``http_port``
        (None: the settings were given, not read — nothing to re-read)."""
        self.layout = layout or source_layout(settings)
        self.registry = ConfigRegistry(self.layout, settings.project_idle_seconds)
        self.sessions = SessionTable()
        self.command_runner = command_runner(settings, warm=True)
        state = settings.state_path()
        self.engine_settings = engine_settings(settings, state=state)
        # Reliability (docs/reliability.md): trust gate, circuit breaker, audit log.
        self.trust = TrustGate(
            TrustStore(state / "trust.json"), self.layout, required=settings.require_trust
        )
        self.breaker = CircuitBreaker(settings.breaker_threshold, settings.breaker_cooldown)
        self.audit = AuditLog(
            state / "audit",
            max_bytes=settings.audit_max_bytes,
            files=settings.audit_files,
            input_cap=settings.audit_input_cap,
            enabled=settings.audit,
        )
        self.async_runner = AsyncRunner(
            AsyncLimits.from_settings(settings),
            AsyncStore(state / "async", fsync=settings.async_fsync),
        )
        self.async_delivery = self.async_runner.delivery
        self.activity = Activity(settings.tail_buffer)
        self.telemetry_off_reason: str | None = None
        """Telemetry is enabled but cannot run: why (status and the log say it)."""
        self.telemetry = self._telemetry()
        self.async_runner.on_finished = self._async_finished
        self.lifecycle = Lifecycle()
        self.socket_path = settings.socket_path()
        self.limits = ConnectionLimits(settings)
        self.buffer_budget = BufferBudget(settings.buffer_budget, wait=settings.buffer_wait)
        self.faults = FaultLog(settings.inject_faults)
        """Failures of long-lived tasks (watcher, sweeps, reload): status shows them."""
        self.started = time.time()
        self.settings_error: str | None = None
        """Why the last reload could not re-read ``source`` (status shows it)."""
        self._settings_read = settings
        self.http_door = HttpDoor(self._start_http_port, settings.http_port)
        """The loopback endpoint, following ``http_port`` across reloads."""
        self.http_socket: Path | None = None
        """The http API's Unix socket once it listens (the Claude Code mod's door)."""
        self.connections: set[Connection] = set()
        self.handlers: Handlers | None = None
        """The live handler set (http client, python worker pool) while ``run`` runs."""

    def _telemetry(self) -> Telemetry | None:
        """The OpenTelemetry recorder when ``[telemetry] enabled`` and it can run."""
        table = self.settings.telemetry
        if not table.enabled or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
            return None
        try:
            config = resolve_config(table, os.environ, hookd.__version__)
        except ValueError as exc:
            self.telemetry_off_reason = str(exc)
        else:
            if otel_installed():
                return Telemetry(config, gauges=self._gauges)
            self.telemetry_off_reason = (
                "telemetry is enabled but the otel extra is not installed: "
                "pip install 'hookd[otel]' (opentelemetry-sdk and the OTLP exporter)"
            )
        log.error("telemetry off", reason=self.telemetry_off_reason)
        return None

    def _gauges(self) -> Gauges:
        return gauges_from(
            sessions=len(self.sessions.all()),
            async_stats=self.async_runner.stats(),
            generation=self.registry.generation,
            config_errors=len(self.registry.errors()),
            reload_failures=sum(f.count for f in self.faults.all() if f.task == "reload"),
            breakers=self.breaker.states(),
        )

    def _async_finished(self, entry: AsyncEntry) -> None:
        """An async hook ended: the live view, and its span."""
        self.activity.async_finished(entry)
        if self.telemetry is not None:
            self.telemetry.async_finished(entry)

    def telemetry_status(self) -> TelemetryStatus | None:
        if self.telemetry is not None:
            return self.telemetry.status()
        if self.telemetry_off_reason is not None:
            return TelemetryStatus(
                traces_endpoint="", metrics_endpoint="", last_error=self.telemetry_off_reason
            )
        return None

    pipeline: EventPipeline
    """Built by :meth:`run` once the handlers' resources are open (the engine is
    constructed with its handler table)."""

    @property
    def http_port(self) -> int | None:
        """The http endpoint's bound port while it listens (``hookctl claude install`` and
        ``doctor`` check it)."""
        return self.http_door.port

    @property
    def http_wanted(self) -> int | None:
        """The port the settings ask for (flags, else hookd.toml as last re-read)."""
        return self.http_door.wanted

    @property
    def http_error(self) -> str | None:
        """Why the wanted http port is not served, when it is not."""
        return self.http_door.error

    @property
    def stop_requested(self) -> trio.Event:
        return self.lifecycle.stop_requested

    def _assemble(self, handlers: Handlers) -> Dispatcher:
        """The engine, the event pipeline and the request families, each given what it uses."""
        engine = Engine(handlers.table, self.engine_settings, gate=self.breaker.pause)
        self.pipeline = EventPipeline(
            engine=engine,
            sessions=self.sessions,
            registry=self.registry,
            trust=self.trust,
            breaker=self.breaker,
            audit=self.audit,
            async_runner=self.async_runner,
            async_delivery=self.async_delivery,
            activity=self.activity,
            answers_at_once=handlers.python.answers_at_once,
            budget=self.buffer_budget,
            telemetry=self.telemetry,
        )
        status = StatusSources(
            server=self,
            registry=self.registry,
            sessions=self.sessions,
            activity=self.activity,
            connections=self.connections,
            async_runner=self.async_runner,
            breaker=self.breaker,
            trust=self.trust,
            faults=self.faults,
            budget=self.buffer_budget,
            audit=self.audit,
        )
        return Dispatcher(
            self.settings,
            events=EventRequests(self.pipeline, self.async_delivery, self.lifecycle),
            config=ConfigRequests(
                self.registry, self.sessions, self.trust, self.breaker, self.reload
            ),
            inspection=InspectionRequests(
                status, self.sessions, self.activity, self.connections, self.async_runner
            ),
            control=ControlRequests(
                self.lifecycle, self.pipeline.reset_breakers, self.registry, self.trust
            ),
            sessions=self.sessions,
            activity=self.activity,
            connections=self.connections,
            buffer_budget=self.buffer_budget,
        )

    def reload(self) -> bool:
        """Re-read every source (watcher, SIGHUP, ``hookctl reload``); True when it changed.

        A reload that raises is a bug, but its callers include the watcher and
        the signal handler, whose death would stop the daemon: the fault is
        recorded (status ``faults``), the last good generation stays live, and
        the next reload tries again.
        """
        systemd.reloading()
        try:
            self.faults.point("reload")
            changed = self.registry.reload()
            if changed:
                self.pipeline.prune_breakers()
            self._reread_settings()
            return changed
        except Exception as exc:
            self.faults.record("reload", exc)
            return False
        finally:
            systemd.notify("READY=1")

    def _reread_settings(self) -> None:
        """Apply ``hookd.toml``'s ``http_port`` (flags still win); say what waits for a restart."""
        if self.settings_source is None:
            return
        try:
            fresh = self.settings_source.load()
        except SettingsError as exc:
            self.settings_error = str(exc)
            log.error("daemon settings not re-read; the running ones stay", error=str(exc))
            return
        self.settings_error = None
        self.http_door.want(fresh.http_port)
        if fresh == self._settings_read:
            return  # a hook file's reload: nothing new to say about the settings
        self._settings_read = fresh
        later = [
            name
            for name in DaemonSettings.__struct_fields__
            if name != "http_port" and getattr(fresh, name) != getattr(self.settings, name)
        ]
        if later:
            log.warning("daemon settings changed; they apply at the next start", settings=later)

    # --- serving -----------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listener = self._listen()
        options = handler_options(self.settings)
        subreaping = False
        try:
            # Bound before anything starts: a taken port is one line (HttpPortTaken).
            wanted = self.settings.http_port
            first_http = None if wanted is None else await bind(wanted)
            # The handlers' shared resources (http client, python workers) outlive
            # every task that may use them, so they are entered first.
            async with (
                open_handlers(
                    options, self.command_runner, CallbackRunner(self.sessions)
                ) as handlers,
                trio.open_nursery() as nursery,
            ):
                self.handlers = handlers
                dispatcher = self._assemble(handlers)
                await nursery.start(self.async_runner.run)
                if self.telemetry is not None:
                    await nursery.start(self.telemetry.run_exporter)
                nursery.start_soon(
                    supervise, "signals", self.faults, self._signals, nursery.cancel_scope
                )
                if self.settings.watch:
                    await nursery.start(
                        functools.partial(
                            supervise,
                            "watcher",
                            self.faults,
                            functools.partial(watch_sources, also=self._settings_files()),
                            self.registry,
                            self.settings.watch_debounce_ms,
                            self,
                            takes_status=True,
                        )
                    )
                nursery.start_soon(supervise, "sweep", self.faults, self._sweep_idle_projects)
                if self.settings.subreaper and SUBREAPER.enable():
                    subreaping = True
                    nursery.start_soon(supervise, "reaper", self.faults, self._reap)
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
                                await self._accept(listener, connections, dispatcher)
                    finally:
                        clients_done.set()

                nursery.start_soon(serve_clients)
                await nursery.start(self.http_door.run, first_http)
                await self._start_http_socket(nursery)
                log.info(
                    "hookd serving",
                    socket=str(self.socket_path),
                    pid=os.getpid(),
                    version=hookd.__version__,
                    generation=self.registry.generation,
                )
                systemd.notify(f"READY=1\nMAINPID={os.getpid()}")
                task_status.started()
                await self.lifecycle.stop_requested.wait()
                await self._shutdown(accept_scope, clients_done)
                # Still-running async hooks are killed by this cancel and journaled
                # as cancelled for their sessions (docs/async.md).
                self.async_runner.stop()
                nursery.cancel_scope.cancel()
            log.info("stopped", detail="hook processes, python workers and the http client closed")
        finally:
            if subreaping:
                SUBREAPER.disable()
            listener.close()
            self._unlink_socket()

    def _settings_files(self) -> tuple[Path, ...]:
        return () if self.settings_source is None else (self.settings_source.path,)

    def _http_limits(self) -> HttpLimits:
        return HttpLimits(
            max_connections=self.settings.http_max_connections,
            header_timeout=self.settings.http_header_timeout,
            body_timeout=self.settings.http_body_timeout,
            max_unauthenticated=self.settings.http_max_unauthenticated,
            first_request_timeout=self.settings.http_first_request_timeout,
            budget=self.buffer_budget,
        )

    async def _start_http_port(
        self, port: int, listeners: list[trio.SocketListener], nursery: trio.Nursery
    ) -> int:
        """The http hook API on the loopback port (with the token): the door's start."""
        return await start_http_endpoint(
            port,
            self.pipeline.fire,
            nursery,
            self._http_limits(),
            serve_under=functools.partial(supervise, "http", self.faults, takes_status=True),
            counters=self.activity.counters,
            listeners=listeners,
        )

    async def _start_http_socket(self, nursery: trio.Nursery) -> None:
        """The same http API on the owner-only Unix socket unless ``http_socket`` is off —
        one app, two listeners, each under its own supervisor."""
        if self.settings.http_socket:
            path = self.settings.http_socket_file(self.socket_path)
            try:
                self.http_socket = await start_http_socket_endpoint(
                    path,
                    self.pipeline.fire,
                    nursery,
                    self._http_limits(),
                    serve_under=functools.partial(
                        supervise, "http-socket", self.faults, takes_status=True
                    ),
                    counters=self.activity.counters,
                )
            except (UnsafeHttpSocket, OSError) as exc:
                # The daemon's own socket still serves every client: report, keep going.
                self.faults.record("http-socket", exc)
                log.error("http socket not served", socket=str(path), error=str(exc))

    async def _shutdown(self, accept_scope: trio.CancelScope, clients_done: trio.Event) -> None:
        """Stop accepting; let in-flight events finish (up to the grace); flush replies.

        Connections are ended gracefully (reading stops, queued replies are still
        written); whatever is left after the grace is cancelled by the caller.
        """
        systemd.notify("STOPPING=1")
        self.lifecycle.stopping = True
        log.info(
            "shutting down", in_flight=self.activity.in_flight, grace=self.settings.shutdown_grace
        )
        accept_scope.cancel()
        with trio.move_on_after(self.settings.shutdown_grace):
            await self.activity.wait_idle()
        open_connections = len(self.connections)
        for conn in list(self.connections):
            conn.end()
        with trio.move_on_after(min(2.0, self.settings.shutdown_grace)) as flushing:
            await clients_done.wait()
        log.info(
            "connections closed",
            connections=open_connections,
            cut_off=len(self.connections) if flushing.cancelled_caught else 0,
        )

    async def _accept(
        self, listener: socket.socket, connections: trio.Nursery, dispatcher: Dispatcher
    ) -> None:
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
            if self.lifecycle.stopping:
                client.close()
                continue
            stream = trio.SocketStream(client)
            peer = peer_credentials(stream)
            if peer is not None and peer.uid != os.getuid():
                log.warning("refused a connection from another user", uid=peer.uid, pid=peer.pid)
                self.activity.counters["refused"] += 1
                await _refuse(stream)
                continue
            pid = peer.pid if peer is not None else None
            refusal = self.limits.admit(pid)
            if refusal is not None:
                log.warning("refused a connection", reason=refusal, pid=pid)
                self.activity.counters["refused_busy"] += 1
                _refuse_now(client, "busy", refusal)
                continue
            connections.start_soon(self._serve, dispatcher, stream, pid, peer)

    async def _serve(
        self,
        dispatcher: Dispatcher,
        stream: trio.SocketStream,
        pid: int | None,
        peer: PeerCred | None,
    ) -> None:
        try:
            await dispatcher.serve(stream, peer)
        finally:
            self.limits.leave(pid)

    async def _signals(self, cancel_scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for signum in signals:
                if signum == signal.SIGHUP:
                    log.info("SIGHUP: reloading")
                    self.reload()
                elif self.lifecycle.stop_requested.is_set():
                    log.warning("second stop signal: cancelling everything now")
                    cancel_scope.cancel()
                else:
                    self.lifecycle.request_stop()

    async def _reap(self) -> None:
        """Sweep the subreaper (hookd/subreaper.py): snapshot live runs, reap adopted zombies."""
        while True:
            await trio.sleep(SWEEP_INTERVAL)
            SUBREAPER.sweep()

    async def _sweep_idle_projects(self) -> None:
        while True:
            await trio.sleep(min(60.0, max(0.1, self.settings.project_idle_seconds / 2)))
            dropped = self.registry.drop_idle_projects(self.sessions.projects_in_use())
            if dropped:
                log.info("projects unloaded", projects=dropped)

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
        if str(path.parent) == sockpath.fallback_dir():
            _claim_fallback_dir(path)
        else:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = path.parent.stat()
            if info.st_uid != os.getuid():
                raise UnsafeSocketPath(f"{path.parent} belongs to another user; refusing to use it")
            if stat.S_IMODE(info.st_mode) & 0o077:
                path.parent.chmod(0o700)
        if path.exists() or path.is_symlink():
            if answers(path):
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


def _claim_fallback_dir(path: Path) -> None:
    """Make (or check) ``/tmp/hookd-<uid>``, refusing one that another user made first.

    ``/tmp`` is shared: whoever creates the directory first controls it.  So
    it is created 0700 if missing, and otherwise used only when ``lstat`` says
    it is a real directory of ours; lax permissions on our own directory are
    tightened.  Then the socket file in it (if any) gets the clients' own
    check (:func:`hookd_client.sockpath.unsafe_reason`), so a squatter's
    socket is refused rather than probed or unlinked.
    """
    directory = path.parent
    try:
        directory.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeSocketPath(
            f"{directory} is not a directory (a symlink or file someone else may control); "
            "refusing to use it: remove it, or set $XDG_RUNTIME_DIR or --socket"
        )
    if info.st_uid != os.getuid():
        raise UnsafeSocketPath(
            f"{directory} belongs to uid {info.st_uid}, not to hookd's user (uid {os.getuid()}); "
            "refusing to use it: another user may have created it to intercept hookd's "
            "traffic; remove it, or set $XDG_RUNTIME_DIR or --socket"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        directory.chmod(0o700)
    reason = sockpath.unsafe_reason(str(path))
    if reason is not None:
        raise UnsafeSocketPath(f"refusing to use {path}: {reason}")


def _refuse_now(client: trio.socket.SocketType, code: str, message: str) -> None:
    """Say why, then close — without waiting: the accept loop must not stall on a
    peer that does not read (the few bytes fit the socket buffer of a new connection)."""
    try:
        write_nowait(client.fileno(), protocol.encode(protocol.Error(code=code, message=message)))
    except OSError:
        pass
    client.close()


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

"""Daemon settings: one normalised object, every field with a default and a flag.

Read from ``~/.config/hookd/hookd.toml`` (``$XDG_CONFIG_HOME`` honoured) when it
exists; command-line flags override file values one to one (uvicorn's rule:
flags map onto config fields).  No file is needed: the defaults *are* the
embedded default configuration.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from hookd.config.sources import SourceLayout
from hookd.dirs import config_dir
from hookd_client import sockpath

__all__ = [
    "CLEARED",
    "DaemonSettings",
    "SettingsError",
    "SettingsSource",
    "TelemetrySettings",
    "load_settings",
    "settings_path",
    "source_layout",
    "state_dir",
]


class SettingsError(ValueError):
    pass


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "hookd"


class TelemetrySettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The ``[telemetry]`` table: OpenTelemetry export of hook runs (docs/observability.md).

    Each key mirrors a standard ``OTEL_*`` variable; a key left empty here takes the
    variable's value from the daemon's environment, and the table wins where both say
    something (an explicit file beats an ambient variable)."""

    enabled: bool = False
    """Export traces and metrics over OTLP (needs ``pip install 'hookd[otel]'``)."""
    endpoint: str = ""
    """OTLP/HTTP base URL (``OTEL_EXPORTER_OTLP_ENDPOINT``); ``/v1/traces`` and
    ``/v1/metrics`` are appended.  Empty: the variable, else ``http://localhost:4318``."""
    traces_endpoint: str = ""
    """Full traces URL (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), used as is."""
    metrics_endpoint: str = ""
    """Full metrics URL (``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``), used as is."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    """Headers sent with every export (``OTEL_EXPORTER_OTLP_HEADERS``: ``k=v,k2=v2``)."""
    protocol: str = ""
    """``http/protobuf``, the only one hookd speaks (``OTEL_EXPORTER_OTLP_PROTOCOL``)."""
    timeout: float = 0.0
    """Seconds one export may take (``OTEL_EXPORTER_OTLP_TIMEOUT``, in ms); 0: 10 s."""
    service_name: str = ""
    """The ``service.name`` resource attribute (``OTEL_SERVICE_NAME``); empty: ``hookd``."""
    resource_attributes: dict[str, str] = msgspec.field(default_factory=dict)
    """More resource attributes (``OTEL_RESOURCE_ATTRIBUTES``: ``k=v,k2=v2``)."""
    traces: bool = True
    """Export a span per event and per hook run."""
    metrics: bool = True
    """Export the metrics (hook durations, decisions, failures, breakers, sessions, …)."""
    metric_interval: float = 0.0
    """Seconds between metric exports (``OTEL_METRIC_EXPORT_INTERVAL``, in ms); 0: 60 s."""
    max_queue: int = 0
    """Spans waiting for export (``OTEL_BSP_MAX_QUEUE_SIZE``); beyond it new ones are
    dropped and counted — export never holds an event.  0: the variable, else 2048."""
    batch_size: int = 0
    """Spans per export request (``OTEL_BSP_MAX_EXPORT_BATCH_SIZE``); 0: the variable,
    else 512."""
    schedule_delay: float = 0.0
    """Seconds between span exports (``OTEL_BSP_SCHEDULE_DELAY``, in ms); 0: 1 s."""
    exporter_cpu: float = 0.25
    """The share of one core the exporter process may use (0: no cap); past it, it stops
    reading and new spans are dropped and counted — under a burst of events the daemon's
    work comes first."""
    hook_names: Literal["redacted", "full", "hash"] = "redacted"
    """How a hook's command, URL or prompt is named in spans and metrics: ``redacted``
    keeps the program, flags and file paths and replaces every other word;
    ``full`` sends it as configured; ``hash`` sends a digest only."""


class DaemonSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    socket: str = ""
    """Socket path; empty means ``$HOOKD_SOCKET`` or ``$XDG_RUNTIME_DIR/hookd/hookd.sock``."""
    log_format: Literal["auto", "json", "console"] = "auto"
    """Log lines: JSON (for journald and files) or readable console lines; auto picks by TTY."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The least severe log level written."""
    max_frame: int = 16 * 1024 * 1024
    """Largest frame accepted from a client, in bytes."""
    send_queue: int = 256
    """Messages queued per connection before the connection is judged too slow and closed."""
    send_timeout: float = 10.0
    """Seconds a single write to a client may take before the client is dropped."""
    hello_timeout: float = 10.0
    """Seconds a new connection has to send ``hello``; then it is closed (error ``timeout``)."""
    frame_timeout: float = 30.0
    """Seconds a client has to finish sending a frame it started (slow-sender guard)."""
    max_connections: int = 1024
    """Unix-socket connections open at once; more are refused (error ``busy``).  Only the
    daemon's own user may connect, so this is also the per-uid cap."""
    max_connections_per_pid: int = 256
    """Unix-socket connections one peer process may hold open at once (error ``busy``)."""
    buffer_budget: int = 64 * 1024 * 1024
    """Bytes that large frames and http bodies (over 64 KiB) may hold, all connections
    together: each is charged three times its size, from its header until its request is
    answered (the event holds its input that many times over).  A frame that does not fit
    waits ``buffer_wait``, then its request is refused (error ``busy``; http ``503``).
    Hooks' output past 64 KiB a stream and large replies queued for slow readers are
    charged too (no room: output is cut short, a slow reader dropped)."""
    buffer_wait: float = 5.0
    """Seconds a large frame waits for the ``buffer_budget`` before it is refused."""
    http_max_connections: int = 256
    """Authenticated connections to the http endpoint open at once (those whose request showed
    the token, and the owner's on the Unix socket); a request beyond gets ``503`` and is closed."""
    http_max_unauthenticated: int = 32
    """Connections to the http port that have not shown the token yet, open at once; a new one
    beyond evicts the oldest (another uid's first), so they can never crowd out the token's."""
    http_first_request_timeout: float = 5.0
    """Seconds a connection that has not shown the token yet has to send a whole request head,
    from its accept (or its last answer); else ``408`` and closed."""
    http_header_timeout: float = 10.0
    """Seconds from a request's first byte to the end of its headers (else ``408``)."""
    http_body_timeout: float = 30.0
    """Seconds from the end of a request's headers to the end of its body (else ``408``)."""
    shutdown_grace: float = 10.0
    """On SIGTERM: seconds in-flight events get to finish before they are cancelled."""
    watch: bool = True
    """Reload a config file as soon as it is saved (otherwise only on reload/SIGHUP)."""
    watch_debounce_ms: int = 50
    """watchfiles debounce; small, so a saved config takes effect quickly."""
    project_idle_seconds: float = 300.0
    """A project's sources stay loaded (and watched) this long after its last session."""
    claude_settings: bool = False
    """Also read the hooks inside Claude Code's own settings files."""
    policy_files: list[str] = msgspec.field(default_factory=lambda: ["/etc/hookd/policy.json"])
    """Managed policy files: their hooks run first and only they can restrict the rest."""
    user_files: list[str] = msgspec.field(default_factory=list)
    """Empty: ``~/.config/hookd/hooks.json`` and ``hooks.toml``."""
    output_cap: int = 1024 * 1024
    """Bytes kept per hook stream (stdout, stderr), and of a python hook's return value;
    the rest is drained and dropped, and the run is marked ``truncated``."""
    kill_grace: float = 1.0
    """Seconds between SIGTERM and SIGKILL when a hook's process tree (or a python worker)
    is stopped."""
    pipe_grace: float = 1.0
    """Seconds a hook's stdout/stderr are still read after the hook itself exited: a
    background child holding them open does not stall the event longer than this."""
    command_without_shell: bool = True
    """Start simple shell-form commands (``cat``, ``python3 x.py``) directly, not via /bin/sh."""
    warm_python: bool = True
    """Start unchanged Python command hooks (``python3 x.py``, a venv's python, a
    ``#!…python3`` script) in a warm spare of their own interpreter: the same run, without
    the interpreter's start-up in the event (docs/performance.md, "Warm Python")."""
    warm_python_spares: int = 8
    """Warm Python spares kept at most, one per interpreter, flags, start-up environment
    and working directory — two where its events came faster than a spare starts (each is a
    whole interpreter: ~13 MB)."""
    warm_python_idle: float = 600.0
    """Seconds an unused warm Python spare is kept before it exits."""
    stop_block_cap: int = 8
    """Consecutive Stop blocks after which the turn is allowed to end anyway."""
    tail_buffer: int = 500
    """Recent hook runs kept for ``hookctl tail``."""
    state_dir: str = ""
    """Empty: ``$XDG_STATE_HOME/hookd``."""
    messages_api_base_url: str | None = None
    """Messages API for prompt/agent hooks; None: the agent's ANTHROPIC_BASE_URL."""
    default_model: str = "claude-haiku-4-5"
    """Model for prompt/agent hooks that name none (a small fast one, as Claude Code)."""
    prompt_max_tokens: int = 1024
    """``max_tokens`` of every Messages API call a prompt or agent hook makes."""
    agent_max_turns: int = 50
    """Model turns an agent hook may take before it is stopped."""
    http_hook_body_cap: int = 1024 * 1024
    """Bytes of an http hook's response body that are read; the rest is dropped."""
    http_hook_max_connections: int = 100
    """Connections the shared http client (http hooks, Messages API) keeps at most."""
    http_port: int | None = None
    """Loopback port of the Claude Code http-hook endpoint; None disables it.  Applied
    while the daemon runs: a saved hookd.toml (or a reload) opens, moves or closes it."""
    http_socket: bool = True
    """Serve the same http hook API on an owner-only Unix socket too (no token: the
    socket's mode is the authentication): the door of the Claude Code mod."""
    http_socket_path: str = ""
    """Empty: ``http.sock`` beside the daemon's socket."""
    async_max_running: int = 256
    """Async hooks running at once, all sessions together (see docs/async.md)."""
    async_max_running_per_session: int = 32
    """Async hooks running at once for one session."""
    async_max_queued_per_session: int = 64
    """Async hooks waiting for a slot per session; beyond this a new one is refused."""
    async_retention_seconds: float = 3600.0
    """How long a finished, undelivered async result waits for its session."""
    async_retention_per_session: int = 100
    """Undelivered async results kept per session; the oldest are dropped beyond it."""
    async_housekeeping_seconds: float = 30.0
    """How often the retention limits are applied (and dead subscribers dropped)."""
    async_keep_delivered: int = 500
    """Delivered async results kept in memory (not on disk) so that listings can show them."""
    async_fsync: bool = True
    """fsync the async journal when a result finishes or is delivered."""
    require_trust: bool = True
    """Project, local and project-plugin hooks run only in trusted directories (hookctl trust)."""
    audit: bool = True
    """Append every hook run and event decision to ``<state>/audit/audit.jsonl``, an event's
    before its answer so that every acknowledged event survives a crash — the largest part
    of what an event that runs no hook costs the daemon (docs/performance.md)."""
    audit_max_bytes: int = 10 * 1024 * 1024
    """The audit file rotates at this size …"""
    audit_files: int = 5
    """… keeping this many rotated files."""
    audit_input_cap: int = 64 * 1024
    """Event inputs up to this size (compact JSON bytes) are kept for ``hookctl replay``."""
    python_workers: int = 8
    """Python hook calls that run at once, all sessions together (one worker process each;
    workers start on demand, the first with the first python hook call)."""
    python_workers_per_session: int = 4
    """Python hook calls one session may run at once: the rest of the pool stays free for
    other sessions, so one session's stuck hooks cannot stall another's (at most
    ``python_workers``)."""
    python_warm_workers: int = 1
    """Idle python workers kept ready once the first python hook has run."""
    breaker_threshold: int = 5
    """Consecutive failures that pause a hook (0: never pause)."""
    breaker_cooldown: float = 60.0
    """Seconds a paused hook stays paused before it may run again."""
    subreaper: bool = True
    """Make the daemon a child subreaper (Linux ``prctl``), so that a hook's descendant that
    leaves its process group and scrubs its environment is still found and killed at a
    timeout; false: such a process is re-parented to init and escapes (docs/reliability.md)."""
    telemetry: TelemetrySettings = msgspec.field(default_factory=TelemetrySettings)
    """The ``[telemetry]`` table: OpenTelemetry traces and metrics of every hook run, off by
    default (docs/observability.md); ``--telemetry`` turns it on, ``--telemetry-KEY`` sets
    one key."""
    inject_faults: dict[str, int] = msgspec.field(default_factory=dict)
    """Fault points that raise their first N times (``reload``; the supervised tasks
    ``watcher``, ``sweep``, ``reaper``, ``signals``, ``http`` at each start): for tests and
    drills that prove a failing task is reported in status and keeps going."""

    def socket_path(self) -> Path:
        if self.socket:
            return Path(self.socket).expanduser()
        return Path(sockpath.default_socket_path())

    def http_socket_file(self, daemon_socket: Path) -> Path:
        """Where the http API's Unix socket goes: the setting, else beside ``daemon_socket``."""
        if self.http_socket_path:
            return Path(self.http_socket_path).expanduser()
        return daemon_socket.parent / "http.sock"

    def state_path(self) -> Path:
        return Path(self.state_dir).expanduser() if self.state_dir else state_dir()


def source_layout(settings: DaemonSettings) -> SourceLayout:
    """Where the configuration files are: the settings' policy and user files, Claude
    Code's own settings files when ``claude_settings`` is on, and Claude Code's places."""
    return SourceLayout(
        policy=tuple(settings.policy_files),
        user=tuple(settings.user_files),
        claude_settings=settings.claude_settings,
    )


class _Cleared:
    """The value of a flag given as ``None`` (``--http-port None``): unlike a flag not
    given at all (``None`` in the overrides), it sets the setting to None over the file."""

    def __repr__(self) -> str:
        return "None"


CLEARED: Any = _Cleared()


def settings_path() -> Path:
    """``$XDG_CONFIG_HOME/hookd/hookd.toml`` (default ``~/.config/hookd/hookd.toml``)."""
    return config_dir() / "hookd.toml"


_TABLES = frozenset({"telemetry"})
"""Settings that are tables of their own in hookd.toml (``[telemetry]``)."""


def load_settings(
    path: Path | None = None, overrides: dict[str, Any] | None = None
) -> DaemonSettings:
    """Defaults ← ``hookd.toml`` ← flags.  A bad file is an error naming file and field.

    An override of None means "flag not given"; :data:`CLEARED` means the flag set
    the setting to None."""
    path = path or settings_path()
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: {exc}") from None
        except OSError as exc:
            raise SettingsError(f"{path}: {exc.strerror or exc}") from None
    for name, value in (overrides or {}).items():
        if value is CLEARED:
            data[name] = None
        elif value is None:
            continue
        elif name in _TABLES and isinstance(value, dict) and isinstance(data.get(name), dict):
            data[name] = {**data[name], **value}  # a table: flags override its keys one by one
        else:
            data[name] = value
    try:
        return msgspec.convert(data, DaemonSettings)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"{path}: {exc}") from None


@dataclass(frozen=True)
class SettingsSource:
    """Where a running daemon's settings came from — the file and the flags — so that a
    reload reads them again the same way (flags still override the file).  Only
    ``http_port`` is applied live (:mod:`hookd.daemon.http_door`); the rest at the next
    start."""

    path: Path
    overrides: dict[str, Any]

    def load(self) -> DaemonSettings:
        return load_settings(self.path, self.overrides)

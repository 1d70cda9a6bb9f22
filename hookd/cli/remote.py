"""hookctl commands that talk to a running daemon.

Each command opens one connection, sends one request and prints the answer
as a readable table (or JSON with ``--json``).  When the daemon is not
running the command says so, says how to start it, and exits 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from hookd.cli.doors import Wiring, claude_files, find_wirings, unserved
from hookd.cli.fire_io import InputError, read_json_object
from hookd.cli.style import Style
from hookd_client import protocol
from hookd_client.client import Client, DaemonError, DaemonUnavailable

__all__ = ["add_commands"]

EXIT_OK, EXIT_ERROR, EXIT_NO_DAEMON = 0, 1, 3


def _client(args: argparse.Namespace) -> Client:
    client = Client(getattr(args, "socket", None), name="hookctl", retries=0)
    wait = getattr(args, "wait", None)
    if wait:
        _wait_for_daemon(client, wait)
    return client


def _wait_for_daemon(client: Client, seconds: float) -> None:
    """Connect, retrying until ``seconds`` have passed: for scripts that just started
    ``hookd serve &`` (a socket-activated daemon needs no wait: the socket is there)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            client.connect()
            return
        except DaemonUnavailable:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except DaemonUnavailable as exc:
            print(f"hookctl: {exc}", file=sys.stderr)
            return EXIT_NO_DAEMON
        except DaemonError as exc:
            print(f"hookctl: the daemon refused: {exc}", file=sys.stderr)
            return EXIT_ERROR
        except InputError as exc:
            print(f"hookctl: {exc}", file=sys.stderr)
            return EXIT_ERROR

    return run


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, default=str))


def _table(rows: list[list[str]], headers: list[str]) -> str:
    if not rows:
        return "  (none)"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    for row in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def _ago(ts: float | None) -> str:
    if ts is None:
        return "-"
    delta = max(0.0, time.time() - ts)
    if delta < 60:
        return f"{delta:.0f}s ago"
    if delta < 3600:
        return f"{delta / 60:.0f}m ago"
    return f"{delta / 3600:.1f}h ago"


def render_status(st: dict[str, Any]) -> str:
    """``hookctl status`` as text: one section per part of the daemon, in a fixed order."""
    out = [
        f"hookd {st['version']}  pid {st['pid']}  up {st['uptime']:.0f}s  socket {st['socket']}",
        f"config generation {st['generation']} (reloaded {_ago(st['reloaded_at'])}), "
        f"{st['connections']} connection(s), {st['in_flight']} event(s) in flight",
        _status_http(st),
        "",
    ]
    for section in (
        _status_doors,
        _status_faults,
        _status_sources,
        _status_untrusted,
        _status_breakers,
        _status_sessions,
        _status_running,
        _status_async,
        _status_process,
        _status_telemetry,
        _status_counters,
    ):
        out.extend(section(st))
    return "\n".join(out)


def _status_http(st: dict[str, Any]) -> str:
    """Where Claude Code's http hooks and the mod reach the daemon, and whether they can:
    a hook pointed at a port nobody serves fails without a word in the agent."""
    port, socket = st.get("http_port"), st.get("http_socket")
    endpoint = (
        f"http://127.0.0.1:{port}/ (served)"
        if port is not None
        else "not served (http_port unset in hookd.toml)"
    )
    door = f"{socket} (served)" if socket is not None else "not served"
    return f"http endpoint {endpoint}, http socket {door}"


def _source_state(src: dict[str, Any]) -> str:
    state = "stale (last good kept)" if src.get("stale") else ("ok" if src["exists"] else "absent")
    if src.get("not_applied"):
        state = "invalid (not applied)"
    elif src.get("errors") and not src.get("stale"):
        state = "errors"
    if src.get("warnings"):
        state += f", {len(src['warnings'])} warning(s)"
    return state


def _status_sources(st: dict[str, Any]) -> list[str]:
    rows = [
        [src["scope"], src["path"], str(src.get("hooks", 0)), _source_state(src)]
        for src in st["sources"]
    ]
    out = ["sources:", _table(rows, ["scope", "file", "hooks", "state"])]
    if st["config_errors"]:
        out += ["", "config errors:", *(f"  {e}" for e in st["config_errors"])]
    warnings = [w for src in st["sources"] for w in src.get("warnings", [])]
    if warnings:
        out += ["", "config warnings:", *(f"  {w}" for w in warnings)]
    return out


_DOORS_TITLE = "doors not served (their hooks fail open):"


def _door_errors(st: dict[str, Any]) -> list[str]:
    """Claude Code's wired doors (the user's settings and the current project's) that this
    daemon does not serve, and an http port it was asked for and could not bind."""
    wirings: list[Wiring] = []
    try:
        project: Path | None = Path.cwd()
    except OSError:  # a directory removed under the shell
        project = None
    for path in claude_files(Path.home(), project):
        try:
            wirings += find_wirings("claude", path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    lines = unserved(wirings, st)
    if st.get("settings_error"):
        lines.append(f"cannot read {st['settings_error']} (the running settings stay)")
    if st.get("http_error") and not any(w.kind == "http" for w in wirings):
        lines.append(f"http_port: {st['http_error']}")
    return lines


def _status_doors(st: dict[str, Any]) -> list[str]:
    """Doors an agent is wired to and nobody serves: first, because their hooks fail open."""
    errors = st.get("door_errors") or []
    if not errors:
        return []
    return [_DOORS_TITLE, *(f"  {e}" for e in errors), ""]


def _status_faults(st: dict[str, Any]) -> list[str]:
    """Daemon tasks that raised and were restarted: first, because they are daemon bugs."""
    faults = st.get("faults") or []
    if not faults:
        return []
    out = [f"faults ({len(faults)} task(s) failed and were restarted):"]
    for fault in faults:
        out.append(
            f"  {fault['task']}: {fault['count']}x, last {_ago(fault['last'])}: {fault['error']}"
        )
    return [*out, ""]


def _status_untrusted(st: dict[str, Any]) -> list[str]:
    untrusted = st.get("untrusted") or []
    if not untrusted:
        return []
    out = ["", f"untrusted projects ({len(untrusted)}): their own hooks do not run"]
    for entry in untrusted:
        out.append(f"  {entry['project']}: {entry['reason']}")
        out.extend(f"    {hook}" for hook in entry.get("hooks", []))
    return out


def _status_breakers(st: dict[str, Any]) -> list[str]:
    breakers = st.get("breakers") or []
    if not breakers:
        return []
    paused = sum(1 for b in breakers if b.get("paused"))
    rows = [
        [
            b["hook"],
            b.get("session") or "-",
            ("paused, blocks" if b.get("blocks") else "paused") if b.get("paused") else "failing",
            str(b["failures"]),
            f"{b['resumes_in']:g}s" if b.get("resumes_in") is not None else "-",
            (b.get("last_error") or "-")[:80],
        ]
        for b in breakers
    ]
    out = [
        "",
        f"circuit breaker ({paused} paused, {len(breakers) - paused} failing):",
        _table(rows, ["hook", "session", "state", "failures", "resumes in", "last error"]),
    ]
    if paused:
        out.append("  (hookctl reset [HOOK] runs a paused hook again now)")
    return out


def _status_sessions(st: dict[str, Any]) -> list[str]:
    rows = []
    for s in sorted(st["sessions"], key=lambda s: s.get("last_event_at") or 0, reverse=True):
        outcomes = " ".join(f"{k}={v}" for k, v in sorted(s.get("outcomes", {}).items()))
        rows.append(
            [
                s["session_id"],
                s.get("agent") or "-",
                str(s.get("agent_pid") or "-"),
                s["project"],
                f"{s.get('last_event') or '-'} {_ago(s.get('last_event_at'))}",
                str(s.get("events", 0)),
                outcomes or "-",
            ]
        )
    header = ["session", "agent", "agent pid", "project", "last event", "events", "runs"]
    return ["", f"sessions ({len(st['sessions'])}):", _table(rows, header)]


def _status_running(st: dict[str, Any]) -> list[str]:
    rows = [
        [
            r["hook"],
            r["event"],
            r["session_id"],
            str(r.get("pid") or "-"),
            f"{r['elapsed']:.1f}s / {r['timeout']:g}s",
        ]
        for r in st["running"]
    ]
    header = ["hook", "event", "session", "pid", "elapsed / timeout"]
    return ["", f"running hooks ({len(st['running'])}):", _table(rows, header)]


def _status_async(st: dict[str, Any]) -> list[str]:
    if not st.get("async_hooks"):
        return []
    rows = [
        [
            str(a.get("agent_pid") or "-"),
            a.get("session_id", "-"),
            a.get("hook", "-"),
            a.get("event", "-"),
            a.get("state", "-"),
            f"{a.get('elapsed', 0):.1f}s / {a.get('timeout', 0):g}s",
            str(a.get("bytes", 0)),
            "yes" if a.get("delivered") else "no",
        ]
        for a in st["async_hooks"]
    ]
    header = ["agent pid", "session", "hook", "event", "state", "elapsed", "bytes", "delivered"]
    return ["", f"async hooks ({len(st['async_hooks'])}):", _table(rows, header)]


def _status_process(st: dict[str, Any]) -> list[str]:
    """Memory, the buffer budget, and audit records lost (a full disk; in red: an
    answered event missing from the audit log says so nowhere else)."""
    out: list[str] = []
    proc = st.get("process")
    if proc:
        mib = 1024 * 1024
        traced = {True: "yes", False: "no", None: "unknown"}[proc.get("dumpable")]
        out += [
            "",
            f"process: rss {proc['rss_kb'] / 1024:.1f} MiB, {proc['fds']} fds, "
            f"traceable by hooks: {traced}; buffer budget {proc['buffer_held'] / mib:.1f} "
            f"of {proc['buffer_budget'] / mib:.0f} MiB held, "
            f"{proc['buffer_refused']} refused, "
            f"{proc.get('buffer_outputs_cut', 0)} hook output(s) cut short",
        ]
    audit = st.get("audit")
    if audit and audit.get("lost"):
        out += [
            "",
            "audit errors:",
            f"  {audit['lost']} record(s) lost (their events were answered), last "
            f"{_ago(audit.get('last_error_at'))}: {audit.get('last_error')}",
        ]
    return out


def _status_telemetry(st: dict[str, Any]) -> list[str]:
    """OpenTelemetry export (docs/observability.md): where to, and what never got there."""
    t = st.get("telemetry")
    if not t:
        return []
    if not t.get("traces_endpoint") and not t.get("metrics_endpoint"):
        return [f"telemetry: off: {t.get('last_error')}", ""]
    where = ", ".join(
        f"{kind} → {t[key]}"
        for kind, key in (("traces", "traces_endpoint"), ("metrics", "metrics_endpoint"))
        if t.get(key)
    )
    line = (
        f"telemetry: {where}; spans recorded {t.get('recorded', 0)}, "
        f"exported {t.get('exported', 0)}, dropped {t.get('dropped', 0)}, "
        f"queued {t.get('queued', 0)}"
    )
    out = [line]
    if t.get("exporter_pid") is None:
        out.append("  exporter process not running")
    if t.get("failed_exports"):
        out.append(f"  {t['failed_exports']} export(s) failed")
    if t.get("last_error"):
        out.append(f"  last error: {t['last_error']}")
    return [*out, ""]


def _status_counters(st: dict[str, Any]) -> list[str]:
    counters = st.get("counters") or {}
    if not counters:
        return []
    return ["", "counters: " + "  ".join(f"{k}={v}" for k, v in sorted(counters.items()))]


def _coloured(text: str, style: Style) -> str:
    """Errors red, warnings yellow, section titles bold (a no-op without colour)."""
    if not style.enabled:
        return text
    out, section = [], ""
    for line in text.split("\n"):
        if line and not line.startswith(" ") and line.endswith(":"):
            section = line
            out.append(style.bold(line))
        elif line.startswith("  ") and section in ("config errors:", "audit errors:", _DOORS_TITLE):
            out.append(style.red(line))
        elif line.startswith("  ") and section == "config warnings:":
            out.append(style.yellow(line))
        else:
            out.append(line)
    return "\n".join(out)


@_guard
def cmd_status(args: argparse.Namespace) -> int:
    with _client(args) as client:
        status = client.status()
    status["door_errors"] = _door_errors(status)
    if args.json:
        _print_json(status)
    else:
        print(_coloured(render_status(status), Style.for_stream(sys.stdout, args.color)))
    # Like `systemctl status` of a failed unit: scripts can tell a broken config apart,
    # and a door an agent is wired to that nobody serves (its hooks fail open).
    return EXIT_ERROR if status.get("config_errors") or status["door_errors"] else EXIT_OK


@_guard
def cmd_hooks(args: argparse.Namespace) -> int:
    with _client(args) as client:
        listing = client.hooks(os.path.abspath(args.cwd), args.session)
    if args.json:
        _print_json(msgspec.to_builtins(listing))
        return EXIT_OK
    print(f"project {listing.project}  generation {listing.generation}")
    rows = [
        [
            h.event,
            h.matcher if h.matcher is not None else "*",
            h.type,
            h.hook,
            h.scope,
            h.source,
            "" if h.runs else f"not run: {h.why or 'disabled'}",
        ]
        for h in listing.hooks
    ]
    print(_table(rows, ["event", "matcher", "type", "hook", "scope", "source", ""]))
    return EXIT_OK


@_guard
def cmd_reload(args: argparse.Namespace) -> int:
    with _client(args) as client:
        reloaded = client.reload()
    if args.json:
        _print_json(msgspec.to_builtins(reloaded))
        return EXIT_ERROR if reloaded.errors else EXIT_OK
    print(
        f"generation {reloaded.generation}" + (" (changed)" if reloaded.changed else " (unchanged)")
    )
    for error in reloaded.errors:
        print(f"  {error}")
    return EXIT_ERROR if reloaded.errors else EXIT_OK


@_guard
def cmd_sessions(args: argparse.Namespace) -> int:
    with _client(args) as client:
        data = client.call(protocol.Sessions(id=client.next_id()))
    if args.json:
        _print_json(data)
        return EXIT_OK
    rows = [
        [
            s["session_id"],
            s.get("agent") or "-",
            str(s.get("agent_pid") or "-"),
            s["project"],
            str(s.get("events", 0)),
        ]
        for s in data
    ]
    print(_table(rows, ["session", "agent", "agent pid", "project", "events"]))
    return EXIT_OK


_TAIL_ROW = "{:<8} {:<12} {:<8} {:<18} {:<18} {:>4} {:>8}  {}"


@_guard
def cmd_tail(args: argparse.Namespace) -> int:
    with _client(args) as client:
        try:
            if not args.json:
                print(
                    _TAIL_ROW.format(
                        "time", "session", "agent", "event", "outcome", "exit", "ms", "hook"
                    )
                )
            for record in client.tail(follow=args.follow, last=args.last):
                if args.json:
                    print(json.dumps(record), flush=True)
                else:
                    when = time.strftime("%H:%M:%S", time.localtime(record["time"]))
                    exit_code = record["exit_code"]
                    line = _TAIL_ROW.format(
                        when,
                        record["session_id"],
                        record.get("agent") or "-",
                        record["event"],
                        record["outcome"],
                        "-" if exit_code is None else str(exit_code),
                        f"{record['duration_ms']:.1f}",
                        record["hook"] + (" [async]" if record.get("async") else ""),
                    )
                    print(line, flush=True)
        except KeyboardInterrupt:
            pass
    return EXIT_OK


@_guard
def cmd_stop(args: argparse.Namespace) -> int:
    with _client(args) as client:
        stopping = client.shutdown()
    if args.json:
        _print_json(msgspec.to_builtins(stopping))
        return EXIT_OK
    print(f"hookd (pid {stopping.pid}) is stopping")
    return EXIT_OK


@_guard
def cmd_statusline(args: argparse.Namespace) -> int:
    cwd = os.path.abspath(args.cwd)
    with _client(args) as client:
        if args.suggest is not None:
            for path in client.file_suggestion(cwd, args.suggest, env=dict(os.environ)):
                print(path)
            return EXIT_OK
        payload = (
            read_json_object(args.input)
            if args.input
            else {
                "session_id": "hookctl",
                "cwd": cwd,
                "workspace": {"current_dir": cwd, "project_dir": cwd},
            }
        )
        line = client.status_line(cwd, payload, env=dict(os.environ))
    if line is None:
        return EXIT_ERROR
    print(line)
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """Register the daemon-backed subcommands on hookctl's parser."""
    json_help = "print the answer as JSON"
    status = sub.add_parser(
        "status",
        help="the daemon, its config, sessions and running hooks",
        description="Exit 0 when the config has no errors, 1 when it has (they are listed).",
    )
    status.add_argument("--json", action="store_true", help=json_help)
    status.add_argument(
        "--wait",
        type=float,
        metavar="SECONDS",
        help="wait up to SECONDS for a daemon that is starting (e.g. after `hookd serve &`)",
    )
    status.set_defaults(func=cmd_status)

    hooks = sub.add_parser("hooks", help="the effective hooks for a directory")
    hooks.add_argument("--cwd", default=".", help="the project directory (default: .)")
    hooks.add_argument(
        "--session",
        metavar="ID",
        help="also that session's own hooks (client and skill hooks), and what the circuit "
        "breaker paused in it",
    )
    hooks.add_argument("--json", action="store_true", help=json_help)
    hooks.set_defaults(func=cmd_hooks)

    reload = sub.add_parser("reload", help="re-read every config source now")
    reload.add_argument("--json", action="store_true", help=json_help)
    reload.set_defaults(func=cmd_reload)

    sessions = sub.add_parser("sessions", help="the sessions the daemon knows")
    sessions.add_argument("--json", action="store_true", help=json_help)
    sessions.set_defaults(func=cmd_sessions)

    tail = sub.add_parser("tail", help="recent hook runs; -f to follow")
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new runs")
    tail.add_argument("-n", "--last", type=int, default=20, help="runs to show first (default 20)")
    tail.add_argument("--json", action="store_true", help="one JSON object per line")
    tail.set_defaults(func=cmd_tail)

    statusline = sub.add_parser(
        "statusline", help="run the project's statusLine (or fileSuggestion) command"
    )
    statusline.add_argument("--cwd", default=".", help="the project directory (default: .)")
    statusline.add_argument("--input", metavar="FILE", help="the status JSON, or - for stdin")
    statusline.add_argument("--suggest", metavar="QUERY", help="run fileSuggestion instead")
    statusline.set_defaults(func=cmd_statusline)

    stop = sub.add_parser("stop", help="stop the daemon gracefully")
    stop.add_argument("--json", action="store_true", help=json_help)
    stop.set_defaults(func=cmd_stop)

"""``hookctl trust | untrust | audit | replay | reset``: trust, the audit log, the breaker.

``trust`` and ``untrust`` edit the trust store (``<state>/trust.json``)
directly, under its lock: the daemon re-reads the store when it changes, so
the next event sees the new trust without a request, and trusting works
even while the daemon is down.  ``audit`` reads the log files directly for
the same reason.  ``replay`` and ``reset`` need the daemon: replay re-runs a
recorded event through it (the current config, the current trust, real
hooks), and the breakers live in its memory.

The state dir is the daemon's: ``--state-dir``, else ``hookd.toml``'s
``state_dir``, else ``$XDG_STATE_HOME/hookd``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from hookd.config.sources import SourceLayout
from hookd.daemon.audit import AuditEvent, AuditRecord, AuditRun, json_diff, read_records
from hookd.daemon.settings import DaemonSettings, SettingsError, load_settings, source_layout
from hookd.daemon.trust import (
    TrustEntry,
    TrustGate,
    TrustStore,
    canonical,
    project_fingerprint,
)
from hookd_client.client import Client, DaemonError, DaemonUnavailable
from hookd_client.results import FireResult

__all__ = ["add_commands", "replay_changes"]

EXIT_OK, EXIT_ERROR, EXIT_NO_DAEMON = 0, 1, 3


def _settings(args: argparse.Namespace) -> DaemonSettings:
    overrides = {"state_dir": getattr(args, "state_dir", None)}
    return load_settings(None, overrides)


def _layout(settings: DaemonSettings) -> SourceLayout:
    """The daemon's project layout (the fingerprint must cover the same files)."""
    return source_layout(settings)


def _store(settings: DaemonSettings) -> TrustStore:
    return TrustStore(settings.state_path() / "trust.json")


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


# --- trust -------------------------------------------------------------------------


def cmd_trust(args: argparse.Namespace) -> int:
    settings = _settings(args)
    store = _store(settings)
    layout = _layout(settings)
    if args.list:
        gate = TrustGate(store, layout, required=True)
        entries = store.entries()
        if args.json:
            rows = [
                {**msgspec.to_builtins(e), "verdict": gate.verdict(e.path).reason} for e in entries
            ]
            print(json.dumps(rows, indent=2))
            return EXIT_OK
        if not entries:
            print("no trusted directories (hookctl trust DIR)")
        for entry in entries:
            verdict = gate.verdict(entry.path)
            kind = "pinned" if entry.pinned else "dir+subdirs"
            state = "ok" if verdict.trusted else f"NOT TRUSTED: {verdict.reason}"
            print(f"{entry.path}  [{kind}]  since {_when(entry.trusted_at)}  {state}")
            for name in entry.files:
                print(f"    {name}")
        return EXIT_OK
    # No DIR is the current directory, as `git init` or `code .` read it: the project
    # the user stands in (listing is --list; trust used to list without DIR).
    directory = Path(args.dir or ".")
    if not directory.is_dir():
        print(f"hookctl trust: {directory} is not a directory", file=sys.stderr)
        return EXIT_ERROR
    entry = store.trust(str(directory), layout, pin=args.pin)
    how = "pinned to its current hook files" if entry.pinned else "and the directories below it"
    print(f"trusted {entry.path} ({how})")
    for name in entry.files:
        print(f"    {name}")
    _note_links_out(entry, layout)
    return EXIT_OK


def _note_links_out(entry: TrustEntry, layout: SourceLayout) -> None:
    """Name every hook file of the project that a symlink leads out of it: whoever can
    write where it leads can change the project's hooks (a pin notices; plain trust
    does not)."""
    files = entry.files if entry.pinned else project_fingerprint(layout, entry.path)[1]
    outside = [name for name in files if " -> /" in name]
    for name in outside:
        print(f"hookctl trust: note: {name} leads outside {entry.path}", file=sys.stderr)
    if outside and not entry.pinned:
        print(
            "hookctl trust: whoever can write there can change this project's hooks;"
            " hookctl trust --pin would notice",
            file=sys.stderr,
        )


def cmd_untrust(args: argparse.Namespace) -> int:
    store = _store(_settings(args))
    if store.untrust(args.dir):
        print(f"untrusted {canonical(args.dir)}")
        return EXIT_OK
    print(f"hookctl untrust: {canonical(args.dir)} was not trusted", file=sys.stderr)
    return EXIT_ERROR


# --- audit -------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> list[AuditRecord]:
    directory = _settings(args).state_path() / "audit"
    result = read_records(directory)
    for bad in result.bad_lines:
        print(f"hookctl audit: unreadable line {bad}", file=sys.stderr)
    return result.records


def _matches(record: AuditRecord, args: argparse.Namespace) -> bool:
    session = getattr(record, "session_id", None)
    if args.session and session != args.session:
        return False
    return not (args.event and getattr(record, "event", None) != args.event)


def cmd_audit(args: argparse.Namespace) -> int:
    records = [r for r in _load(args) if _matches(r, args)]
    events = [r for r in records if isinstance(r, AuditEvent)]
    if args.last:
        events = events[-args.last :]
    if args.json:
        _print_audit_json(records, {e.id for e in events})
        return EXIT_OK
    runs: dict[str, list[AuditRun]] = {}
    for record in records:
        if isinstance(record, AuditRun):
            runs.setdefault(record.event_id, []).append(record)
    if events:
        print(f"{'time':<19}  {'event id':<16}  session  event  decision  runs  duration")
    for event in events:
        _print_audit_event(event, runs.get(event.id, []) if args.runs else [])
    breakers = [r for r in records if not isinstance(r, AuditEvent | AuditRun)]
    for record in breakers:
        print(f"{_when(record.time)}  breaker {record.state}: {record.key}")
    return EXIT_OK


def _print_audit_json(records: list[AuditRecord], wanted: set[str]) -> None:
    """The chosen events, their runs and every breaker change, one JSON record a line."""
    for record in records:
        keep = (
            (isinstance(record, AuditEvent) and record.id in wanted)
            or (isinstance(record, AuditRun) and record.event_id in wanted)
            or not isinstance(record, AuditEvent | AuditRun)
        )
        if keep:
            print(msgspec.json.encode(record).decode())


def _print_audit_event(event: AuditEvent, runs: list[AuditRun]) -> None:
    outcome = " ".join(f"{k}={v}" for k, v in sorted(event.outcomes.items())) or "no hooks"
    decision = event.decision or ("stop" if event.stop else "-")
    print(
        f"{_when(event.time)}  {event.id}  {event.session_id}  {event.event:<18} "
        f"decision={decision:<6} {outcome}  {event.duration_ms:.1f}ms"
        + (f"  untrusted={event.untrusted}" if event.untrusted else "")
    )
    for op in event.updated_input_diff or []:
        print(f"    rewrite {op.op} {op.path}: {op.old!r} -> {op.new!r}")
    for error in event.errors:
        print(f"    error: {error}")
    for run in runs:
        extra = f" kill={run.kill_reason}" if run.kill_reason else ""
        print(
            f"    {run.outcome:<18} exit={run.exit_code} {run.duration_ms:.1f}ms "
            f"decision={run.decision or '-'}{extra}  {run.hook}  ({run.source})"
        )


# --- replay ------------------------------------------------------------------------


def _summary(outcomes: list[tuple[str, str, str]]) -> dict[str, str]:
    return {f"{source} :: {hook}": outcome for source, hook, outcome in outcomes}


def replay_changes(recorded: AuditEvent, runs: list[AuditRun], now: FireResult) -> list[str]:
    """What differs between a recorded event's outcome and a fresh run of it."""
    changes: list[str] = []
    if recorded.decision != now.decision:
        changes.append(f"decision: {recorded.decision} -> {now.decision}")
    elif recorded.reason != now.reason and now.decision is not None:
        changes.append(f"reason: {recorded.reason!r} -> {now.reason!r}")
    if recorded.stop != (not now.continue_):
        changes.append(f"continue: {not recorded.stop} -> {now.continue_}")
    tool_input = (recorded.input or {}).get("tool_input", {})
    before = [(op.path, op.op, op.new) for op in recorded.updated_input_diff or []]
    after_ops = (
        json_diff(tool_input, now.updated_input, "$.tool_input") if now.updated_input else []
    )
    after = [(op.path, op.op, op.new) for op in after_ops]
    if before != after:
        changes.append(f"updated input: {before or 'none'} -> {after or 'none'}")
    old = _summary([(r.source, r.hook, r.outcome) for r in runs])
    new = _summary([(r.hook.source, r.hook.name, r.outcome) for r in now.hooks])
    for key in sorted(set(old) | set(new)):
        if key not in new:
            changes.append(f"hook no longer runs: {key} (was {old[key]})")
        elif key not in old:
            changes.append(f"hook now runs: {key} ({new[key]})")
        elif old[key] != new[key]:
            changes.append(f"hook {key}: {old[key]} -> {new[key]}")
    return changes


def cmd_replay(args: argparse.Namespace) -> int:
    records = _load(args)
    events = [r for r in records if isinstance(r, AuditEvent) and r.id.startswith(args.id)]
    if len(events) != 1:
        what = "no recorded event" if not events else f"{len(events)} recorded events"
        print(f"hookctl replay: {what} with id {args.id}", file=sys.stderr)
        return EXIT_ERROR
    recorded = events[0]
    if recorded.input is None:
        print(
            f"hookctl replay: the input of {recorded.id} was {recorded.input_size} bytes, "
            "over the audit_input_cap, and was not kept; it cannot be replayed",
            file=sys.stderr,
        )
        return EXIT_ERROR
    runs = [r for r in records if isinstance(r, AuditRun) and r.event_id == recorded.id]
    payload = dict(recorded.input)
    if args.as_session:
        payload["session_id"] = args.as_session
    env = {**os.environ, "CLAUDE_PROJECT_DIR": recorded.project}
    try:
        with Client(args.socket, name="hookctl-replay", retries=0) as client:
            reply = client.fire(recorded.event, payload, env=env)
    except DaemonUnavailable as exc:
        print(f"hookctl: {exc}", file=sys.stderr)
        return EXIT_NO_DAEMON
    except DaemonError as exc:
        print(f"hookctl replay: the daemon refused: {exc}", file=sys.stderr)
        return EXIT_ERROR
    changes = replay_changes(recorded, runs, reply.result)
    if args.json:
        data = {
            "recorded": msgspec.to_builtins(recorded),
            "now": msgspec.to_builtins(reply.result),
            "changes": changes,
        }
        print(json.dumps(data, indent=2, default=str))
        return EXIT_OK
    print(
        f"replayed {recorded.id}: {recorded.event} of session {recorded.session_id} "
        f"(recorded {_when(recorded.time)}, generation {recorded.generation} -> "
        f"{reply.result.generation})"
    )
    if not changes:
        print("  no change")
    for change in changes:
        print(f"  {change}")
    return EXIT_OK


# --- reset -------------------------------------------------------------------------


def cmd_reset(args: argparse.Namespace) -> int:
    try:
        with Client(args.socket, name="hookctl", retries=0) as client:
            reset = client.reset_breakers(args.hook)
    except DaemonUnavailable as exc:
        print(f"hookctl: {exc}", file=sys.stderr)
        return EXIT_NO_DAEMON
    except DaemonError as exc:
        print(f"hookctl reset: the daemon refused: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if not reset:
        print("no breaker matched" if args.hook else "no breaker was open or counting")
    for key in reset:
        print(f"reset {key}")
    return EXIT_OK


def _guard_settings(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            code: int = fn(args)
        except SettingsError as exc:
            print(f"hookctl: {exc}", file=sys.stderr)
            return EXIT_ERROR
        return code

    return run


def add_commands(sub: Any) -> None:
    """Register trust, untrust, audit, replay and reset on hookctl's parser."""
    trust = sub.add_parser(
        "trust",
        help="trust a project directory's own hooks (default: the current one); --list",
    )
    trust.add_argument("dir", nargs="?", help="the project directory (default: .)")
    trust.add_argument("--pin", action="store_true", help="pin to a hash of its hook files")
    trust.add_argument(
        "--list", action="store_true", help="list the trusted directories (trusts nothing)"
    )
    trust.add_argument("--json", action="store_true", help="print as JSON")
    trust.add_argument("--state-dir", help="the daemon's state dir")
    trust.set_defaults(func=_guard_settings(cmd_trust))

    untrust = sub.add_parser("untrust", help="stop trusting a project directory")
    untrust.add_argument("dir", help="the project directory")
    untrust.add_argument("--state-dir", help="the daemon's state dir")
    untrust.set_defaults(func=_guard_settings(cmd_untrust))

    audit = sub.add_parser("audit", help="the audit log: events, decisions, hook runs")
    audit.add_argument("--session", help="only this session")
    audit.add_argument("--event", help="only this event name")
    audit.add_argument("-n", "--last", type=int, default=0, help="only the last N events")
    audit.add_argument("--runs", action="store_true", help="show every hook run")
    audit.add_argument("--json", action="store_true", help="the raw records, as JSON lines")
    audit.add_argument("--state-dir", help="the daemon's state dir")
    audit.set_defaults(func=_guard_settings(cmd_audit))

    replay = sub.add_parser("replay", help="re-run a recorded event on the current config")
    replay.add_argument("id", help="the event id (or a unique prefix) from hookctl audit")
    replay.add_argument("--as-session", help="replay under another session id")
    replay.add_argument("--json", action="store_true", help="print the result as JSON")
    replay.add_argument("--state-dir", help="the daemon's state dir")
    replay.set_defaults(func=_guard_settings(cmd_replay))

    reset = sub.add_parser("reset", help="resume hooks paused by the circuit breaker")
    reset.add_argument("hook", nargs="?", help="a key or hook name (substring); default all")
    reset.set_defaults(func=cmd_reset)

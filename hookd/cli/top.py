"""``hookctl top``: a live, full-screen view of the daemon, for people who would rather watch.

Each refresh asks the daemon twice — ``status`` (sessions, agents, hooks running
now) and ``tail`` (the recent runs, from which per-hook latency is worked out)
— over one connection, and redraws.  Plain :mod:`curses` from the standard
library: no extra dependency for a view.  :func:`render` is a pure function of
the two answers and the screen size, so what is shown is tested without a
terminal; the terminal itself is tested under tmux.

Keys: ``q`` quits, ``+``/``-`` change the refresh interval.
"""

from __future__ import annotations

import argparse
import curses
import statistics
import time
from typing import Any

from hookd.cli.remote import EXIT_OK, _guard
from hookd_client.client import Client

__all__ = ["add_top_command", "cmd_top", "render"]


def _bar(elapsed: float, timeout: float, width: int = 10) -> str:
    """``[#####......]``: how much of its timeout a running hook has used."""
    share = 0.0 if timeout <= 0 else min(1.0, elapsed / timeout)
    filled = round(share * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _ago(ts: float | None, now: float) -> str:
    if ts is None:
        return "-"
    delta = max(0.0, now - ts)
    return f"{delta:.0f}s" if delta < 120 else f"{delta / 60:.0f}m"


def latency(records: list[dict[str, Any]]) -> list[tuple[str, int, float, float]]:
    """Per hook: ``(hook, runs, median ms, max ms)``, slowest median first."""
    by_hook: dict[str, list[float]] = {}
    for record in records:
        by_hook.setdefault(str(record["hook"]), []).append(float(record["duration_ms"]))
    rows = [(h, len(d), statistics.median(d), max(d)) for h, d in by_hook.items()]
    return sorted(rows, key=lambda row: row[2], reverse=True)


def render(
    status: dict[str, Any], records: list[dict[str, Any]], width: int, height: int, now: float
) -> list[str]:
    """The screen's lines (at most ``height``, each at most ``width`` characters)."""
    lines = [
        f"hookd {status['version']}  pid {status['pid']}  up {status['uptime']:.0f}s  "
        f"generation {status['generation']}  {status['connections']} connection(s)  "
        f"{status['in_flight']} event(s) in flight   (q quits)",
        "",
    ]
    agents = sorted({s.get("agent_pid") for s in status["sessions"] if s.get("agent_pid")})
    lines.append(f"SESSIONS {len(status['sessions'])}   AGENTS {len(agents)}")
    lines.append(
        f"  {'session':<36} {'agent':<8} {'pid':>7} {'events':>6} {'last event':<20} project"
    )
    for s in sorted(status["sessions"], key=lambda s: s.get("last_event_at") or 0, reverse=True)[
        :8
    ]:
        last = f"{s.get('last_event') or '-'} {_ago(s.get('last_event_at'), now)}"
        lines.append(
            f"  {_cut(s['session_id'], 36):<36} {_cut(s.get('agent') or '-', 8):<8} "
            f"{s.get('agent_pid') or '-':>7} "
            f"{s.get('events', 0):>6} {_cut(last, 20):<20} {s['project']}"
        )
    lines += ["", f"RUNNING NOW {len(status['running'])}"]
    lines.append(f"  {'hook':<22} {'event':<16} {'session':<12} elapsed / timeout")
    for r in status["running"][:8]:
        lines.append(
            f"  {_cut(r['hook'], 22):<22} {_cut(r['event'], 16):<16} "
            f"{_cut(r['session_id'], 12):<12} "
            f"{_bar(r['elapsed'], r['timeout'])} {r['elapsed']:.1f}s / {r['timeout']:g}s"
        )
    lines += ["", "RECENT OUTCOMES"]
    for rec in records[-6:][::-1]:
        when = time.strftime("%H:%M:%S", time.localtime(rec["time"]))
        lines.append(
            f"  {when} {_cut(rec['event'], 16):<16} {rec['outcome']:<18} "
            f"{rec['duration_ms']:>8.1f}ms  {_cut(str(rec['hook']), 22)}"
        )
    lines += ["", "LATENCY PER HOOK (recent runs)"]
    lines.append(f"  {'hook':<40} {'runs':>5} {'median':>9} {'max':>9}")
    for hook, runs, median, worst in latency(records)[:6]:
        lines.append(f"  {_cut(hook, 40):<40} {runs:>5} {median:>7.1f}ms {worst:>7.1f}ms")
    return [_cut(line, width) for line in lines[:height]]


def _fetch(client: Client, last: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return client.status(), list(client.tail(last=last))


def _loop(screen: Any, client: Client, interval: float, last: int) -> None:
    curses.curs_set(0)
    screen.timeout(0)
    while True:
        status, records = _fetch(client, last)
        height, width = screen.getmaxyx()
        screen.erase()
        for row, line in enumerate(render(status, records, width - 1, height, time.time())):
            screen.addstr(row, 0, line, curses.A_BOLD if line.isupper() else curses.A_NORMAL)
        screen.refresh()
        deadline = time.monotonic() + interval
        while time.monotonic() < deadline:
            curses.napms(50)
            key = screen.getch()
            if key in (ord("q"), ord("Q"), 27):
                return
            if key == ord("+"):
                interval = min(10.0, interval * 2)
            elif key == ord("-"):
                interval = max(0.25, interval / 2)


@_guard  # a missing or refusing daemon: the same message and exit code as every remote command
def cmd_top(args: argparse.Namespace) -> int:
    client = Client(args.socket, name="hookctl-top", retries=0)
    try:
        client.connect()  # before the screen switches: a missing daemon is a plain message
        curses.wrapper(_loop, client, args.interval, args.last)
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
    return EXIT_OK


def add_top_command(sub: Any) -> None:
    top = sub.add_parser("top", help="a live full-screen view: sessions, running hooks, latency")
    top.add_argument(
        "--interval", type=float, default=1.0, help="seconds between refreshes (default 1)"
    )
    top.add_argument(
        "--last", type=int, default=200, help="recent runs the latency table is worked out from"
    )
    top.set_defaults(func=cmd_top)

"""``hookctl async [--session S] [--json]``: the daemon's background hooks, per agent and session.

Read-only: listing never delivers a result (``check_async`` does that), so
looking cannot steal a result from the agent it belongs to.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from hookd.cli.remote import EXIT_OK, _client, _guard
from hookd_client import protocol

__all__ = ["add_command", "cmd_async", "render_async"]

HEADERS = ["session", "hook", "event", "kind", "state", "exit", "elapsed", "bytes", "pid"]


def render_async(rows: list[dict[str, Any]]) -> str:
    """One block per agent process, one table row per run, oldest first."""
    if not rows:
        return "no async hooks"
    out: list[str] = []
    agents: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        agents.setdefault(row.get("agent_pid"), []).append(row)
    for agent_pid, agent_rows in agents.items():
        if out:
            out.append("")
        states: dict[str, int] = {}
        for row in agent_rows:
            states[row["state"]] = states.get(row["state"], 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        out.append(f"agent pid {agent_pid if agent_pid is not None else '-'}: {summary}")
        table = [
            [
                str(row["session_id"]),
                _short(str(row["hook"]), 40),
                str(row["event"]) + (f":{row['tool']}" if row.get("tool") else ""),
                str(row["kind"]),
                str(row["state"]),
                "-" if row.get("exit_code") is None else str(row["exit_code"]),
                f"{row['elapsed']:.1f}s / {row['timeout']:g}s",
                str(row["bytes"]),
                str(row.get("pid") or "-"),
            ]
            for row in agent_rows
        ]
        widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(HEADERS)]
        out.append("  " + "  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True)))
        for line in table:
            out.append("  " + "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    return "\n".join(out)


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@_guard
def cmd_async(args: argparse.Namespace) -> int:
    with _client(args) as client:
        rows: list[dict[str, Any]] = client.call(
            protocol.AsyncList(id=client.next_id(), session_id=args.session)
        )
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print(render_async(rows))
    return EXIT_OK


def add_command(sub: Any) -> None:
    parser = sub.add_parser(
        "async", help="background (async) hooks: running, queued, finished, delivered"
    )
    parser.add_argument("--session", help="only this session")
    parser.add_argument("--json", action="store_true", help="print as JSON")
    parser.set_defaults(func=cmd_async)

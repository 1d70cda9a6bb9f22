"""Run every benchmark row, hookd beside its baseline in the same run, and report.

    .venv/bin/python bench/run.py            # the full run (~10 min on the 2-core VM)
    .venv/bin/python bench/run.py --quick    # about a minute: fewer samples, no Claude CLI
    .venv/bin/python bench/run.py --only 1,4 # some rows

Writes ``bench/results/<timestamp>.json`` and ``bench/results/latest.json``,
prints a table, rewrites the README block between ``<!-- bench:start -->`` and
``<!-- bench:end -->`` (``--no-readme`` to skip), and draws
``docs/scaling.png`` when matplotlib is installed.  See docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cases
from _util import BENCH, ROOT, machine

Row = dict[str, Any]

ROWS: dict[str, Callable[[cases.Plan], Row]] = {
    "1": cases.no_hook,
    "2": cases.throughput,
    "3": cases.python_hook,
    "4": cases.command_hook,
    "5": cases.parallel_hooks,
    "6": lambda plan: __import__("claude_cli").claude_row(plan),
    "7": cases.hot_reload,
    "8": cases.relay,
    "8b": cases.relay_compiled,
    "9": cases.memory,
    "10": cases.scaling,
}


def _us(d: dict[str, Any]) -> str:
    return f"{d['p50_us']:.0f} / {d['p99_us']:.0f} µs"


def _ms(d: dict[str, Any]) -> str:
    return f"{d['p50_ms']:.2f} / {d['p99_ms']:.2f} ms"


def cells(row: Row) -> tuple[str, str, str]:
    """hookd, baseline and ratio cells of one row (p50 / p99 unless said)."""
    n = row["row"]
    h, b = row.get("hookd"), row.get("baseline")
    if h is None:
        return "not measured", "", ""
    if n in ("1", "3"):
        return _us(h), f"floor {_us(b)}", f"{row['ratio_p50']}× p50"
    if n == "2":
        hk = "; ".join(
            f"{r['clients']}c {r['events_per_s']:,}/s p99 {r['p99_us']:.0f} µs"
            + (f" err {r['errors']} lost {r['lost']}" if r["clients"] == 64 else "")
            for r in h
        )
        fl = "; ".join(f"{r['clients']}c {r['events_per_s']:,}/s" for r in b["runs"])
        return hk, f"floor {fl}", f"{row['ratio_8']}× at 8c"
    if n == "4":
        base = f"posix_spawn `sh -c cat` {_ms(b['bare_posix_spawn'])}"
        if "bare_posix_spawn_no_shell" in b:
            base += f"; `cat` without sh {_ms(b['bare_posix_spawn_no_shell'])}"
        base += f"; node {_ms(b['node_spawn_shell'])}"
        if "bun_spawn_shell" in b:
            base += f"; bun {_ms(b['bun_spawn_shell'])}"
        ratios = f"{row['ratio_p50']}× spawn, {row['ratio_vs_cc']}× CC"
        if "ratio_no_shell" in row:
            ratios += f", {row['ratio_no_shell']}× no-shell spawn"
        return _ms(h), base, ratios
    if n == "5":
        idle, busy = b["no_hook_idle"], b["no_hook_during_8_hook_events"]
        base = f"no-hook idle {_us(idle)}; during {_us(busy)}"
        ratios = f"{row['ratio_p99_busy_vs_idle']}× p99"
        if "no_hook_floor_idle" in b:  # the bare echo server in the same storm: what the box allows
            floor_idle = b["no_hook_floor_idle"]
            floor_busy = b["no_hook_floor_during_8_hook_events"]
            base += f"; echo floor idle {_us(floor_idle)}, during {_us(floor_busy)}"
            ratios += f" (floor {row['floor_ratio_p99_busy_vs_idle']}×)"
        return f"{_ms(h)} ({h['spawns_per_s']:,} spawns/s)", base, ratios
    if n == "6":
        return row["hookd_text"], row["baseline_text"], row.get("ratio_text", "")
    if n == "7":
        return (
            f"{_ms(h)}; {h['failed_events']} failed of {h['events_meanwhile']:,}",
            "Claude Code ~1.1 s (observed)",
            "",
        )
    if n == "8":
        return _ms(h), f"bare {_ms(b)}", f"{row['ratio_p50']}× p50"
    if n == "8b":
        side = row["side"]
        return (
            f"{_ms(h)} (spread {h['p10_ms']:.2f}..{h['p90_ms']:.2f}); daemon down "
            f"{_ms(side['compiled relay, daemon down'])}",
            f"`sh -c true` {_ms(b)}; Python relay {_ms(side['python relay -> daemon'])}, "
            f"`python3 -I -S -c pass` {_ms(side['python3 -I -S -c pass'])}",
            f"{row['ratio_p50']}× p50",
        )
    if n == "9":
        return (
            f"idle {h['idle_mb']} MB; 100 sessions {h['sessions_100_mb']} MB; "
            f"500 async {h['async_500_mb']} MB ({h['async_accepted']} accepted)",
            "goal 60 / 120 MB",
            "",
        )
    if n == "10":
        pts = h["points"]
        g = {(p["axis"], p["matching"], p["n"]): p["p50_us"] for p in pts}
        text = (
            "groups 1/10/100/1000 non-matching "
            + "/".join(f"{g[('groups', False, k)]:.0f}" for k in (1, 10, 100, 1000))
            + " µs, matching "
            + "/".join(f"{g[('groups', True, k)]:.0f}" for k in (1, 10, 100, 1000))
            + " µs; sessions 1/10/100 "
            + "/".join(f"{g[('sessions', False, k)]:.0f}" for k in (1, 10, 100))
            + " µs"
        )
        return text, f"floor {b['p50_us']:.0f} µs", f"{h['matching_cost_per_group_ns']} ns/group"
    return json.dumps(h), json.dumps(b), ""


def _met(value: bool | None) -> str:
    return {True: "met", False: "**missed**", None: "not measured"}[value]


def table(rows: list[Row]) -> str:
    lines = [
        "| # | measurement | hookd (p50 / p99) | baseline, same run | ratio | goal | |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        h, b, r = cells(row)
        note = f" ({row['note']})" if row.get("note") else ""
        lines.append(
            f"| {row['row']} | {row['name']} | {h}{note} | {b} | {r} | {row['goal']} "
            f"| {_met(row.get('met'))} |"
        )
    return "\n".join(lines)


def machine_line(info: dict[str, str]) -> str:
    return f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, Linux {info['kernel']}"


def rewrite_readme(text: str) -> None:
    readme = ROOT / "README.md"
    content = readme.read_text()
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    if start not in content or end not in content:
        print("README has no bench block; not rewritten", file=sys.stderr)
        return
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text}\n{end}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (about a minute)")
    parser.add_argument("--only", help="comma-separated row numbers, e.g. 1,2,10")
    parser.add_argument("--no-readme", action="store_true", help="do not rewrite README.md")
    parser.add_argument("--claude", action="store_true", help="row 6 (real CLI) in --quick too")
    args = parser.parse_args()
    plan = cases.Plan.make(args.quick)
    wanted = args.only.split(",") if args.only else list(ROWS)
    if args.quick and not args.claude and not args.only:
        wanted = [w for w in wanted if w != "6"]
    info = machine()
    started = time.time()
    rows: list[Row] = []
    for number in wanted:
        t0 = time.perf_counter()
        print(f"row {number} …", file=sys.stderr, flush=True)
        try:
            row = ROWS[number](plan)
        except Exception as exc:  # a broken row is reported, the others still run
            traceback.print_exc()
            row = {
                "row": number,
                "name": f"row {number}",
                "goal": "",
                "met": None,
                "note": f"failed: {exc!r}",
            }
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(
            f"row {number} done in {row['seconds']} s: met={row.get('met')}",
            file=sys.stderr,
            flush=True,
        )
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report = {
        "timestamp": stamp,
        "quick": args.quick,
        "machine": info,
        "seconds": round(time.time() - started, 1),
        "rows": rows,
    }
    out_dir = BENCH / "results"
    out_dir.mkdir(exist_ok=True)
    data = json.dumps(report, indent=1, default=str)
    (out_dir / f"{stamp}.json").write_text(data)
    (out_dir / "latest.json").write_text(data)
    text = table(rows)
    print(text)
    print(f"\n{machine_line(info)}; {report['seconds']} s")
    scaling = next((r for r in rows if r["row"] == "10" and r.get("hookd")), None)
    if scaling is not None:
        import plot

        plot.scaling_png(scaling, ROOT / "docs" / "scaling.png", machine_line(info))
    if not args.no_readme and not args.only:
        kind = "quick run" if args.quick else "full run"
        rewrite_readme(
            f"Measured by `bench/run.py` ({kind}, {stamp}) on {machine_line(info)}. "
            "p50 / p99 unless said; every baseline was measured in the same run; this box is "
            "shared and noisy (±40 %), so read ratios, not absolutes. Method, profiles and "
            "fixes: [docs/performance.md](docs/performance.md).\n\n" + text
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

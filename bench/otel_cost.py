"""What OpenTelemetry export costs an event: rows 1 and 4 with export off and on.

    .venv/bin/python bench/otel_cost.py            # ~2 minutes on the 2-core VM
    .venv/bin/python bench/otel_cost.py --quick    # ~30 s

Two daemons run side by side, identical but for ``--telemetry``; the "on" one exports
(defaults: traces every second, metrics every minute) to a local OTLP sink
(bench/otlp_sink.py, its own process, answering 200 to every export).  Each round times
a block of events on one daemon then on the other, alternating which goes first, so
that drift on a shared machine hits both alike; the goal (docs/observability.md, "Cost")
is judged on the median over rounds of each round's p50 ratio (on/off), on ≤ 1.05; the
pooled p50s, the daemon's CPU per event (``/proc/<pid>/stat``) and the exporter's are
reported beside it.  Needs the ``otel`` extra.

Writes ``bench/results/otel-<timestamp>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, PYTHON, event_in, hookd_daemon, machine, summary, time_fires

from hookd_client import protocol

ONE_HOOK = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat"}]}]}


def _sink() -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen([PYTHON, str(BENCH / "otlp_sink.py")], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def _ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SIDES = ("off", "off2", "on")
"""Two daemons with export off (their ratio is the method's own noise: an A/A control)
and one with it on."""


def _row(hooks: dict[str, Any] | None, endpoint: str, n: int, rounds: int) -> dict[str, Any]:
    on_args = ("--telemetry", "--telemetry-endpoint", endpoint)
    with (
        hookd_daemon(hooks) as off,
        hookd_daemon(hooks) as off2,
        hookd_daemon(hooks, extra_args=on_args) as on,
    ):
        daemons = {"off": off, "off2": off2, "on": on}
        clients = {side: d.client() for side, d in daemons.items()}
        payloads = {side: event_in(d.root / "project") for side, d in daemons.items()}
        samples: dict[str, list[float]] = {side: [] for side in SIDES}
        for side in SIDES:  # warm each up, unmeasured
            time_fires(clients[side], "PreToolUse", payloads[side], max(20, n // 4), 30.0)
        cpu0 = {side: cpu_s(d.pid) for side, d in daemons.items()}
        ratios: dict[str, list[float]] = {"on": [], "off2": []}
        for i in range(rounds):
            order = SIDES[i % 3 :] + SIDES[: i % 3]  # each side first in turn
            block: dict[str, list[float]] = {}
            for side in order:
                block[side] = time_fires(
                    clients[side], "PreToolUse", payloads[side], n, 30.0, warmup=0
                )
                samples[side] += block[side]
            base = statistics.median(block["off"])
            for side in ratios:
                ratios[side].append(statistics.median(block[side]) / base)
        # Whole-run CPU: the clock ticks are 10 ms, so per block it would be noise.
        cpu = {side: cpu_s(d.pid) - cpu0[side] for side, d in daemons.items()}
        status = clients["on"].call(protocol.Status(id=999_999))
        tele = status.data.get("telemetry") or {}
        exporter = tele.get("exporter_pid")
        exporter_cpu = cpu_s(exporter) if exporter else None
    stats = {side: summary(samples[side]) for side in SIDES}
    per_event = {side: cpu[side] / len(samples[side]) * 1e6 for side in SIDES}
    on_ratio = statistics.median(ratios["on"])
    return {
        **stats,
        "ratio_p50": _ratio(stats["on"]["p50_us"], stats["off"]["p50_us"]),
        "ratio_p50_median_of_rounds": round(on_ratio, 3),
        "control_p50_median_of_rounds": round(statistics.median(ratios["off2"]), 3),
        "ratio_p50_rounds": [round(x, 3) for x in ratios["on"]],
        "daemon_cpu_us_per_event": per_event,
        "ratio_daemon_cpu": _ratio(per_event["on"], per_event["off"]),
        "exporter_cpu_us_per_event": (
            exporter_cpu / len(samples["on"]) * 1e6 if exporter_cpu is not None else None
        ),
        "goal": "p50 with export on ≤ 1.05× off",
        "met": on_ratio <= 1.05,
        "telemetry": tele,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n1, n4, rounds = (500, 20, 6) if args.quick else (1000, 40, 24)
    sink, port = _sink()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        rows = {
            "1 no-hook event": _row(None, endpoint, n1, rounds),
            "4 one command hook": _row(ONE_HOOK, endpoint, n4, rounds),
        }
    finally:
        sink.terminate()
        sink.wait(timeout=10)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = BENCH / "results" / f"otel-{stamp}.json"
    out.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=2))
    for name, row in rows.items():
        off, on, t = row["off"], row["on"], row["telemetry"]
        cpu = row["daemon_cpu_us_per_event"]
        exp = row["exporter_cpu_us_per_event"]
        print(
            f"row {name}: p50/p99 off {off['p50_us']:.0f}/{off['p99_us']:.0f} µs, "
            f"on {on['p50_us']:.0f}/{on['p99_us']:.0f} µs; on/off per round (median) "
            f"{row['ratio_p50_median_of_rounds']:.3f}, A/A control "
            f"{row['control_p50_median_of_rounds']:.3f}, pooled {row['ratio_p50']:.3f}; "
            f"daemon CPU µs/event off {cpu['off']:.1f} / off2 {cpu['off2']:.1f} / "
            f"on {cpu['on']:.1f}; exporter {exp if exp is None else round(exp, 1)} µs/event; "
            f"spans recorded {t.get('recorded')} exported {t.get('exported')} "
            f"dropped {t.get('dropped')}  {'met' if row['met'] else 'MISSED'}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

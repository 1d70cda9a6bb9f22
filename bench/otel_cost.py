"""What OpenTelemetry export costs an event: rows 1 and 4 with export off and on.

    .venv/bin/python bench/otel_cost.py            # ~2 minutes on the 2-core VM
    .venv/bin/python bench/otel_cost.py --quick    # ~30 s

Two daemons run side by side, identical but for ``--telemetry``; the "on" one exports
(defaults: traces every second, metrics every minute) to a local OTLP sink
(bench/otlp_sink.py, its own process, answering 200 to every export).  Each round times
a block of events on one daemon then on the other, alternating which goes first, so
that drift on a shared machine hits both alike; the goal (docs/observability.md, "Cost")
is judged on the ratio of p50s, on ≤ 1.05.  Needs the ``otel`` extra.

Writes ``bench/results/otel-<timestamp>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _row(hooks: dict[str, Any] | None, endpoint: str, n: int, rounds: int) -> dict[str, Any]:
    on_args = ("--telemetry", "--telemetry-endpoint", endpoint)
    with hookd_daemon(hooks) as off, hookd_daemon(hooks, extra_args=on_args) as on:
        daemons = {"off": off, "on": on}
        clients = {side: d.client() for side, d in daemons.items()}
        payloads = {side: event_in(d.root / "project") for side, d in daemons.items()}
        samples: dict[str, list[float]] = {"off": [], "on": []}
        cpu = {"off": 0.0, "on": 0.0}
        for side in daemons:  # warm both up, unmeasured
            time_fires(clients[side], "PreToolUse", payloads[side], max(20, n // 4), 30.0)
        for i in range(rounds):
            order = ("off", "on") if i % 2 == 0 else ("on", "off")
            for side in order:
                before = cpu_s(daemons[side].pid)
                samples[side] += time_fires(
                    clients[side], "PreToolUse", payloads[side], n, 30.0, warmup=0
                )
                cpu[side] += cpu_s(daemons[side].pid) - before
        status = clients["on"].call(protocol.Status(id=999_999))
        tele = status.data.get("telemetry") or {}
        exporter = tele.get("exporter_pid")
        exporter_cpu = cpu_s(exporter) if exporter else None
    off_s, on_s = summary(samples["off"]), summary(samples["on"])
    r = _ratio(on_s["p50_us"], off_s["p50_us"])
    per_event = {side: cpu[side] / len(samples[side]) * 1e6 for side in cpu}
    return {
        "off": off_s,
        "on": on_s,
        "ratio_p50": r,
        "daemon_cpu_us_per_event": per_event,
        "ratio_daemon_cpu": _ratio(per_event["on"], per_event["off"]),
        "exporter_cpu_us_per_event": (
            exporter_cpu / len(samples["on"]) * 1e6 if exporter_cpu is not None else None
        ),
        "goal": "p50 with export on ≤ 1.05× off",
        "met": r <= 1.05,
        "telemetry": tele,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n1, n4, rounds = (800, 60, 4) if args.quick else (2500, 150, 8)
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
    print(
        f"{'row':20} {'off p50/p99 µs':>17} {'on p50/p99 µs':>17} {'ratio':>6} "
        f"{'daemon CPU µs/event off→on':>27} {'exporter':>9}"
    )
    for name, row in rows.items():
        off, on, t = row["off"], row["on"], row["telemetry"]
        cpu = row["daemon_cpu_us_per_event"]
        exp = row["exporter_cpu_us_per_event"]
        print(
            f"{name:20} {off['p50_us']:>8.0f} / {off['p99_us']:<6.0f} "
            f"{on['p50_us']:>8.0f} / {on['p99_us']:<6.0f} {row['ratio_p50']:>6.3f} "
            f"{cpu['off']:>12.1f} → {cpu['on']:<7.1f} ({row['ratio_daemon_cpu']:.3f}) "
            f"{exp if exp is None else round(exp, 1)!s:>9}  "
            f"spans recorded {t.get('recorded')} exported {t.get('exported')} "
            f"dropped {t.get('dropped')}  {'met' if row['met'] else 'MISSED'}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

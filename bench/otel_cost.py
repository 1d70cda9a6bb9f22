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
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import BENCH, PYTHON, event_in, hookd_daemon, machine, ratio, summary, time_fires

from hookd_client import protocol

ONE_HOOK = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat"}]}]}


def _sink() -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen([PYTHON, str(BENCH / "otlp_sink.py")], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def _row(hooks: dict[str, Any] | None, endpoint: str, n: int, rounds: int) -> dict[str, Any]:
    on_args = ("--telemetry", "--telemetry-endpoint", endpoint)
    with hookd_daemon(hooks) as off, hookd_daemon(hooks, extra_args=on_args) as on:
        payload = event_in(off.root / "project")
        payload_on = event_in(on.root / "project")
        clients = {"off": off.client(), "on": on.client()}
        payloads = {"off": payload, "on": payload_on}
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for i in range(rounds):
            order = ("off", "on") if i % 2 == 0 else ("on", "off")
            for side in order:
                samples[side] += time_fires(
                    clients[side], "PreToolUse", payloads[side], n, 30.0, warmup=20
                )
        status = clients["on"].call(protocol.Status(id=999_999))
    off_s, on_s = summary(samples["off"]), summary(samples["on"])
    r = ratio(on_s["p50_us"], off_s["p50_us"])
    tele = status.data.get("telemetry") or {}
    return {
        "off": off_s,
        "on": on_s,
        "ratio_p50": r,
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
    print(f"{'row':22} {'off p50/p99 µs':>20} {'on p50/p99 µs':>20} {'ratio':>7}  spans")
    for name, row in rows.items():
        off, on, t = row["off"], row["on"], row["telemetry"]
        print(
            f"{name:22} {off['p50_us']:>9.0f} / {off['p99_us']:<8.0f} "
            f"{on['p50_us']:>9.0f} / {on['p99_us']:<8.0f} {row['ratio_p50']:>7.3f}  "
            f"recorded {t.get('recorded')} exported {t.get('exported')} "
            f"dropped {t.get('dropped')}  {'met' if row['met'] else 'MISSED'}"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

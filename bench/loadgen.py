"""A load-generating client process: fire events in a loop, report what happened.

    python bench/loadgen.py SOCKET START_AT DURATION_S EVENT INPUT_JSON [MAX_EVENTS]

SIGTERM ends the loop early (the result is still printed).
Waits until ``time.monotonic() >= START_AT`` (CLOCK_MONOTONIC is system-wide,
so many processes start together), fires ``EVENT`` sequentially for
``DURATION_S`` seconds (at most ``MAX_EVENTS``), and prints one JSON line:
events answered, errors, lost replies and latency percentiles.  A reply
whose id does not match, an error reply, or a dropped connection all count.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import RawClient, pct


def main() -> int:
    path, start_at, duration = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    event, payload = sys.argv[4], json.loads(sys.argv[5])
    limit = int(sys.argv[6]) if len(sys.argv) > 6 else 10_000_000
    errors = 0
    lost = 0
    samples: list[float] = []
    stopping: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    client = RawClient(path)
    while time.monotonic() < start_at:
        time.sleep(min(0.01, max(0.0, start_at - time.monotonic())))
    clock = time.perf_counter
    t0 = clock()
    end = t0 + duration
    while len(samples) + errors < limit:
        start = clock()
        try:
            reply = client.fire(event, payload)
            if reply.result.errors:
                errors += 1
        except (RuntimeError, ConnectionError, OSError):
            lost += 1
            try:
                client.close()
                client = RawClient(path)
            except OSError:
                break
        now = clock()
        samples.append(now - start)
        if now > end or stopping:
            break
    elapsed = clock() - t0
    print(
        json.dumps(
            {
                "events": len(samples) - lost,
                "errors": errors,
                "lost": lost,
                "elapsed": elapsed,
                "p50": pct(samples, 0.5),
                "p99": pct(samples, 0.99),
                "samples": [round(s, 7) for s in samples[:: max(1, len(samples) // 2000)]],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the same Python work costs right after a wake-up, on this machine.

A thread waits on a socket, as a daemon waits for its next event; each message
wakes it and it runs one fixed piece of work twice, timing each pass.  Sent back
to back, both passes cost the same; sent after ``--pace-ms`` of idle (an agent's
rhythm), the first pass pays for cold caches and the second for whatever else a
wake-up leaves slow (on these VMs the vCPU itself).  Every daemon pays this on
every paced event, in proportion to the work it does before answering — why
bench/peers.py's ``--pace-ms`` rows widen the gaps of its back-to-back rows.

    .venv/bin/python bench/wake_cost.py [--pace-ms 20] [-n 300]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import threading
import time


def work() -> bytes:
    """~30-60 µs of ordinary Python: a dict built and encoded."""
    table = {i: str(i) for i in range(200)}
    return json.dumps(table).encode()


def measure(pace: float, n: int) -> tuple[float, float]:
    """Median µs of the first and the second pass, ``n`` wake-ups ``pace`` s apart."""
    ours, theirs = socket.socketpair()
    passes: list[tuple[int, int]] = []

    def server() -> None:
        while theirs.recv(16):
            t0 = time.perf_counter_ns()
            work()
            t1 = time.perf_counter_ns()
            work()
            passes.append((t1 - t0, time.perf_counter_ns() - t1))
            theirs.send(b"k")

    thread = threading.Thread(target=server)
    thread.start()
    try:
        for _ in range(n):
            if pace:
                time.sleep(pace)
            ours.send(b"x")
            ours.recv(16)
    finally:
        ours.close()
        thread.join(timeout=10)
        theirs.close()
    first = statistics.median(p[0] for p in passes) / 1000
    second = statistics.median(p[1] for p in passes) / 1000
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pace-ms", type=float, default=20.0)
    parser.add_argument("-n", type=int, default=300)
    args = parser.parse_args()
    for pace in (0.0, args.pace_ms / 1000):
        first, second = measure(pace, args.n if pace else args.n * 10)
        idle = f"idle {pace * 1000:4.0f} ms before each"
        print(f"{idle}: first pass {first:6.1f} µs, second {second:6.1f} µs")


if __name__ == "__main__":
    main()

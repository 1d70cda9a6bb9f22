"""Relay start-up: ``python3 -I -S relay.py EVENT`` (live daemon) vs ``python3 -I -S -c pass``.

Run by hand (not part of the test suite):

    .venv/bin/python bench/relay_startup.py [--runs 200] [--python /abs/python3]

It starts a real ``hookd serve`` with no hooks in a private directory, then
times whole processes (spawn to exit) of: the bare interpreter, the relay
against the daemon (one hello + relay round trip, an event that matches no
hook), and the relay with the daemon down (fail-open path).  Prints p50/p90
and the relay / bare-interpreter ratio.  perf-floors.md (d) targets a Python
relay at <= 12 ms p50 on the 2-core VM.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hookd.bridge.claude_settings import relay_bootstrap

ROOT = Path(__file__).resolve().parents[1]
RELAY = ROOT / "client" / "hookd_client" / "relay.py"
INPUT = (ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json").read_bytes()


def _time(cmd: list[str], runs: int, env: dict[str, str]) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, input=INPUT, env=env, stdout=subprocess.DEVNULL, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _report(name: str, samples: list[float]) -> float:
    samples.sort()
    p50 = statistics.median(samples)
    p90 = samples[int(len(samples) * 0.9)]
    print(f"{name:<34} p50 {p50:7.2f} ms   p90 {p90:7.2f} ms   (n={len(samples)})")
    return p50


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hkbench", dir="/tmp") as tmp:
        base = Path(tmp)
        sock = base / "hookd.sock"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(base),
            "XDG_CONFIG_HOME": str(base / "config"),
            "XDG_STATE_HOME": str(base / "state"),
        }
        daemon = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "hookd"),
                "serve",
                "--socket",
                str(sock),
                "--no-watch",
                "--log-level",
                "warning",
                "--policy-file",
                str(base / "none.json"),
            ],
            env=env,
        )
        try:
            deadline = time.monotonic() + 30
            while not sock.exists():
                if time.monotonic() > deadline or daemon.poll() is not None:
                    print("hookd did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
            bare = [args.python, "-I", "-S", "-c", "pass"]
            boot = relay_bootstrap(str(RELAY))  # exactly what `hookctl claude install` writes
            relay = [args.python, "-I", "-S", "-c", boot, "PreToolUse", "--socket", str(sock)]
            down = [args.python, "-I", "-S", "-c", boot, "PreToolUse", "--socket", str(base / "x")]
            script = [args.python, "-I", "-S", str(RELAY), "PreToolUse", "--socket", str(sock)]
            _time(relay, 10, env)  # warm the page cache and the daemon
            base_p50 = _report("python3 -I -S -c pass", _time(bare, args.runs, env))
            relay_p50 = _report("relay -> daemon (no hooks)", _time(relay, args.runs, env))
            _report("same, run as a script (compiles)", _time(script, args.runs, env))
            _report("relay, daemon down (fail open)", _time(down, args.runs, env))
            print(
                f"relay / bare interpreter: {relay_p50 / base_p50:.2f}x "
                f"(+{relay_p50 - base_p50:.2f} ms)"
            )
        finally:
            daemon.terminate()
            daemon.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())

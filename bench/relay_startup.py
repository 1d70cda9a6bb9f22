"""Relay per event, whole process: compiled and Python relay vs ``sh -c true`` and ``python3``.

Run by hand (not part of the test suite):

    .venv/bin/python bench/relay_startup.py [--runs 400] [--python /abs/python3]

It starts a real ``hookd serve`` with no hooks in a private directory and
builds relay/hookd-relay.c with ``scripts/build-relay`` (into the temporary
directory: the source as it is), then times whole processes (spawn to exit,
hook input on stdin) of:

* ``sh -c true`` — the cheapest native command hook there is (issue 19's
  yardstick for the compiled relay: ≤ 2x);
* ``python3 -I -S -c pass`` — the floor of any Python hook (the Python relay's
  yardstick: ≤ 1.3x);
* the compiled relay and the Python relay exactly as ``hookctl claude install``
  writes them, each doing one hello + relay round trip with the daemon for an
  event that matches no hook;
* both relays with the daemon down (the fail-open path: no round trip).

The samples are *interleaved*: every iteration runs each command once, in an
order rotated per iteration, so drift on a shared machine (another process
waking, frequency changes) lands on all of them alike rather than on whichever
block ran then.  Reported per command: p50, p99 and the spread (p10..p90).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hookd.installers.claude_settings import relay_bootstrap

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


def interleaved(
    commands: dict[str, list[str]], runs: int, env: dict[str, str]
) -> dict[str, list[float]]:
    """``runs`` samples of each command, one of each per iteration, order rotated."""
    names = list(commands)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name] += _time(commands[name], 1, env)
    return samples


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "p50_ms": round(quantile(samples, 0.5), 2),
        "p99_ms": round(quantile(samples, 0.99), 2),
        "p10_ms": round(quantile(samples, 0.1), 2),
        "p90_ms": round(quantile(samples, 0.9), 2),
    }


def build_compiled(into: Path) -> Path | None:
    """relay/hookd-relay.c built by the setup script into ``into``; None without a compiler."""
    out = into / "hookd-relay-c"
    subprocess.run([str(ROOT / "scripts" / "build-relay"), str(out)], check=True)
    return out if out.exists() else None


def relay_commands(
    python: str, compiled: Path | None, sock: str, down: str
) -> dict[str, list[str]]:
    """The commands compared, the relays as ``hookctl claude install`` writes them."""
    boot = relay_bootstrap(str(RELAY))
    commands = {
        "sh -c true": ["/bin/sh", "-c", "true"],
        "python3 -I -S -c pass": [python, "-I", "-S", "-c", "pass"],
    }
    if compiled is not None:
        commands["compiled relay -> daemon"] = [str(compiled), "PreToolUse", "--socket", sock]
    commands["python relay -> daemon"] = [
        python,
        "-I",
        "-S",
        "-c",
        boot,
        "PreToolUse",
        "--socket",
        sock,
    ]
    if compiled is not None:
        commands["compiled relay, daemon down"] = [str(compiled), "PreToolUse", "--socket", down]
    commands["python relay, daemon down"] = [
        python,
        "-I",
        "-S",
        "-c",
        boot,
        "PreToolUse",
        "--socket",
        down,
    ]
    return commands


def report(samples: dict[str, list[float]]) -> None:
    for name, values in samples.items():
        s = summary(values)
        print(
            f"{name:<30} p50 {s['p50_ms']:6.2f} ms  p99 {s['p99_ms']:6.2f} ms  "
            f"spread p10..p90 {s['p10_ms']:.2f}..{s['p90_ms']:.2f} ms  (n={s['n']})"
        )
    p50 = {name: quantile(values, 0.5) for name, values in samples.items()}
    if "compiled relay -> daemon" in p50:
        compiled = p50["compiled relay -> daemon"] / p50["sh -c true"]
        print(f"compiled relay / sh -c true: {compiled:.2f}x (goal <= 2x)")
    print(
        "python relay / python3 -I -S -c pass: "
        f"{p50['python relay -> daemon'] / p50['python3 -I -S -c pass']:.2f}x (goal <= 1.3x)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
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
        compiled = build_compiled(base)
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
            commands = relay_commands(args.python, compiled, str(sock), str(base / "down.sock"))
            interleaved(commands, 10, env)  # warm the page cache and the daemon
            report(interleaved(commands, args.runs, env))
        finally:
            daemon.terminate()
            daemon.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())

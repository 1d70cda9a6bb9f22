"""Row 5 as an A/B: eight ``cat # i`` command hooks on one event, one daemon per code tree.

Run by hand (not part of the test suite):

    .venv/bin/python bench/row5_ab.py [--runs 200] --old before=main [--old NAME=REV …]

``bench/run.py --only 5`` times one daemon; on a shared box two of its runs, minutes apart,
differ more than most changes do.  Here every daemon (this tree, and each ``--old`` tree: a
``git archive`` of the revision, started as ``bench/parallel_spawns.py --old`` starts it) gets
the same eight hooks, and the cases alternate sample by sample in one loop (order rotated per
iteration), beside the floor: eight ``posix_spawn("/bin/cat")`` from this process, the event
written to each, both outputs read to EOF, all reaped.

Per daemon: the event's p50/p90/p99 (client fire → reply on a kept-alive connection) and the
daemon's CPU per event, user + system of all its threads from ``/proc/PID/task/*/schedstat``
(nanoseconds; the 10 ms clock ticks of ``/proc/PID/stat`` are too coarse for one event), and
its main thread's alone.  The load average is printed with every phase: the machine is shared,
and CPU per event is the steadier measure there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import spawn_posix
from parallel_spawns import EVENT, old_code, pct, start_daemon, stop_daemons

from hookd_client.client import Client

HOOKS = 8


def row5_hooks(path: Path) -> None:
    """The hooks of ``bench/cases.py::parallel_hooks``: eight ``cat # i`` on Bash."""
    group = [{"type": "command", "command": f"cat # {i}"} for i in range(HOOKS)]
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": group}]}}))


def floor(payload: bytes) -> Callable[[], None]:
    """Eight bare ``posix_spawn``s of ``/bin/cat`` (no new session: hooks share hookd's)."""
    argvs = [["/bin/cat"]] * HOOKS

    def run() -> None:
        spawn_posix.run_argvs(argvs, payload, setsid=False, own_group=True)

    return run


def through(client: Client, cwd: Path) -> Callable[[], None]:
    payload = {**EVENT, "cwd": str(cwd)}
    env = dict(os.environ)

    def run() -> None:
        reply = client.fire("PreToolUse", payload, env=env)
        hooks = reply.result.hooks
        assert len(hooks) == HOOKS and all(r.outcome == "success" for r in hooks), reply.result

    return run


def cpu_ns(pid: int) -> tuple[int, int]:
    """(all threads, main thread) CPU time so far, in ns, from schedstat."""
    total = main = 0
    for task in os.scandir(f"/proc/{pid}/task"):
        try:
            with open(f"{task.path}/schedstat") as fh:
                ran = int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a worker thread that just ended
        total += ran
        if task.name == str(pid):
            main = ran
    return total, main


def measure(
    cases: dict[str, Callable[[], None]], runs: int, pace: float, pids: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, tuple[float, float]]]:
    """Latency samples (ms) per case; per daemon case its CPU per event (ms: all, main)."""
    names = list(cases)
    samples: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[int]] = {n: [0, 0] for n in names if n in pids}
    for i in range(runs + 10):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            time.sleep(pace)
            pid = pids.get(name)
            before = cpu_ns(pid) if pid else (0, 0)
            start = time.perf_counter()
            cases[name]()
            elapsed = time.perf_counter() - start
            if i < 10:
                continue
            samples[name].append(elapsed * 1000)
            if pid:
                after = cpu_ns(pid)
                cpu[name][0] += after[0] - before[0]
                cpu[name][1] += after[1] - before[1]
    return samples, {n: (c[0] / runs / 1e6, c[1] / runs / 1e6) for n, c in cpu.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument(
        "--old", action="append", default=[],
        help="NAME=REV (or NAME=DIR holding hookd/): also run that code as a daemon; repeatable",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hkr5", dir="/tmp") as tmp:
        base = Path(tmp)
        project = base / "project"
        project.mkdir()
        payload = json.dumps({**EVENT, "cwd": str(project)}).encode() + b"\n"
        daemons = {"hookd": start_daemon(base, "hookd", None, row5_hooks)}
        for alt in args.old:
            name, tree = old_code(alt, base)
            daemons[name] = start_daemon(base, name, tree, row5_hooks)
        clients = {name: Client(base / f"d-{name}" / "hookd.sock") for name in daemons}
        try:
            cases: dict[str, Callable[[], None]] = {"floor": floor(payload)}
            for name, client in clients.items():
                cases[name] = through(client, project)
            pids = {name: daemon.pid for name, daemon in daemons.items()}
            print(f"{args.runs} interleaved samples each, pace {args.pace_ms} ms, {HOOKS} x cat")
            for round_ in range(1, args.rounds + 1):
                load_before = os.getloadavg()[0]
                samples, cpu = measure(cases, args.runs, args.pace_ms / 1000, pids)
                load_after = os.getloadavg()[0]
                print(
                    f"round {round_}: load average {load_before:.2f} before, {load_after:.2f} after"
                )
                for name, s in samples.items():
                    line = f"  {name:<10} p50 {pct(s, 0.5):6.2f} ms  p90 {pct(s, 0.9):6.2f}"
                    line += f"  p99 {pct(s, 0.99):6.2f}"
                    if name in cpu:
                        total, main_thread = cpu[name]
                        line += f"  CPU {total:.2f} ms/event (main thread {main_thread:.2f})"
                    print(line, flush=True)
        finally:
            stop_daemons(clients, daemons)
    return 0


if __name__ == "__main__":
    sys.exit(main())

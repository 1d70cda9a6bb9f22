"""Parallel spawns (issue 29, item 2): N command hooks on one event, natively vs through hookd.

Run by hand (not part of the test suite):

    .venv/bin/python bench/parallel_spawns.py [--runs 300] [--old NAME=REV] [--hogs quiet]

An agent starts every command hook of an event at once, each as ``/bin/sh -c '<command>'``
(bench/spawn_node.js, bench/agent_doors.py). Timed here, interleaved sample by sample in one run
(order rotated per iteration), for N = 1, 3, 5 hooks ``true 1`` … ``true N``:

* **native** (the floor): N ``posix_spawn`` of ``/bin/sh -c 'true k'`` started together, each
  with stdin, stdout and stderr pipes, the event JSON written to each, both outputs read to EOF,
  all reaped — the cheapest way an agent could run them (no runtime of its own around the
  spawns); the strictest baseline, always reported;
* **posix**: the same bare ``posix_spawn``s from a process of their own that sleeps between
  requests as an agent does (``bench/spawn_posix.py``, same protocol as node's and Rust's):
  under load the scheduler serves a mostly-sleeping process sooner than the busy timing loop
  that runs ``native``, so this is the floor as an agent would see it; **posix_nosid** the
  same without ``setsid`` (node and Rust start no session; hookd must, and on a kernel with
  scheduler autogroups a new session is a new scheduling group: this row shows the price);
* **node**: what Claude Code, Gemini CLI, Copilot CLI and Qwen Code do (all node programs): a
  node process that stays up (``bench/spawn_node.js --serve``, so node's start-up is not
  counted) runs ``child_process.spawn(cmd, {shell: true})`` for the N commands at once, writes
  the event to each, and answers when all have closed; timed from the request to the answer
  (a pipe round trip, as hookd's is a socket round trip);
* **rust**: what Codex does (a Rust program): ``std::process::Command`` ×N, the same protocol
  (``bench/spawn_rust.rs``, built with ``rustc -O`` at bench time; left out where there is no
  ``rustc``);
* **hookd**: a client on a kept-alive connection fires the event at a live ``hookd serve`` whose
  PreToolUse hooks for that tool are those N commands; event to reply;
* **NAME**, with ``--old NAME=REV``: the same against another daemon running the code of
  ``REV`` (``git archive`` into a temp dir, first on ``PYTHONPATH``) — an A/B in one run;
  also ``--old NAME=DIR`` for a directory holding a ``hookd/`` package.

Beside each daemon case: the daemon's CPU (user + system, from /proc) per event.

Each phase runs quiet, then with two CPU hogs (``python3 -c 'while True: pass'``, killed at the
end), and prints the load average next to its numbers: the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import spawn_posix

from hookd_client.client import Client

ROOT = Path(__file__).resolve().parents[1]
EVENT = json.loads((ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json").read_bytes())
COUNTS = (1, 3, 5)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def hooks_config(path: Path) -> None:
    groups = [
        {"matcher": f"T{n}", "hooks": [{"type": "command", "command": f"true {k}"}
                                       for k in range(1, n + 1)]}
        for n in COUNTS
    ]  # fmt: skip
    path.write_text(json.dumps({"hooks": {"PreToolUse": groups}}))


def start_daemon(
    base: Path,
    name: str,
    pythonpath: str | None,
    hooks: Callable[[Path], None] = hooks_config,
) -> subprocess.Popen[bytes]:
    """``hookd serve`` from this tree (``pythonpath`` None) or another, with ``hooks`` written
    to its hooks file."""
    home = base / f"d-{name}"
    (home / "config" / "hookd").mkdir(parents=True)
    hooks(home / "config" / "hookd" / "hooks.json")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
    }
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    sock = home / "hookd.sock"
    # The venv's editable install finds hookd before PYTHONPATH does: unmap it there.
    unmap = "import __editable___hookd_0_1_0_finder as f; f.MAPPING.pop('hookd', None); "
    launch = (unmap if pythonpath else "") + (
        "import sys; from hookd.cli.hookd_main import main; sys.exit(main())"
    )
    daemon = subprocess.Popen(
        [sys.executable, "-c", launch, "serve", "--socket", str(sock), "--no-watch",
         "--log-level", "warning", "--policy-file", str(base / "none.json")],
        env=env, cwd=str(base),
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not sock.exists():
        if time.monotonic() > deadline or daemon.poll() is not None:
            raise SystemExit(f"hookd ({name}) did not start")
        time.sleep(0.05)
    return daemon


@contextlib.contextmanager
def cpu_hogs(count: int) -> Iterator[int]:
    """``count`` processes spinning on a CPU for the block (a loaded phase), then killed."""
    hog = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(hog) for _ in range(count)]
    try:
        if hogs:
            time.sleep(1)  # let the scheduler see them before timing
        yield count
    finally:
        for p in hogs:
            p.kill()
            p.wait()


def native(n: int, payload: bytes) -> Callable[[], None]:
    """The floor in this process: bench/spawn_posix.py's spawns, called in the timing loop."""
    commands = [f"true {k}" for k in range(1, n + 1)]

    def run() -> None:
        spawn_posix.run(commands, payload)

    return run


class Agent:
    """A baseline program that stays up and runs an event's commands on request (one line,
    tab-separated commands; answer ``ok <exit codes>``)."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def case(self, n: int) -> Callable[[], None]:
        request = "\t".join(f"true {k}" for k in range(1, n + 1)).encode() + b"\n"
        expected = b"ok " + b" ".join([b"0"] * n) + b"\n"
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None

        def run() -> None:
            stdin.write(request)
            stdin.flush()
            answer = stdout.readline()
            assert answer == expected, answer

        return run

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=15)


def agents(base: Path, payload: bytes) -> dict[str, Agent]:
    """The floor in a process of its own, node, and Rust where ``rustc`` can build it."""
    event = base / "event.json"
    event.write_bytes(payload)
    posix = [sys.executable, str(ROOT / "bench" / "spawn_posix.py"), str(event)]
    found: dict[str, Agent] = {
        "posix": Agent(posix),
        "posix_nosid": Agent([*posix, "--no-setsid"]),
    }
    node = shutil.which("node")
    if node:
        found["node"] = Agent([node, str(ROOT / "bench" / "spawn_node.js"), "--serve", str(event)])
    rustc = shutil.which("rustc")
    if rustc:
        binary = base / "spawn_rust"
        subprocess.run(
            [rustc, "-O", "-o", str(binary), str(ROOT / "bench" / "spawn_rust.rs")], check=True
        )
        found["rust"] = Agent([str(binary), str(event)])
    return found


def through(client: Client, n: int, cwd: Path) -> Callable[[], None]:
    payload = {**EVENT, "cwd": str(cwd), "tool_name": f"T{n}"}
    env = dict(os.environ)

    def run() -> None:
        reply = client.fire("PreToolUse", payload, env=env)
        assert len(reply.result.hooks) == n and all(
            r.outcome == "success" for r in reply.result.hooks
        ), reply.result

    return run


def cpu_ms(pid: int) -> float:
    """A process's user + system CPU so far (ms)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def measure(
    cases: dict[str, Callable[[], None]], runs: int, pace: float, pids: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Latency samples (ms) per case, and each daemon case's daemon CPU per event (ms)."""
    names = list(cases)
    samples: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, float] = {n: 0.0 for n in names}
    for i in range(runs + 10):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            time.sleep(pace)
            pid = pids.get(name.split(" ")[0])
            before = cpu_ms(pid) if pid else 0.0
            start = time.perf_counter()
            cases[name]()
            if i >= 10:
                samples[name].append((time.perf_counter() - start) * 1000)
                if pid:
                    cpu[name] += cpu_ms(pid) - before
    return samples, {n: c / runs for n, c in cpu.items() if n.split(" ")[0] in pids}


def report(
    phase: str,
    samples: dict[str, list[float]],
    cpu: dict[str, float],
    load: tuple[float, float],
    baselines: dict[str, Agent],
) -> None:
    print(f"{phase}: load average {load[0]:.2f} before, {load[1]:.2f} after")
    for name, s in samples.items():
        line = f"  {name:<16} p50 {pct(s, 0.5):6.2f} ms  p90 {pct(s, 0.9):6.2f}"
        line += f"  p99 {pct(s, 0.99):6.2f}"
        if name in cpu:
            line += f"  daemon CPU {cpu[name]:.2f} ms/event"
        print(line)
    daemons = sorted({name.split(" ")[0] for name in cpu}, key=lambda d: d != "hookd")
    for n in COUNTS:
        for agent in ["native", *baselines]:
            base = pct(samples[f"{agent} x{n}"], 0.5)
            ratios = [f"{d} {pct(samples[f'{d} x{n}'], 0.5) / base:.2f}" for d in daemons]
            print(f"  x{n} / {agent} (p50): " + ", ".join(ratios))


def stop_daemons(clients: dict[str, Client], daemons: dict[str, subprocess.Popen[bytes]]) -> None:
    """Close the clients, then stop each daemon and wait for it."""
    for client in clients.values():
        client.close()
    for daemon in daemons.values():
        daemon.terminate()
        daemon.wait(timeout=15)


def old_code(spec: str, base: Path) -> tuple[str, str]:
    """``--old NAME=REV`` or ``NAME=DIR``: the name, and a directory holding that code's
    ``hookd/`` (DIR itself, or ``REV`` archived under ``base``) to put first on PYTHONPATH."""
    name, _, rev = spec.partition("=")
    return name, rev if Path(rev, "hookd").is_dir() else old_tree(rev, base / f"src-{name}")


def old_tree(rev: str, dest: Path) -> str:
    dest.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "hookd"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return str(dest)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--pace-ms", type=float, default=5.0)
    parser.add_argument(
        "--old", action="append", default=[],
        help="NAME=REV (or NAME=DIR holding hookd/): also run that code as a daemon; repeatable",
    )  # fmt: skip
    parser.add_argument("--hogs", choices=("both", "quiet", "loaded"), default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hkpar", dir="/tmp") as tmp:
        base = Path(tmp)
        project = base / "project"
        project.mkdir()
        payload = json.dumps({**EVENT, "cwd": str(project)}).encode() + b"\n"
        daemons = {"hookd": start_daemon(base, "hookd", None)}
        for alt in args.old:
            name, tree = old_code(alt, base)
            daemons[name] = start_daemon(base, name, tree)
        clients = {name: Client(base / f"d-{name}" / "hookd.sock") for name in daemons}
        baselines = agents(base, payload)
        try:
            cases: dict[str, Callable[[], None]] = {}
            for n in COUNTS:
                cases[f"native x{n}"] = native(n, payload)
                for name, agent in baselines.items():
                    cases[f"{name} x{n}"] = agent.case(n)
                for name, client in clients.items():
                    cases[f"{name} x{n}"] = through(client, n, project)
            phases = ["quiet", "loaded"] if args.hogs == "both" else [args.hogs]
            print(f"{args.runs} interleaved samples each, pace {args.pace_ms} ms")
            for phase in phases:
                with cpu_hogs(2 if phase == "loaded" else 0) as hogs:
                    before = os.getloadavg()[0]
                    pids = {name: daemon.pid for name, daemon in daemons.items()}
                    samples, cpu = measure(cases, args.runs, args.pace_ms / 1000, pids)
                    after = os.getloadavg()[0]
                report(f"{phase} ({hogs} CPU hogs)", samples, cpu, (before, after), baselines)
        finally:
            for agent in baselines.values():
                agent.close()
            stop_daemons(clients, daemons)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Codex and Gemini per event: native command hooks vs the same hooks behind hookd's relay.

Run by hand (not part of the test suite):

    .venv/bin/python bench/agent_doors.py [--runs 100] [--agents codex,gemini]
                                          [--warm-counts 1] [--pace-ms 0]

What an agent without an in-process door pays per event is the processes it
spawns.  This bench times exactly that, and nothing of the agent around it:

* **the wired command line** — ``hookctl agents install codex|gemini`` is run
  for real (a private HOME, ``--relay`` the compiled relay built here by
  ``scripts/build-relay``, then again with ``--python-relay``) and the
  PreToolUse / BeforeTool command it writes is read back from the agent's own
  config file, so the bench times what the installer wires, not a copy of it;
* **the agent's real stdin** — the PreToolUse / BeforeTool input the pinned CLI
  sent, recorded in ``/work/shared/fixtures/agents/`` (or ``tests/data/agents``
  with ``--fixtures``), with ``cwd`` pointed at a private project directory;
* **the agent's way of spawning** — both run a hook with ``/bin/bash -c``
  (Gemini: observed, docs/agents.md; Codex 0.169.0: a hook reading its own
  ``/proc/$$/cmdline`` under the real CLI saw ``/bin/bash -c <command>``).
  Both start every matching hook of an
  event together, so N native hooks are N processes started at once and
  waited for together (stdin written, stdout and stderr read to EOF, reaped).

Configurations, per agent, all interleaved sample by sample (one of each per
iteration, order rotated per iteration, so drift on a shared machine lands on
all of them alike):

* native: N = 1, 3, 5 ``true`` command hooks (``true 1`` … ``true N``: distinct
  texts, since both agents and hookd run identical handlers once), and one
  ``python3 policy.py 1`` hook (row 6's small regex policy; with ``--warm-counts
  1,3``, also ``policy.py 1`` … ``policy.py N`` at once, the yardstick of N);
* hookd: one compiled relay process to a daemon that runs the same N ``true``
  command hooks, or N = 1, 3, 5 copies of the policy as in-daemon ``type:
  "python"`` hooks (worker pool, the default), and N = 0 (no hook: the door
  alone); the Python relay for N = 0 and 1 (its cost is its own start);
* hookd, the user's hook unchanged (issue 29 item 3): one compiled relay
  process to a daemon whose hook is the native row's very command,
  ``<python3> policy.py 1`` (``--warm-counts 1,3``: also ``policy.py 1`` …
  ``policy.py N``), which hookd runs in a warm interpreter
  (``hookd/handlers/warm_python.py``).  How many of those runs started warm,
  and why the others did not, is read from that daemon's audit log (the
  ``launch`` field of each run record), counting only the measured samples.

Reported per configuration: p50, p10..p90 and p99 in ms, and the machine's load
average before and after.  The goals checked (issue 19, same run):

* a user's N native hooks replaced by hookd cost no more per event than the
  cheapest one of them natively (N = 1: ``true`` for the ``true`` rows, one
  ``python3`` hook for the policy rows);
* the compiled relay with no hook ≤ 2x the agent's ``bash -c true``;
* (issue 29) the unchanged ``python3 policy.py`` hook through hookd ≤ 1/5 of the
  agent's own spawn of it (N of them: of the agent's N at once).

``--pace-ms`` idles before each sample, as an agent does between tool calls; by
default none: one event of each configuration per iteration already leaves the
warm daemon's spare the other ~25 samples' time to start again.

Results go to ``bench/results/agent_doors-<timestamp>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _util import BENCH, ROOT, DaemonProc, hookd_daemon, machine, pct
from cases import POLICY_HOOK
from claude_cli import NATIVE_POLICY
from relay_startup import build_compiled

HOOKCTL = ROOT / ".venv" / "bin" / "hookctl"
FIXTURES = Path("/work/shared/fixtures/agents")
COUNTS = (1, 3, 5)


@dataclass(frozen=True)
class Agent:
    """One agent's door: where its hooks live, how it names the event, how it spawns."""

    name: str
    fixture: str
    """The recorded input, relative to the fixtures directory."""
    event: str
    """The agent's name for the event (the key in its hooks config)."""
    shell: tuple[str, ...]
    config: str
    """The agent's hooks file, relative to HOME."""

    def native_config(self, commands: list[str]) -> dict[str, Any]:
        """The agent's hooks file with these commands in one group (no matcher: every tool)."""
        group = {"hooks": [{"type": "command", "command": c} for c in commands]}
        return {"hooks": {self.event: [group]}}


AGENTS = {
    "codex": Agent(
        "codex",
        "codex-0.169.0/PreToolUse.json",
        "PreToolUse",
        ("/bin/bash", "-c"),
        ".codex/hooks.json",
    ),
    "gemini": Agent(
        "gemini",
        "gemini-cli-0.61.0/BeforeTool.json",
        "BeforeTool",
        ("/bin/bash", "-c"),
        ".gemini/settings.json",
    ),
}


def wired_command(agent: Agent, relay_args: list[str], base: Path) -> str:
    """The command ``hookctl agents install <agent>`` writes for the event, read back.

    A native hook is in place before the install so that the real migration
    runs (it is moved into hookd's file, which this bench then writes itself
    with N copies)."""
    home = Path(tempfile.mkdtemp(prefix="home", dir=base))
    config = home / agent.config
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(agent.native_config(["true 1"])))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    subprocess.run(
        [str(HOOKCTL), "agents", "install", agent.name, "--user", *relay_args],
        env=env,
        cwd=home,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    moved = json.loads((home / ".config" / "hookd" / "hooks.json").read_text())
    assert moved["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "true 1", moved
    wired = json.loads(config.read_text())["hooks"][agent.event]
    command: str = wired[0]["hooks"][0]["command"]
    return command


def native_python(python: str, native_policy: Path, i: int) -> str:
    """The user's ``python3 policy.py`` command hook, as the native row spawns it."""
    return f"{python} {native_policy} {i}"


def hookd_hooks(
    kind: str, n: int, policy: Path, native_policy: Path, python: str
) -> dict[str, Any]:
    """hookd's user file holding the N hooks (as the installer moves them: one group)."""
    if n == 0:
        return {}
    if kind == "true":
        hooks = [{"type": "command", "command": f"true {i}"} for i in range(1, n + 1)]
    elif kind == "python3":
        hooks = [
            {"type": "command", "command": native_python(python, native_policy, i)}
            for i in range(1, n + 1)
        ]
    else:
        hooks = [{"type": "python", "callable": f"{policy}:check{i}"} for i in range(1, n + 1)]
    return {"PreToolUse": [{"hooks": hooks}]}


@dataclass(frozen=True)
class Config:
    """One measured configuration: these command lines, spawned together, per event."""

    agent: Agent
    commands: tuple[str, ...]
    stdin: bytes
    env: dict[str, str]
    cwd: Path


def spawn_all(config: Config) -> float:
    """Start every command together as the agent does, feed stdin, read to EOF, reap: ms."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [*config.agent.shell, command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=config.env,
            cwd=config.cwd,
        )
        for command in config.commands
    ]
    for proc in procs:
        proc.communicate(config.stdin, timeout=60)
    elapsed = (time.perf_counter() - start) * 1000
    failed = [p.returncode for p in procs if p.returncode not in (0,)]
    if failed:
        raise RuntimeError(f"{config.commands}: exit {failed}")
    return elapsed


def interleaved(configs: dict[str, Config], runs: int, pace: float = 0.0) -> dict[str, list[float]]:
    names = list(configs)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            if pace:
                time.sleep(pace)
            samples[name].append(spawn_all(configs[name]))
    return samples


def stats(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(pct(values, 0.5), 2),
        "p10_ms": round(pct(values, 0.1), 2),
        "p90_ms": round(pct(values, 0.9), 2),
        "p99_ms": round(pct(values, 0.99), 2),
    }


@contextmanager
def daemons(
    policy: Path, native_policy: Path, python: str, warm_counts: tuple[int, ...]
) -> Iterator[dict[tuple[str, int], DaemonProc]]:
    """One daemon per hookd configuration: no hook, N ``true`` / python hooks, and N of the
    user's ``python3 policy.py`` command hooks (run warm)."""
    with ExitStack() as stack:
        running = {("none", 0): stack.enter_context(hookd_daemon({}, watch=False))}
        counts = {"true": COUNTS, "python": COUNTS, "python3": warm_counts}
        for kind, ns in counts.items():
            for n in ns:
                hooks = hookd_hooks(kind, n, policy, native_policy, python)
                running[(kind, n)] = stack.enter_context(hookd_daemon(hooks, watch=False))
        yield running


def launches(daemon: DaemonProc) -> dict[str, int]:
    """How the daemon's hook runs so far started: ``warm``, or ``cold: <why>`` (audit log)."""
    counts: dict[str, int] = {}
    directory = daemon.root / "state" / "audit"
    for path in sorted(directory.glob("audit.jsonl*")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "run":
                launch = str(record.get("launch", "?"))
                counts[launch] = counts.get(launch, 0) + 1
    return counts


def launches_since(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0)}


def build_configs(
    agents: list[Agent],
    base: Path,
    compiled: Path | None,
    running: dict[tuple[str, int], DaemonProc],
    fixtures: Path,
    python: str,
    warm_counts: tuple[int, ...],
) -> dict[str, Config]:
    python3 = python
    native_policy = base / "policy.py"
    configs: dict[str, Config] = {}
    for agent in agents:
        relays = {}
        if compiled is not None:
            relays["compiled"] = wired_command(agent, ["--relay", str(compiled)], base)
        relays["python"] = wired_command(agent, ["--python-relay"], base)
        # Any daemon's project directory and env serve the native rows (no daemon involved).
        some = running[("none", 0)]
        payload = json.loads((fixtures / agent.fixture).read_bytes())
        payload["cwd"] = str(some.root / "project")
        stdin = json.dumps(payload).encode()
        env = some.env()
        for n in COUNTS:
            configs[f"{agent.name} native true x{n}"] = Config(
                agent,
                tuple(f"true {i}" for i in range(1, n + 1)),
                stdin,
                env,
                some.root / "project",
            )
        # One native python3 hook only: the yardstick of the policy rows (3 and 5 of them
        # natively are 3 and 5 interpreters at once, ~0.5 s each on this loaded box).
        configs[f"{agent.name} native python3 x1"] = Config(
            agent, (native_python(python3, native_policy, 1),), stdin, env, some.root / "project"
        )
        # N of them only as the yardstick of N unchanged hooks through hookd (--warm-counts).
        for n in warm_counts:
            if n > 1:
                configs[f"{agent.name} native python3 x{n}"] = Config(
                    agent,
                    tuple(native_python(python3, native_policy, i) for i in range(1, n + 1)),
                    stdin,
                    env,
                    some.root / "project",
                )
        for relay, command in relays.items():
            for (kind, n), daemon in running.items():
                if relay == "python" and (n not in (0, 1) or kind == "python3"):
                    continue  # the Python relay's cost is its start: N = 1 shows it
                label = {"none": "no hook", "python3": f"python3 command x{n} (warm)"}.get(
                    kind, f"{kind} x{n}"
                )
                payload["cwd"] = str(daemon.root / "project")
                configs[f"{agent.name} {relay} relay, {label}"] = Config(
                    agent,
                    (command,),
                    json.dumps(payload).encode(),
                    {**daemon.env(), "HOOKD_SOCKET": str(daemon.socket)},
                    daemon.root / "project",
                )
    return configs


def goals(
    agents: list[Agent], p50: dict[str, float], relays: list[str], warm_counts: tuple[int, ...]
) -> list[dict[str, Any]]:
    """Issue 19's goals for these doors, as rows: what, hookd, yardstick, ratio, met."""
    rows: list[dict[str, Any]] = []

    def row(what: str, hookd: str, yardstick: str, limit: float) -> None:
        ratio = p50[hookd] / p50[yardstick]
        rows.append(
            {
                "goal": what,
                "hookd": hookd,
                "hookd_p50_ms": round(p50[hookd], 2),
                "yardstick": yardstick,
                "yardstick_p50_ms": round(p50[yardstick], 2),
                "ratio": round(ratio, 2),
                "limit": limit,
                "met": ratio <= limit,
            }
        )

    for agent in agents:
        a = agent.name
        for relay in relays:
            row(
                "door alone <= 2x shell -c true",
                f"{a} {relay} relay, no hook",
                f"{a} native true x1",
                2.0,
            )
            for n in COUNTS if relay == "compiled" else (1,):
                row(
                    f"{n} true hooks via hookd <= 1 native true",
                    f"{a} {relay} relay, true x{n}",
                    f"{a} native true x1",
                    1.0,
                )
                row(
                    f"{n} python hooks via hookd <= 1 native python3",
                    f"{a} {relay} relay, python x{n}",
                    f"{a} native python3 x1",
                    1.0,
                )
        if "compiled" in relays:
            for n in warm_counts:
                row(
                    f"{n} unchanged python3 command hooks via hookd <= 1/5 of the same natively",
                    f"{a} compiled relay, python3 command x{n} (warm)",
                    f"{a} native python3 x{n}",
                    0.2,
                )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)  # ~5 min at load 15 on 2 cores
    parser.add_argument("--agents", default="codex,gemini")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    # The interpreter itself, not a version manager's shim (pyenv's adds ~0.3 s here).
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    parser.add_argument(
        "--warm-counts", default="1", help="N of the unchanged python3 command hooks: 1,3,5"
    )
    parser.add_argument("--pace-ms", type=float, default=0.0)
    args = parser.parse_args()
    agents = [AGENTS[name] for name in args.agents.split(",")]
    warm_counts = tuple(int(n) for n in args.warm_counts.split(",") if n)

    with tempfile.TemporaryDirectory(prefix="hkad", dir="/tmp") as tmp:
        base = Path(tmp)
        compiled = build_compiled(base)
        (base / "policy.py").write_text(NATIVE_POLICY)
        policy = base / "policy_hook.py"
        # N distinct callables (hookd runs identical handlers once per event).
        policy.write_text(POLICY_HOOK + "".join(f"\ncheck{i} = check\n" for i in range(1, 6)))
        with daemons(policy, base / "policy.py", args.python, warm_counts) as running:
            configs = build_configs(
                agents, base, compiled, running, args.fixtures, args.python, warm_counts
            )
            pace = args.pace_ms / 1000
            interleaved(configs, 5, pace)  # warm the page cache, the daemons and their workers
            warm = {n: running[("python3", n)] for n in warm_counts}
            launched_before = {n: launches(d) for n, d in warm.items()}
            load_before = os.getloadavg()
            started = time.time()
            samples = interleaved(configs, args.runs, pace)
            seconds = time.time() - started
            load_after = os.getloadavg()
            launched = {n: launches_since(launched_before[n], launches(d)) for n, d in warm.items()}

    results = {name: stats(values) for name, values in samples.items()}
    p50 = {name: pct(values, 0.5) for name, values in samples.items()}
    relays = (["compiled"] if compiled is not None else []) + ["python"]
    checked = goals(agents, p50, relays, warm_counts)
    for name, s in results.items():
        print(
            f"{name:<50} p50 {s['p50_ms']:7.2f}  p10..p90 {s['p10_ms']:.2f}..{s['p90_ms']:.2f}"
            f"  p99 {s['p99_ms']:.2f} ms (n={s['n']})"
        )
    print(f"load average before {load_before}, after {load_after}; {seconds:.0f} s")
    for n, counts in launched.items():
        print(f"python3 command x{n} daemon, measured runs (all agents): {counts}")
    for g in checked:
        verdict = "met" if g["met"] else "MISSED"
        print(
            f"{g['hookd']:<50} {g['hookd_p50_ms']:6.2f} / {g['yardstick']:<24} "
            f"{g['yardstick_p50_ms']:6.2f} = {g['ratio']:.2f}x (<= {g['limit']}x) {verdict}"
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = BENCH / "results" / f"agent_doors-{stamp}.json"
    out.write_text(
        json.dumps(
            {
                "machine": machine(),
                "runs": args.runs,
                "seconds": round(seconds),
                "load_before": load_before,
                "load_after": load_after,
                "pace_ms": args.pace_ms,
                "python": args.python,
                "warm_launches": {str(n): counts for n, counts in launched.items()},
                "results": results,
                "goals": checked,
            },
            indent=1,
        )
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Warm Python (issue 29): an unchanged ``python3 policy.py`` hook, natively vs through hookd.

Run by hand (not part of the test suite):

    .venv/bin/python bench/warm_python.py [--runs 200] [--pace-ms 30] [--old NAME=REV]
                                          [--hogs both|quiet|loaded]

The hook is the one users write: read the event from stdin, ``json`` + ``re``, print a JSON
deny for ``rm -rf``. It is timed, interleaved in one run (order rotated per iteration), as:

* **native**: what the agent does — ``/bin/sh -c '<interpreter> policy.py'`` with the event on
  stdin, spawn to exit, for each interpreter: the system one (``/usr/bin/python3``), a venv's
  (``python -m venv``), when there is one a version manager's shim on PATH (pyenv), and
  ``uv run --script`` (PEP 723) when uv is installed;
* **through hookd, warm**: a client on a kept-alive connection fires the event at a real
  ``hookd serve`` whose hook is that same command; event to reply;
* **through hookd, cold**: the same against a second daemon with ``--no-warm-python``;
* **NAME**, with ``--old NAME=REV``: warm through a daemon running the code of ``REV``
  (``git archive``, first on ``PYTHONPATH``; or ``NAME=DIR`` holding ``hookd/``) — before →
  after in one run.

Each phase runs quiet, then with two CPU hogs (``python3 -c 'while True: pass'``), and prints
the load average: the machine is shared.

On a machine others are using, ``chrt -f 5 .venv/bin/python bench/warm_python.py --hogs quiet``
runs every process of the bench at one real-time priority, so that theirs cannot interleave
(never with ``loaded`` or ``both``: the hogs would inherit it). It flatters every warm row — a
woken process finds a core already awake, where on an idle VM its vCPU had halted — so compare
rows of one run, and say which way it ran (docs/performance.md, "Cutting the quiet floor").

``--pace-ms`` idles between iterations, as an agent does between tool calls (a warm spare is
started after each use and needs ~15 ms to be ready; an event that comes sooner waits for it;
the report counts cold and warm runs from the audit log). Also reported: each warm spare's RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from parallel_spawns import cpu_hogs, old_code

from hookd_client.client import Client

ROOT = Path(__file__).resolve().parents[1]
EVENT = json.loads((ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json").read_bytes())
POLICY = """\
import json, re, sys
data = json.load(sys.stdin)
if re.search(r"rm -rf", data.get("tool_input", {}).get("command", "")):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "deny", "permissionDecisionReason": "no rm -rf"}}))
"""


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def start_daemon(
    base: Path, name: str, hooks: dict[str, str], *flags: str, pythonpath: str | None = None
) -> subprocess.Popen[bytes]:
    """``hookd serve`` in ``base/name`` with one PreToolUse hook per tool name (the code
    under ``pythonpath``, when given)."""
    home = base / name
    (home / "config" / "hookd").mkdir(parents=True)
    groups = [
        {"matcher": tool, "hooks": [{"type": "command", "command": command}]}
        for tool, command in hooks.items()
    ]
    (home / "config" / "hookd" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": groups}})
    )
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
        [sys.executable, "-c", launch, "serve", "--socket", str(sock),
         "--no-watch", "--log-level", "warning", "--policy-file", str(base / "none.json"), *flags],
        env=env, cwd=str(base),
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not sock.exists():
        if time.monotonic() > deadline or daemon.poll() is not None:
            raise SystemExit(f"hookd ({name}) did not start")
        time.sleep(0.05)
    return daemon


def native(command: str, cwd: Path) -> Callable[[], None]:
    payload = json.dumps({**EVENT, "cwd": str(cwd)}).encode()

    def run() -> None:
        subprocess.run(["/bin/sh", "-c", command], input=payload, cwd=cwd,
                       stdout=subprocess.DEVNULL, check=False)  # fmt: skip

    return run


def through(client: Client, tool: str, cwd: Path) -> Callable[[], None]:
    payload = {**EVENT, "cwd": str(cwd), "tool_name": tool, "tool_input": {"command": "rm -rf /"}}

    def run() -> None:
        reply = client.fire("PreToolUse", payload, env=dict(os.environ))
        assert reply.result.decision == "deny", reply.result

    return run


def launches(base: Path, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    audit = base / name / "state" / "hookd" / "audit" / "audit.jsonl"
    for line in audit.read_text().splitlines():
        record = json.loads(line)
        if record.get("kind") == "run":
            launch = str(record.get("launch", "?"))
            key = "warm" if launch == "warm" else launch.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
    return counts


def spare_rss(daemon: subprocess.Popen[bytes]) -> list[int]:
    """RSS (KiB) of the daemon's children that are warm spares (python ``-c`` bootstraps)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(next(x for x in status.splitlines() if x.startswith("PPid:")).split()[1])
        if ppid == daemon.pid and b"What a warm Python" in cmdline:
            rss = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
            found.append(int(rss.split()[1]))
    return found


def measure(cases: dict[str, Callable[[], None]], runs: int, pace: float) -> dict[str, list[float]]:
    """``runs`` samples of every case, interleaved, the order rotated each round; the first
    five rounds (they start the spares) are not kept."""
    names = list(cases)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for i in range(runs + 5):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            time.sleep(pace)
            start = time.perf_counter()
            cases[name]()
            if i >= 5:
                samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def report(
    phase: str,
    samples: dict[str, list[float]],
    commands: dict[str, str],
    warm_names: list[str],
    load: tuple[float, float],
) -> None:
    print(f"{phase}: load average {load[0]:.1f} before, {load[1]:.1f} after")
    for name, s in samples.items():
        print(f"  {name:<34} p50 {pct(s, 0.5):7.2f} ms  p99 {pct(s, 0.99):7.2f} ms")
    for tool in commands:
        native_p50 = pct(samples[f"{tool}: native (sh -c)"], 0.5)
        ratios = ", ".join(
            f"{warm} {pct(samples[f'{tool}: {warm}'], 0.5) / native_p50:.3f}" for warm in warm_names
        )
        print(f"  {tool}: warm / native (p50): {ratios}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pace-ms", type=float, default=30.0)
    parser.add_argument(
        "--old", action="append", default=[],
        help="NAME=REV (or NAME=DIR holding hookd/): also run that code, warm; repeatable",
    )  # fmt: skip
    parser.add_argument("--hogs", choices=("both", "quiet", "loaded"), default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hkwarm", dir="/tmp") as tmp:
        base = Path(tmp)
        project = base / "project"
        project.mkdir()
        (project / "policy.py").write_text(POLICY)
        venv = base / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        interpreters = {"system": "/usr/bin/python3", "venv": f"{venv}/bin/python"}
        shim = shutil.which("python3")
        if shim and "shims" in shim:
            interpreters["pyenv shim"] = shim
        commands = {tool: f"{path} policy.py" for tool, path in interpreters.items()}
        uv = Path(sys.executable).parent / "uv"
        if uv.exists():
            (project / "uv_policy.py").write_text(
                '# /// script\n# requires-python = ">=3.10"\n# dependencies = []\n# ///\n' + POLICY
            )
            commands["uv run --script"] = f"{uv} run --script uv_policy.py"
        daemons = {"warm": start_daemon(base, "warm", commands)}
        daemons["cold"] = start_daemon(base, "cold", commands, "--no-warm-python")
        for alt in args.old:
            name, tree = old_code(alt, base)
            daemons[name] = start_daemon(base, name, commands, pythonpath=tree)
        warm_names = [
            "hookd warm",
            *(f"{name} warm" for name in daemons if name not in ("warm", "cold")),
        ]
        clients = {name: Client(base / name / "hookd.sock") for name in daemons}
        try:
            cases: dict[str, Callable[[], None]] = {}
            for tool, command in commands.items():
                cases[f"{tool}: native (sh -c)"] = native(command, project)
                for name, client in clients.items():
                    label = {"warm": "hookd warm", "cold": "hookd cold"}.get(name, f"{name} warm")
                    cases[f"{tool}: {label}"] = through(client, tool, project)
            phases = ["quiet", "loaded"] if args.hogs == "both" else [args.hogs]
            print(f"{args.runs} interleaved samples each, pace {args.pace_ms} ms")
            for phase in phases:
                with cpu_hogs(2 if phase == "loaded" else 0) as hogs:
                    before = os.getloadavg()[0]
                    samples = measure(cases, args.runs, args.pace_ms / 1000)
                    after = os.getloadavg()[0]
                report(f"{phase} ({hogs} CPU hogs)", samples, commands, warm_names,
                       (before, after))  # fmt: skip
            rss = spare_rss(daemons["warm"])
        finally:
            for client in clients.values():
                client.close()
            for daemon in daemons.values():
                daemon.terminate()
                daemon.wait(timeout=15)
        for name in daemons:
            if name != "cold":
                print(f"  {name} daemon's runs: {launches(base, name)}")
        print(f"  warm spares' RSS: {sorted(rss)} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

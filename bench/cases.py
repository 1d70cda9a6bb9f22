"""The benchmark rows: each pairs hookd with its baseline, measured in the same run.

Every function takes a :class:`Plan` (sizes for ``--quick`` or a full run) and
returns a row dict: ``hookd`` and ``baseline`` figures, their ratio, the goal
and whether it was met (``None`` when the row could not be measured; ``note``
then says why).  Latencies are microseconds unless a key says ``ms``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from _util import (
    BENCH,
    PYTHON,
    ROOT,
    DaemonProc,
    RawClient,
    event_in,
    floor_server,
    hookd_daemon,
    pct,
    ratio,
    rss_kb,
    summary,
    tempdir,
    time_fires,
)

from hookd_client import protocol

Row = dict[str, Any]


@dataclass(frozen=True)
class Plan:
    quick: bool
    latency_n: int
    rounds: int
    budget_s: float
    tp_seconds: float
    spawn_n: int
    reloads: int
    relay_n: int
    scale_n: int

    @classmethod
    def make(cls, quick: bool) -> Plan:
        if quick:
            return cls(True, 1500, 2, 3.0, 1.5, 60, 8, 30, 300)
        return cls(False, 4000, 5, 8.0, 4.0, 300, 30, 150, 1500)


def _row(number: str, name: str, **fields: Any) -> Row:
    return {"row": number, "name": name, **fields}


def _interleaved(
    pairs: list[tuple[RawClient, str, dict[str, Any]]], plan: Plan
) -> list[list[float]]:
    """Alternate blocks between targets, so drift on a noisy box hits all of them alike."""
    pooled: list[list[float]] = [[] for _ in pairs]
    for _ in range(plan.rounds):
        for i, (client, event, payload) in enumerate(pairs):
            pooled[i] += time_fires(client, event, payload, plan.latency_n, plan.budget_s)
    return pooled


# --- 1. no-hook event vs the trio+msgspec floor ----------------------------------------


def no_hook(plan: Plan) -> Row:
    with floor_server() as floor, hookd_daemon() as d:
        payload = event_in(d.root / "project")
        fc, hc = RawClient(floor), d.client()
        f, h = _interleaved([(fc, "PreToolUse", payload), (hc, "PreToolUse", payload)], plan)
    fs, hs = summary(f), summary(h)
    r50 = ratio(hs["p50_us"], fs["p50_us"])
    return _row(
        "1",
        "no-hook event (client→daemon→reply)",
        hookd=hs,
        baseline={"name": "bare trio+msgspec echo (bench/echo_floor.py)", **fs},
        ratio_p50=r50,
        goal="p50 ≤ 1.5× floor, p99 ≤ 100 µs",
        met=r50 <= 1.5 and hs["p99_us"] <= 100,
    )


# --- 2. throughput with 1, 8, 64 client processes --------------------------------------


def _load(path: Path, clients: int, seconds: float, event: str, payload: dict[str, Any]) -> Row:
    start_at = time.monotonic() + 1.0 + clients * 0.05
    arg = json.dumps(payload)
    procs = [
        subprocess.Popen(
            [PYTHON, str(BENCH / "loadgen.py"), str(path), str(start_at), str(seconds), event, arg],
            stdout=subprocess.PIPE,
        )
        for _ in range(clients)
    ]
    outs: list[dict[str, Any]] = []
    failed = 0
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=seconds + 60)
            outs.append(json.loads(out))
        except (subprocess.TimeoutExpired, json.JSONDecodeError):
            proc.kill()
            failed += 1
    events = sum(o["events"] for o in outs)
    elapsed = max((o["elapsed"] for o in outs), default=seconds)
    samples = [s for o in outs for s in o["samples"]]
    return {
        "clients": clients,
        "events_per_s": round(events / elapsed),
        "p50_us": round(pct(samples, 0.5) * 1e6, 1),
        "p99_us": round(pct(samples, 0.99) * 1e6, 1),
        "errors": sum(o["errors"] for o in outs),
        "lost": sum(o["lost"] for o in outs) + failed,
        "events": events,
    }


def throughput(plan: Plan) -> Row:
    results: dict[str, Any] = {"hookd": [], "baseline": []}
    with floor_server() as floor, hookd_daemon() as d:
        payload = event_in(d.root / "project")
        for n in (1, 8, 64):
            results["baseline"].append(_load(floor, n, plan.tp_seconds, "PreToolUse", payload))
            results["hookd"].append(_load(d.socket, n, plan.tp_seconds, "PreToolUse", payload))
    at8 = results["hookd"][1]
    at64 = results["hookd"][2]
    return _row(
        "2",
        "throughput, no-hook events, 1/8/64 client processes",
        hookd=results["hookd"],
        baseline={"name": "bare trio+msgspec echo", "runs": results["baseline"]},
        ratio_8=ratio(at8["events_per_s"], results["baseline"][1]["events_per_s"]),
        goal="≥ 25,000 events/s with 8 clients; no error or lost reply at 64",
        met=at8["events_per_s"] >= 25_000 and at64["errors"] == 0 and at64["lost"] == 0,
    )


# --- 3. one in-daemon python hook -------------------------------------------------------

POLICY_HOOK = '''
import re

_DANGEROUS = re.compile(r"\\brm\\s+-rf\\s+/|\\bcurl\\b.*\\|\\s*sh\\b|\\bmkfs\\b")


def check(event):
    """A small realistic policy: deny dangerous shell commands, allow the rest."""
    raw = event.raw if hasattr(event, "raw") else event
    if raw.get("tool_name") != "Bash":
        return None
    command = raw.get("tool_input", {}).get("command", "")
    if _DANGEROUS.search(command):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "dangerous"}}
    return None
'''


def python_hook(plan: Plan) -> Row:
    with tempdir("hkp") as tmp:
        hook = tmp / "policy_hook.py"
        hook.write_text(POLICY_HOOK)
        hooks = {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "python", "callable": f"{hook}:check"}]}
            ]
        }
        with floor_server() as floor, hookd_daemon(hooks) as d:
            payload = event_in(d.root / "project")
            hc = d.client()
            probe = hc.fire("PreToolUse", payload).result
            bad = probe.errors or [h.error for h in probe.hooks if h.outcome != "success"]
            if bad or not probe.hooks:
                return _row(
                    "3",
                    "one in-daemon python hook",
                    met=None,
                    goal="p50 ≤ 2× floor",
                    note=f"not measured: the daemon did not run the hook ({bad or 'no run'})",
                )
            fc = RawClient(floor)
            f, h = _interleaved([(fc, "PreToolUse", payload), (hc, "PreToolUse", payload)], plan)
    fs, hs = summary(f), summary(h)
    r50 = ratio(hs["p50_us"], fs["p50_us"])
    return _row(
        "3",
        "one in-daemon python hook (worker pool)",
        hookd=hs,
        baseline={"name": "bare trio+msgspec echo", **fs},
        ratio_p50=r50,
        goal="p50 ≤ 2× floor",
        met=r50 <= 2.0,
    )


# --- 4. one command hook vs bare spawn vs Claude Code's way ----------------------------


def _posix_spawn(argv: list[str], stdin: bytes) -> float:
    """posix_spawn with stdin/stdout pipes; write stdin, read stdout to EOF, reap."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        argv,
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, in_r, 0),
            (os.POSIX_SPAWN_DUP2, out_w, 1),
            (os.POSIX_SPAWN_CLOSE, in_w),
            (os.POSIX_SPAWN_CLOSE, out_r),
        ],
    )
    os.close(in_r)
    os.close(out_w)
    os.write(in_w, stdin)
    os.close(in_w)
    while os.read(out_r, 65536):
        pass
    os.close(out_r)
    os.waitpid(pid, 0)
    return time.perf_counter() - start


def _bare_spawn(
    command: str, stdin: bytes, n: int, budget: float, shell: bool = True
) -> list[float]:
    argv = ["/bin/sh", "-c", command] if shell else [shutil.which(command) or command]
    for _ in range(10):
        _posix_spawn(argv, stdin)
    out: list[float] = []
    deadline = time.perf_counter() + budget
    for _ in range(n):
        out.append(_posix_spawn(argv, stdin))
        if time.perf_counter() > deadline:
            break
    return out


def _js_spawn(runtime: str, command: str, stdin: bytes, n: int, budget: float) -> list[float]:
    with tempdir("hkn") as tmp:
        (tmp / "stdin.json").write_bytes(stdin)
        proc = subprocess.run(
            [
                runtime,
                str(BENCH / "spawn_node.js"),
                command,
                str(n),
                str(budget),
                str(tmp / "stdin.json"),
            ],
            capture_output=True,
            timeout=budget + 60,
            check=True,
        )
    samples: list[float] = json.loads(proc.stdout)
    return samples


def bun_path() -> str | None:
    local = BENCH / ".tools" / "node_modules" / "@oven" / "bun-linux-x64" / "bin" / "bun"
    if local.exists():
        return str(local)
    return shutil.which("bun")


def _ms(samples: list[float]) -> dict[str, float]:
    return {
        "n": len(samples),
        "p50_ms": round(pct(samples, 0.5) * 1e3, 3),
        "p99_ms": round(pct(samples, 0.99) * 1e3, 3),
    }


def command_hook(plan: Plan) -> Row:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat"}]}]}
    with hookd_daemon(hooks) as d:
        payload = event_in(d.root / "project")
        stdin = msgspec.json.encode(payload) + b"\n"
        hc = d.client()
        probe = hc.fire("PreToolUse", payload).result
        ok = len(probe.hooks) == 1 and probe.hooks[0].exit_code == 0
        h: list[float] = []
        bare: list[float] = []
        direct: list[float] = []
        node: list[float] = []
        bun: list[float] = []
        bun_bin = bun_path()
        per_round = max(10, plan.spawn_n // plan.rounds)
        for _ in range(plan.rounds):
            h += time_fires(hc, "PreToolUse", payload, per_round, plan.budget_s, warmup=5)
            bare += _bare_spawn("cat", stdin, per_round, plan.budget_s)
            direct += _bare_spawn("cat", stdin, per_round, plan.budget_s, shell=False)
            node += _js_spawn("node", "cat", stdin, per_round, plan.budget_s)
            if bun_bin:
                bun += _js_spawn(bun_bin, "cat", stdin, per_round, plan.budget_s)
    hs, bs, ns = _ms(h), _ms(bare), _ms(node)
    # hookd starts a simple command like `cat` without /bin/sh (direct_exec.py); the
    # goal is judged against the shell spawn, as Claude Code runs hooks, and the
    # no-shell spawn is reported beside it so the shell's share is visible.
    baseline: dict[str, Any] = {
        "bare_posix_spawn": bs,
        "bare_posix_spawn_no_shell": _ms(direct),
        "node_spawn_shell": ns,
    }
    cc_p50 = ns["p50_ms"]
    if bun:
        baseline["bun_spawn_shell"] = _ms(bun)
        cc_p50 = baseline["bun_spawn_shell"]["p50_ms"]
    r_bare = ratio(hs["p50_ms"], bs["p50_ms"])
    return _row(
        "4",
        "one command hook (`cat`, event on stdin) event→reply",
        hookd=hs,
        baseline=baseline,
        ratio_p50=r_bare,
        ratio_vs_cc=ratio(hs["p50_ms"], cc_p50),
        ratio_no_shell=ratio(hs["p50_ms"], baseline["bare_posix_spawn_no_shell"]["p50_ms"]),
        goal="≤ 1.3× bare posix_spawn; ≤ Claude Code's spawn (bun, else node)",
        met=ok and r_bare <= 1.3 and hs["p50_ms"] <= cc_p50,
        note=None if ok else f"hook did not succeed: {probe.hooks}",
    )


# --- 5. eight parallel command hooks ----------------------------------------------------


def parallel_hooks(plan: Plan) -> Row:
    """Eight `cat` hooks on one event; and a no-hook event's latency while another process
    fires those events back to back, beside the same for a bare echo server (the floor).

    The storm of 8-hook events keeps both cores busy (eight processes per event), so any
    process's wake-up waits for a CPU there: a bare trio echo server
    (``bench/echo_floor.py``) timed in the same storm went from p99 ~0.22 ms idle to
    ~2.4 ms (docs/performance.md, "Fourth pass: row 5").  The floor is timed in blocks
    alternating with hookd's, idle and during the storm, so both see the same box; it says
    what the box allows, and the goal stays the issue's (hookd's busy p99 ≤ 2× its idle)."""
    group = [{"type": "command", "command": f"cat # {i}"} for i in range(8)]
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": group}]}
    with floor_server() as floor_sock, hookd_daemon(hooks) as d:
        payload = event_in(d.root / "project")
        quiet = event_in(d.root / "project", tool_name="Read", tool_input={"file_path": "/x"})
        hc, fc = d.client(), RawClient(floor_sock)
        probe = hc.fire("PreToolUse", payload).result
        ok = len(probe.hooks) == 8 and all(r.exit_code == 0 for r in probe.hooks)
        eight = time_fires(hc, "PreToolUse", payload, plan.spawn_n, plan.budget_s * 2, warmup=5)
        blocks = 10
        per_block = max(1, plan.latency_n // blocks)
        block_s = plan.budget_s / blocks
        targets = [(hc, 50), (fc, 50)]
        idle, floor_idle = _alternated(targets, quiet, blocks, per_block, block_s)
        # The 8-hook event keeps firing from another process while we time no-hook events.
        seconds = plan.budget_s * 2 + 2.0
        start_at = time.monotonic() + 0.5
        load = subprocess.Popen(
            [
                PYTHON,
                str(BENCH / "loadgen.py"),
                str(d.socket),
                str(start_at),
                str(seconds),
                "PreToolUse",
                json.dumps(payload),
            ],
            stdout=subprocess.PIPE,
        )
        time.sleep(max(0.0, start_at - time.monotonic()) + 0.3)
        targets = [(hc, 0), (fc, 0)]
        busy, floor_busy = _alternated(targets, quiet, blocks, per_block, block_s)
        load.terminate()
        out, _ = load.communicate(timeout=seconds + 60)
        spawns = json.loads(out)
    es, i_s, b_s = _ms(eight), summary(idle), summary(busy)
    fi_s, fb_s = summary(floor_idle), summary(floor_busy)
    p99_ratio = ratio(b_s["p99_us"], i_s["p99_us"])
    return _row(
        "5",
        "8 parallel command hooks (`cat`) on one event",
        hookd={**es, "spawns_per_s": round(8 / pct(eight, 0.5))},
        baseline={
            "no_hook_idle": i_s,
            "no_hook_during_8_hook_events": b_s,
            "8_hook_events_meanwhile": spawns["events"],
            "no_hook_floor_idle": fi_s,
            "no_hook_floor_during_8_hook_events": fb_s,
        },
        ratio_p99_busy_vs_idle=p99_ratio,
        floor_ratio_p99_busy_vs_idle=ratio(fb_s["p99_us"], fi_s["p99_us"]),
        goal="≤ 6 ms p50 (≥ 1,300 spawns/s); no-hook p99 meanwhile ≤ 2× idle",
        met=ok and es["p50_ms"] <= 6.0 and p99_ratio <= 2.0,
        note=None if ok else "the 8 hooks did not all succeed",
    )


def _alternated(
    targets: list[tuple[RawClient, int]],
    payload: dict[str, Any],
    blocks: int,
    per_block: int,
    block_s: float,
) -> tuple[list[float], list[float]]:
    """No-hook fires at two servers in alternating blocks (first block's warm-up each)."""
    pooled: list[list[float]] = [[] for _ in targets]
    for block in range(blocks):
        for i, (client, warmup) in enumerate(targets):
            pooled[i] += time_fires(
                client, "PreToolUse", payload, per_block, block_s, warmup if block == 0 else 0
            )
    return pooled[0], pooled[1]


# --- 7. hot reload ----------------------------------------------------------------------


def hot_reload(plan: Plan) -> Row:
    """Save a new hooks file; time until a fired event runs the new hook, events flowing."""

    def config(generation: int) -> dict[str, Any]:
        return {
            "PreToolUse": [
                {"matcher": f"Probe{generation}", "hooks": [{"type": "command", "command": "true"}]}
            ]
        }

    with hookd_daemon(config(0)) as d:
        base = event_in(d.root / "project")
        seconds = plan.reloads * 0.6 + 10
        start_at = time.monotonic() + 0.5
        load = subprocess.Popen(
            [
                PYTHON,
                str(BENCH / "loadgen.py"),
                str(d.socket),
                str(start_at),
                str(seconds),
                "PreToolUse",
                json.dumps(base),
            ],
            stdout=subprocess.PIPE,
        )
        time.sleep(1.0)
        hc = d.client()
        latencies: list[float] = []
        misses = 0
        for gen in range(1, plan.reloads + 1):
            probe = {**base, "tool_name": f"Probe{gen}", "tool_input": {}}
            d.write_hooks(config(gen))
            saved = time.perf_counter()
            seen = None
            while time.perf_counter() - saved < 5.0:
                sent = time.perf_counter()
                if hc.fire("PreToolUse", probe).result.hooks:
                    seen = sent
                    break
                time.sleep(0.0005)
            if seen is None:
                misses += 1
            else:
                latencies.append(seen - saved)
            time.sleep(0.2)
        load.terminate()
        out, _ = load.communicate(timeout=60)
        flow = json.loads(out)
    ls = _ms(latencies)
    failed = flow["errors"] + flow["lost"] + misses
    return _row(
        "7",
        "hot reload: file saved → next event sees the new hooks",
        hookd={
            **ls,
            "events_meanwhile": flow["events"],
            "failed_events": failed,
            "reloads_not_seen_in_5s": misses,
        },
        baseline={"name": "Claude Code (observed): ~1.1 s", "p50_ms": 1100.0},
        goal="p50 ≤ 50 ms; 0 failed events",
        met=ls["p50_ms"] <= 50 and failed == 0,
    )


# --- 8. relay ---------------------------------------------------------------------------


def relay(plan: Plan) -> Row:
    """The relay exactly as ``hookctl claude install`` writes it (bootstrap importing the
    cached bytecode), beside the bare interpreter; the script form is a side figure."""
    sys.path.insert(0, str(BENCH))
    import relay_startup

    from hookd.installers.claude_settings import relay_bootstrap

    with hookd_daemon() as d:
        python = os.path.realpath(sys.executable)
        env = d.env()
        sock = str(d.socket)
        boot = relay_bootstrap(str(relay_startup.RELAY))
        bare_cmd = [python, "-I", "-S", "-c", "pass"]
        relay_cmd = [python, "-I", "-S", "-c", boot, "PreToolUse", "--socket", sock]
        script_cmd = [python, "-I", "-S", str(relay_startup.RELAY), "PreToolUse", "--socket", sock]
        relay_startup._time(relay_cmd, 5, env)
        bare: list[float] = []
        rel: list[float] = []
        script: list[float] = []
        per = max(5, plan.relay_n // plan.rounds)
        for _ in range(plan.rounds):
            bare += relay_startup._time(bare_cmd, per, env)
            rel += relay_startup._time(relay_cmd, per, env)
            script += relay_startup._time(script_cmd, max(3, per // 3), env)
    b50, r50 = pct(bare, 0.5), pct(rel, 0.5)
    return _row(
        "8",
        "hookd-relay per event (whole process, as installed) vs python3 -I -S -c pass",
        hookd={
            "n": len(rel),
            "p50_ms": round(r50, 2),
            "p99_ms": round(pct(rel, 0.99), 2),
            "as_script_p50_ms": round(pct(script, 0.5), 2),
        },
        baseline={
            "name": "python3 -I -S -c pass (same interpreter)",
            "n": len(bare),
            "p50_ms": round(b50, 2),
            "p99_ms": round(pct(bare, 0.99), 2),
        },
        ratio_p50=ratio(r50, b50),
        goal="≤ 1.3× bare interpreter",
        met=r50 / b50 <= 1.3,
    )


# --- 8b. compiled relay ------------------------------------------------------------------


def relay_compiled(plan: Plan) -> Row:
    """relay/hookd-relay.c as ``hookctl claude install`` writes it, against the cheapest
    native command hook (``sh -c true``), interleaved sample by sample with the Python
    relay and the bare interpreter so that all four see the same machine."""
    sys.path.insert(0, str(BENCH))
    import relay_startup

    with hookd_daemon() as d:
        compiled = relay_startup.build_compiled(d.root)
        if compiled is None:
            return _row("8b", "compiled hookd-relay", skipped="no C compiler")
        python = os.path.realpath(sys.executable)
        commands = relay_startup.relay_commands(
            python, compiled, str(d.socket), str(d.root / "down.sock")
        )
        env = d.env()
        relay_startup.interleaved(commands, 5, env)
        samples = relay_startup.interleaved(commands, max(40, plan.relay_n * 2), env)
    stats = {name: relay_startup.summary(values) for name, values in samples.items()}
    c50 = stats["compiled relay -> daemon"]["p50_ms"]
    sh50 = stats["sh -c true"]["p50_ms"]
    return _row(
        "8b",
        "compiled hookd-relay per event (whole process, as installed) vs sh -c true",
        hookd=stats["compiled relay -> daemon"],
        baseline={"name": "sh -c true", **stats["sh -c true"]},
        side={
            name: s
            for name, s in stats.items()
            if name not in ("compiled relay -> daemon", "sh -c true")
        },
        ratio_p50=ratio(c50, sh50),
        goal="≤ 2× sh -c true",
        met=c50 / sh50 <= 2.0,
    )


# --- 9. memory --------------------------------------------------------------------------


def memory(plan: Plan) -> Row:
    hooks = {
        "PreToolUse": [
            {
                "matcher": "Read",
                "hooks": [{"type": "command", "command": "sleep 60", "async": True}],
            }
        ]
    }
    with hookd_daemon(hooks) as d:
        hc = d.client()
        project = d.root / "project"
        for _ in range(100):
            hc.fire("PreToolUse", event_in(project))
        time.sleep(0.5)
        idle = rss_kb(d.pid)
        for i in range(100):
            hc.fire("PreToolUse", event_in(project, session_id=f"bench-session-{i:04d}"))
        sessions = rss_kb(d.pid)
        pending = 0
        refused = 0
        for i in range(500):
            payload = event_in(
                project,
                session_id=f"bench-async-{i % 50:03d}",
                tool_name="Read",
                tool_input={"file_path": f"/x{i}"},
            )
            result = hc.fire("PreToolUse", payload).result
            for run in result.hooks:
                if run.is_async and run.outcome == "success":
                    pending += 1
                else:
                    refused += 1
        time.sleep(1.0)
        with_async = rss_kb(d.pid)
        status = hc.call(protocol.Status(id=999_999))
        async_info = (status.data or {}).get("async") if isinstance(status.data, dict) else None
    mb = 1024.0
    return _row(
        "9",
        "daemon RSS",
        hookd={
            "idle_mb": round(idle / mb, 1),
            "sessions_100_mb": round(sessions / mb, 1),
            "async_500_mb": round(with_async / mb, 1),
            "async_accepted": pending,
            "async_refused": refused,
            "async_status": async_info,
        },
        baseline={"name": "goal", "idle_mb": 60, "sessions_100_mb": 120},
        goal="≤ 60 MB idle, ≤ 120 MB with 100 sessions",
        met=idle / mb <= 60 and sessions / mb <= 120,
    )


# --- 10. scaling ------------------------------------------------------------------------


def _groups(n: int, matching: bool) -> dict[str, Any]:
    if matching:
        # The group matches Bash, so its `if` rule is evaluated too; it never runs.
        groups = [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": f"true {i}", "if": f"Bash(zz{i} *)"}],
            }
            for i in range(n)
        ]
    else:
        groups = [
            {"matcher": f"Tool{i}", "hooks": [{"type": "command", "command": f"true {i}"}]}
            for i in range(n)
        ]
    return {"PreToolUse": groups}


def scaling(plan: Plan) -> Row:
    points: list[dict[str, Any]] = []
    with floor_server() as floor:
        fc = RawClient(floor)
        floor_p50 = summary(
            time_fires(fc, "PreToolUse", event_in(Path("/tmp")), plan.scale_n, plan.budget_s)
        )["p50_us"]
        for matching in (False, True):
            for n in (1, 10, 100, 1000):
                with hookd_daemon(_groups(n, matching), watch=False) as d:
                    payload = event_in(d.root / "project")
                    hc = d.client()
                    probe = hc.fire("PreToolUse", payload).result
                    s = summary(time_fires(hc, "PreToolUse", payload, plan.scale_n, plan.budget_s))
                    points.append(
                        {
                            "axis": "groups",
                            "matching": matching,
                            "n": n,
                            "p50_us": s["p50_us"],
                            "p99_us": s["p99_us"],
                            "runs": len(probe.hooks),
                        }
                    )
        with hookd_daemon(watch=False) as d:
            hc = d.client()
            for n in (1, 10, 100):
                payloads = [
                    event_in(d.root / "project", session_id=f"scale-{n}-{i}") for i in range(n)
                ]
                for p in payloads:
                    hc.fire("PreToolUse", p)
                samples: list[float] = []
                deadline = time.perf_counter() + plan.budget_s
                for i in range(plan.scale_n):
                    start = time.perf_counter()
                    hc.fire("PreToolUse", payloads[i % n])
                    samples.append(time.perf_counter() - start)
                    if time.perf_counter() > deadline:
                        break
                s = summary(samples)
                points.append(
                    {
                        "axis": "sessions",
                        "matching": False,
                        "n": n,
                        "p50_us": s["p50_us"],
                        "p99_us": s["p99_us"],
                        "runs": 0,
                    }
                )
    g = {(p["matching"], p["n"]): p["p50_us"] for p in points if p["axis"] == "groups"}
    per_group_ns = round((g[(True, 1000)] - g[(True, 1)]) / 999 * 1000)
    return _row(
        "10",
        "scaling: matcher groups and sessions",
        hookd={"points": points, "matching_cost_per_group_ns": per_group_ns},
        baseline={"name": "bare trio+msgspec echo", "p50_us": floor_p50},
        goal="report (perf-floors: matching ≤ 5 µs/event for ~100 rules)",
        met=(g[(True, 100)] - g[(True, 1)]) <= 5.0 and (g[(False, 100)] - g[(False, 1)]) <= 5.0,
    )


__all__ = [
    "ROOT",
    "DaemonProc",
    "Plan",
    "command_hook",
    "hot_reload",
    "memory",
    "no_hook",
    "parallel_hooks",
    "python_hook",
    "relay",
    "relay_compiled",
    "scaling",
    "throughput",
]

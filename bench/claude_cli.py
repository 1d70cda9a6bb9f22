"""Row 6: the real Claude Code CLI, offline, per tool call, with and without hooks.

Reuses tests/e2e (the scripted fake Messages API and the offline environment).
The fake API scripts N Bash tool calls then a final text; the added latency
of a tool call is the gap between the request that returned the ``tool_use``
and the next request (median over the calls), compared with the no-hook run:

a. no hooks;  b. native ``true`` command hook;  c. native ``python3`` command
hook with a small policy;  d. the same policy as an in-daemon python hook,
reached through hookd's http endpoint (``hookd serve --http-port``);  e. the
same, reached through hookd's Claude Code mod (``hookd/doors/claude_mod``,
loaded with ``CLAUDE_CODE_PLUGIN_DIRS``) over the daemon's http socket;  f. the
*unchanged* (c) hook — ``python3 policy.py`` as a command hook — in hookd's config,
reached through the http endpoint of a second daemon: warm Python (issue 29).

(d) installs the http hook on PreToolUse only; (e) posts every event the mod
carries (PreToolUse, PostToolUse, PostToolBatch: three round trips per tool
call, two of them answered "no hooks"), as ``install --transport mod`` does —
so (e) is measured with more work than (d), not less.

The configurations run in rotation (a b c d e a b c d e …), one CLI run each,
so that a noisy moment hits them all alike; the spread is the range of the
runs' own medians.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from _util import ROOT, hookd_daemon, tempdir
from cases import POLICY_HOOK, Plan

from hookd.installers.claude_settings import mod_dir
from hookd_client import protocol

sys.path.insert(0, str(ROOT / "tests"))

from e2e.fake_api import FakeMessagesApi, Turn, serve_fake_api
from e2e.harness import CLAUDE_BIN, claude_available, offline_env

Row = dict[str, Any]

NATIVE_POLICY = """
import json, re, sys
_DANGEROUS = re.compile(r"\\brm\\s+-rf\\s+/|\\bcurl\\b.*\\|\\s*sh\\b|\\bmkfs\\b")
event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if event.get("tool_name") == "Bash" and _DANGEROUS.search(command):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "deny", "permissionDecisionReason": "dangerous"}}))
"""


@dataclass
class TimedApi(FakeMessagesApi):
    """The fake API, also noting when each request arrived."""

    arrivals: list[float] = field(default_factory=list)

    def next_turn(self) -> tuple[int, Turn]:
        self.arrivals.append(time.perf_counter())
        return super().next_turn()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _one_run(
    base: Path, calls: int, hooks: dict[str, Any] | None, env: dict[str, str] | None = None
) -> list[float]:
    turns = [
        Turn([{"type": "tool_use", "name": "Bash", "input": {"command": f"echo call-{i}"}}])
        for i in range(calls)
    ] + [Turn([{"type": "text", "text": "done"}])]
    api = TimedApi(turns=turns)
    home, project = base / "home", base / "project"
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    args = [
        str(CLAUDE_BIN),
        "-p",
        "run the calls",
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
    ]
    if hooks is not None:
        settings = base / "settings.json"
        settings.write_text(json.dumps({"hooks": hooks}))
        args += ["--settings", str(settings)]
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, api)
        with trio.fail_after(300):
            await trio.run_process(
                args,
                cwd=project,
                env=offline_env(home, api.base_url, env),
                stdin=b"",
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        nursery.cancel_scope.cancel()
    times = api.arrivals
    return [times[i + 1] - times[i] for i in range(min(calls, len(times) - 1))]


def _token(root: Path) -> str:
    token_file = root / "home" / ".config" / "hookd" / "http-token"
    deadline = time.monotonic() + 20
    while not token_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return token_file.read_text().strip()


def _pre(handler: dict[str, Any]) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}


def claude_row(plan: Plan) -> Row:
    name = "Claude Code CLI: added latency per tool call (median gap between model requests)"
    goal = "(d), (e) add ≤ 1/20 of what (c) adds, and no more than (b)"
    if not claude_available():
        return {
            "row": "6",
            "name": name,
            "goal": goal,
            "met": None,
            "note": "not measured: `npm install` in tests/e2e first (and node on PATH)",
        }
    calls = 5 if plan.quick else 20
    python3 = os.path.realpath(shutil.which("python3") or sys.executable)
    with tempdir("hkc") as tmp:
        (tmp / "policy.py").write_text(NATIVE_POLICY)
        (tmp / "policy_hook.py").write_text(POLICY_HOOK)
        daemon_hooks = _pre({"type": "python", "callable": f"{tmp / 'policy_hook.py'}:check"})
        port = _free_port()
        command_hooks = _pre({"type": "command", "command": f"{python3} {tmp / 'policy.py'}"})
        port_f = _free_port()
        with (
            hookd_daemon(daemon_hooks, http_port=port) as d,
            hookd_daemon(command_hooks, http_port=port_f) as d_f,
        ):
            token_file = d.root / "home" / ".config" / "hookd" / "http-token"
            deadline = time.monotonic() + 20
            while not token_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            token = token_file.read_text().strip()
            token_f = _token(d_f.root)
            mod_env = {
                "CLAUDE_CODE_PLUGIN_DIRS": str(mod_dir()),
                "HOOKD_HTTP_SOCKET": str(d.root / "http.sock"),
            }
            configs: dict[str, dict[str, Any] | None] = {
                "a_none": None,
                "b_true": _pre({"type": "command", "command": "true"}),
                "c_python3": _pre({"type": "command", "command": f"{python3} {tmp / 'policy.py'}"}),
                "d_hookd_http": _pre(
                    {
                        "type": "http",
                        "url": f"http://127.0.0.1:{port}/hooks/PreToolUse",
                        "headers": {"Authorization": f"Bearer {token}"},
                    }
                ),
                "e_hookd_mod": None,
                "f_hookd_warm_python3": _pre(
                    {
                        "type": "http",
                        "url": f"http://127.0.0.1:{port_f}/hooks/PreToolUse",
                        "headers": {"Authorization": f"Bearer {token_f}"},
                    }
                ),
            }
            gaps: dict[str, list[float]] = {k: [] for k in configs}
            run_medians: dict[str, list[float]] = {k: [] for k in configs}
            rounds = 1 if plan.quick else int(os.environ.get("HOOKD_BENCH_CLAUDE_ROUNDS", "6"))
            for r in range(rounds):
                for key, hooks in configs.items():
                    base = tmp / f"{key}-{r}"
                    env = mod_env if key == "e_hookd_mod" else None
                    got = trio.run(_one_run, base, calls, hooks, env)
                    gaps[key] += got
                    if got:
                        run_medians[key].append(statistics.median(got) * 1e3)
            counters = d.client().call(protocol.Status(id=1)).data.get("counters", {})
    med = {k: round(statistics.median(v) * 1e3, 1) if v else float("nan") for k, v in gaps.items()}
    added = {k: round(med[k] - med["a_none"], 1) for k in med}
    spread = {k: [round(min(v), 1), round(max(v), 1)] if v else [] for k, v in run_medians.items()}
    met = all(
        added[k] <= added["c_python3"] / 20 and added[k] <= max(added["b_true"], 0.0)
        for k in ("d_hookd_http", "e_hookd_mod")
    )
    return {
        "row": "6",
        "name": name,
        "hookd": {
            "median_gap_ms": med,
            "added_ms": added,
            "run_median_range_ms": spread,
            "rounds": rounds,
            "calls": {k: len(v) for k, v in gaps.items()},
            "daemon_counters": counters,
        },
        "baseline": {"name": "native Claude Code hooks, same run"},
        "hookd_text": (
            f"(d) in-daemon python via http +{added['d_hookd_http']} ms; "
            f"(e) via mod +{added['e_hookd_mod']} ms; "
            f"(f) the unchanged python3 hook, warm, via http +{added['f_hookd_warm_python3']} ms"
        ),
        "baseline_text": (
            f"none {med['a_none']} ms; (b) `true` +{added['b_true']} ms; "
            f"(c) python3 +{added['c_python3']} ms"
        ),
        "ratio_text": (
            f"(d)/(c) {added['d_hookd_http'] / added['c_python3']:.3f}, "
            f"(e)/(c) {added['e_hookd_mod'] / added['c_python3']:.3f}, "
            f"(f)/(c) {added['f_hookd_warm_python3'] / added['c_python3']:.3f} (goal ≤ 0.2)"
            if added["c_python3"]
            else ""
        ),
        "goal": goal,
        "met": met,
    }

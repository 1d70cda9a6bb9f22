"""The same hooks native, through hookd's http transport and through its mod transport.

For the scenarios where a mod can say what a settings hook says (a deny, an
allow, a rewrite, context, a Stop block, a UserPromptSubmit block, a hook that
times out) the real CLI runs three times against the scripted fake API:

* **native**: the hooks in the user's ``~/.claude/settings.json``;
* **http**: after ``hookctl claude install --user`` (the default transport);
* **mod**: after ``hookctl claude install --user --transport mod``: the
  per-tool-call events go through hookd's Claude Code mod
  (``hookd/doors/claude_mod``) over the daemon's Unix socket, every other
  event through the relay.

All three must agree on what the model received, the result, the denials and
the files (after :mod:`e2e.normalise`'s documented normalisations).  Then the
daemon is *down*: a mod event fails open (the tool runs), or, for an event
with an ``onFailure: "block"`` hook, closed (the tool does not run and the
model is told why).
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
import trio

from e2e.daemon import NOT_RUNNING, VENV_BIN, RunningDaemon, daemon_paths, hookd_daemon
from e2e.fake_api import Turn
from e2e.harness import ClaudeRun, claude_available, run_claude
from e2e.normalise import comparable
from hookd.doors.mod_answer import MOD_EVENTS
from support.clis import require_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "e2e"
SPEC = json.loads((DATA / "scenarios.json").read_text(encoding="utf-8"))
HOOK = "e2e-hook"
AGENT_ENV = {
    "PATH": f"{DATA / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    "E2E_PYTHON": sys.executable,
    "E2E_AGENT_VAR": "AGENT-ONLY-VALUE",
}
PROMPT = "ORIGINAL-PROMPT: please run the command"

SCENARIOS = [
    "pre_json_deny",
    "pre_exit2_block",
    "pre_json_allow",
    "pre_updated_input",
    "additional_context_everywhere",
    "stop_block_once",
    "ups_decision_block",
    "timeout_fails_open",
    "matchers",
    "exit1_is_non_blocking",
    "write_tool_post_context",
    "post_decision_block",
    "post_exit2",
    "pre_json_ask_denied_in_print_mode",
    "ups_plain_stdout_context",
    "sessionstart_plain_stdout",
    "stop_exit2_once",
    "post_two_blocks",
    "env_and_cwd_after_cd",
]
"""Scenarios of tests/data/e2e/scenarios.json the mod can be equivalent on."""

Kind = Literal["native", "http", "mod"]

pytestmark = [pytest.mark.slow, pytest.mark.claude]


@pytest.fixture(autouse=True)
def _require_claude() -> None:
    require_cli(claude_available(), "the Claude Code CLI or node")


def _materialise(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("$HOOK", HOOK)
    if isinstance(value, list):
        return [_materialise(v) for v in value]
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    return value


async def _install(daemon: RunningDaemon, transport: str) -> None:
    args = [
        str(VENV_BIN / "hookctl"),
        *("claude", "install", "--user", "--transport", transport),
        *("--port", str(daemon.port), "--socket", str(daemon.socket)),
    ]
    # Before the daemon starts: install writes the files and says it is not running (exit 3).
    done = await trio.run_process(args, env=daemon.env(), capture_stdout=True, check=False)
    assert done.returncode == NOT_RUNNING, done


async def _run(
    kind: Kind,
    base: Path,
    hooks: dict[str, Any],
    turns: list[Turn],
    *,
    daemon_up: bool = True,
) -> tuple[ClaudeRun, Path, Path]:
    """One CLI run with ``hooks`` in the user's settings, native or installed into hookd."""
    run_dir = base / kind
    home = run_dir / "home"
    project = run_dir / "proj"
    project.mkdir(parents=True)
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": _materialise(hooks)}, indent=2))
    if kind == "native":
        run = await run_claude(
            prompt=PROMPT, turns=turns, home=home, project=project, env=AGENT_ENV
        )
        return run, run_dir, project
    daemon = daemon_paths(run_dir, home)
    await _install(daemon, kind)
    if not daemon_up:
        run = await run_claude(
            prompt=PROMPT, turns=turns, home=home, project=project, env=AGENT_ENV
        )
        return run, run_dir, project
    async with hookd_daemon(daemon):
        run = await run_claude(
            prompt=PROMPT, turns=turns, home=home, project=project, env=AGENT_ENV
        )
    return run, run_dir, project


def _turns(scenario: dict[str, Any]) -> list[Turn]:
    return [Turn(content) for content in scenario.get("turns", SPEC["bash_turns"])]


def _diff(a: Any, b: Any) -> str:
    import difflib

    left = json.dumps(a, indent=1, sort_keys=True).splitlines()
    right = json.dumps(b, indent=1, sort_keys=True).splitlines()
    return "\n".join(list(difflib.unified_diff(left, right, "native", "other", lineterm=""))[:150])


def _audited(run_dir: Path) -> list[dict[str, Any]]:
    """The events the daemon ran (its audit log): event, client and input."""
    path = run_dir / "home" / ".state" / "hookd" / "audit" / "audit.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if r.get("kind") == "event"]


def _comparable_input(record: dict[str, Any], run_dir: Path) -> Any:
    text = json.dumps(record["input"]).replace(str(run_dir), "<RUN>")
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(run_dir)), "<RUN-SLUG>")
    text = text.replace(record["session_id"], "<SESSION>")
    data = json.loads(text)
    if "prompt_id" in data:
        data["prompt_id"] = "<PROMPT>"  # one per prompt: two runs, two ids
    data.pop("duration_ms", None)  # the tool's run time
    return data


def _first_tool_effort_unknown(seen: dict[str, Any]) -> None:
    """The mod transport's one documented difference in the hook environment: on a
    session's first PreToolUse ``CLAUDE_EFFORT`` is unset, because the mod's input for
    that event has no ``effort`` and no event before it carried one (SessionStart and
    UserPromptSubmit have none).  Blanked on that record only, in both runs."""
    lines = seen["files"]["hook-env.jsonl"].splitlines()
    records = [json.loads(line) for line in lines]
    first = next(r for r in records if r["event"] == "PreToolUse")
    first["CLAUDE_EFFORT"] = "<first tool call: unknown to the mod>"
    seen["files"]["hook-env.jsonl"] = "\n".join(json.dumps(r) for r in records) + "\n"


def _check_doors(http_dir: Path, mod_dir: Path) -> None:
    """The mod, not a settings hook, carried the per-tool-call events, and what it sent
    for them is the input an http hook gets (PreToolUse's rebuilt from the envelope
    and the session).  ``effort`` of a session's first PreToolUse is left out: no
    event before it carries one (:func:`_first_tool_effort_unknown`)."""
    http = [r for r in _audited(http_dir) if r["event"] in MOD_EVENTS]
    mod = [r for r in _audited(mod_dir) if r["event"] in MOD_EVENTS]
    assert {r["client"] for r in http} <= {"claude-code-http"}
    assert {r["client"] for r in mod} <= {"claude-code-mod"}
    assert [r["event"] for r in mod] == [r["event"] for r in http]
    for first, (h, m) in enumerate(zip(http, mod, strict=True)):
        want = _comparable_input(h, http_dir)
        got = _comparable_input(m, mod_dir)
        if first == 0 and m["event"] == "PreToolUse":
            want.pop("effort", None)
            got.pop("effort", None)
        assert got == want, f"{m['event']}: the mod sent {got}, an http hook gets {want}"


@pytest.mark.parametrize("name", SCENARIOS)
async def test_mod_and_http_transports_match_native(name: str, tmp_path: Path) -> None:
    scenario = SPEC["scenarios"][name]
    runs: dict[Kind, tuple[ClaudeRun, Path, Path]] = {}

    async def side(kind: Kind) -> None:
        runs[kind] = await _run(kind, tmp_path, scenario["hooks"], _turns(scenario))

    async with trio.open_nursery() as nursery:
        for kind in ("native", "http", "mod"):
            nursery.start_soon(side, kind)

    seen = {kind: comparable(*runs[kind]) for kind in runs}
    for kind in seen:
        text = json.dumps(seen[kind]["requests"]) + json.dumps(seen[kind]["result"])
        for marker in scenario["expect"].get("markers", []):
            assert marker in text, f"{name} ({kind}): {marker!r} never reached the model"
        for file, present in scenario["expect"].get("files", {}).items():
            assert (file in seen[kind]["files"]) == present, f"{name} ({kind}): file {file}"
    _check_doors(runs["http"][1], runs["mod"][1])
    expected: dict[Kind, dict[str, Any]] = {
        "http": seen["native"],
        "mod": copy.deepcopy(seen["native"]),
    }
    if name == "env_and_cwd_after_cd":
        _first_tool_effort_unknown(expected["mod"])
        _first_tool_effort_unknown(seen["mod"])
    for kind, want in expected.items():
        assert want == seen[kind], (
            f"{name}: the session through hookd's {kind} transport differs from native:\n"
            + _diff(want, seen[kind])
            + f"\n(daemon log: {tmp_path / kind / 'hookd.log'})"
        )


DENY = {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$HOOK pre_deny"}]}]
}


@pytest.mark.parametrize(
    ("fail_closed", "ran"), [(False, True), (True, False)], ids=["fail-open", "fail-closed"]
)
async def test_daemon_down_fails_open_or_closed(
    fail_closed: bool, ran: bool, tmp_path: Path
) -> None:
    hooks = json.loads(json.dumps(DENY))
    if fail_closed:
        hooks["PreToolUse"][0]["hooks"][0]["onFailure"] = "block"
    run, _, project = await _run("mod", tmp_path, hooks, _turns({}), daemon_up=False)
    assert (project / "ran.txt").exists() is ran
    (result,) = run.tool_results()
    text = json.dumps(result)
    assert "DENY-REASON-MARKER" not in text  # the hook never ran: no daemon
    if fail_closed:
        assert result["is_error"] is True
        assert (
            "PreToolUse:Bash hook error: hookd did not answer (its mod failed closed: "
            'a hook of this event has onFailure \\"block\\")'
        ) in text
        denials = run.result.get("permission_denials", [])
        assert [d.get("tool_name") for d in denials] == ["Bash"]
    else:
        assert result["is_error"] is False and result["content"] == "hi"


async def test_claude_code_validates_the_mod() -> None:
    """Claude Code reads a hooks module statically before loading it: the shipped mod
    passes, hooks what the installer leaves to it, and guards with a ``.catch``."""
    from e2e.harness import CLAUDE_BIN
    from hookd.installers.claude_settings import mod_dir

    proc = await trio.run_process(
        [str(CLAUDE_BIN), "plugin", "validate", str(mod_dir())],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env={**os.environ, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"},
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, out + proc.stderr.decode()
    assert "Validation passed" in out
    assert "index.ts hooks: classic.*\n" in out
    assert "index.ts gating hook with .catch: classic.*" in out
    assert "index.ts env reads: HOOKD_HTTP_SOCKET, HOOKD_MOD_FAIL_CLOSED" in out
    assert "error TS" not in out  # the module type-checks against Claude Code's API

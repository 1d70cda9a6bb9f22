"""More sessions of the real CLI, native against through hookd: the events and settings
that ``scenarios.json``'s shape cannot express.

Each :class:`Scenario` runs the real Claude Code CLI twice against the scripted
fake API, as :mod:`e2e.test_equivalence` does — native (the hooks in Claude
Code's settings files) and through a real ``hookd serve`` after
``hookctl claude install`` moved them into hookd's config — and then either
compares the two sessions after :mod:`e2e.normalise`'s normalisations, or,
where hookd deliberately differs (docs/configuration.md, docs/claude-code.md),
asserts that documented difference and that nothing else differs.

What a scenario can say beyond ``scenarios.json``: hooks in the project's
``.claude/settings.json`` and ``.claude/settings.local.json`` (installed with
``--project``/``--local``, the project trusted or not), the CLI's default
permission mode (so PermissionRequest fires), more user turns in one session
(``/compact``), and side conversations the fake API answers outside the main
script (a prompt hook's question, a sub-agent's turns).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
import trio

from e2e.daemon import NOT_RUNNING, VENV_BIN, RunningDaemon, daemon_paths, hookd_daemon
from e2e.fake_api import Side, Turn
from e2e.harness import ClaudeRun, claude_available, run_claude
from e2e.normalise import comparable, diff
from support.clis import require_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "e2e"
AGENT_ENV = {
    "PATH": f"{DATA / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    "E2E_PYTHON": sys.executable,
    "E2E_AGENT_VAR": "AGENT-ONLY-VALUE",
}
"""As in test_equivalence: ``e2e-hook`` is only on the agent's PATH."""
PROMPT = "ORIGINAL-PROMPT: please run the command"
BASH: dict[str, Any] = {"command": "echo hi > ran.txt; echo hi", "description": "say hi"}
BASH_TURNS: list[list[dict[str, Any]]] = [
    [{"type": "tool_use", "name": "Bash", "input": BASH}],
    [{"type": "text", "text": "FINAL-ANSWER"}],
]

pytestmark = [pytest.mark.slow, pytest.mark.claude]

Kind = Literal["native", "hookd"]
Seen = dict[str, Any]


@pytest.fixture(autouse=True)
def _require_claude() -> None:
    """As test_equivalence: skip on a developer's machine without the CLI, fail in CI."""
    require_cli(claude_available(), "the Claude Code CLI or node")


def hook(key: str, **extra: Any) -> dict[str, Any]:
    """One ``e2e-hook KEY`` command hook (tests/data/e2e/behaviours.json says what KEY does)."""
    return {"type": "command", "command": f"e2e-hook {key}", **extra}


def on(event: str, *hooks: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": list(hooks)}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


@dataclass(frozen=True)
class Scenario:
    user: dict[str, Any] = field(default_factory=dict)
    """Hooks of ``~/.claude/settings.json`` (installed with ``--user`` when not empty)."""
    project: dict[str, Any] = field(default_factory=dict)
    """Hooks of the project's ``.claude/settings.json`` (installed with ``--project``)."""
    local: dict[str, Any] = field(default_factory=dict)
    """Hooks of ``.claude/settings.local.json`` (installed with ``--local``)."""
    trusted: bool = True
    """Through hookd: ``hookctl trust`` the project (its hooks need it by default)."""
    turns: list[list[dict[str, Any]]] = field(default_factory=lambda: BASH_TURNS)
    """``$PROJ`` in a tool input is the run's project directory."""
    more_prompts: tuple[str, ...] = ()
    skip_permissions: bool = True
    sides: tuple[tuple[str, list[list[dict[str, Any]]], bool], ...] = ()
    """(marker, turns, verdicts) of each :class:`~e2e.fake_api.Side`."""
    markers: tuple[str, ...] = ()
    """Must reach the model or the result in both runs (the hooks did run)."""
    files: dict[str, bool] = field(default_factory=dict)
    """Project files that must exist (or not) after both runs."""
    differs: Callable[[Seen, Seen], None] | None = None
    """Where hookd deliberately differs: asserts the documented difference on the two
    comparable runs and removes it, after which they must be equal."""


def _materialise(value: Any, project: Path) -> Any:
    if isinstance(value, str):
        return value.replace("$PROJ", str(project))
    if isinstance(value, list):
        return [_materialise(v, project) for v in value]
    if isinstance(value, dict):
        return {k: _materialise(v, project) for k, v in value.items()}
    return value


def _write_settings(path: Path, hooks: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2), encoding="utf-8")


async def _hookctl(
    daemon: RunningDaemon, *args: str, cwd: Path | None = None, exit_code: int = 0
) -> None:
    done = await trio.run_process(
        [str(VENV_BIN / "hookctl"), *args],
        env=daemon.env(),
        cwd=cwd,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == exit_code, done


async def _run_side(
    kind: Kind, base: Path, scenario: Scenario, daemon: RunningDaemon | None = None
) -> tuple[ClaudeRun, Path, Path]:
    run_dir = base / kind
    home = run_dir / "home"
    project = run_dir / "proj"
    project.mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    if scenario.user:
        _write_settings(home / ".claude" / "settings.json", scenario.user)
    if scenario.project:
        _write_settings(project / ".claude" / "settings.json", scenario.project)
    if scenario.local:
        _write_settings(project / ".claude" / "settings.local.json", scenario.local)
    sides = tuple(
        Side(marker, [Turn(t) for t in turns], verdicts=verdicts)
        for marker, turns, verdicts in scenario.sides
    )
    env = dict(AGENT_ENV)
    if daemon is not None:
        where = ("--port", str(daemon.port), "--socket", str(daemon.socket))
        for scope, hooks in (
            ("--user", scenario.user),
            ("--project", scenario.project),
            ("--local", scenario.local),
        ):
            if hooks:
                # Before the daemon starts: written, and "not running" (exit 3).
                await _hookctl(
                    daemon, "claude", "install", scope, *where, cwd=project, exit_code=NOT_RUNNING
                )
        if scenario.project and scenario.trusted:
            await _hookctl(daemon, "trust", str(project))
        # --project writes `Bearer $HOOKD_HTTP_TOKEN` (project settings get committed).
        env["HOOKD_HTTP_TOKEN"] = daemon.token()

    async def run() -> ClaudeRun:
        return await run_claude(
            prompt=PROMPT,
            turns=[Turn(_materialise(t, project)) for t in scenario.turns],
            home=home,
            project=project,
            env=env,
            skip_permissions=scenario.skip_permissions,
            sides=sides,
            more_prompts=scenario.more_prompts,
        )

    if daemon is None:
        return await run(), run_dir, project
    async with hookd_daemon(daemon):
        return await run(), run_dir, project


def _text(seen: Seen) -> str:
    return json.dumps([seen["requests"], seen["sides"], seen["result"]])


# -- the documented differences ---------------------------------------------------------


def _rewrite_order(native: Seen, hookd: Seen) -> None:
    """Two updatedInputs: Claude Code keeps the one that *finished* last, hookd the first
    in configuration order (docs/claude-code.md, "Deterministic composition")."""
    assert native["files"]["ran.txt"] == "REWRITE-LAST\n"
    assert hookd["files"]["ran.txt"] == "REWRITE-FIRST\n"
    for seen, winner in ((native, "REWRITE-LAST"), (hookd, "REWRITE-FIRST")):
        assert winner in _text(seen)
        seen["files"]["ran.txt"] = "<winner>\n"
        seen["requests"] = json.loads(json.dumps(seen["requests"]).replace(winner, "<winner>"))


def _untrusted_project(native: Seen, hookd: Seen) -> None:
    """An untrusted project's hooks: Claude Code runs them in ``-p``; hookd holds them
    back (docs/configuration.md, "Workspace trust") and the user's own still run."""
    assert "PROJECT-CTX-MARKER" in _text(native)
    assert "PROJECT-CTX-MARKER" not in _text(hookd)
    assert "project-hook.txt" in native["files"]
    assert "project-hook.txt" not in hookd["files"]
    del native["files"]["project-hook.txt"]
    native["requests"] = json.loads(
        json.dumps(native["requests"]).replace("\\nPROJECT-CTX-MARKER", "")
    )


def _prompt_hook_in_batch(native: Seen, hookd: Seen) -> None:
    """A prompt hook in ``claude -p``: Claude Code asks the model and a ``{"ok": false}``
    continues the turn; hookd runs no prompt or agent hook in batch context
    (docs/configuration.md, "Prompt and agent hooks"), so the turn ends at once."""
    assert len(native["sides"][0]) == 2, "native: the prompt hook was asked twice"
    assert "PROMPT-HOOK-REASON" in json.dumps(native["requests"])
    assert native["result"]["result"] == "FINAL-ANSWER"
    assert hookd["sides"] == [[]], "hookd asked the model in batch context"
    assert "PROMPT-HOOK-REASON" not in _text(hookd)
    assert hookd["result"]["result"] == "FIRST-ANSWER"
    assert native["requests"][:2] == hookd["requests"], "before the Stop, the sessions agree"
    for seen in (native, hookd):
        for part in ("requests", "sides", "result"):
            seen.pop(part)


# -- the scenarios ----------------------------------------------------------------------

DENY = "DENY-REASON-MARKER"
SCENARIOS: dict[str, Scenario] = {
    # Conflicting decisions from several hooks of one event.
    "deny_beats_ask": Scenario(
        user=on("PreToolUse", hook("pre_ask"), hook("pre_deny"), matcher="Bash"),
        markers=(DENY,),
        files={"ran.txt": False},
    ),
    "deny_beats_ask_reversed": Scenario(
        user=on("PreToolUse", hook("pre_deny"), hook("pre_ask"), matcher="Bash"),
        markers=(DENY,),
        files={"ran.txt": False},
    ),
    "exit2_beats_allow": Scenario(
        user=on("PreToolUse", hook("pre_allow"), hook("pre_exit2"), matcher="Bash"),
        markers=("BLOCK-STDERR-MARKER",),
        files={"ran.txt": False},
    ),
    "two_rewrites": Scenario(
        user=on("PreToolUse", hook("rewrite_first"), hook("rewrite_last"), matcher="Bash"),
        files={"ran.txt": True},
        differs=_rewrite_order,
    ),
    # `if` rules on a hook (permission-rule syntax), on Bash and on Write.
    "if_rules": Scenario(
        user=on(
            "PreToolUse",
            hook("if_echo_ctx", **{"if": "Bash(echo *)"}),
            hook("if_ls_ctx", **{"if": "Bash(ls *)"}),
            hook("if_write_ctx", **{"if": "Write(*.txt)"}),
            matcher="*",
        ),
        turns=[
            [{"type": "tool_use", "name": "Bash", "input": BASH}],
            [
                {
                    "type": "tool_use",
                    "name": "Write",
                    "input": {"file_path": "$PROJ/w.txt", "content": "x"},
                }
            ],
            [{"type": "text", "text": "FINAL-ANSWER"}],
        ],
        markers=("IF-ECHO-MATCHED", "IF-WRITE-MATCHED"),
        files={"ran.txt": True, "w.txt": True},
    ),
    # Project and local settings: installed with --project/--local, the project trusted.
    "project_and_local_trusted": Scenario(
        user=on("PreToolUse", hook("pre_ctx"), matcher="Bash"),
        project=on("PreToolUse", hook("project_ctx"), matcher="Bash"),
        local=on("PostToolUse", hook("local_ctx"), matcher="Bash"),
        markers=("PRE-CTX-MARKER", "PROJECT-CTX-MARKER", "LOCAL-CTX-MARKER"),
        files={"project-hook.txt": True},
    ),
    "project_untrusted": Scenario(
        user=on("PreToolUse", hook("pre_ctx"), matcher="Bash"),
        project=on("PreToolUse", hook("project_ctx"), matcher="Bash"),
        trusted=False,
        markers=("PRE-CTX-MARKER",),
        differs=_untrusted_project,
    ),
    # PermissionRequest: only in the default permission mode.
    "permission_request_allow": Scenario(
        user=on("PermissionRequest", hook("perm_allow"), matcher="Bash"),
        skip_permissions=False,
        files={"ran.txt": True},
    ),
    "permission_request_deny": Scenario(
        user=on("PermissionRequest", hook("perm_deny"), matcher="Bash"),
        skip_permissions=False,
        markers=("PERM-DENY-MESSAGE",),
        files={"ran.txt": False},
    ),
    # A sub-agent (in the foreground) whose SubagentStop hook blocks once.
    "subagent_stop_blocks_once": Scenario(
        user=on("SubagentStop", hook("substop_block_once"), hook("substop_touch")),
        turns=[
            [
                {
                    "type": "tool_use",
                    "name": "Agent",
                    "input": {
                        "description": "run it",
                        "prompt": "SUBAGENT-TASK-MARKER: say hi",
                        "subagent_type": "general-purpose",
                        "run_in_background": False,
                    },
                }
            ],
            [{"type": "text", "text": "FINAL-ANSWER"}],
        ],
        sides=(
            (
                "SUBAGENT-TASK-MARKER",
                [
                    [{"type": "text", "text": "SUBAGENT-FIRST"}],
                    [{"type": "text", "text": "SUBAGENT-DONE"}],
                ],
                False,
            ),
        ),
        markers=("SUBSTOP-BLOCK", "SUBAGENT-DONE"),
        files={"subagent-stop.txt": True},
    ),
    # /compact after a first turn: PreCompact runs (and sees the agent's environment).
    "precompact": Scenario(
        user=on("PreCompact", hook("precompact_touch")),
        more_prompts=("/compact keep it short",),
        turns=[*BASH_TURNS, [{"type": "text", "text": "<summary>COMPACT-SUMMARY</summary>"}]],
        files={"precompact.txt": True, "precompact.jsonl": True},
    ),
    "precompact_blocked": Scenario(
        user=on("PreCompact", hook("precompact_exit2")),
        more_prompts=("/compact keep it short",),
        turns=[*BASH_TURNS, [{"type": "text", "text": "<summary>COMPACT-SUMMARY</summary>"}]],
    ),
    "session_end": Scenario(
        user=on("SessionEnd", hook("session_end_touch"), hook("record_env")),
        files={"session-end.txt": True, "hook-env.jsonl": True},
    ),
    # asyncRewake: waited for in -p; its exit-2 stderr wakes the model.
    "async_rewake_exit2": Scenario(
        user=on("PostToolUse", hook("rewake_exit2", asyncRewake=True), matcher="Bash"),
        markers=("REWAKE-STDERR",),
    ),
    "async_rewake_exit0": Scenario(
        user=on("PostToolUse", hook("rewake_exit0", asyncRewake=True), matcher="Bash"),
        files={"ran.txt": True},
    ),
    # A prompt hook on Stop: the fake API answers its question ({"ok": false} once).
    "prompt_hook_stop": Scenario(
        user=on(
            "Stop", {"type": "prompt", "prompt": "PROMPT-HOOK-MARKER: did it finish? $ARGUMENTS"}
        ),
        turns=[
            [{"type": "tool_use", "name": "Bash", "input": BASH}],
            [{"type": "text", "text": "FIRST-ANSWER"}],
            [{"type": "text", "text": "FINAL-ANSWER"}],
        ],
        sides=(
            (
                "PROMPT-HOOK-MARKER",
                [
                    [{"type": "text", "text": '{"ok": false, "reason": "PROMPT-HOOK-REASON"}'}],
                    [{"type": "text", "text": '{"ok": true, "reason": "done"}'}],
                ],
                True,
            ),
        ),
        differs=_prompt_hook_in_batch,
    ),
}


def _check(name: str, kind: Kind, seen: Seen, scenario: Scenario) -> None:
    if scenario.differs is None:
        for marker in scenario.markers:
            assert marker in _text(seen), f"{name} ({kind}): {marker!r} never reached the model"
    for file, present in scenario.files.items():
        assert (file in seen["files"]) == present, f"{name} ({kind}): {file} present={present}"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
async def test_scenario_through_hookd_matches_native(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    runs: dict[Kind, tuple[ClaudeRun, Path, Path]] = {}
    daemon = daemon_paths(tmp_path, tmp_path / "hookd" / "home")

    async def side(kind: Kind) -> None:
        runs[kind] = await _run_side(kind, tmp_path, scenario, daemon if kind == "hookd" else None)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(side, "native")
        nursery.start_soon(side, "hookd")

    native, hookd = (comparable(*runs[kind]) for kind in ("native", "hookd"))
    _check(name, "native", native, scenario)
    _check(name, "hookd", hookd, scenario)
    if scenario.differs is not None:
        scenario.differs(native, hookd)
    assert native == hookd, (
        f"{name}: the session through hookd differs from native:\n"
        + diff(native, hookd)
        + f"\n(daemon log: {tmp_path / 'hookd.log'})"
    )

"""The same hooks, native in Claude Code and through hookd, give the same session.

For every scenario in ``tests/data/e2e/scenarios.json`` the real CLI runs
twice against the scripted fake API:

* **native**: the hooks in the user's ``~/.claude/settings.json``;
* **hookd**: the same settings file after ``hookctl claude install --user``
  (which moves the hooks to ``~/.config/hookd/hooks.json`` and wires every
  event to a real ``hookd serve`` subprocess: http hooks with the token in the
  header, and hookd-relay for SessionStart).

The runs must agree on what the model received (every request's messages:
tool results, system messages, prompts), the final result, the permission
denials and the files the tools wrote — after the normalisations documented in
:mod:`e2e.normalise`.  Each scenario also states markers that must appear (so
a scenario whose hooks silently did not run in *both* modes still fails).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from e2e.daemon import (
    NOT_RUNNING,
    VENV_BIN,
    DaemonEnvironment,
    RunningDaemon,
    daemon_paths,
    hookd_daemon,
)
from e2e.fake_api import Turn
from e2e.harness import ClaudeRun, claude_available, run_claude
from e2e.normalise import comparable, diff
from support.clis import require_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "e2e"
SPEC = json.loads((DATA / "scenarios.json").read_text(encoding="utf-8"))
HOOK = "e2e-hook"
"""tests/data/e2e/bin/e2e-hook: found only on the agent's PATH, runs with ``$E2E_PYTHON``."""
AGENT_ENV = {
    "PATH": f"{DATA / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    "E2E_PYTHON": sys.executable,
    "E2E_AGENT_VAR": "AGENT-ONLY-VALUE",
}
"""What the CLI runs with beyond the offline basics: the agent's own PATH entry and a
variable the daemon never has.  Natively every hook inherits them; through hookd,
only if hookd gives hooks the agent's environment (the daemon starts without them)."""
PROMPT = "ORIGINAL-PROMPT: please run the command"

pytestmark = [pytest.mark.slow, pytest.mark.claude]


@pytest.fixture(autouse=True)
def _require_claude() -> None:
    """Skip without the CLI on a developer's machine; fail in CI, where scripts/check installs it.

    A silent skip in CI would report the equivalence suite green without running it.
    """
    require_cli(claude_available(), "the Claude Code CLI or node")


def _materialise(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("$HOOK", HOOK)
    if isinstance(value, list):
        return [_materialise(v) for v in value]
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    return value


def _turns(scenario: dict[str, Any]) -> list[Turn]:
    return [Turn(content) for content in scenario.get("turns", SPEC["bash_turns"])]


async def _run_side(
    kind: str,
    base: Path,
    scenario: dict[str, Any],
    daemon: RunningDaemon | None = None,
    environment: DaemonEnvironment = "minimal",
) -> tuple[ClaudeRun, Path, Path]:
    """One CLI run with the scenario's hooks in the user's ``~/.claude/settings.json``.

    With ``daemon``: ``hookctl claude install --user`` first (moving the hooks
    into ``~/.config/hookd/hooks.json``), then the daemon is started on that
    HOME, then the CLI runs.
    """
    run_dir = base / kind
    home = run_dir / "home"
    project = run_dir / "proj"
    project.mkdir(parents=True)
    for directory in scenario.get("setup", {}).get("dirs", []):
        (project / directory).mkdir()
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": _materialise(scenario["hooks"])}, indent=2))
    turns = _turns(scenario)
    if daemon is None:
        run = await run_claude(
            prompt=PROMPT, turns=turns, home=home, project=project, env=AGENT_ENV
        )
        return run, run_dir, project
    install = [
        str(VENV_BIN / "hookctl"),
        *("claude", "install", "--user"),
        *("--port", str(daemon.port), "--socket", str(daemon.socket)),
    ]
    # Before the daemon starts: install writes the files and says it is not running (exit 3).
    done = await trio.run_process(install, env=daemon.env(), capture_stdout=True, check=False)
    assert done.returncode == NOT_RUNNING, done
    async with hookd_daemon(daemon, environment):
        run = await run_claude(
            prompt=PROMPT, turns=turns, home=home, project=project, env=AGENT_ENV
        )
    return run, run_dir, project


def _check_expectations(name: str, kind: str, seen: dict[str, Any], expect: dict[str, Any]) -> None:
    text = json.dumps(seen["requests"]) + json.dumps(seen["result"])
    for marker in expect.get("markers", []):
        assert marker in text, f"{name} ({kind}): {marker!r} never reached the model or result"
    for marker in expect.get("absent", []):
        assert marker not in text, f"{name} ({kind}): {marker!r} should not have reached the model"
    for file, present in expect.get("files", {}).items():
        assert (file in seen["files"]) == present, f"{name} ({kind}): file {file} present={present}"


CASES = [
    pytest.param(name, environment, id=f"{name}-{environment}-daemon-env")
    for name, scenario in sorted(SPEC["scenarios"].items())
    for environment in scenario.get("daemon_environments", ["minimal"])
]
"""Every scenario once with the daemon started in a service manager's minimal
environment; a scenario may list ``daemon_environments`` to run with others too."""


@pytest.mark.parametrize(("name", "environment"), CASES)
async def test_hooks_through_hookd_match_native(
    name: str, environment: DaemonEnvironment, tmp_path: Path
) -> None:
    scenario = SPEC["scenarios"][name]
    runs: dict[str, tuple[ClaudeRun, Path, Path]] = {}
    daemon = daemon_paths(tmp_path, tmp_path / "hookd" / "home")

    async def side(kind: str) -> None:
        if kind == "native":
            runs[kind] = await _run_side(kind, tmp_path, scenario)
        else:
            runs[kind] = await _run_side(kind, tmp_path, scenario, daemon, environment)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(side, "native")
        nursery.start_soon(side, "hookd")

    seen = {kind: comparable(*runs[kind]) for kind in ("native", "hookd")}
    for kind in ("native", "hookd"):
        _check_expectations(name, kind, seen[kind], scenario["expect"])
    for part in scenario.get("not_compared", []):
        for kind in ("native", "hookd"):
            seen[kind].pop(part)
    assert seen["native"] == seen["hookd"], (
        f"{name}: the session through hookd differs from native:\n"
        + diff(seen["native"], seen["hookd"])
        + f"\n(daemon log: {tmp_path / 'hookd.log'})"
    )

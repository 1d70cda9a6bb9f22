"""The Claude Agent SDK for Python: the same hooks as native callbacks and through hookd.

For every scenario of :mod:`agents.sdk_scenarios` a real SDK app
(:mod:`agents.sdk_app`, its own process, asyncio) drives the real CLI the tests
pin (tests/e2e/node_modules/.bin/claude, 2.1.330, the version the SDK bundles)
offline against the scripted fake Messages API, twice:

* **native**: the hooks are the SDK's own Python callbacks;
* **hookd**: ``ClaudeAgentOptions(hooks=hookd_hooks(), settings=hookd_settings())``,
  and the same decisions come from command hooks in the user's
  ``~/.config/hookd/hooks.json``, run by a real ``hookd serve`` (started with a
  service manager's minimal environment, so the hooks' ``PYTHONPATH`` can only
  come from the app's environment).

The runs must agree on what the model received (every request), the final
result and the permission denials, after :mod:`e2e.normalise`'s normalisations
(run directory, session id); each scenario also names markers that must reach
the model (or must not), so a scenario whose hooks silently did not run on
*both* sides still fails.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from agents.sdk_scenarios import REASONS, SCENARIOS, command_hooks
from e2e.daemon import RunningDaemon, daemon_paths, hookd_daemon
from e2e.fake_api import FakeMessagesApi, Turn, serve_fake_api
from e2e.harness import CLAUDE_BIN, ClaudeRun, claude_available, offline_env
from e2e.normalise import comparable
from support.clis import require_cli

TESTS = Path(__file__).resolve().parents[1]
PROMPT = "ORIGINAL-PROMPT: please run the command"
RUN_TIMEOUT = 240.0
"""A hang guard for one SDK run on a loaded 2-core machine, not a timing claim."""

pytestmark = [pytest.mark.slow, pytest.mark.agent_sdk]


def _sdk_available() -> bool:
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError:
        return False
    return claude_available()


@pytest.fixture(autouse=True)
def _require_sdk() -> None:
    """Skip without the SDK or the CLI on a developer's machine; fail in CI, where
    scripts/check installs both (a silent skip would report the suite green)."""
    require_cli(
        _sdk_available(),
        "claude-agent-sdk or the Claude Code CLI",
        "pip install -e '.[dev]' and run `npm install` in tests/e2e first",
    )


def hookd_config(scenario: str) -> dict[str, Any]:
    """The scenario's hooks as the user writes them for hookd: command hooks."""
    return {"hooks": command_hooks(scenario, sys.executable, for_hookd=True)}


async def run_app(
    mode: str,
    scenario: str,
    run_dir: Path,
    daemon: RunningDaemon | None = None,
    relay: tuple[str, ...] = (),
) -> tuple[ClaudeRun, Path]:
    """One SDK app run against its own fake API; the app's messages as the stream."""
    home, project = run_dir / "home", run_dir / "proj"
    home.mkdir(parents=True, exist_ok=True)  # the daemon's HOME too, on the hookd side
    project.mkdir(parents=True)
    api = FakeMessagesApi(turns=[Turn(t) for t in SCENARIOS[scenario]["turns"]])
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, api)
        spec = {
            "mode": mode,
            "scenario": scenario,
            "prompt": PROMPT,
            "project": str(project),
            "cli": str(CLAUDE_BIN),
            "env": offline_env(home, api.base_url),
            "socket": str(daemon.socket) if daemon else None,
            "relay": list(relay),
        }
        spec_file = run_dir / "spec.json"
        spec_file.write_text(json.dumps(spec))
        app_env = {
            **offline_env(home, api.base_url),
            "PYTHONPATH": str(TESTS),
        }
        with trio.fail_after(RUN_TIMEOUT):
            proc = await trio.run_process(
                [sys.executable, "-m", "agents.sdk_app", str(spec_file)],
                cwd=project,
                env=app_env,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        nursery.cancel_scope.cancel()
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, f"{mode} SDK app failed ({proc.returncode}):\n{stderr[-3000:]}"
    messages = json.loads(proc.stdout)["messages"]
    run = ClaudeRun(requests=api.requests, stream=messages, exit_code=0, stderr=stderr)
    return run, project


async def run_both(
    scenario: str, base: Path, relay: tuple[str, ...] = ()
) -> dict[str, dict[str, Any]]:
    """Both sides at once (each its own app, CLI and fake API); each side's comparable view.
    ``relay``: callback events both sides wire as command hooks instead (natively in the
    SDK's ``settings=``; through hookd with ``hookd_settings(relay=...)``)."""
    views: dict[str, dict[str, Any]] = {}

    async def native() -> None:
        run, project = await run_app("native", scenario, base / "native", relay=relay)
        views["native"] = comparable(run, base / "native", project)

    async def through_hookd() -> None:
        daemon = daemon_paths(base, base / "hookd" / "home")
        config = daemon.config_home / "hookd" / "hooks.json"
        config.parent.mkdir(parents=True)
        config.write_text(json.dumps(hookd_config(scenario)))
        async with hookd_daemon(daemon):
            run, project = await run_app("hookd", scenario, base / "hookd", daemon, relay)
        views["hookd"] = comparable(run, base / "hookd", project)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(native)
        nursery.start_soon(through_hookd)
    return views


def _diff(a: Any, b: Any, limit: int = 120) -> str:
    left = json.dumps(a, indent=1, sort_keys=True).splitlines()
    right = json.dumps(b, indent=1, sort_keys=True).splitlines()
    diff = list(difflib.unified_diff(left, right, "native", "hookd", lineterm="", n=2))
    return "\n".join(diff[:limit])


TIMEOUT_DENIED = "<PreToolUse hook timed out: the call was denied>"
EXPECT: dict[str, dict[str, list[str]]] = {
    "bash_deny": {"markers": [REASONS["deny"]], "absent": ["RM-RAN\\n"]},
    "input_rewrite": {"markers": ["REWRITTEN-BY-HOOK"], "absent": ["ORIGINAL-COMMAND\\n"]},
    "context_and_matcher": {
        "markers": [REASONS["context_bash"], "TOOL-RAN"],
        "absent": [REASONS["context_write"]],
    },
    "stop_continuation": {"markers": [REASONS["stop"], "All done."]},
    "prompt_block": {"markers": [REASONS["prompt_block"]]},
    "session_start": {"markers": [REASONS["session_context"]]},
    "timeout": {"markers": [TIMEOUT_DENIED], "absent": ["RAN-AFTER-TIMEOUT\\n"]},
    "env_probe": {"markers": ["ENV-PROBE-RAN"]},
}
"""What must (and must not) reach the model or the result, on both sides (a tool's
output is followed by ``\\n`` in the JSON; the command that would print it is not)."""

_TIMEOUT_TEXTS = {
    "native": re.compile(
        r"^PreToolUse hook did not respond before its timeout \(host client may be"
        r" unreachable\)\. The tool call was not executed; other configured hooks may not"
        r" have completed\."
    ),
    "hookd": re.compile(
        r"^PreToolUse:Bash hook error: \[[^\]\n]*agents\.sdk_hook sleep\]: failed; blocking"
        r' because onFailure is "block"\ntimed out after 2s'
    ),
}


def _timeout_difference(side: str, view: dict[str, Any]) -> dict[str, Any]:
    """The one documented difference of a timed-out PreToolUse (docs/agents.md): both
    deny the call, in their own words — the CLI's for a callback that did not answer,
    hookd's for a hook that timed out with ``onFailure: "block"`` — and only a hook's
    deny is listed among the result's permission denials."""
    pattern = _TIMEOUT_TEXTS[side]

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("type") == "tool_result" and isinstance(value.get("content"), str):
                value = {**value, "content": pattern.sub(TIMEOUT_DENIED, value["content"])}
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return {**walk(view), "permission_denials": []}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_sdk_hooks_through_hookd_match_native(scenario: str, tmp_path: Path) -> None:
    seen = await run_both(scenario, tmp_path)
    if scenario == "timeout":
        seen = {side: _timeout_difference(side, view) for side, view in seen.items()}
    for side, view in seen.items():
        text = json.dumps(view["requests"]) + json.dumps(view["result"])
        for marker in EXPECT[scenario]["markers"]:
            assert marker in text, f"{scenario} ({side}): {marker!r} never reached the model"
        for marker in EXPECT[scenario].get("absent", []):
            assert marker not in text, f"{scenario} ({side}): {marker!r} should not be there"
    assert seen["native"] == seen["hookd"], (
        f"{scenario}: the SDK session through hookd differs from native:\n"
        + _diff(seen["native"], seen["hookd"])
        + f"\n(daemon log: {tmp_path / 'hookd.log'})"
    )


async def test_callback_events_give_hooks_the_cli_s_environment(tmp_path: Path) -> None:
    """The CLI gives its own command hooks ``AI_AGENT``, ``CLAUDE_PID`` (itself),
    ``CLAUDE_CODE_CHILD_SESSION=1``, ``CLAUDE_CODE_SESSION_ATTENDED=0`` and
    ``COREPACK_ENABLE_AUTO_PIN=0`` (claude-code-observed.md, ``env_and_cwd``); a hook run
    by hookd for a callback event gets them too — ``CLAUDE_PID`` naming the CLI process."""
    await run_both("env_probe", tmp_path)
    found = json.loads((tmp_path / "hookd" / "home" / "hook-env.json").read_text())
    assert found["AI_AGENT"] == "claude-code_2-1-330_harness"
    assert found["CLAUDE_CODE_CHILD_SESSION"] == "1"
    assert found["CLAUDE_CODE_SESSION_ATTENDED"] == "0"
    assert found["COREPACK_ENABLE_AUTO_PIN"] == "0"
    assert found["CLAUDE_PID"] and "claude" in found["claude_pid_cmdline"], found


async def test_a_stop_block_relayed_as_a_command_hook_is_framed_as_a_command_hook_s(
    tmp_path: Path,
) -> None:
    """Through ``hookd_hooks()`` a Stop block is a callback's, which the CLI frames as one
    (``Stop:Callback hook blocking error``).  With ``hookd_settings(relay=["Stop"])`` it
    is a command hook's, framed exactly as a native command hook's in the SDK's settings
    (``Stop hook blocking error from command: …``)."""
    seen = await run_both("stop_continuation", tmp_path, relay=("Stop",))
    assert seen["native"] == seen["hookd"], _diff(seen["native"], seen["hookd"])
    text = json.dumps(seen["hookd"]["requests"][-1])
    assert "Stop hook blocking error from command" in text, text[-2000:]
    assert "Callback" not in text and "callback" not in text

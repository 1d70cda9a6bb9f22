"""The documented-only agents through the whole door: install, then their hook run as they run it.

No Cursor, Windsurf, goose or Kiro runs here (Qwen Code, Factory Droid and Cline
do: tests/agents/test_qwen.py, test_factory.py, test_cline.py), so this is the
closest to it: ``hookctl agents install AGENT`` (a real process) writes the agent's
file as for a user; the command it wired for the agent's shell event is then run
the way the agent runs a hook — ``sh -c`` with the agent's documented stdin —
against a real daemon on a real socket; the answer must be a deny in that agent's
own words.
It proves the command line the installer writes, the relay's ``--agent``, the
daemon's decode → pipeline → encode route and the adapter's encoding together.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from cli.helpers import hookctl
from hookd.agents.registry import adapter_for
from support.daemon import DaemonHandle, configure

pytestmark = pytest.mark.slow  # a hookctl process and a relay process per agent

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no rm here",
    }
}


def deny_cursor(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "permission": "deny",
        "user_message": "no rm here",
        "agent_message": "no rm here",
    }


def deny_exit_2(done: subprocess.CompletedProcess[str]) -> None:
    assert (done.returncode, done.stderr.strip()) == (2, "no rm here"), done.stdout


def deny_claude(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("deny", "no rm here")


CASES = [
    ("cursor", "beforeShellExecution", deny_cursor),
    ("windsurf", "pre_run_command", deny_exit_2),
    ("goose", "PreToolUse", deny_claude),
    ("kiro", "PreToolUse", deny_exit_2),
]


def with_project(raw: dict[str, Any], project: Path) -> dict[str, Any]:
    """The documented input, pointed at the test's project directory wherever it names one."""
    text = json.dumps(raw).replace('"/work/proj', f'"{project}')
    data: dict[str, Any] = json.loads(text)
    return data


def find_command(value: Any, needle: str) -> str | None:
    """The command string in a wired JSON file that runs ``needle``."""
    if isinstance(value, str) and needle in value:
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for item in items:
        found = find_command(item, needle)
        if found is not None:
            return found
    return None


def deny_bash(handle: DaemonHandle) -> dict[str, str]:
    """The daemon's user config: one Bash guard that denies; hookctl's environment for it."""
    hook = {"type": "command", "command": f"cat >/dev/null; echo '{json.dumps(DENY)}'"}
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})
    return {
        "HOME": str(handle.home),
        "XDG_CONFIG_HOME": str(handle.home / ".config"),
        "XDG_STATE_HOME": str(handle.home / ".state"),
        "HOOKD_SOCKET": str(handle.socket),
    }


async def install(agent: str, env: dict[str, str]) -> None:
    done = await trio.to_thread.run_sync(
        lambda: hookctl("agents", "install", agent, "--python-relay", env=env)
    )
    assert done.returncode == 0, done.stderr


def wired_argv(agent: str, native: str, home: Path) -> list[str]:
    """How the agent starts the hook install wired for ``native``."""
    adapter = adapter_for(agent)
    needle = f"--agent {agent} {native}"
    files = adapter.install_files("user", home, None)
    command = find_command(json.loads(files[0].read_text()), needle)
    assert command is not None, f"{agent}: no wired command for {native} in {files[0]}"
    return ["sh", "-c", command]


async def run_as_agent(
    argv: list[str], agent: str, native: str, project: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    raw = json.loads((DATA / f"{agent}-docs" / f"{native}.json").read_text())
    stdin = json.dumps(with_project(raw, project))
    full = {**os.environ, **env}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, cwd=project, env=full,
            timeout=60, check=False,
        )  # fmt: skip

    return await trio.to_thread.run_sync(run)


async def test_each_documented_agent_denies_in_its_own_words_through_hookd(
    daemon_factory: Any,
) -> None:
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    env = deny_bash(handle)
    for agent, native, check in CASES:
        await install(agent, env)
        done = await run_as_agent(
            wired_argv(agent, native, handle.home), agent, native, project, env
        )
        try:
            check(done)
        except AssertionError as exc:
            detail = f"stdout={done.stdout!r} stderr={done.stderr!r}"
            raise AssertionError(f"{agent} {native}: {exc}\n{detail}") from exc


async def test_the_bash_matcher_holds_at_cursors_read_gate(daemon_factory: Any) -> None:
    """Cursor's beforeReadFile is PreToolUse for Read: the Bash guard lets it through."""
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    env = deny_bash(handle)
    await install("cursor", env)
    argv = wired_argv("cursor", "beforeReadFile", handle.home)
    done = await run_as_agent(argv, "cursor", "beforeReadFile", project, env)
    assert done.returncode == 0 and done.stdout.strip() in ("", "{}"), (done.stdout, done.stderr)


async def test_an_event_that_names_no_directory_gets_the_hooks_working_directory(
    daemon_factory: Any,
) -> None:
    """Windsurf's pre_read_code carries no cwd: the project is where the agent ran the hook
    (the relay's PWD), so that project's own hooks apply — here a Read guard."""
    handle: DaemonHandle = await daemon_factory()
    project = handle.project()
    deny_read = {**DENY["hookSpecificOutput"], "permissionDecisionReason": "not the .env"}
    hook = {
        "type": "command",
        "command": f"cat >/dev/null; echo '{json.dumps({'hookSpecificOutput': deny_read})}'",
    }
    (project / ".claude" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [hook]}]}})
    )
    env = deny_bash(handle)
    await install("windsurf", env)
    raw = json.loads((DATA / "windsurf-docs" / "pre_read_code.json").read_text())
    assert "cwd" not in raw["tool_info"] and "cwd" not in raw
    argv = wired_argv("windsurf", "pre_read_code", handle.home)
    done = await run_as_agent(argv, "windsurf", "pre_read_code", project, env)
    assert (done.returncode, done.stderr.strip()) == (2, "not the .env"), done.stdout

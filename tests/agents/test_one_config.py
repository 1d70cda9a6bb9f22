"""The issue's "done when", at the doors: several agents installed into one HOME, one hooks.json.

Claude Code, Codex, Gemini CLI, Copilot CLI and Qwen Code each have the same
shell guard in their own file, in their own words (Gemini's ``run_shell_command``
and milliseconds, Copilot's Claude-shaped file, …).  ``hookctl agents
install`` for each (real processes) moves them into the one
``~/.config/hookd/hooks.json`` — the guard once, not five times — and wires
each agent's file.  Then, with a real daemon on that config, each agent's
wired PreToolUse command is run as that agent runs a hook, on the input that
agent really sends (recorded fixtures; Qwen's written from its docs): every
one denies, in its own words.  Editing the one file changes what every agent
gets.  Uninstalling one agent gives its file back and leaves the shared guard
to the others.  (Each agent's own e2e test runs the real CLI: tests/agents/test_<agent>.py.)
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from cli.helpers import hookctl
from hookd.agents.registry import adapter_for
from support.daemon import DaemonHandle

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"


def guard(reason: str) -> str:
    """A hook that reads the event and denies with ``reason`` (in Claude Code's words)."""
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return f"cat >/dev/null; echo '{json.dumps(out)}'"


def write(path: Path, data: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


def each_agents_own_file(home: Path, command: str) -> dict[str, tuple[Path, str]]:
    """The same guard, as each agent's user would have written it for that agent."""
    claude = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": command, "timeout": 30}]}]}}  # fmt: skip
    files = {
        "claude": (home / ".claude" / "settings.json", claude),
        "codex": (home / ".codex" / "hooks.json", claude),
        "gemini": (
            home / ".gemini" / "settings.json",
            {
                "hooksConfig": {"enabled": True},
                "hooks": {
                    "BeforeTool": [
                        {
                            "matcher": "run_shell_command",
                            "hooks": [{"type": "command", "command": command, "timeout": 30000}],
                        }
                    ]
                },
            },
        ),
        "copilot": (home / ".copilot" / "hooks" / "hooks.json", claude),
        "qwen": (
            home / ".qwen" / "settings.json",
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "run_shell_command",
                            "hooks": [{"type": "command", "command": command, "timeout": 30}],
                        }
                    ]
                }
            },
        ),
    }
    return {agent: (path, write(path, data)) for agent, (path, data) in files.items()}


def find_command(value: Any, needle: str) -> str | None:
    if isinstance(value, str) and needle in value:
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for item in items:
        found = find_command(item, needle)
        if found is not None:
            return found
    return None


def codex_deny(reason: str, done: subprocess.CompletedProcess[str]) -> None:
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("deny", reason)


def gemini_deny(reason: str, done: subprocess.CompletedProcess[str]) -> None:
    assert json.loads(done.stdout) == {"decision": "deny", "reason": reason}


def copilot_deny(reason: str, done: subprocess.CompletedProcess[str]) -> None:
    out = json.loads(done.stdout)
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("deny", reason)


DOORS: list[tuple[str, str, Path, Callable[[str, subprocess.CompletedProcess[str]], None]]] = [
    ("codex", "PreToolUse", DATA / "codex-0.169.0" / "PreToolUse.json", codex_deny),
    ("gemini", "BeforeTool", DATA / "gemini-cli-0.61.0" / "BeforeTool.json", gemini_deny),
    (
        "copilot",
        "preToolUse",
        DATA / "copilot-cli-1.0.102-native" / "preToolUse.json",
        copilot_deny,
    ),
    ("qwen", "PreToolUse", DATA / "qwen-code-0.24.4" / "PreToolUse.json", codex_deny),
]


async def run_door(
    agent: str, native: str, fixture: Path, handle: DaemonHandle, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    [path, *_] = adapter_for(agent).install_files("user", handle.home, None)
    command = find_command(json.loads(path.read_text()), f"--agent {agent} {native}")
    assert command is not None, f"{agent}: nothing wired for {native} in {path}"
    project = handle.project()
    raw = json.loads(fixture.read_text())
    raw = {**raw, "cwd": str(project)}  # every one of these inputs names its cwd there

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", command], input=json.dumps(raw), capture_output=True, text=True,
            cwd=project, env={**os.environ, **env}, timeout=60, check=False,
        )  # fmt: skip

    return await trio.to_thread.run_sync(run)


async def test_one_hooks_json_for_every_agent(daemon_factory: Any) -> None:
    # Serving the http port Claude Code gets wired to (an unserved one is install's error).
    handle: DaemonHandle = await daemon_factory(http_port=0)
    handle.user_config.unlink(missing_ok=True)  # a new user: hookd has no config yet
    env = {
        "HOME": str(handle.home),
        "XDG_CONFIG_HOME": str(handle.home / ".config"),
        "XDG_STATE_HOME": str(handle.home / ".state"),
        "HOOKD_SOCKET": str(handle.socket),
        "COPILOT_HOME": str(handle.home / ".copilot"),
    }
    originals = each_agents_own_file(handle.home, guard("no rm here"))
    for agent in originals:
        argv = ["agents", "install", agent, "--python-relay"]
        argv += ["--port", str(handle.daemon.http_port)] if agent == "claude" else []
        done = await trio.to_thread.run_sync(functools.partial(hookctl, *argv, env=env))
        assert done.returncode == 0, (agent, done.stderr)

    # One config, the guard once: every agent's copy was the same hook.
    config = json.loads(handle.user_config.read_text())
    assert config == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": guard("no rm here"), "timeout": 30}]}]}}  # fmt: skip

    handle.daemon.reload()
    for agent, native, fixture, deny in DOORS:
        done = await run_door(agent, native, fixture, handle, env)
        try:
            assert done.returncode == 0, done.stderr
            deny("no rm here", done)
        except (AssertionError, json.JSONDecodeError) as exc:
            raise AssertionError(f"{agent}: {exc}\n{done.stdout!r}\n{done.stderr!r}") from exc

    # Edit the one file: the next call of every agent obeys it.
    config["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = guard("edited once")
    handle.user_config.write_text(json.dumps(config))
    handle.daemon.reload()
    for agent, native, fixture, deny in DOORS:
        done = await run_door(agent, native, fixture, handle, env)
        deny("edited once", done)

    # Uninstalling one agent gives its file back; the shared guard stays for the others.
    config["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = guard("no rm here")
    handle.user_config.write_text(json.dumps(config))
    done = await trio.to_thread.run_sync(lambda: hookctl("agents", "uninstall", "gemini", env=env))
    assert done.returncode == 0, done.stderr
    path, original = originals["gemini"]
    assert path.read_text() == original
    assert json.loads(handle.user_config.read_text())["hooks"]["PreToolUse"]

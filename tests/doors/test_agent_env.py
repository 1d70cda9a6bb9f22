"""The Claude Code hook environment the http endpoint rebuilds from a real peer process.

Each test starts a real process (a copy of ``sleep`` laid out like a Claude Code
install, with its own environment and working directory) and reads it back
through ``/proc`` exactly as the endpoint does for its TCP peer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hookd.agent_process import claude_version, read_environ
from hookd.doors.agent_env import read_agent

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

SLEEP = shutil.which("sleep") or "/bin/sleep"


@contextmanager
def _process(exe: Path, env: dict[str, str], cwd: Path) -> Iterator[int]:
    """A running ``exe`` whose exec is complete: /proc shows its new image and environment
    (waited for, as the endpoint's peer — a long-running Claude Code — always is)."""
    proc = subprocess.Popen([str(exe), "60"], env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + 10
        while not _exec_done(proc.pid, exe, env):
            assert time.monotonic() < deadline, "the test process never showed its new image"
            time.sleep(0.01)
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _exec_done(pid: int, exe: Path, env: dict[str, str]) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/exe") == str(exe.resolve()) and read_environ(pid) == env
    except OSError:
        return False


def _npm_layout(root: Path, version: str) -> Path:
    """``…/@anthropic-ai/claude-code/bin/claude.exe`` with the package's package.json."""
    package = root / "node_modules" / "@anthropic-ai" / "claude-code"
    (package / "bin").mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@anthropic-ai/claude-code", "version": version})
    )
    exe = package / "bin" / "claude.exe"
    shutil.copy(SLEEP, exe)
    return exe


def test_an_npm_install_gives_the_version_and_the_agent_environment(tmp_path: Path) -> None:
    exe = _npm_layout(tmp_path, "2.1.330")
    project = tmp_path / "proj"
    project.mkdir()
    env = {"PATH": "/agent/bin:/usr/bin", "HOME": str(tmp_path), "AGENT_TOKEN": "t0k"}
    with _process(exe, env, project) as pid:
        assert claude_version(pid) == "2.1.330"
        agent = read_agent(pid, "batch")
        hook_env = agent.for_event("PreToolUse", {"effort": {"level": "high"}})
    assert hook_env["PATH"] == "/agent/bin:/usr/bin"
    assert hook_env["AGENT_TOKEN"] == "t0k"
    assert hook_env["CLAUDE_PID"] == str(pid)
    assert hook_env["CLAUDE_PROJECT_DIR"] == str(project)
    assert hook_env["AI_AGENT"] == "claude-code_2-1-330_harness"
    assert hook_env["CLAUDE_CODE_ENTRYPOINT"] == "sdk-cli"
    assert hook_env["CLAUDE_CODE_SESSION_ATTENDED"] == "0"
    assert hook_env["CLAUDE_EFFORT"] == "high"
    assert "CLAUDE_ENV_FILE" not in hook_env  # not an env-file event


def test_a_native_install_reads_the_version_from_its_path(tmp_path: Path) -> None:
    versions = tmp_path / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    exe = versions / "2.2.0"
    shutil.copy(SLEEP, exe)
    with _process(exe, {"HOME": str(tmp_path)}, tmp_path) as pid:
        assert claude_version(pid) == "2.2.0"
        agent = read_agent(pid, "interactive")
    assert agent.base["CLAUDE_CODE_ENTRYPOINT"] == "cli"
    assert agent.base["CLAUDE_CODE_SESSION_ATTENDED"] == "1"


def test_the_env_file_is_in_claude_codes_session_env_directory(tmp_path: Path) -> None:
    """CwdChanged/FileChanged over http: the file Claude Code sources before Bash commands,
    under ``$CLAUDE_CONFIG_DIR`` when the agent has one, else ``$HOME/.claude``."""
    exe = _npm_layout(tmp_path, "2.1.330")
    config = tmp_path / "cfg"
    raw = {"session_id": "s-1"}
    with _process(exe, {"HOME": str(tmp_path)}, tmp_path) as pid:
        by_home = read_agent(pid, "batch").for_event("CwdChanged", raw)
    with _process(exe, {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(config)}, tmp_path) as pid:
        by_config = read_agent(pid, "batch").for_event("FileChanged", raw)
    assert by_home["CLAUDE_ENV_FILE"] == str(
        tmp_path / ".claude" / "session-env" / "s-1" / "cwdchanged-hook-0.sh"
    )
    assert by_config["CLAUDE_ENV_FILE"] == str(
        config / "session-env" / "s-1" / "filechanged-hook-0.sh"
    )


def test_an_unknown_executable_has_no_version() -> None:
    with _process(Path(SLEEP), {}, Path("/")) as pid:
        assert claude_version(pid) is None
        assert "AI_AGENT" not in read_agent(pid, "batch").base

"""Every door gives hooks the *agent's* environment, whatever the daemon's is.

A real ``hookd serve`` is started the way a service manager starts it: only
``HOME``, ``PATH=/usr/bin:/bin``, ``LANG`` and the XDG directories.  Its one
PreToolUse hook is ``agent-guard``, a program found only on the agent's
``PATH``, that denies with the value of a variable only the agent has.  With
the daemon's environment the hook is "not found" (exit 127, non-blocking) and
the tool would run — the failure this test exists for.  Each door is driven
from its own process started with the agent's environment, as an agent would:
the client library (``hello.env``), hookd-relay (its ``relay`` request) and an
http hook request (the endpoint reads the peer's ``/proc/<pid>/environ``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from hookd_client import relay

DATA = Path(__file__).resolve().parents[1] / "data"
RELAY = Path(relay.__file__).resolve()
GUARD = """#!/bin/sh
env > "$AGENT_RECORD"
echo "denied for $AGENT_ONLY_VAR" >&2
exit 2
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


@dataclass
class Daemon:
    socket: Path
    port: int
    token: str


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def _minimal_daemon(root: Path) -> AsyncIterator[Daemon]:
    """``hookd serve`` with a service manager's environment and one PreToolUse hook."""
    home = root / "daemon-home"
    home.mkdir()
    hooks = root / "hooks.json"
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "agent-guard"}]}
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_RUNTIME_DIR": str(root / "run"),
    }
    sock, port = root / "hookd.sock", _free_port()
    args = [sys.executable, "-m", "hookd", "serve", "--socket", str(sock)]
    args += ["--http-port", str(port), "--user-file", str(hooks)]
    args += ["--policy-file", str(root / "none.json"), "--log-format", "json"]
    with (root / "hookd.log").open("wb") as log:
        proc = await trio.lowlevel.open_process(args, env=env, stdout=log, stderr=log)
    try:
        token_file = home / ".config" / "hookd" / "http-token"
        with trio.fail_after(30):
            while not (sock.exists() and token_file.exists()):
                assert proc.poll() is None, (root / "hookd.log").read_text()
                await trio.sleep(0.02)
            while True:  # the http listener opens after the socket
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                except OSError:
                    await trio.sleep(0.02)
                    continue
                await stream.aclose()
                break
        yield Daemon(sock, port, token_file.read_text().strip())
    finally:
        proc.terminate()
        with trio.move_on_after(15):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()


def _agent_env(root: Path, door: str) -> dict[str, str]:
    """The agent's environment: its own PATH entry and a variable the daemon lacks."""
    bin_dir = root / "agent-bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        guard = bin_dir / "agent-guard"
        guard.write_text(GUARD)
        guard.chmod(0o755)
    return {
        "HOME": str(root),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "AGENT_ONLY_VAR": f"AGENT-SECRET-{door}",
        "AGENT_RECORD": str(root / f"{door}.env"),
    }


def _event(project: Path) -> bytes:
    raw = json.loads((DATA / "cc-fixtures" / "PreToolUse-Bash.json").read_text())
    raw["cwd"] = str(project / "sub")  # the model ran `cd sub`
    return json.dumps(raw).encode()


CLIENT = """
import json, sys
from hookd_client.client import Client
with Client(sys.argv[1]) as client:
    reply = client.fire("PreToolUse", json.loads(sys.stdin.read()))
print(json.dumps({"decision": reply.result.decision, "reason": reply.result.reason}))
"""

HTTP = """
import http.client, json, sys
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
headers = {"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"}
conn.request("POST", "/hooks/PreToolUse", body=sys.stdin.buffer.read(), headers=headers)
print(conn.getresponse().read().decode())
"""


async def _door(door: str, daemon: Daemon, root: Path, project: Path) -> tuple[str, str]:
    """Fire the event through one door; returns the (decision, reason) it answered."""
    env = _agent_env(root, door)
    if door == "client":
        argv = [sys.executable, "-c", CLIENT, str(daemon.socket)]
    elif door == "relay":
        argv = [
            sys.executable,
            "-I",
            "-S",
            str(RELAY),
            "PreToolUse",
            "--socket",
            str(daemon.socket),
        ]
    else:
        argv = [sys.executable, "-c", HTTP, str(daemon.port), daemon.token]
    proc = await trio.run_process(
        argv,
        stdin=_event(project),
        env=env,
        cwd=project,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    answer = json.loads(proc.stdout)
    if door == "client":
        return answer["decision"], answer["reason"]
    specific = answer["hookSpecificOutput"]
    return specific["permissionDecision"], specific["permissionDecisionReason"]


def _recorded(root: Path, door: str) -> dict[str, str]:
    lines = (root / f"{door}.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


@pytest.mark.parametrize("door", ["client", "relay", "http"])
async def test_hooks_get_the_agents_environment_at_every_door(door: str, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    async with _minimal_daemon(tmp_path) as daemon:
        decision, reason = await _door(door, daemon, tmp_path, project)
    assert decision == "deny", f"the guard did not run with the agent's PATH: {reason}"
    assert f"denied for AGENT-SECRET-{door}" in (reason or "")
    env = _recorded(tmp_path, door)
    assert env["PATH"].startswith(str(tmp_path / "agent-bin"))
    assert env["HOME"] == str(tmp_path)  # the agent's, not the daemon's
    if door == "http":
        # What Claude Code adds for a hook subprocess, rebuilt by the endpoint: the
        # peer's pid, and the project root (the peer's cwd), not the session's `cd sub`.
        assert env["CLAUDECODE"] == "1"
        assert env["CLAUDE_CODE_CHILD_SESSION"] == "1"
        assert env["CLAUDE_PID"].isdigit() and env["CLAUDE_PID"] != str(os.getpid())
        assert env["CLAUDE_PROJECT_DIR"] == str(project)
        assert env["CLAUDE_EFFORT"] == "medium"  # the fixture's effort.level


def test_the_daemon_really_lacks_the_agents_path() -> None:
    """The premise: /usr/bin:/bin has no agent-guard (else the test above proves nothing)."""
    found = subprocess.run(
        ["/bin/sh", "-c", "command -v agent-guard"],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=False,
    )
    assert found.returncode != 0

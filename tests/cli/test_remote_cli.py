"""hookctl's daemon commands against a real daemon: exit codes, --json, header rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.cli.examples import example_input
from hookd_client.client import Client
from hookd_client.events import EVENT_NAMES
from support.daemon import configure

from .helpers import CC_FIXTURES, cli_env


async def _hookctl(socket: Path, *args: str) -> tuple[int, str]:
    done = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(socket), *args],
        capture_stdout=True,
        capture_stderr=True,
        env=cli_env(),
        check=False,
    )
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def test_status_exits_1_while_the_config_has_errors(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    code, out = await _hookctl(handle.socket, "status")
    assert code == 0, out
    handle.user_config.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}')
    code, out = await _hookctl(handle.socket, "reload", "--json")
    assert code == 1
    assert json.loads(out)["errors"]
    code, out = await _hookctl(handle.socket, "status")
    assert code == 1 and "config errors:" in out
    assert "\033[" not in out  # not a terminal: plain
    code, out = await _hookctl(handle.socket, "--color", "always", "status")
    assert "\033[1mconfig errors:\033[0m" in out
    assert any(line.startswith("\033[31m  ") for line in out.splitlines())


async def test_tail_has_a_header_and_stop_speaks_json(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    code, out = await _hookctl(handle.socket, "tail")
    assert code == 0
    assert out.splitlines()[0].split() == [
        "time",
        "session",
        "agent",
        "event",
        "outcome",
        "exit",
        "ms",
        "hook",
    ]
    code, out = await _hookctl(handle.socket, "stop", "--json")
    assert code == 0 and json.loads(out)["pid"] == os.getpid()


DENY = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]}


async def _fire(
    socket: Path, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``hookctl fire ARGS`` run in ``cwd`` through the daemon at ``socket``."""
    env = cli_env()
    env.pop("CLAUDE_PROJECT_DIR", None)  # the project is the fire's own directory
    return await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(socket), "fire", *args],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
        cwd=cwd,
        stdin=None if stdin is None else stdin.encode(),
        check=False,
    )


def _sessions(socket: Path) -> list[str]:
    with Client(socket) as client:
        return [s["session_id"] for s in client.status()["sessions"]]


async def test_each_fire_judges_its_own_directory_and_leaves_no_session(
    daemon_factory: Any,
) -> None:
    """Every fire had session "hookctl", and a session keeps its first project: after a
    fire in A, a fire in B (whose hook denies) said "allowed (0 hooks)", exit 0."""
    handle = await daemon_factory()
    first, second = handle.project("a"), handle.project("b")
    (second / ".claude" / "hooks.json").write_text(json.dumps({"hooks": DENY}))
    handle.daemon.reload()
    done = await _fire(handle.socket, first, "PreToolUse", "--format", "text")
    assert done.returncode == 0, done.stderr
    done = await _fire(handle.socket, second, "PreToolUse", "--format", "text")
    assert done.returncode == 4, done.stdout.decode() + done.stderr.decode()
    assert done.stdout.decode().startswith("PreToolUse: deny  (1 hook)")
    done = await _fire(handle.socket, first, "PreToolUse", "--format", "text")
    assert done.returncode == 0, done.stderr
    # README's flow: `hookctl example PreToolUse > event.json`, fired in B then in A.
    saved = json.dumps(example_input("PreToolUse", str(second)))
    done = await _fire(handle.socket, second, "PreToolUse", "--input", "-", stdin=saved)
    assert done.returncode == 4, done.stderr
    saved = json.dumps(example_input("PreToolUse", str(first)))
    done = await _fire(handle.socket, first, "PreToolUse", "--input", "-", stdin=saved)
    assert done.returncode == 0, done.stderr
    assert await trio.to_thread.run_sync(_sessions, handle.socket) == []


async def test_a_known_session_from_another_project_is_said(daemon_factory: Any) -> None:
    """A session id given in --input that the daemon knows from another project keeps that
    project: the fire says which project it judged, and the agent's session stays.  The
    example's own id (`hookctl`, saved in event.json) is one-shot like a filled one."""
    handle = await daemon_factory()
    first, second = handle.project("a"), handle.project("b")
    (second / ".claude" / "hooks.json").write_text(json.dumps({"hooks": DENY}))
    handle.daemon.reload()

    def agent_event() -> None:  # an agent's session, started in A
        with Client(handle.socket) as client:
            client.fire(
                "PreToolUse", {**example_input("PreToolUse", str(first)), "session_id": "s1"}
            )

    await trio.to_thread.run_sync(agent_event)
    given = json.dumps({"session_id": "s1", "tool_input": {"command": "ls"}})
    done = await _fire(handle.socket, second, "PreToolUse", "--input", "-", stdin=given)
    stderr = done.stderr.decode()
    assert f"session 's1' is known to the daemon in {first}" in stderr
    assert f"not {second}'s" in stderr
    assert await trio.to_thread.run_sync(_sessions, handle.socket) == ["s1"]
    # An agent's own id is a real session (`fire --format claude` as a command hook): kept.
    given = json.dumps({"session_id": "s2", "tool_input": {"command": "ls"}})
    done = await _fire(handle.socket, first, "PreToolUse", "--input", "-", stdin=given)
    assert done.returncode == 0 and b"known to the daemon" not in done.stderr
    assert await trio.to_thread.run_sync(_sessions, handle.socket) == ["s1", "s2"]


async def test_hooks_held_back_by_trust_are_said_through_the_daemon(daemon_factory: Any) -> None:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    (project / ".claude" / "hooks.json").write_text(json.dumps({"hooks": DENY}))
    handle.daemon.reload()
    done = await _fire(handle.socket, project, "PreToolUse", "--format", "text")
    assert done.returncode == 0
    assert f"hookctl: 1 hook(s) of {project} held back: " in done.stderr.decode()
    assert "not trusted" in done.stderr.decode()


@pytest.mark.parametrize("event", ["NoSuchEvent", "pretooluse"])
async def test_an_unknown_event_is_an_error_through_the_daemon(
    daemon_factory: Any, event: str
) -> None:
    handle = await daemon_factory()
    done = await _fire(handle.socket, handle.project(), event, "--format", "text")
    assert done.returncode == 1 and done.stdout == b""
    assert f"unknown event {event!r}" in done.stderr.decode()
    if event == "pretooluse":
        assert "did you mean PreToolUse?" in done.stderr.decode()


async def test_recorded_claude_code_inputs_reach_the_hook_as_sent(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Through the daemon too, a complete input is what the hook reads: every recorded
    Claude Code input, no field added, none reordered."""
    handle = await daemon_factory()
    out = tmp_path / "stdin.json"
    hook = {"type": "command", "command": f"cat > {out}"}
    configure(handle, {event: [{"hooks": [hook]}] for event in EVENT_NAMES})
    for fixture in sorted(CC_FIXTURES.glob("*.json")):
        sent = fixture.read_text()
        event = json.loads(sent)["hook_event_name"]
        done = await _fire(handle.socket, tmp_path, event, "--input", str(fixture))
        assert done.returncode in (0, 4), (fixture.name, done.stderr)
        assert b"filled" not in done.stderr, fixture.name
        received = json.loads(out.read_text(), object_pairs_hook=list)
        assert received == json.loads(sent, object_pairs_hook=list), fixture.name


async def test_status_text_shows_the_http_endpoint(daemon_factory: Any) -> None:
    off = await daemon_factory(http_socket=False)
    code, out = await _hookctl(off.socket, "status")
    assert code == 0, out
    assert "http endpoint not served (http_port unset in hookd.toml), http socket not served" in out
    on = await daemon_factory(http_port=0)
    port = on.daemon.http_port
    assert port
    code, out = await _hookctl(on.socket, "status")
    assert f"http endpoint http://127.0.0.1:{port}/ (served), http socket " in out
    assert f"{on.daemon.http_socket} (served)" in out

"""Copilot's events through Claude Code's wiring: answered as Copilot's, and run once.

Copilot CLI runs a project's ``.claude/settings.json`` hooks itself, with its own
payload (:mod:`hookd.agents.guests`).  Here the real relay (``python -m
hookd_client.relay PreToolUse``, Claude Code's wiring: no ``--agent``) gets the input
Copilot 1.0.102 really sent when calling the MCP tool ``srv-echo``, in a real daemon:

* without Copilot's own wiring, the event is Copilot's — the MCP name mapped, so a
  guard on ``mcp__srv__echo`` fires, and the answer in Copilot's words;
* with Copilot's own wiring installed, which gets the same event, this delivery runs
  nothing and says nothing (the hooks run once, at Copilot's door);
* Claude Code's own input at the same door is Claude Code's, as before.

The whole path with the real Copilot CLI is ``test_copilot.py``'s
``test_with_claude_code_s_wiring_too_each_hook_runs_once_in_copilot_s_words``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import trio

from support.daemon import configure

MCP = Path(__file__).resolve().parents[1] / "data" / "agents" / "mcp"
CLAUDE = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-agent-sdk-0.2.187"


def copilot_input(cwd: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (MCP / "copilot-1.0.102-claude-shape-PreToolUse.json").read_text(encoding="utf-8")
    )
    data.pop("_fixture", None)
    return data | {"cwd": str(cwd)}


def guard(marker: Path) -> dict[str, Any]:
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "NO-ECHO",
        }
    }
    script = f"cat >/dev/null; echo ran >> {shlex.quote(str(marker))}; echo '{json.dumps(deny)}'"
    return {"matcher": "mcp__srv__echo", "hooks": [{"type": "command", "command": script}]}


async def relay(socket: Path, payload: dict[str, Any], home: Path) -> dict[str, Any] | None:
    """Claude Code's wiring: the relay with no ``--agent``, run as Copilot runs it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    done = await trio.run_process(
        [sys.executable, "-m", "hookd_client.relay", "PreToolUse", "--socket", str(socket)],
        stdin=json.dumps(payload).encode(),
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode().strip()
    return json.loads(out) if out else None


async def test_copilot_s_input_at_claude_code_s_door_is_copilot_s(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    configure(handle, {"PreToolUse": [guard(marker)]})
    out = await relay(handle.socket, copilot_input(project), handle.home)
    assert marker.read_text() == "ran\n"
    # Copilot's own words (what it reads under either file shape), not Claude Code's.
    assert out == {"permissionDecision": "deny", "permissionDecisionReason": "NO-ECHO"}


async def test_with_copilot_s_own_wiring_the_claude_code_delivery_runs_nothing(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    every_tool = {k: v for k, v in guard(marker).items() if k != "matcher"}
    configure(handle, {"PreToolUse": [every_tool]})
    hooks = handle.home / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    command = "hookd-relay --agent copilot preToolUse"
    wired = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": command}]}}
    (hooks / "hooks.json").write_text(json.dumps(wired))
    assert await relay(handle.socket, copilot_input(project), handle.home) is None
    assert not marker.exists()


async def test_claude_code_s_own_input_stays_claude_code_s(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    configure(handle, {"PreToolUse": [{**guard(marker), "matcher": "Bash"}]})
    payload = json.loads((CLAUDE / "PreToolUse.json").read_text(encoding="utf-8"))
    payload |= {"cwd": str(project)}
    out = await relay(handle.socket, payload, handle.home)
    assert marker.exists()
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


async def test_copilot_s_project_wiring_counts_as_its_own_door(daemon_factory: Any) -> None:
    """``hookctl agents install copilot --project`` writes ``.github/hooks/hooks.json``:
    that wiring also gets the event, so Claude Code's delivery runs nothing."""
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    every_tool = {k: v for k, v in guard(marker).items() if k != "matcher"}
    configure(handle, {"PreToolUse": [every_tool]})
    hooks = project / ".github" / "hooks"
    hooks.mkdir(parents=True)
    command = "hookd-relay --agent copilot preToolUse --fail-closed"
    entry = [{"type": "command", "bash": command}]
    wired = {"version": 1, "hooks": {"preToolUse": entry}}
    (hooks / "hookd.json").write_text(json.dumps(wired))
    assert await relay(handle.socket, copilot_input(project), handle.home) is None
    assert not marker.exists()
    # Wired for another event only: this one runs, as Copilot's.
    (hooks / "hookd.json").write_text(json.dumps({"version": 1, "hooks": {"agentStop": entry}}))
    out = await relay(handle.socket, copilot_input(project), handle.home)
    assert marker.exists() and out is not None and out["permissionDecision"] == "deny"


async def test_copilot_s_camel_case_permission_request_at_claude_code_s_door(
    daemon_factory: Any,
) -> None:
    """Copilot sends PermissionRequest camelCase even to a Claude-shaped hook (``srv/echo``
    on the MCP call): it is Copilot's, decoded (the guard on ``mcp__srv__echo`` fires) and
    answered in Copilot's words — not refused as a Claude Code input it is not."""
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "NO-ECHO"},
        }
    }
    script = f"cat >/dev/null; echo ran >> {shlex.quote(str(marker))}; echo '{json.dumps(deny)}'"
    group = {"matcher": "mcp__srv__echo", "hooks": [{"type": "command", "command": script}]}
    configure(handle, {"PermissionRequest": [group]})
    payload = json.loads(
        (MCP / "copilot-1.0.102-native-permissionRequest.json").read_text(encoding="utf-8")
    )
    payload.pop("_fixture", None)
    payload["cwd"] = str(project)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(handle.home)}
    done = await trio.run_process(
        [sys.executable, "-m", "hookd_client.relay", "PermissionRequest", "--socket",
         str(handle.socket)],
        stdin=json.dumps(payload).encode(),
        env=env,
        capture_stdout=True,
        check=False,
    )  # fmt: skip
    assert marker.exists()
    assert json.loads(done.stdout) == {"behavior": "deny", "message": "NO-ECHO"}


# --- the same rules at Claude Code's http door (the pipeline's ``fire``) -------------------

POST = r"""
import json, socket, sys
body = sys.stdin.buffer.read()
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"POST /hooks/%s HTTP/1.1\r\nhost: x\r\nconnection: close\r\n" % sys.argv[2].encode()
          + b"content-length: %d\r\n\r\n" % len(body) + body)
data = b""
while chunk := s.recv(65536):
    data += chunk
head, _, answer = data.partition(b"\r\n\r\n")
assert head.startswith(b"HTTP/1.1 200 "), data
sys.stdout.buffer.write(answer)
"""


async def post(
    handle: Any, payload: dict[str, Any], event: str = "PreToolUse"
) -> dict[str, Any] | None:
    """An http hook of Claude Code's wiring, posted by a process of ``handle``'s home (the
    http door reads the agent's environment from the peer process: its HOME decides
    whether Copilot's own wiring is there)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(handle.home)}
    done = await trio.run_process(
        [sys.executable, "-I", "-S", "-c", POST, str(handle.daemon.http_socket), event],
        stdin=json.dumps(payload).encode(),
        env=env,
        capture_stdout=True,
    )
    out = done.stdout.decode().strip()
    return json.loads(out) if out else None


async def test_at_the_http_door_copilot_s_input_is_copilot_s_and_runs_once(
    daemon_factory: Any,
) -> None:
    """Copilot posts a project's Claude-shaped http hooks too: without its own wiring the
    event runs as Copilot's (the MCP name mapped) and is answered in Copilot's words;
    with its own wiring, this delivery runs nothing and says nothing; Claude Code's own
    input at the same door is Claude Code's."""
    handle = await daemon_factory()
    project = handle.project()
    marker = handle.root / "ran"
    every_tool = {k: v for k, v in guard(marker).items() if k != "matcher"}
    configure(handle, {"PreToolUse": [guard(marker), {**every_tool, "matcher": "Bash"}]})
    out = await post(handle, copilot_input(project))
    assert marker.read_text() == "ran\n"
    assert out == {"permissionDecision": "deny", "permissionDecisionReason": "NO-ECHO"}

    claude = json.loads((CLAUDE / "PreToolUse.json").read_text(encoding="utf-8"))
    out = await post(handle, claude | {"cwd": str(project)})
    assert marker.read_text() == "ran\nran\n"
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny", out

    hooks = handle.home / ".copilot" / "hooks"
    hooks.mkdir(parents=True)
    command = "hookd-relay --agent copilot preToolUse"
    wired = {"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": command}]}}
    (hooks / "hooks.json").write_text(json.dumps(wired))
    assert await post(handle, copilot_input(project)) is None
    assert marker.read_text() == "ran\nran\n", "the hook ran at both doors"


async def test_at_the_http_door_copilot_s_stop_loop_is_capped_as_at_its_own_door(
    daemon_factory: Any,
) -> None:
    """Claude Code caps its own Stop loops, so hookd adds no cap at its doors — but a
    Copilot Stop through Claude Code's wiring is Copilot's, and Copilot's loops are
    capped by hookd (``stop_block_cap``), as at Copilot's own door."""
    handle = await daemon_factory()
    project = handle.project()
    again = {"type": "command", "command": "cat >/dev/null; echo AGAIN >&2; exit 2"}
    configure(handle, {"Stop": [{"hooks": [again]}]})
    stop = {
        "session_id": "s-copilot-stop",
        "cwd": str(project),
        "hook_event_name": "Stop",
        "timestamp": "2026-11-27T10:00:00.000Z",
        "stop_hook_active": False,
    }
    cap = handle.daemon.settings.stop_block_cap
    answers = [await post(handle, stop, "Stop") for _ in range(cap + 1)]
    blocked = [a is not None and a.get("decision") == "block" for a in answers]
    assert blocked == [True] * cap + [False], answers


def test_an_input_with_a_transcript_path_is_claude_code_s_whatever_else_it_carries() -> None:
    """Claude Code sends every event a ``transcript_path``; an input that has one is Claude
    Code's own at its door, even with fields a guest's input has (an ISO ``timestamp``,
    camelCase ``sessionId``) — and each of Claude Code's real inputs without one of them
    reads as the guest's it then is."""
    from hookd.agents.guests import guest_at_claude_door

    fixtures = sorted((Path(__file__).resolve().parents[1] / "data" / "cc-fixtures").glob("*.json"))
    assert fixtures
    for path in fixtures:
        raw = json.loads(path.read_text())
        assert "transcript_path" in raw, path
        for extra in ({}, {"timestamp": "2026-01-01T00:00:00Z"}, {"sessionId": "s"}):
            assert guest_at_claude_door({**raw, **extra}) is None, (path, extra)
        guest = {k: v for k, v in raw.items() if k != "transcript_path"}
        claimed = guest_at_claude_door({**guest, "timestamp": "2026-01-01T00:00:00Z"})
        assert claimed is not None and claimed.name == "copilot", path

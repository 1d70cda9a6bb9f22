"""Run the real Factory Droid CLI offline against the fake Messages API, hooks native or via hookd.

:func:`run_droid` starts ``droid exec`` in a fresh project with a fresh ``HOME``
(nothing of the real ``~`` is read or written), its model a BYOK custom model
(``customModels`` in ``~/.factory/settings.json``, provider ``anthropic``, no
Factory account: ``custom:fake-model``) pointed at a
:class:`~e2e.fake_api.FakeMessagesApi` that replays the given turns, with a set
of hooks in Claude Code's shape:

* **native**: written to ``~/.factory/hooks.json`` — the events are that file's
  top-level keys (Droid ignores a ``{"hooks": …}`` wrapper there);
* **hookd**: written there too, then ``hookctl agents install factory`` moves them
  into ``~/.config/hookd/hooks.json`` and wires one ``hookd-relay --agent factory``
  entry per event in their place, and a real ``hookd serve`` runs them.

Droid is driven over its JSON-RPC stdio protocol (``--input-format
stream-jsonrpc``), as its TUI and daemon drive it: ``droid exec PROMPT`` never
fires UserPromptSubmit (only the JSON-RPC session's ``add_user_message`` runs
those hooks, seen at 0.225.2).  One run: ``initialize_session`` (autonomy
``high``: no one is asked to approve a command), then ``add_user_message``, then
the turn's end (``agent_turn_completed``), then stdin closed, which ends the
session (SessionEnd).

It returns what two runs are compared on: what the model received (tool results
and the texts hooks can cause, in every request), the notifications Droid sent
(tool results it reports, its errors), the final text, the exit code, the
project's files and the hooks' own marker lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trio

from agents.agent_wiring import short_daemon_paths, through_hookd
from e2e.fake_api import FakeMessagesApi, Turn, serve_fake_api

__all__ = ["DROID_BIN", "DroidRun", "Mode", "droid_available", "run_droid"]

DROID_BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "droid"
RUN_TIMEOUT = 180.0
"""Generous: a loaded 2-core machine runs several CLIs at once."""
PROMPT = "Please run the shell command for me."
MODEL = "fake-model"
FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"

Mode = Literal["native", "hookd"]


def droid_available() -> bool:
    return DROID_BIN.exists() and shutil.which("node") is not None


def settings(base_url: str) -> dict[str, Any]:
    """``~/.factory/settings.json``: the fake model as a BYOK custom model."""
    model = {
        "model": MODEL,
        "displayName": "Fake",
        "baseUrl": base_url,
        "apiKey": "sk-test",
        "provider": "anthropic",
        "maxOutputTokens": 1024,
    }
    return {"customModels": [model]}


def mcp_config(log: Path) -> dict[str, Any]:
    """``~/.factory/mcp.json`` naming :mod:`agents.fake_mcp` the stdio server ``srv``."""
    server = {
        "type": "stdio",
        "command": sys.executable,
        "args": [str(FAKE_MCP)],
        "env": {"MCP_LOG": str(log)},
    }
    return {"mcpServers": {"srv": server}}


@dataclass
class DroidRun:
    exit_code: int
    stderr: str
    files: dict[str, str]
    api: FakeMessagesApi
    notifications: list[dict[str, Any]]
    """Droid's ``droid.session_notification`` payloads, in order."""
    install_output: str = ""
    daemon_log: str = ""
    records: list[str] = field(default_factory=list)
    """Lines the hooks appended to ``$HOOK_LOG`` (a marker per hook that ran)."""

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [n for n in self.notifications if n.get("type") == kind]

    def final_text(self) -> str | None:
        """The last assistant message's text, from Droid's streamed deltas."""
        deltas = self.of_type("assistant_text_delta")
        if not deltas:
            return None
        last = deltas[-1].get("messageId")
        return "".join(str(d.get("textDelta")) for d in deltas if d.get("messageId") == last)

    def seen(self) -> list[dict[str, Any]]:
        """What the model received, request by request: every tool result, and every
        text a hook can cause (a marker, the prompt), in the messages and the system."""
        out = []
        for body in self.api.requests:
            results: list[str] = []
            texts: list[str] = []
            for message in body.get("messages", []):
                content = message.get("content")
                blocks = (
                    content if isinstance(content, list) else [{"type": "text", "text": content}]
                )
                for block in blocks:
                    if block.get("type") == "tool_result":
                        results.append(_mask(_text_of(block.get("content"))))
                    elif block.get("type") == "text" and _from_hook(str(block.get("text"))):
                        texts.append(f"{message.get('role')}: {_mask(str(block.get('text')))}")
            system = _text_of(body.get("system"))
            texts += [f"system: {line}" for line in system.splitlines() if "MARK" in line]
            out.append({"tool_results": results, "texts": texts})
        return out

    def comparable(self) -> dict[str, Any]:
        return {
            "seen": self.seen(),
            "final": self.final_text(),
            "exit_code": self.exit_code,
            "files": self.files,
            "records": sorted(self.records),
        }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


_MASKS = ((re.compile(r"toolu_\w+"), "toolu_X"),)


def _mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _from_hook(text: str) -> bool:
    return PROMPT in text or "MARK" in text


async def run_droid(
    root: Path,
    turns: list[Turn],
    hooks: dict[str, Any],
    mode: Mode,
    *,
    relay: Path | None = None,
    prompt: str = PROMPT,
    mcp: bool = False,
) -> DroidRun:
    """One Droid session in ``root`` (a fresh directory) with ``hooks`` in Claude Code's shape.

    ``relay``: the compiled relay the install wires; None installs the Python relay.
    ``mcp``: configure :mod:`agents.fake_mcp` as the MCP server ``srv``; its calls are
    ``echo <text>`` lines in ``records``."""
    home, project = root / "home", root / "proj"
    factory = home / ".factory"
    for d in (factory, project):
        d.mkdir(parents=True)
    api = FakeMessagesApi(turns)
    hook_log = root / "hook-log.txt"
    hook_log.touch()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOOK_LOG": str(hook_log),
    }
    (factory / "hooks.json").write_text(json.dumps(hooks, indent=2))
    if mcp:
        (factory / "mcp.json").write_text(json.dumps(mcp_config(hook_log)))
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, api)
        (factory / "settings.json").write_text(json.dumps(settings(api.base_url), indent=2))
        if mode == "native":
            run = await _run(env, root, project, prompt, api)
        else:
            with short_daemon_paths("hkfd", home) as daemon:
                async with through_hookd("factory", daemon, relay) as wired:
                    run = await _run(env, root, project, prompt, api)
                run.install_output, run.daemon_log = wired.install_output, wired.daemon_log
        nursery.cancel_scope.cancel()
    run.records = [line for line in hook_log.read_text().splitlines() if line]
    return run


def _request(ident: str, method: str, params: dict[str, Any]) -> bytes:
    frame = {
        "jsonrpc": "2.0",
        "type": "request",
        "factoryApiVersion": "1.0.0",
        "id": ident,
        "method": method,
        "params": params,
    }
    return (json.dumps(frame) + "\n").encode()


class _Session:
    """Droid's stdout, frame by frame: responses by id, notifications in order."""

    def __init__(self, stdout: trio.abc.ReceiveStream) -> None:
        self._stdout = stdout
        self._buffer = b""
        self.notifications: list[dict[str, Any]] = []
        self.responses: dict[str, dict[str, Any]] = {}

    async def until(self, done: Any) -> None:
        """Read frames until ``done(self)`` holds (or Droid closes its stdout)."""
        while not done(self):
            chunk = await self._stdout.receive_some(65536)
            if not chunk:
                return
            self._buffer += chunk
            *lines, self._buffer = self._buffer.split(b"\n")
            for line in lines:
                self._take(line)

    def _take(self, line: bytes) -> None:
        if not line.strip().startswith(b"{"):
            return
        frame = json.loads(line)
        if frame.get("type") == "response":
            self.responses[str(frame.get("id"))] = frame
        elif frame.get("method") == "droid.session_notification":
            self.notifications.append(frame["params"]["notification"])

    def turn_over(self) -> bool:
        """The turn has ended: completed, or refused (a UserPromptSubmit block ends it
        with an error and Droid idle again)."""
        if "2" in self.responses and "error" in self.responses["2"]:
            return True
        kinds = [n.get("type") for n in self.notifications]
        return "agent_turn_completed" in kinds or "error" in kinds


async def _run(
    env: dict[str, str], root: Path, project: Path, prompt: str, api: FakeMessagesApi
) -> DroidRun:
    args = [str(DROID_BIN), "exec", "--input-format", "stream-jsonrpc", "-o", "stream-jsonrpc"]
    init = {
        "machineId": "hookd-test",
        "cwd": str(project),
        "modelId": f"custom:{MODEL}",
        "autonomyLevel": "high",
    }
    stderr_path = root / f"droid-stderr-{len(list(root.glob('droid-stderr-*')))}.txt"
    with trio.fail_after(RUN_TIMEOUT), stderr_path.open("wb") as stderr:
        proc = await trio.lowlevel.open_process(
            args, cwd=project, env=env, stdin=-1, stdout=-1, stderr=stderr
        )
        try:
            assert proc.stdin is not None and proc.stdout is not None
            session = _Session(proc.stdout)
            await proc.stdin.send_all(_request("1", "droid.initialize_session", init))
            await session.until(lambda s: "1" in s.responses)
            assert "error" not in session.responses.get("1", {}), session.responses
            await proc.stdin.send_all(_request("2", "droid.add_user_message", {"text": prompt}))
            await session.until(_Session.turn_over)
            await proc.stdin.aclose()
            await session.until(lambda _s: False)  # to the end: SessionEnd runs on close
            code = await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    files = {
        p.name: p.read_text(errors="replace") for p in sorted(project.iterdir()) if p.is_file()
    }
    return DroidRun(
        exit_code=code,
        stderr=stderr_path.read_text(errors="replace"),
        files=files,
        api=api,
        notifications=session.notifications,
    )

"""Run the real Cline CLI offline against the fake Messages API, hooks native or through hookd.

:func:`run_cline` starts ``cline --json PROMPT`` in a fresh git project with a fresh
``HOME`` (nothing of the real ``~`` is read or written) and Cline's Anthropic provider
pointed at a :class:`~e2e.fake_api.FakeMessagesApi` — the fake the Claude Code tests
use: Cline's CLI speaks the Anthropic Messages API through its ``anthropic`` provider,
whose ``baseUrl`` its ``providers.json`` takes (``cline auth`` refuses ``--baseurl`` for
it, the file does not; an entry without ``updatedAt`` is ignored and the run goes to the
real API).  No account is needed.  ``--data-dir`` (Cline's "sandbox mode") keeps the run
in-process: without it Cline looks for its background hub, starts one for next time and
runs the next task — and its hooks — inside that long-lived daemon.

The hooks are given twice, in each side's own words — Cline's hooks speak their own
protocol (``{"cancel", "contextModification", "overrideInput"}`` on stdout, exit code
ignored), hookd's config Claude Code's:

* **native**: ``native`` maps a Cline hook file name (``PreToolUse``) to a shell body;
  each becomes ``~/Documents/Cline/Hooks/<name>``, as a user writes them;
* **hookd**: ``claude`` (Claude Code's ``hooks`` object) is hookd's config, and
  ``hookctl agents install cline`` wires one relay script per event into the same
  folder; a real ``hookd serve`` runs the hooks.

The runs are compared on what the model received (every request's user messages: tool
results and the ``<hook_context>`` Cline adds), the run's end (``finishReason``,
``text``), the exit code, the project's files and the hooks' own marker lines.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trio

from agents.agent_wiring import short_daemon_paths, through_hookd
from e2e.fake_api import FakeMessagesApi, Turn, serve_fake_api

__all__ = ["CLINE_BIN", "ClineRun", "Mode", "cline_available", "run_cline"]

CLINE_BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "cline"
RUN_TIMEOUT = 180.0
"""Generous: a loaded 2-core machine runs several CLIs at once."""
RECORD_TIMEOUT = 60.0
"""How long the fire-and-forget hooks (TaskStart, TaskComplete …) get to leave their mark."""
PROMPT = "Please run the shell command for me."
MODEL = "claude-sonnet-4-5"
FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"

Mode = Literal["native", "hookd"]


def cline_available() -> bool:
    return CLINE_BIN.exists() and shutil.which("node") is not None


@dataclass
class ClineRun:
    exit_code: int
    stdout: str
    stderr: str
    files: dict[str, str]
    """The project's files after the run (name → text)."""
    api: FakeMessagesApi
    install_output: str = ""
    daemon_log: str = ""
    records: list[str] = field(default_factory=list)
    """Lines the hooks (and the fake MCP server) appended to ``$HOOK_LOG``."""
    wired: dict[str, str] = field(default_factory=dict)
    """The hook folder as Cline read it: file name → text."""

    def seen(self) -> list[list[Any]]:
        """What the model received, request by request: every user message's content
        (the prompt, tool results, the context hooks added)."""
        return [
            [m.get("content") for m in request.get("messages", []) if m.get("role") == "user"]
            for request in self.api.requests
        ]

    def result(self) -> dict[str, Any]:
        """How the run ended, from ``--json``'s ``run_result`` line."""
        for line in reversed(self.stdout.splitlines()):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict) and event.get("type") == "run_result":
                return {"finishReason": event.get("finishReason"), "text": event.get("text")}
        return {}

    def comparable(self) -> dict[str, Any]:
        return {
            "seen": self.seen(),
            "result": self.result(),
            "exit_code": self.exit_code,
            "files": self.files,
            "records": sorted(self.records),
        }


def provider_settings(base_url: str) -> dict[str, Any]:
    """Cline's ``providers.json``: the Anthropic provider at the fake server."""
    settings = {"provider": "anthropic", "apiKey": "sk-test", "model": MODEL}
    entry = {
        "settings": {**settings, "baseUrl": f"{base_url}/v1"},
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "tokenSource": "manual",
    }
    return {
        "version": 1,
        "lastUsedProvider": "anthropic",
        "modes": {},
        "providers": {"anthropic": entry},
    }


def mcp_settings(hook_log: Path) -> dict[str, Any]:
    """Cline's ``cline_mcp_settings.json`` naming :mod:`agents.fake_mcp` the server ``srv``
    (its tool ``echo`` is ``srv__echo`` to Cline)."""
    server = {"command": sys.executable, "args": [str(FAKE_MCP)], "env": {"MCP_LOG": str(hook_log)}}
    return {"mcpServers": {"srv": server}}


async def run_cline(
    root: Path,
    turns: list[Turn],
    mode: Mode,
    *,
    native: dict[str, str] | None = None,
    claude: dict[str, Any] | None = None,
    relay: Path,
    records: int = 0,
    mcp: bool = False,
    subdir: str = "",
) -> ClineRun:
    """One Cline run in ``root`` (a fresh directory): ``native`` hook files (mode native)
    or ``claude`` hooks in hookd's config with Cline wired by install (mode hookd).

    ``records``: wait until the hooks left at least this many marks (the fire-and-forget
    ones outlive the run).  ``mcp``: with :mod:`agents.fake_mcp` as the MCP server
    ``srv``.  ``subdir``: Cline started in this subdirectory of the project."""
    home, project = root / "home", root / "proj"
    data = home / ".cline" / "data"
    hooks_dir = home / "Documents" / "Cline" / "Hooks"
    for d in (data / "settings", hooks_dir, project):
        d.mkdir(parents=True, exist_ok=True)
    await trio.run_process(["git", "init", "-q", str(project)], check=True)
    start = project / subdir if subdir else project
    start.mkdir(parents=True, exist_ok=True)
    hook_log = root / "hook-log.txt"
    hook_log.touch()
    if mcp:
        (data / "settings" / "cline_mcp_settings.json").write_text(
            json.dumps(mcp_settings(hook_log))
        )
    api = FakeMessagesApi(turns)
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, api)
        (data / "settings" / "providers.json").write_text(
            json.dumps(provider_settings(api.base_url))
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOOK_LOG": str(hook_log),
        }
        if mode == "native":
            for name, body in (native or {}).items():
                script = hooks_dir / name
                script.write_text(f"#!/bin/sh\n{body}\n")
                script.chmod(0o755)
            run = await _run(env, project, start, data, api, hook_log, records)
        else:
            with short_daemon_paths("hkcl", home) as daemon:
                async with through_hookd("cline", daemon, relay, hooks=claude or {}) as wired:
                    run = await _run(env, project, start, data, api, hook_log, records)
                run.install_output, run.daemon_log = wired.install_output, wired.daemon_log
        nursery.cancel_scope.cancel()
    run.wired = {p.name: p.read_text() for p in sorted(hooks_dir.iterdir()) if p.is_file()}
    return run


def _marks(hook_log: Path) -> list[str]:
    return [line for line in hook_log.read_text().splitlines() if line]


async def _run(
    env: dict[str, str],
    project: Path,
    start: Path,
    data: Path,
    api: FakeMessagesApi,
    hook_log: Path,
    records: int,
) -> ClineRun:
    args = [str(CLINE_BIN), "--json", "--data-dir", str(data), PROMPT]
    with trio.fail_after(RUN_TIMEOUT):
        done = await trio.run_process(
            args,
            cwd=start,
            env=env,
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    with trio.fail_after(RECORD_TIMEOUT):
        while len(_marks(hook_log)) < records:
            await trio.sleep(0.05)
    files = {
        p.name: p.read_text(errors="replace") for p in sorted(project.iterdir()) if p.is_file()
    }
    return ClineRun(
        exit_code=done.returncode,
        stdout=done.stdout.decode(errors="replace"),
        stderr=done.stderr.decode(errors="replace"),
        files=files,
        api=api,
        records=_marks(hook_log),
    )

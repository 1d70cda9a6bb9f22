"""Run the real Claude Code CLI offline against the fake Messages API.

:func:`run_claude` starts ``claude -p PROMPT --output-format stream-json`` in
a project directory with a fresh ``HOME`` (so no user settings leak in),
pointed at a :class:`~tests.e2e.fake_api.FakeMessagesApi` that replays the
given assistant turns, and returns what matters for comparing two runs: the
request bodies the "model" received, the tool calls and their results, and the
final ``result`` message of the stream.

The environment follows claude-code-observed.md ("Running the real CLI
offline"): a fake key, no telemetry, no non-essential traffic, and
``IS_SANDBOX=1`` so that ``--dangerously-skip-permissions`` is accepted as root.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from e2e.fake_api import FakeMessagesApi, Side, Turn, serve_fake_api

__all__ = ["CLAUDE_BIN", "ClaudeRun", "claude_available", "run_claude"]

E2E_DIR = Path(__file__).resolve().parent
CLAUDE_BIN = E2E_DIR / "node_modules" / ".bin" / "claude"
RUN_TIMEOUT = 180.0
"""Generous: a loaded 2-core machine runs several CLIs at once."""


def claude_available() -> bool:
    return CLAUDE_BIN.exists() and shutil.which("node") is not None


@dataclass
class ClaudeRun:
    requests: list[dict[str, Any]]
    """Every /v1/messages body the fake API received, in order."""
    stream: list[dict[str, Any]]
    """The stream-json messages printed by the CLI."""
    exit_code: int
    stderr: str
    paths: list[str] = field(default_factory=list)
    sides: list[list[dict[str, Any]]] = field(default_factory=list)
    """Each :class:`Side`'s request bodies (a prompt hook's questions, a sub-agent's turns)."""

    @property
    def result(self) -> dict[str, Any]:
        """The final ``{"type": "result", …}`` message (empty if the CLI printed none)."""
        for message in reversed(self.stream):
            if message.get("type") == "result":
                return dict(message)
        return {}

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block in the last request: what the model saw from each tool."""
        if not self.requests:
            return []
        found = []
        for message in self.requests[-1].get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(block)
        return found


def offline_env(home: Path, base_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",
    }
    env.update(extra or {})
    return env


async def run_claude(
    *,
    prompt: str,
    turns: list[Turn],
    home: Path,
    project: Path,
    settings: Path | None = None,
    env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    skip_permissions: bool = True,
    sides: tuple[Side, ...] = (),
    more_prompts: tuple[str, ...] = (),
) -> ClaudeRun:
    """One ``claude -p`` run; the fake API lives only for the run's duration.

    ``skip_permissions``: pass ``--dangerously-skip-permissions`` (without it the
    CLI runs in its default permission mode, where PermissionRequest fires).
    ``sides``: conversations answered outside ``turns`` (see :class:`Side`); their
    requests are recorded in each side.
    ``more_prompts``: user turns after ``prompt`` in the same session (e.g. a
    ``/compact`` once there is a conversation to compact): all of them are sent
    on stdin with ``--input-format stream-json``.
    """
    api = FakeMessagesApi(turns=list(turns), sides=list(sides))
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    stdin = b""
    if more_prompts:
        stdin = b"".join(
            json.dumps({"type": "user", "message": {"role": "user", "content": text}}).encode()
            + b"\n"
            for text in (prompt, *more_prompts)
        )
    args = [
        str(CLAUDE_BIN),
        "-p",
        *(["--input-format", "stream-json"] if more_prompts else [prompt]),
        "--output-format",
        "stream-json",
        "--verbose",
        *(["--dangerously-skip-permissions"] if skip_permissions else []),
        *extra_args,
    ]
    if settings is not None:
        args += ["--settings", str(settings)]
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, api)
        with trio.fail_after(RUN_TIMEOUT):
            proc = await trio.run_process(
                args,
                cwd=project,
                env=offline_env(home, api.base_url, env),
                stdin=stdin,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        nursery.cancel_scope.cancel()
    stream = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                stream.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return ClaudeRun(
        requests=api.requests,
        stream=stream,
        exit_code=proc.returncode,
        stderr=proc.stderr.decode("utf-8", "replace"),
        paths=api.paths,
        sides=[side.requests for side in sides],
    )

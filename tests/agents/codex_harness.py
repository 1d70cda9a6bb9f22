"""Run the real Codex CLI offline against the fake Responses API, hooks native or through hookd.

:func:`run_codex` starts ``codex exec --json`` in a fresh project with a fresh
``HOME``/``CODEX_HOME`` (nothing of the real ``~`` is read or written), pointed
at a :class:`~agents.fake_responses.FakeResponsesApi` that replays the given
turns, with a set of hooks in Claude Code's shape:

* **native**: written to ``$CODEX_HOME/hooks.json``, where Codex runs them;
* **hookd**: written there too, then ``hookctl agents install codex`` moves them
  into ``~/.config/hookd/hooks.json`` and wires one ``hookd-relay --agent codex``
  entry per event in their place, and a real ``hookd serve`` runs them.

It returns what two runs are compared on: what the model received (every
request body), the shell commands that ran (Codex's ``command_execution``
items), the final message, the exit code, and the project's files.

The recipe is agents.md §1: ``--skip-git-repo-check`` (the project is no git
repository), ``--dangerously-bypass-hook-trust`` (otherwise ``exec`` skips
untrusted hooks silently — in both modes, so the comparison would pass with no
hook running; every scenario therefore also asserts its markers), stdin from
``/dev/null`` (otherwise Codex waits for more input).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import trio

from agents.agent_wiring import short_daemon_paths, through_hookd
from agents.fake_responses import FakeResponsesApi, Turn, serve_fake_responses

__all__ = ["CODEX_BIN", "CodexRun", "Mode", "codex_available", "run_codex"]

CODEX_BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "codex"
RUN_TIMEOUT = 180.0
"""Generous: a loaded 2-core machine runs several CLIs at once."""
PROMPT = "Please run the shell command for me."

Mode = Literal["native", "hookd"]

CONFIG = """\
model = "{model}"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "Fake local Responses API"
base_url = "{base_url}"
env_key = "FAKE_API_KEY"
wire_api = "responses"
"""

FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"
MCP_CONFIG = """
[mcp_servers.srv]
command = "{python}"
args = ["{server}"]
env = {{ MCP_LOG = "{log}" }}
"""


def codex_available() -> bool:
    return CODEX_BIN.exists() and shutil.which("node") is not None


@dataclass
class CodexRun:
    requests: list[dict[str, Any]]
    """Every scripted /v1/responses body, in order."""
    stream: list[dict[str, Any]]
    """``codex exec --json`` events."""
    exit_code: int
    stderr: str
    files: dict[str, str]
    """The project's files after the run (name → text)."""
    api: FakeResponsesApi
    install_output: str = ""
    daemon_log: str = ""
    records: list[str] = field(default_factory=list)
    """Lines the hooks appended to ``$HOOK_LOG`` (a marker per hook that ran)."""

    def commands(self) -> list[tuple[str, int | None]]:
        """Every shell command Codex ran, with its exit code."""
        return [
            (str(item.get("command")), item.get("exit_code"))
            for event in self.stream
            if event.get("type") == "item.completed"
            for item in [event.get("item") or {}]
            if item.get("type") == "command_execution"
        ]

    def final_message(self) -> str | None:
        for event in reversed(self.stream):
            item = event.get("item") or {}
            if event.get("type") == "item.completed" and item.get("type") == "agent_message":
                return str(item.get("text"))
        return None

    def seen(self) -> list[dict[str, Any]]:
        """What the model received, request by request, without run-specific noise:
        tool outputs (Codex's chunk ids and wall times masked), developer and user
        messages that hooks can affect (Codex's own instructions left out)."""
        out = []
        for index in range(len(self.api.requests)):
            out.append(
                {
                    "tool_outputs": [_mask(o) for o in self.api.tool_outputs(index)],
                    "developer": [
                        _mask(m) for m in self.api.messages("developer", index) if _from_hook(m)
                    ],
                    "user": [_mask(m) for m in self.api.messages("user", index) if _from_hook(m)],
                }
            )
        return out

    def comparable(self) -> dict[str, Any]:
        return {
            "seen": self.seen(),
            "commands": self.commands(),
            "final": self.final_message(),
            "exit_code": self.exit_code,
            "files": self.files,
            "records": sorted(self.records),
        }


_MASKS = (
    (re.compile(r"Chunk ID: \w+"), "Chunk ID: X"),
    (re.compile(r"Wall time: [\d.]+ seconds"), "Wall time: X seconds"),
    (re.compile(r"hook_run_id=\"[^\"]*\""), 'hook_run_id="X"'),
)


def _mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _from_hook(message: str) -> bool:
    """A message a hook can cause: the prompt, hook prompts, hook context (markers)."""
    return PROMPT in message or "<hook_prompt" in message or "MARK" in message


def _hook_log_line(root: Path) -> Path:
    return root / "hook-log.txt"


async def run_codex(
    root: Path,
    turns: list[Turn],
    hooks: dict[str, Any],
    mode: Mode,
    *,
    relay: Path | None = None,
    prompt: str = PROMPT,
    model: str = "gpt-fake",
    mcp: bool = False,
    interrupt: bool = False,
) -> CodexRun:
    """One Codex run in ``root`` (a fresh directory) with ``hooks`` in Claude Code's shape.

    ``relay``: the compiled relay the install wires (the session's build of
    relay/hookd-relay.c, so the source under test runs, not a stale venv copy);
    None installs the Python relay.  ``model``: ``gpt-5.5`` (a slug of Codex's catalog)
    makes Codex offer its freeform ``apply_patch`` tool.  ``mcp``: configure
    :mod:`agents.fake_mcp` as the MCP server ``srv``; its calls are ``echo <text>`` lines
    in ``records``.  ``interrupt``: SIGINT to ``codex exec`` once its first command has
    started (as Ctrl-C would), which fires Codex's Interrupt and SessionEnd events."""
    home, project = root / "home", root / "proj"
    codex_home = home / ".codex"
    for d in (codex_home, project):
        d.mkdir(parents=True)
    api = FakeResponsesApi(turns)
    hook_log = _hook_log_line(root)
    hook_log.touch()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "CODEX_HOME": str(codex_home),
        "FAKE_API_KEY": "sk-test",
        "HOOK_LOG": str(hook_log),
    }
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2))
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_responses, api)
        config = CONFIG.format(base_url=api.base_url, model=model)
        if mcp:
            config += MCP_CONFIG.format(python=sys.executable, server=FAKE_MCP, log=hook_log)
        (codex_home / "config.toml").write_text(config)
        if mode == "native":
            run = await _run(env, project, prompt, api, interrupt)
        else:
            with short_daemon_paths("hkcx", home) as daemon:
                async with through_hookd("codex", daemon, relay) as wired:
                    run = await _run(env, project, prompt, api, interrupt)
                run.install_output, run.daemon_log = wired.install_output, wired.daemon_log
        nursery.cancel_scope.cancel()
    run.records = [line for line in hook_log.read_text().splitlines() if line]
    return run


async def _run(
    env: dict[str, str], project: Path, prompt: str, api: FakeResponsesApi, interrupt: bool = False
) -> CodexRun:
    args = [
        str(CODEX_BIN),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        prompt,
    ]
    with trio.fail_after(RUN_TIMEOUT):
        if interrupt:
            done = await _run_interrupted(args, env, project)
        else:
            done = await trio.run_process(
                args,
                cwd=project,
                env=env,
                stdin=b"",
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    stream = []
    for line in done.stdout.decode(errors="replace").splitlines():
        if line.startswith("{"):
            stream.append(json.loads(line))
    files = {
        p.name: p.read_text(errors="replace") for p in sorted(project.iterdir()) if p.is_file()
    }
    return CodexRun(
        requests=api.requests,
        stream=stream,
        exit_code=done.returncode,
        stderr=done.stderr.decode(errors="replace"),
        files=files,
        api=api,
    )


async def _run_interrupted(
    args: list[str], env: dict[str, str], project: Path
) -> subprocess.CompletedProcess[bytes]:
    """``codex exec``, sent SIGINT once its stream says the first command started."""
    proc = await trio.lowlevel.open_process(
        args, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_drain, proc.stderr, err)
            while b'"type":"command_execution"' not in out:
                chunk = await proc.stdout.receive_some(65536)
                if not chunk:
                    break
                out += chunk
            proc.send_signal(signal.SIGINT)
            await _drain(proc.stdout, out)
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return subprocess.CompletedProcess(args, code, bytes(out), bytes(err))


async def _drain(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    while chunk := await stream.receive_some(65536):
        into += chunk

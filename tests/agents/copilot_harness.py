"""Run the real Copilot CLI offline against the fake Responses API, hooks native or through hookd.

:func:`run_copilot` starts ``copilot -p`` in a fresh git project with a fresh
``HOME``/``COPILOT_HOME`` (nothing of the real ``~`` is read or written; the
CLI's unpacked package is shared between runs through ``XDG_CACHE_HOME``, a
directory of the test session), in BYOK offline mode pointed at a
:class:`~agents.fake_responses.FakeResponsesApi` (agents.md §4:
``COPILOT_OFFLINE=true`` needs no GitHub login), with a hook file in
``$COPILOT_HOME/hooks/hooks.json`` in either of Copilot's shapes:

* **native**: Copilot runs the file itself;
* **hookd**: the same file, then ``hookctl agents install copilot`` moves its
  hooks into ``~/.config/hookd/hooks.json`` and wires one
  ``hookd-relay --agent copilot <event>`` entry per event in their place, and a
  real ``hookd serve`` runs them.

``COPILOT_ALLOW_ALL=true`` trusts the folder and allows every tool, so the
run needs no one to approve anything (``--allow-all-tools`` says it again).

It returns what two runs are compared on: what the model received (tool
outputs and the user messages hooks can cause, in every request), the tool
calls the model's history shows (after any rewrite: Copilot puts the
arguments that ran into the history), the transcript ``copilot -p`` printed,
the exit code, the project's files and the hooks' own marker lines.
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
from agents.fake_responses import FakeResponsesApi, Turn, serve_fake_responses
from e2e.daemon import VENV_BIN, RunningDaemon, hookd_daemon

__all__ = ["COPILOT_BIN", "CopilotRun", "Mode", "copilot_available", "run_copilot"]

COPILOT_BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin" / "copilot"
RUN_TIMEOUT = 180.0
"""Generous: a loaded 2-core machine runs several CLIs at once."""
PROMPT = "Please run the shell command for me."
MODEL = "gpt-5.4"
"""A catalog model: Copilot gives it the ``bash`` tool (and ``apply_patch``)."""

Mode = Literal["native", "hookd"]


FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"


def mcp_config() -> dict[str, Any]:
    """Copilot's ``mcp-config.json`` naming :mod:`agents.fake_mcp` the local server ``srv``."""
    server: dict[str, Any] = {
        "type": "local",
        "command": sys.executable,
        "args": [str(FAKE_MCP)],
        "tools": ["*"],
        "env": {"MCP_LOG": "${HOOK_LOG}"},
    }
    return {"mcpServers": {"srv": server}}


def copilot_available() -> bool:
    return COPILOT_BIN.exists() and shutil.which("node") is not None


@dataclass
class CopilotRun:
    exit_code: int
    stdout: str
    stderr: str
    files: dict[str, str]
    """The project's files after the run (name → text)."""
    api: FakeResponsesApi
    install_output: str = ""
    daemon_log: str = ""
    records: list[str] = field(default_factory=list)
    """Lines the hooks appended to ``$HOOK_LOG`` (a marker per hook that ran)."""
    wired: str = ""
    """The hook file as Copilot read it (hookd mode: what install wrote)."""

    def calls(self) -> list[tuple[str, str]]:
        """Every tool call in the model's final history: (tool, arguments as they ran)."""
        if not self.api.requests:
            return []
        return [
            (str(item.get("name")), str(item.get("arguments", item.get("input", ""))))
            for item in self.api.requests[-1].get("input", [])
            if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call")
        ]

    def seen(self) -> list[dict[str, Any]]:
        """What the model received, request by request, without run-specific noise:
        tool outputs and user messages (the prompt, context hooks added, stop
        continuations), Copilot's date line masked."""
        return [
            {
                "tool_outputs": [_mask(o) for o in self.api.tool_outputs(index)],
                "user": [_mask(m) for m in self.api.messages("user", index)],
            }
            for index in range(len(self.api.requests))
        ]

    def comparable(self) -> dict[str, Any]:
        return {
            "seen": self.seen(),
            "calls": self.calls(),
            "transcript": self.stdout.strip(),
            "exit_code": self.exit_code,
            "files": self.files,
            "records": sorted(self.records),
        }


_MASKS = (
    (re.compile(r"<current_datetime>[^<]*</current_datetime>"), "<current_datetime/>"),
    (re.compile(r"\(\d+(\.\d+)?s\)"), "(Xs)"),
)


def _mask(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


async def run_copilot(
    root: Path,
    turns: list[Turn],
    hook_file: dict[str, Any],
    mode: Mode,
    *,
    cache: Path,
    relay: Path | None = None,
    prompt: str = PROMPT,
    daemon_up: bool = True,
    by_hand: bool = False,
    mcp: bool = False,
    subdir: str = "",
    claude_wired: Literal["", "project", "local"] = "",
    extra_env: dict[str, str] | None = None,
    copilot_wired: bool = True,
) -> CopilotRun:
    """One Copilot run in ``root`` (a fresh directory) with ``hook_file`` (either shape)
    as ``$COPILOT_HOME/hooks/hooks.json``.

    ``cache``: the shared ``XDG_CACHE_HOME`` (Copilot unpacks itself there once).
    ``relay``: the compiled relay the install wires; None installs the Python relay.
    ``daemon_up``: False installs but starts no daemon (the relay fails open or closed).
    ``by_hand``: instead of installing, put ``hook_file``'s (Claude-shaped) hooks in hookd's
    config and wire the relay into Copilot's file in the Claude shape, one group per
    event, as a user may write it — Copilot's Claude-shaped door.
    ``mcp``: configure :mod:`agents.fake_mcp` as the MCP server ``srv`` (its tool ``echo``
    is ``srv-echo`` to Copilot); its calls are lines ``echo <text>`` in ``records``.
    ``subdir``: start Copilot in this subdirectory of the project (created).
    ``claude_wired`` (hookd mode): ``hookctl claude install --project`` (or ``--local``)
    first, as a user who also runs Claude Code there would — Copilot reads the project's
    ``.claude/settings.json`` and ``settings.local.json`` itself.  ``extra_env``: more of
    Copilot's environment.  ``copilot_wired=False`` (hookd mode, with ``claude_wired``):
    no ``hookctl agents install copilot`` — ``hook_file``'s hooks go straight into hookd's
    config and Copilot's own hook file is left empty, so Copilot reaches hookd only
    through Claude Code's wiring."""
    home, project = root / "home", root / "proj"
    copilot_home = home / ".copilot"
    hooks_dir = copilot_home / "hooks"
    for d in (hooks_dir, project):
        d.mkdir(parents=True, exist_ok=True)
    await trio.run_process(["git", "init", "-q", str(project)], check=True)
    start = project / subdir if subdir else project
    start.mkdir(parents=True, exist_ok=True)
    hook_log = root / "hook-log.txt"
    hook_log.touch()
    hook_path = hooks_dir / "hooks.json"
    hook_path.write_text(json.dumps(hook_file, indent=2))
    if mcp:
        (copilot_home / "mcp-config.json").write_text(json.dumps(mcp_config()))
    api = FakeResponsesApi(turns)
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_responses, api)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "XDG_CACHE_HOME": str(cache),
            "COPILOT_HOME": str(copilot_home),
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": api.base_url,
            "COPILOT_PROVIDER_WIRE_API": "responses",
            "COPILOT_PROVIDER_API_KEY": "sk-test",
            "COPILOT_MODEL": MODEL,
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_ALLOW_ALL": "true",
            "HOOK_LOG": str(hook_log),
            **(extra_env or {}),
        }
        if mode == "native":
            run = await _run(env, project, prompt, api, start)
        else:
            with short_daemon_paths("hkcp", home) as daemon:
                if by_hand:
                    assert relay is not None, "wiring by hand needs the compiled relay"
                    run = await _by_hand(env, project, prompt, api, hook_file, daemon, relay)
                    run.records = [line for line in hook_log.read_text().splitlines() if line]
                    run.wired = hook_path.read_text()
                    nursery.cancel_scope.cancel()
                    return run
                claude_output = ""
                if claude_wired:
                    claude_output = await _claude_install(daemon, project, claude_wired, relay)
                    # The http hooks' token, exported where the agent runs (as install says).
                    env["HOOKD_HTTP_TOKEN"] = daemon.token()
                if not copilot_wired:
                    config = daemon.config_home / "hookd" / "hooks.json"
                    config.parent.mkdir(parents=True, exist_ok=True)
                    config.write_text(json.dumps({"hooks": hook_file["hooks"]}))
                    hook_path.write_text(json.dumps({"version": 1, "hooks": {}}))
                    async with hookd_daemon(daemon):
                        run = await _run(env, project, prompt, api, start)
                    run.daemon_log = daemon.log.read_text(errors="replace")
                    run.install_output = claude_output
                    run.records = [line for line in hook_log.read_text().splitlines() if line]
                    run.wired = hook_path.read_text()
                    nursery.cancel_scope.cancel()
                    return run
                async with through_hookd(
                    "copilot", daemon, relay, extra_env={"COPILOT_HOME": str(copilot_home)},
                    up=daemon_up,
                ) as wired:  # fmt: skip
                    run = await _run(env, project, prompt, api, start)
                run.install_output = claude_output + wired.install_output
                run.daemon_log = wired.daemon_log
        nursery.cancel_scope.cancel()
    run.records = [line for line in hook_log.read_text().splitlines() if line]
    run.wired = hook_path.read_text()
    return run


async def _claude_install(
    daemon: RunningDaemon, project: Path, scope: str, relay: Path | None
) -> str:
    """``hookctl claude install --project``/``--local`` into ``project`` for this daemon."""
    done = await trio.run_process(
        [
            str(VENV_BIN / "hookctl"),
            "claude",
            "install",
            f"--{scope}",
            "--project-dir",
            str(project),
            "--port",
            str(daemon.port),
            "--socket",
            str(daemon.socket),
            *(["--relay", str(relay)] if relay is not None else ["--python-relay"]),
        ],
        env=daemon.env(),
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    # 3: wired, but no daemon serves the door yet — the harness starts it next.
    assert done.returncode in (0, 3), done.stderr.decode() + done.stdout.decode()
    return done.stdout.decode()


async def _by_hand(
    env: dict[str, str],
    project: Path,
    prompt: str,
    api: FakeResponsesApi,
    hook_file: dict[str, Any],
    daemon: RunningDaemon,
    relay: Path,
) -> CopilotRun:
    hooks = hook_file["hooks"]
    config = daemon.config_home / "hookd" / "hooks.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"hooks": hooks}))
    wired = {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": f"{relay} --agent copilot {event} --socket {daemon.socket}",
                    }
                ]
            }
        ]
        for event in hooks
    }
    (Path(env["COPILOT_HOME"]) / "hooks" / "hooks.json").write_text(json.dumps({"hooks": wired}))
    async with hookd_daemon(daemon):
        run = await _run(env, project, prompt, api)
    run.daemon_log = daemon.log.read_text(errors="replace")
    return run


async def _run(
    env: dict[str, str],
    project: Path,
    prompt: str,
    api: FakeResponsesApi,
    start: Path | None = None,
) -> CopilotRun:
    args = [str(COPILOT_BIN), "-p", prompt, "--allow-all-tools", "--disable-client-telemetry"]
    with trio.fail_after(RUN_TIMEOUT):
        done = await trio.run_process(
            args,
            cwd=start or project,
            env=env,
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    files = {
        p.name: p.read_text(errors="replace") for p in sorted(project.iterdir()) if p.is_file()
    }
    return CopilotRun(
        exit_code=done.returncode,
        stdout=done.stdout.decode(errors="replace"),
        stderr=done.stderr.decode(errors="replace"),
        files=files,
        api=api,
    )

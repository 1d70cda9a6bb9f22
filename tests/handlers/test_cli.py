"""``hookctl fire --local`` runs the non-command handlers too (one-shot wiring)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import trio

from handlers.rig import CC_FIXTURES, HANDLER_DATA, data_reply
from handlers.scripted_server import ScriptedServer


async def _hookctl(settings: Path, tmp_path: Path) -> dict[str, object]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(tmp_path), "HOOKCTL_LOG_LEVEL": "error"}
    done = await trio.run_process(
        [
            sys.executable,
            "-m",
            "hookd.cli.hookctl",
            "fire",
            "PreToolUse",
            "--local",
            "--settings",
            str(settings),
            "--input",
            str(CC_FIXTURES / "PreToolUse-Bash.json"),
        ],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
        check=False,
    )
    assert done.returncode == 4, done.stderr.decode()  # 4: blocked (both hooks here deny)
    result: dict[str, object] = json.loads(done.stdout)
    return result


async def test_hookctl_local_runs_a_python_hook(tmp_path: Path) -> None:
    template = (HANDLER_DATA / "configs" / "python-pretool.json").read_text()
    settings = tmp_path / "settings.json"
    callable_ = f"{HANDLER_DATA / 'pyhooks' / 'basic.py'}:deny_bash"
    settings.write_text(template.replace("@CALLABLE@", callable_).replace("@TIMEOUT@", "20"))
    result = await _hookctl(settings, tmp_path)
    assert result["decision"] == "deny"
    assert result["reason"] == "PY-DENY Bash: echo from-sub"


async def test_hookctl_local_runs_an_http_hook(tmp_path: Path, server: ScriptedServer) -> None:
    server.routes["/hook"] = data_reply("deny.json")
    template = (HANDLER_DATA / "configs" / "http-pretool.json").read_text()
    settings = tmp_path / "settings.json"
    settings.write_text(template.replace("@SERVER@", server.url))
    result = await _hookctl(settings, tmp_path)
    assert result["decision"] == "deny"
    assert [r.method for r in server.requests] == ["POST"]

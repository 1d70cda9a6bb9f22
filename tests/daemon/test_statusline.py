"""statusLine and fileSuggestion through the daemon: protocol request, client method, hookctl."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import trio

from hookd_client.client import Client
from support.daemon import configure_text

CONFIGS = Path(__file__).resolve().parent.parent / "data" / "daemon"


async def test_status_line_and_file_suggestion(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure_text(handle, (CONFIGS / "statusline.json").read_text())
    project = str(handle.project())

    def run() -> tuple[str | None, list[str]]:
        with Client(handle.socket) as client:
            line = client.status_line(project, {"session_id": "s-1", "cwd": project})
            paths = client.file_suggestion(project, "src")
        return line, paths

    line, paths = await trio.to_thread.run_sync(run)
    assert line == "[s-1] ok"  # the first line only
    assert paths == ["src/a.py", "src/b.py"]  # blank lines dropped

    proc = await trio.run_process(
        [
            sys.executable,
            "-m",
            "hookd.cli.hookctl",
            "--socket",
            str(handle.socket),
            "statusline",
            "--cwd",
            project,
        ],
        capture_stdout=True,
    )
    assert proc.stdout.decode().strip() == "[hookctl] ok"


async def test_status_line_is_off_when_hooks_are_disabled(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    settings = json.loads((CONFIGS / "statusline.json").read_text())
    configure_text(handle, json.dumps({**settings, "disableAllHooks": True}))

    def run() -> str | None:
        with Client(handle.socket) as client:
            return client.status_line(str(handle.root), {"session_id": "s", "cwd": "/"})

    assert await trio.to_thread.run_sync(run) is None

"""statusLine and fileSuggestion runners: real shell commands, real deadlines."""

from __future__ import annotations

import json
from pathlib import Path

from handlers.rig import HANDLER_DATA
from hookd.handlers.statusline import run_file_suggestion, run_status_line

STATUS = HANDLER_DATA / "status"
STATUS_INPUT = json.loads((STATUS / "status-input.json").read_text())


async def test_status_line_is_the_first_line(tmp_path: Path) -> None:
    line = await run_status_line(f"sh {STATUS / 'statusline.sh'}", STATUS_INPUT, cwd=str(tmp_path))
    assert line == f"\033[1m[Opus]\033[0m {tmp_path.name}"


async def test_status_line_failure_or_silence_is_none() -> None:
    assert await run_status_line("echo partial; exit 3", STATUS_INPUT) is None
    assert await run_status_line("true", STATUS_INPUT) is None
    assert await run_status_line("/nonexistent/status-script", STATUS_INPUT) is None


async def test_status_line_timeout_kills_the_command() -> None:
    line = await run_status_line("echo early; sleep 30", STATUS_INPUT, timeout=0.5)
    assert line is None  # had it run to the end, its line would be "early"


async def test_file_suggestion_lists_paths(tmp_path: Path) -> None:
    for name in ("src/widget.py", "src/widget_test.py", "docs/other.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    paths = await run_file_suggestion(
        f"sh {STATUS / 'suggest.sh'}", {"query": "widget"}, cwd=str(tmp_path)
    )
    assert paths == ["src/widget.py", "src/widget_test.py"]


async def test_file_suggestion_limit_and_failure() -> None:
    many = await run_file_suggestion("seq 1 40", {"query": ""}, limit=15)
    assert many == [str(i) for i in range(1, 16)]
    assert await run_file_suggestion("echo a; exit 1", {"query": "a"}) == []

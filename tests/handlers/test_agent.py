"""agent hooks: a verifier loop with Read/Grep/Glob confined to the project (reference §9)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from handlers.rig import HANDLER_DATA, Rig, message_reply
from hookd.config.matching import glob_regex
from hookd.handlers.agent import ProjectTools, ToolError

SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture
def project(rig: Rig) -> Path:
    """The sample project, plus a secret outside it and two symlinks that point out."""
    shutil.copytree(HANDLER_DATA / "project", rig.project, dirs_exist_ok=True)
    outside = rig.tmp / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (rig.project / "link-out").symlink_to(outside / "secret.txt")
    (rig.project / "dir-out").symlink_to(outside, target_is_directory=True)
    return rig.project


def tool_results(request_body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of the last user turn, by tool_use id."""
    last = request_body["messages"][-1]
    assert last["role"] == "user"
    return {block["tool_use_id"]: block for block in last["content"]}


async def test_read_then_block_denies_with_continue_on_block(rig: Rig, project: Path) -> None:
    rig.server.messages = [
        message_reply("agent-read-app.json"),
        message_reply("agent-verdict-block.json"),
    ]
    result = await rig.fire(rig.config("agent-events.json"), "PreToolUse-Bash.json")
    assert result.decision == "deny"
    assert result.reason == "AGENT-BLOCK-REASON"
    assert result.continue_ is True  # agent hooks behave like continueOnBlock: true
    first, second = rig.server.message_requests()
    assert [t["name"] for t in first.json()["tools"]] == ["Read", "Grep", "Glob"]
    read = tool_results(second.json())["toolu_01"]
    assert read["is_error"] is False
    assert "TODO: remove the debug print" in read["content"]
    # the assistant's tool_use turn is replayed before the results
    assert second.json()["messages"][1]["role"] == "assistant"


async def test_grep_and_glob_then_allow(rig: Rig, project: Path) -> None:
    rig.server.messages = [
        message_reply("agent-grep-todo.json"),
        message_reply("agent-glob-py.json"),
        message_reply("agent-verdict-ok.json"),
    ]
    result = await rig.fire(rig.config("agent-events.json"), "Stop.json")
    assert result.decision is None
    assert result.hooks[0].outcome == "success"
    _, after_grep, after_glob = rig.server.message_requests()
    grep = tool_results(after_grep.json())["toolu_02"]["content"]
    assert grep == "src/app.py:2:    # TODO: remove the debug print before shipping"
    glob = tool_results(after_glob.json())["toolu_03"]["content"]
    assert glob.splitlines() == ["src/app.py", "src/util.py"]


async def test_stop_block_continues_the_agent(rig: Rig, project: Path) -> None:
    rig.server.messages = [message_reply("agent-verdict-block.json")]
    result = await rig.fire(rig.config("agent-events.json"), "Stop.json")
    assert result.decision == "block"
    assert result.reason == "AGENT-BLOCK-REASON"


async def test_paths_outside_the_project_are_refused(rig: Rig, project: Path) -> None:
    outside_abs = str(rig.tmp / "outside" / "secret.txt")
    rig.server.messages = [
        message_reply("agent-escape.json", ABS_OUTSIDE=outside_abs),
        message_reply("agent-verdict-ok.json"),
    ]
    result = await rig.fire(rig.config("agent-events.json"), "PreToolUse-Bash.json")
    assert result.hooks[0].outcome == "success"
    after = rig.server.message_requests()[1]
    results = tool_results(after.json())
    for tool_id in ("toolu_04", "toolu_05", "toolu_06", "toolu_08", "toolu_09"):
        assert results[tool_id]["is_error"] is True, tool_id
        assert "outside the project" in results[tool_id]["content"], tool_id
    grep = results["toolu_07"]
    assert grep["is_error"] is False
    assert grep["content"] == "No matches found"  # link-out and dir-out were not followed
    assert SECRET.encode() not in after.body


async def test_unknown_tool_is_an_error_result_not_a_crash(rig: Rig, project: Path) -> None:
    rig.server.messages = [
        message_reply("agent-unknown-tool.json"),
        message_reply("agent-verdict-ok.json"),
    ]
    result = await rig.fire(rig.config("agent-events.json"), "PreToolUse-Bash.json")
    assert result.hooks[0].outcome == "success"
    bash = tool_results(rig.server.message_requests()[1].json())["toolu_10"]
    assert bash["is_error"] is True and "unknown tool" in bash["content"]


async def test_fifty_turn_limit(rig: Rig, project: Path) -> None:
    rig.server.messages = [message_reply("agent-glob-py.json")]
    rig.server.repeat_last = True
    result = await rig.fire(rig.config("agent-events.json"), "PreToolUse-Bash.json")
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error == "agent hook gave no verdict within 50 turns"
    assert len(rig.server.message_requests()) == 50
    assert result.decision is None


async def test_final_answer_without_verdict_is_a_non_blocking_error(
    rig: Rig, project: Path
) -> None:
    rig.server.messages = [message_reply("agent-no-verdict.json")]
    result = await rig.fire(rig.config("agent-events.json"), "PostToolUse-Bash.json")
    assert result.hooks[0].outcome == "non_blocking_error"
    assert result.decision is None and result.continue_ is True


def test_project_tools_confinement(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.py").write_text("x = 1\n")
    (tmp_path / "out.txt").write_text("out\n")
    (root / "a" / "up").symlink_to(tmp_path / "out.txt")
    tools = ProjectTools(str(root))
    assert "x = 1" in tools.read("a/x.py")
    assert "x = 1" in tools.read(str(root / "a" / "x.py"))
    for bad in ("../out.txt", str(tmp_path / "out.txt"), "a/up", "a/../../out.txt"):
        with pytest.raises(ToolError, match="outside the project"):
            tools.read(bad)
    assert tools.glob("**/*") == "a/x.py"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "src/app.py", True),
        ("**/*.py", "app.py", True),
        ("*.py", "src/app.py", False),
        ("src/*.py", "src/app.py", True),
        ("src/?pp.py", "src/app.py", True),
        ("**", "a/b/c", True),
    ],
)
def test_glob_regex(pattern: str, path: str, matches: bool) -> None:
    assert (glob_regex(pattern).fullmatch(path) is not None) is matches

"""The Cline adapter on Cline CLI 3.0.65's real hook inputs (tests/data/agents/cline-cli-3.0.65).

The fixtures are the stdin the real ``cline`` gave its hook files against the fake model
server (tests/agents/test_cline.py drives the same runs end to end); paths are
normalised to ``/home/user/work/proj``.  What is tested here, without the CLI: each
input decodes to a valid Claude Code event with Claude Code's tool names, and real
hooks' answers (through the engine) come out in the words the CLI obeys —
``cancel``, ``contextModification``, ``overrideInput`` — or are recorded as lost where
the CLI reads nothing (its fire-and-forget task events).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import answer, fire_decoded, group
from hookd.agents.base import AgentReply, EventSpec
from hookd.agents.capabilities import degrade
from hookd.agents.cline import RELAY_TIMEOUT, ClineAdapter, _native_input
from hookd.agents.registry import ADAPTERS
from hookd.cli.hookctl import main as hookctl
from hookd_client.events import EVENT_NAMES, decode_event

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "cline-cli-3.0.65"
PROJECT = "/home/user/work/proj"
CLINE = ClineAdapter()


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def native_event(name: str) -> str:
    return name.partition("-")[0]


def test_the_adapter_is_registered_verified_and_pinned() -> None:
    registered = {a.name: a for a in ADAPTERS}
    assert registered["cline"].__class__ is ClineAdapter
    assert CLINE.verified is True and CLINE.tested_version == "3.0.65"
    assert all(s.canonical in EVENT_NAMES for s in CLINE.events)
    assert "PreCompact" not in {s.native for s in CLINE.events}  # the CLI never runs it


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_every_captured_input_decodes_to_a_valid_claude_code_event(name: str) -> None:
    raw = fixture(name)
    event = CLINE.decode(native_event(name), raw)
    assert event.input["hook_event_name"] == event.event
    decoded = decode_event(event.input, event.event)  # what the daemon's pipeline does next
    assert decoded.typed.cwd == PROJECT  # workspaceRoots[0], the repository's root
    assert event.input["session_id"] == raw["taskId"]
    assert event.input["hookName"] == raw["hookName"]  # Cline's own fields are kept


def test_the_shell_is_bash_with_claude_code_s_command_beside_cline_s_commands() -> None:
    event = CLINE.decode("PreToolUse", fixture("PreToolUse"))
    assert event.input["tool_name"] == "Bash"
    assert event.input["native_tool_name"] == "run_commands"
    assert event.input["tool_use_id"] == "toolu_0_1"
    # tool_call.input (as the model wrote it), not preToolUse.parameters (stringified)
    assert event.input["tool_input"] == {
        "commands": ["echo hello-from-tool > tool_out.txt; echo ran"],
        "command": "echo hello-from-tool > tool_out.txt; echo ran",
    }


def test_the_tool_s_result_and_the_task_s_last_answer() -> None:
    post = CLINE.decode("PostToolUse", fixture("PostToolUse")).input
    assert post["tool_name"] == "Bash"
    assert post["tool_response"]["success"] is True
    assert post["tool_response"]["output"][0]["result"] == "ran\n"
    stop = CLINE.decode("TaskComplete", fixture("TaskComplete")).input
    assert (stop["hook_event_name"], stop["last_assistant_message"]) == ("Stop", "All done.")
    end = CLINE.decode("SessionShutdown", fixture("SessionShutdown")).input
    assert (end["hook_event_name"], end["reason"]) == ("SessionEnd", "other")


def test_an_mcp_tool_is_claude_code_s_mcp_name() -> None:
    """Cline's CLI names server ``srv``'s tool ``echo`` ``srv__echo``."""
    event = CLINE.decode("PreToolUse", fixture("PreToolUse-mcp"))
    assert event.input["tool_name"] == "mcp__srv__echo"
    assert event.input["native_tool_name"] == "srv__echo"
    assert event.input["tool_input"] == {"text": "hi-mcp"}
    assert "srv__echo" in event.input["tool_name_candidates"]


def test_the_extension_s_documented_input_still_decodes() -> None:
    """The VS Code extension (docs.cline.bot) sends only the camelCase body, with its own
    tool names and stringified parameters."""
    raw = {
        "clineVersion": "3.36.0",
        "hookName": "PreToolUse",
        "taskId": "task-1",
        "workspaceRoots": [PROJECT],
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": "rm -rf x"}},
    }
    event = CLINE.decode("PreToolUse", raw)
    assert (event.input["tool_name"], event.input["tool_input"]) == (
        "Bash",
        {"command": "rm -rf x"},
    )
    mcp = {**raw, "preToolUse": {"toolName": "use_mcp_tool", "parameters": {
        "server_name": "srv", "tool_name": "echo", "arguments": '{"text": "t"}'}}}  # fmt: skip
    event = CLINE.decode("PreToolUse", mcp)
    assert (event.input["tool_name"], event.input["tool_input"]) == (
        "mcp__srv__echo",
        {"text": "t"},
    )


# --- decode → real hooks → encode ------------------------------------------------------------


DENY = answer("PreToolUse", permissionDecision="deny", permissionDecisionReason="no rm")


def rewrite(updated: dict[str, Any]) -> str:
    return answer("PreToolUse", permissionDecision="allow", updatedInput=updated)


async def run(
    name: str, hooks: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> tuple[AgentReply, list[str]]:
    """Fire the fixture through the engine on ``hooks``; Cline's reply and the losses."""
    raw = json.loads(json.dumps(fixture(name)).replace(PROJECT, str(tmp_path)))
    event = CLINE.decode(native_event(name), raw)
    result = await fire_decoded(event, hooks, tmp_path)
    return CLINE.encode(result, event), degrade(result, event.spec).errors


def as_json(reply: AgentReply) -> Any:
    return json.loads(reply.stdout)


async def test_a_deny_is_a_cancel_and_context_is_cline_s_context(tmp_path: Path) -> None:
    reply, _ = await run("PreToolUse", {"PreToolUse": [group(DENY, "Bash")]}, tmp_path)
    assert as_json(reply) == {"cancel": True, "errorMessage": "no rm"}
    context = answer("PostToolUse", additionalContext="mind the tests")
    reply, losses = await run("PostToolUse", {"PostToolUse": [group(context, "Bash")]}, tmp_path)
    assert as_json(reply) == {"cancel": False, "contextModification": "mind the tests"}
    assert losses == []
    reply, _ = await run(
        "PreToolUse-mcp", {"PreToolUse": [group(DENY, "mcp__srv__echo")]}, tmp_path
    )
    assert as_json(reply)["cancel"] is True


async def test_a_rewrite_of_claude_code_s_command_replaces_cline_s_commands(
    tmp_path: Path,
) -> None:
    """Cline reads ``commands`` before ``command``: a hook that rewrote ``command`` (the
    shell's input in Claude Code's words) gets the new command run, not the model's."""
    new = {"command": "echo safe", "commands": ["echo hello-from-tool > tool_out.txt; echo ran"]}
    reply, losses = await run("PreToolUse", {"PreToolUse": [group(rewrite(new), "Bash")]}, tmp_path)
    assert as_json(reply) == {"cancel": False, "overrideInput": {"commands": ["echo safe"]}}
    assert losses == []
    # A hook that rewrote Cline's own ``commands`` and left ``command`` as it came: that.
    own = {"commands": ["echo mine"], "command": "echo hello-from-tool > tool_out.txt; echo ran"}
    reply, _ = await run("PreToolUse", {"PreToolUse": [group(rewrite(own), "Bash")]}, tmp_path)
    assert as_json(reply)["overrideInput"] == {"commands": ["echo mine"]}


async def test_what_the_cli_does_not_read_is_recorded_as_lost(tmp_path: Path) -> None:
    """The task events are fire-and-forget (Cline reads no answer there); a PostToolUse
    block cannot reach the model (Cline's cancel would end the task instead)."""
    context = {"SessionStart": [group("echo remember-the-tests")]}
    reply, losses = await run("TaskStart", context, tmp_path)
    assert as_json(reply) == {"cancel": False} and any("context" in loss for loss in losses)
    block = "echo " + shlex.quote(json.dumps({"decision": "block", "reason": "keep going"}))
    reply, losses = await run("TaskComplete", {"Stop": [group(block)]}, tmp_path)
    assert as_json(reply) == {"cancel": False} and losses
    reply, losses = await run("PostToolUse", {"PostToolUse": [group(block, "Bash")]}, tmp_path)
    assert as_json(reply) == {"cancel": False} and losses


# --- install and where the hooks run ---------------------------------------------------------


def command(spec: EventSpec) -> str:
    return f"/opt/hookd/bin/hookd-relay --agent cline {spec.native}"


def test_the_wired_script_gives_up_before_cline_s_hook_timeout(tmp_path: Path) -> None:
    script = CLINE.wire_file(tmp_path / "PreToolUse", None, command)
    assert script.startswith("#!/bin/sh\n")
    argv = shlex.split(script.splitlines()[-1])
    assert argv[-2:] == ["--timeout", str(RELAY_TIMEOUT)] and RELAY_TIMEOUT < 120
    assert CLINE.is_wired(script)
    assert {p.name for p in CLINE.hook_files("user", tmp_path, None)} == {
        s.native for s in CLINE.events
    }


def test_hooks_run_where_cline_ran_the_relay(tmp_path: Path) -> None:
    """Cline runs a hook in the session's directory, which its input does not name: the
    relay's ``sh`` exports it as ``PWD``."""
    event = CLINE.decode("PreToolUse", fixture("PreToolUse"))
    sub = tmp_path / "sub"
    sub.mkdir()
    assert CLINE.hook_workdir(event, {"PWD": str(sub)}) == str(sub)
    assert CLINE.hook_workdir(event, {"PWD": str(tmp_path / "gone")}) is None
    assert CLINE.hook_workdir(event, {}) is None


def test_file_tools_get_claude_code_s_file_path_and_a_rewrite_of_it_goes_back(
    tmp_path: Path,
) -> None:
    """``read_files`` (Read) reads ``files: [{path, …}]``, ``editor`` (Edit) a ``path``:
    hooks see ``file_path`` (and every path a read names in ``file_paths``)."""
    raw = fixture("PreToolUse")

    def call(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {**raw, "tool_call": {"id": "t", "name": name, "input": tool_input}}

    one = call("read_files", {"files": [{"path": "/p/.env", "start_line": 1}]})
    event = CLINE.decode("PreToolUse", one)
    assert event.input["tool_name"] == "Read"
    assert event.input["tool_input"]["file_path"] == "/p/.env"
    assert event.input["tool_input"]["file_paths"] == ["/p/.env"]
    moved = {**event.input["tool_input"], "file_path": "/p/safe"}
    assert _native_input(event, moved) == {"files": [{"path": "/p/safe", "start_line": 1}]}
    two = call("read_files", {"files": [{"path": "/a"}, {"path": "/b"}]})
    event = CLINE.decode("PreToolUse", two)
    assert "file_path" not in event.input["tool_input"]
    assert event.input["tool_input"]["file_paths"] == ["/a", "/b"]
    edit = call("editor", {"path": "/p/a.py", "old_text": "x", "new_text": "y"})
    event = CLINE.decode("PreToolUse", edit)
    assert (event.input["tool_name"], event.input["tool_input"]["file_path"]) == ("Edit", "/p/a.py")
    # editor also creates files: a guard on Write is tested against it too
    assert event.input["tool_name_candidates"] == ["Edit", "Write", "editor"]
    same = dict(event.input["tool_input"])
    assert _native_input(event, same) == {"path": "/p/a.py", "old_text": "x", "new_text": "y"}


async def test_a_write_guard_fires_for_cline_s_editor(tmp_path: Path) -> None:
    """Cline's ``editor`` edits and creates files (Claude Code's Edit and Write): a guard
    on ``Write`` alone must not let it create a file unguarded."""
    raw = {**fixture("PreToolUse"), "tool_call": {"id": "t", "name": "editor",
           "input": {"path": str(tmp_path / "new.py"), "new_text": "x"}}}  # fmt: skip
    event = CLINE.decode("PreToolUse", raw)
    result = await fire_decoded(event, {"PreToolUse": [group(DENY, "Write")]}, tmp_path)
    assert as_json(CLINE.encode(result, event)) == {"cancel": True, "errorMessage": "no rm"}


def test_explain_says_a_write_guard_runs_for_cline_s_editor(
    tmp_path: Path, private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hookctl explain`` tests a matcher against the same names the daemon does."""
    home = private_home
    config = home / ".config" / "hookd" / "hooks.json"
    config.parent.mkdir(parents=True)
    hook = {"type": "command", "command": "exit 2"}
    config.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [hook]}]}})
    )
    args = ["explain", "PreToolUse", "--agent", "cline", "--cwd", str(tmp_path), "--json"]
    assert hookctl([*args, "--tool", "editor"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["canonical_tool"] == "Edit" and [h["runs"] for h in found["hooks"]] == ["yes"]
    assert hookctl([*args, "--tool", "run_commands"]) == 0
    assert [h["runs"] for h in json.loads(capsys.readouterr().out)["hooks"]] == ["no"]


def test_doctor_says_an_event_install_left_to_the_user_s_own_hook(
    private_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where the user's own ``PreToolUse`` holds the name, install wires the other events
    only: doctor says hookd's PreToolUse guards never run for Cline there."""
    home = private_home
    folder = home / "Documents" / "Cline" / "Hooks"
    folder.mkdir(parents=True)
    (folder / "PreToolUse").write_text("#!/bin/sh\necho '{}'\n")
    assert hookctl(["doctor", "--json", "--agent", "cline"]) in (0, 1)
    assert "not wired for Cline's PreToolUse" not in capsys.readouterr().out  # not installed
    assert hookctl(["agents", "install", "cline", "--python-relay"]) == 0
    capsys.readouterr()
    hookctl(["doctor", "--json", "--agent", "cline"])
    rows = json.loads(capsys.readouterr().out)
    [row] = [r for r in rows if "not wired for Cline's PreToolUse" in r["message"]]
    assert row["severity"] == "warning" and row["path"] == str(folder / "PreToolUse")
    assert "PreToolUse never run" in row["message"]


@pytest.mark.parametrize("roots", [None, [], "/work/not-a-list", 7, {"0": PROJECT}, [PROJECT]])
def test_the_project_is_the_first_workspace_root_and_only_that(roots: Any) -> None:
    """``workspaceRoots`` as Cline sends it (a list) gives the project; missing, empty or
    of another type, the input names no directory (the relay's working directory is the
    project then) — never a character of a string, never a crash."""
    raw = {**fixture("PreToolUse")}
    raw.pop("workspaceRoots", None)
    if roots is not None:
        raw["workspaceRoots"] = roots
    event = CLINE.decode("PreToolUse", raw)
    assert event.input["cwd"] == (PROJECT if roots == [PROJECT] else "")

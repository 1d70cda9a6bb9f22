"""opencode's adapter without the agent: real plugin inputs in, real hooks run, the answer out.

Decoding is checked on every input hookd's plugin really sent opencode 1.18.33's relay
(``tests/data/agents/opencode-1.18.33``: ``chat.message``, ``tool.execute.before``/
``after`` for the shell; ``tests/data/agents/mcp`` for the fake MCP server's tool).
Encoding is checked on results the engine made from real command hooks (Claude Code's
format), so each test is the daemon's path for one event minus the socket.  What opencode
then *does* with the answer is the e2e test's job (tests/agents/test_opencode.py); the
install tests run the real ``hookctl agents install opencode``.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import answer, fire_decoded, group
from hookd.agents.capabilities import degrade, report
from hookd.agents.kilo import KiloAdapter
from hookd.agents.opencode import COMMANDS_LINE, OpencodeAdapter, plugin_template
from hookd.cli.hookctl import main as hookctl
from hookd.config.assemble import load_config
from hookd.installers.agent_install import RECORD_SUFFIX
from hookd_client.events import EVENT_NAMES, EventInputError, decode_event

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
FIXTURES = DATA / "opencode-1.18.33"
OPENCODE = OpencodeAdapter()


def fixture(native: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{native}.json").read_text(encoding="utf-8"))
    return data


# --- decode -------------------------------------------------------------------------------


@pytest.mark.parametrize("native", [s.native for s in OPENCODE.events])
def test_every_recorded_input_decodes_to_a_valid_claude_code_event(native: str) -> None:
    raw = fixture(native)
    event = OPENCODE.decode(native, raw)
    assert event.event in EVENT_NAMES
    decode_event(event.input, event.event)  # validates Claude Code's fields
    assert event.input["session_id"] == raw["input"]["sessionID"]
    assert event.input["cwd"] == raw["directory"]


@pytest.mark.parametrize("native", ["chat.message", "tool.execute.before"])
def test_kilo_s_plugin_input_is_opencode_s(native: str) -> None:
    """Recorded from the real Kilo Code CLI 7.7.9 running hookd's plugin: the same shape."""
    path = DATA / "kilo-7.7.9" / f"{native}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    event = KiloAdapter().decode(native, raw)
    assert event.agent == "kilo"
    decode_event(event.input, event.event)
    assert event.input["session_id"] == raw["input"]["sessionID"]


def test_kilo_installs_the_same_plugin_into_its_own_folders(tmp_path: Path) -> None:
    kilo = KiloAdapter()
    assert kilo.hook_files("project", tmp_path, tmp_path) == [
        tmp_path / ".kilo" / "plugins" / "hookd.js"
    ]
    text = kilo.wire(None, lambda spec: f"relay --agent kilo {spec.native}")
    assert kilo.is_wired(text) and set(_commands(text)) == {s.native for s in kilo.events}


def test_the_shell_is_bash_with_opencode_s_arguments_and_result() -> None:
    before = OPENCODE.decode("tool.execute.before", fixture("tool.execute.before")).input
    assert (before["tool_name"], before["native_tool_name"]) == ("Bash", "bash")
    assert before["tool_input"] == {
        "command": "echo hello > out.txt; echo ran",
        "description": "write",
    }
    assert before["tool_use_id"] == "toolu_fake_0_0"
    after = OPENCODE.decode("tool.execute.after", fixture("tool.execute.after")).input
    assert after["tool_input"] == before["tool_input"]
    assert after["tool_response"]["output"] == "ran\n"


def test_the_prompt_is_the_user_s_text_parts() -> None:
    raw = fixture("chat.message")
    raw["output"]["parts"].append({"type": "text", "text": "added by opencode", "synthetic": True})
    event = OPENCODE.decode("chat.message", raw)
    assert (event.event, event.input["prompt"]) == ("UserPromptSubmit", '"Please run the command"')


def test_the_prompt_s_agent_and_message_reach_the_hooks_as_strings() -> None:
    """opencode 1.18.33 names them in ``output.message``; its plugin docs, in ``input``
    (which wins). Only strings are passed on: a hook reads ``agent`` as a name."""
    event = OPENCODE.decode("chat.message", fixture("chat.message"))
    assert (event.input["agent"], event.input["message_id"]) == (
        "build",
        "msg_21c8bf9bb001Y6A5tuqFPF6v9D",
    )
    raw = fixture("chat.message")
    raw["input"].update(agent="plan", messageID="msg_in")
    raw["output"]["message"]["agent"] = {"not": "a name"}
    event = OPENCODE.decode("chat.message", raw)
    assert (event.input["agent"], event.input["message_id"]) == ("plan", "msg_in")
    raw = fixture("chat.message")
    raw["output"]["message"].update(agent=7, id=None)
    assert "agent" not in OPENCODE.decode("chat.message", raw).input


@pytest.mark.parametrize(
    ("tool", "servers", "name", "candidates"),
    [
        ("srv_echo", ["srv"], "mcp__srv__echo", ["mcp__srv__echo", "srv_echo"]),
        # A server with a `_` in its name: split after the longest one the config names.
        ("my_srv_get_file", ["my", "my_srv"], "mcp__my_srv__get_file",
         ["mcp__my_srv__get_file", "my_srv_get_file"]),
        # opencode makes anything but [A-Za-z0-9_-] a `_` in the tool's name.
        ("my_srv_echo", ["my.srv"], "mcp__my.srv__echo", ["mcp__my.srv__echo", "my_srv_echo"]),
        # No server named (an older plugin): every reading, the first split preferred.
        ("my_srv_get_file", None, "mcp__my__srv_get_file",
         ["mcp__my__srv_get_file", "mcp__my_srv__get_file", "mcp__my_srv_get__file",
          "my_srv_get_file"]),
    ],
)  # fmt: skip
def test_mcp_tools_are_claude_code_s_names(
    tool: str, servers: list[str] | None, name: str, candidates: list[str]
) -> None:
    raw = fixture("tool.execute.before")
    raw["input"]["tool"] = tool
    raw["mcp_servers"] = servers
    event = OPENCODE.decode("tool.execute.before", raw).input
    assert (event["tool_name"], event["tool_name_candidates"]) == (name, candidates)
    assert event["native_tool_name"] == tool and "mcp_servers" not in event


@pytest.mark.parametrize("tool", ["list_mcp_resources", "read_mcp_resource", "apply_patch"])
def test_opencode_s_own_tools_with_a_underscore_are_no_mcp_tools(tool: str) -> None:
    assert OPENCODE.mcp_tool(tool, {"mcp_servers": ["list", "read", "apply"]}) is None


def test_a_tool_of_no_server_the_plugin_listed_is_no_mcp_tool() -> None:
    """A custom tool (``.opencode/tool/``) or Kilo's own ``cron_list``: not read as server
    ``cron``'s tool ``list`` when the plugin said which servers there are."""
    raw = fixture("tool.execute.before")
    raw["input"]["tool"] = "cron_list"
    raw["mcp_servers"] = ["srv"]
    event = OPENCODE.decode("tool.execute.before", raw).input
    assert event["tool_name"] == "cron_list" and "tool_name_candidates" not in event


@pytest.mark.parametrize(
    ("native", "change", "field"),
    [
        ("tool.execute.before", {"directory": None}, "$.directory"),
        ("tool.execute.before", {"input": "x"}, "$.input"),
        ("tool.execute.after", {"output": None}, "$.output"),
        ("tool.execute.before", {"input": {"sessionID": "s"}}, "$.input.tool"),
    ],
)
def test_bad_input_names_the_field(native: str, change: dict[str, Any], field: str) -> None:
    with pytest.raises(EventInputError, match=re.escape(field)):
        OPENCODE.decode(native, {**fixture(native), **change})


# --- encode: real hooks through the engine ----------------------------------------------------


async def run(native: str, hooks: dict[str, Any], tmp_path: Path) -> tuple[Any, list[str]]:
    event = OPENCODE.decode(native, {**fixture(native), "directory": str(tmp_path)})
    result = await fire_decoded(event, hooks, tmp_path)
    reply = OPENCODE.encode(result, event)
    assert reply.exit_code == 0 and reply.stderr == ""
    return (json.loads(reply.stdout) if reply.stdout else None), degrade(result, event.spec).errors


async def test_an_exit_2_block_is_claude_code_s_message(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [group("echo ' no rm ' >&2; exit 2", "Bash")]}
    said, _ = await run("tool.execute.before", hooks, tmp_path)
    assert said == {"block": "[sh -c 'echo '\"'\"' no rm '\"'\"' >&2; exit 2']: no rm"}


async def test_a_json_deny_an_ask_and_a_rewrite(tmp_path: Path) -> None:
    deny = answer("PreToolUse", permissionDecision="deny", permissionDecisionReason="no rm")
    said, _ = await run("tool.execute.before", {"PreToolUse": [group(deny)]}, tmp_path)
    assert said == {"block": "no rm"}
    ask = answer("PreToolUse", permissionDecision="ask", permissionDecisionReason="sure?")
    said, losses = await run("tool.execute.before", {"PreToolUse": [group(ask)]}, tmp_path)
    assert said is not None and "sure?" in said["block"] and "cannot ask" in said["block"]
    assert any("ask not available" in loss for loss in losses)
    rewrite = answer("PreToolUse", permissionDecision="allow", updatedInput={"command": "true"})
    said, _ = await run("tool.execute.before", {"PreToolUse": [group(rewrite)]}, tmp_path)
    assert said == {"args": {"command": "true"}}


async def test_context_where_opencode_has_a_place_for_it(tmp_path: Path) -> None:
    said, _ = await run("chat.message", {"UserPromptSubmit": [group("echo PLAIN")]}, tmp_path)
    assert said == {"context": "PLAIN"}
    post = answer("PostToolUse", additionalContext="AFTER")
    said, _ = await run("tool.execute.after", {"PostToolUse": [group(post)]}, tmp_path)
    assert said == {"context": "AFTER"}
    pre = answer("PreToolUse", additionalContext="BEFORE")
    said, losses = await run("tool.execute.before", {"PreToolUse": [group(pre)]}, tmp_path)
    assert said is None  # no place before a tool runs: dropped, and said
    assert any("cannot add context" in loss for loss in losses)


async def test_a_prompt_block_and_a_post_tool_block(tmp_path: Path) -> None:
    hooks = {"UserPromptSubmit": [group("echo 'not this' >&2; exit 2")]}
    said, _ = await run("chat.message", hooks, tmp_path)
    assert said is not None and said["block"].endswith("]: not this")
    block = "echo " + shlex.quote(json.dumps({"decision": "block", "reason": "look again"}))
    said, _ = await run("tool.execute.after", {"PostToolUse": [group(block)]}, tmp_path)
    assert said == {"block": "look again"}


def test_explain_says_which_hooks_never_run_under_opencode(tmp_path: Path) -> None:
    hooks = {
        "Stop": [group("true")],
        "SessionStart": [group("true")],
        "PreToolUse": [group("true", "mcp__srv__echo")],
    }
    config = load_config(None, str(tmp_path), [json.dumps({"hooks": hooks})])
    found = {(r.event, r.severity, r.message) for r in report(OPENCODE, config.all_hooks())}
    assert ("Stop", "info", "opencode fires no Stop: this hook never runs under it") in found
    assert any(e == "SessionStart" and "never runs" in m for e, _, m in found)
    assert any(e == "PreToolUse" and "srv_echo" in m and s == "info" for e, s, m in found)
    # The plugin has no matchers of its own: hookd applies them (said, not silent).
    assert any("ignores matchers on tool.execute.before" in m for _, _, m in found)


# --- install --------------------------------------------------------------------------------


@pytest.fixture
def home(private_home: Path) -> Path:
    return private_home


def _commands(text: str) -> dict[str, str]:
    match = re.search(r"const COMMANDS = (\{.*?\}) // hookd:commands", text, re.S)
    assert match is not None, text
    found: dict[str, str] = json.loads(match.group(1))
    return found


def test_wire_fills_the_shipped_plugin_with_one_relay_command_per_hook() -> None:
    text = OPENCODE.wire(None, lambda spec: f"relay --agent opencode {spec.native}")
    template = plugin_template()
    assert COMMANDS_LINE in template and COMMANDS_LINE not in text
    assert _commands(text) == {
        s.native: f"relay --agent opencode {s.native}" for s in OPENCODE.events
    }
    assert OPENCODE.is_wired(text) and not OPENCODE.is_wired(template)
    assert OPENCODE.wire(text, lambda spec: f"relay --agent opencode {spec.native}") == text


def test_install_writes_hookd_s_plugin_and_uninstall_takes_exactly_it_away(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text('{"model": "x/y"}\n')
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    assert hookctl(["agents", "install", "opencode", "--python-relay"]) == 0
    plugin = config / "plugins" / "hookd.js"
    for native, command in _commands(plugin.read_text()).items():
        argv = shlex.split(command)
        assert argv[-3:] == ["--agent", "opencode", native], argv
    assert plugin.stat().st_mode & 0o777 == 0o600
    assert "opencode loads plugins when it starts" in capsys.readouterr().out
    assert hookctl(["agents", "install", "opencode", "--python-relay"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert hookctl(["agents", "uninstall", "opencode"]) == 0
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before
    assert not (config / "plugins").exists()  # install created it


def test_project_install_and_a_fail_closed_hook(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    closed = {"type": "command", "command": "guard", "onFailure": "block"}
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [closed]}]}}
    (project / ".claude").mkdir()
    (project / ".claude" / "hooks.json").write_text(json.dumps(hooks))
    assert hookctl(["agents", "install", "opencode", "--project", "--python-relay"]) == 0
    plugin = project / ".opencode" / "plugins" / "hookd.js"
    commands = _commands(plugin.read_text())
    assert commands["tool.execute.before"].endswith("--fail-closed")
    assert not commands["chat.message"].endswith("--fail-closed")
    assert (plugin.parent / ("hookd.js" + RECORD_SUFFIX)).exists()
    assert hookctl(["agents", "uninstall", "opencode", "--project"]) == 0
    assert not (project / ".opencode").exists()

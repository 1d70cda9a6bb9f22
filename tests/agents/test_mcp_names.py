"""One guard for every agent's MCP tools: each agent's name for one MCP tool, both ways.

The inputs are what the real CLIs sent their hooks when the model called the tool
``echo`` of the MCP server ``srv`` (:mod:`agents.fake_mcp`; recorded into
``tests/data/agents/mcp``): Copilot CLI 1.0.102 names it ``srv-echo`` in both of its
formats and ``srv/echo`` on permissionRequest, Gemini CLI 0.61.0 ``mcp_srv_echo`` (with
``mcp_context``), Codex 0.169.0 ``mcp__srv__echo`` — Claude Code's name.  Each decodes to
Claude Code's name, a real hook on Claude Code's matchers (``mcp__srv__echo``,
``mcp__srv__.*``) runs on it through the engine, and the agent gets its deny in its own
words; a matcher for another server's tool does not fire.  The docs-built adapters
(Kiro's ``@srv/echo``, goose's ``srv__echo``) are held to the same table, and Cursor,
which does not name the server, is said out loud by the capability report.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from agents.adapter_runs import fire_decoded
from hookd.agents.capabilities import degrade, mcp_matcher_report, report
from hookd.agents.mcp_names import McpNaming, parse_claude
from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.config.assemble import load_config
from hookd.installers.agent_doctor import hookd_config_findings

MCP = Path(__file__).resolve().parents[1] / "data" / "agents" / "mcp"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((MCP / f"{name}.json").read_text(encoding="utf-8"))
    data.pop("_fixture", None)
    return data


# --- the agent's name → Claude Code's (input) --------------------------------------------

DECODED = [
    # (agent, native event, recorded input, the agent's own name)
    ("copilot", "preToolUse", "copilot-1.0.102-native-preToolUse", "srv-echo"),
    ("copilot", "postToolUse", "copilot-1.0.102-native-postToolUse", "srv-echo"),
    ("copilot", "permissionRequest", "copilot-1.0.102-native-permissionRequest", "srv/echo"),
    ("copilot", "PreToolUse", "copilot-1.0.102-claude-shape-PreToolUse", "srv-echo"),
    ("copilot", "PostToolUse", "copilot-1.0.102-claude-shape-PostToolUse", "srv-echo"),
    ("gemini", "BeforeTool", "gemini-0.61.0-BeforeTool", "mcp_srv_echo"),
    ("gemini", "AfterTool", "gemini-0.61.0-AfterTool", "mcp_srv_echo"),
    ("codex", "PreToolUse", "codex-0.169.0-PreToolUse", "mcp__srv__echo"),
    ("codex", "PostToolUse", "codex-0.169.0-PostToolUse", "mcp__srv__echo"),
    ("qwen", "PreToolUse", "qwen-0.24.4-PreToolUse", "mcp__srv__echo"),
    ("qwen", "PostToolUse", "qwen-0.24.4-PostToolUse", "mcp__srv__echo"),
    ("opencode", "tool.execute.before", "opencode-1.18.33-tool.execute.before", "srv_echo"),
    ("opencode", "tool.execute.after", "opencode-1.18.33-tool.execute.after", "srv_echo"),
]


@pytest.mark.parametrize(("agent", "native", "name", "own"), DECODED)
def test_every_agent_s_mcp_tool_is_claude_code_s_name(
    agent: str, native: str, name: str, own: str
) -> None:
    event = adapter_for(agent).decode(native, recorded(name))
    assert event.input["tool_name"] == "mcp__srv__echo"
    if own == "mcp__srv__echo":
        assert "native_tool_name" not in event.input
        assert "tool_name_candidates" not in event.input
    else:
        assert event.input["native_tool_name"] == own
        assert event.input["tool_name_candidates"] == ["mcp__srv__echo", own]


DOCS_NAMES = [
    ("kiro", "PreToolUse", "@srv/echo"),
    ("goose", "PreToolUse", "srv__echo"),
    ("windsurf", None, None),  # names the server in fields: tests/agents/test_docs_adapters.py
]


@pytest.mark.parametrize(("agent", "native", "own"), [d for d in DOCS_NAMES if d[1]])
def test_the_docs_built_adapters_map_their_mcp_names_too(
    agent: str, native: str | None, own: str | None
) -> None:
    assert native is not None and own is not None
    adapter = adapter_for(agent)
    raw = {"hook_event_name": native, "cwd": "/tmp", "tool_name": own, "tool_input": {}}
    event = adapter.decode(native, raw)
    assert event.input["tool_name"] == "mcp__srv__echo"
    assert event.input["native_tool_name"] == own
    assert adapter.native_tools("mcp__srv__echo") == [own]


def test_copilot_s_dashed_names_read_every_way_and_prefer_a_dashed_server() -> None:
    """``my-srv-get-file``: server ``my-srv-get``, ``my-srv`` or ``my``; hookd names it
    by the last ``-`` and lists every reading, Copilot's own name last."""
    copilot = adapter_for("copilot")
    raw = recorded("copilot-1.0.102-native-preToolUse") | {"toolName": "my-srv-get-file"}
    event = copilot.decode("preToolUse", raw)
    assert event.input["tool_name"] == "mcp__my-srv-get__file"
    assert event.input["tool_name_candidates"] == [
        "mcp__my-srv-get__file",
        "mcp__my-srv__get-file",
        "mcp__my__srv-get-file",
        "my-srv-get-file",
    ]


def test_copilot_s_own_tools_are_not_read_as_mcp_tools() -> None:
    copilot = adapter_for("copilot")
    for name in ("bash", "view", "apply_patch", "write_bash", "fetch_copilot_cli_documentation"):
        assert copilot.mcp_tool(name) is None, name


def test_gemini_without_mcp_context_lists_every_reading() -> None:
    """An older Gemini (no ``mcp_context``): ``mcp_files_read_tree`` is server ``files``
    or ``files_read``; both are tested, none is guessed silently."""
    gemini = adapter_for("gemini")
    raw = recorded("gemini-0.61.0-BeforeTool") | {"tool_name": "mcp_files_read_tree"}
    del raw["mcp_context"]
    event = gemini.decode("BeforeTool", raw)
    assert event.input["tool_name"] == "mcp__files__read_tree"
    assert event.input["tool_name_candidates"] == [
        "mcp__files__read_tree",
        "mcp__files_read__tree",
        "mcp_files_read_tree",
    ]


# --- decode → real hook on Claude Code's matcher → the agent's deny ----------------------


def _deny_hook(matcher: str, tmp_path: Path) -> dict[str, Any]:
    marker = tmp_path / "ran"
    script = (
        f"cat > /dev/null; echo ran >> {shlex.quote(str(marker))}; echo 'no mcp here' >&2; exit 2"
    )
    return {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": f"sh -c {shlex.quote(script)}"}],
    }


async def _fire(agent: str, native: str, name: str, matcher: str, tmp_path: Path) -> bool:
    adapter = adapter_for(agent)
    event = adapter.decode(native, recorded(name) | {"cwd": str(tmp_path)})
    hooks = {event.event: [_deny_hook(matcher, tmp_path)]}
    result = await fire_decoded(event, hooks, tmp_path)
    reply = adapter.encode(degrade(result, event.spec), event)
    ran = (tmp_path / "ran").exists()
    if ran and event.event == "PreToolUse":
        assert "no mcp here" in reply.stdout + reply.stderr, reply
    return ran


PRE = [
    d for d in DECODED if d[1] in ("preToolUse", "PreToolUse", "BeforeTool", "tool.execute.before")
]


@pytest.mark.parametrize(
    "matcher", ["mcp__srv__echo", "mcp__srv__.*", "mcp__.*", "mcp__srv__echo|Bash"]
)
@pytest.mark.parametrize(("agent", "native", "name", "own"), PRE)
async def test_a_claude_code_mcp_matcher_guards_every_agent_s_call(
    agent: str, native: str, name: str, own: str, matcher: str, tmp_path: Path
) -> None:
    assert await _fire(agent, native, name, matcher, tmp_path), (agent, own, matcher)


@pytest.mark.parametrize("matcher", ["mcp__other__echo", "mcp__srv__other", "Bash"])
@pytest.mark.parametrize(("agent", "native", "name", "own"), PRE)
async def test_another_tool_s_matcher_does_not_fire(
    agent: str, native: str, name: str, own: str, matcher: str, tmp_path: Path
) -> None:
    assert not await _fire(agent, native, name, matcher, tmp_path), (agent, own, matcher)


async def test_a_matcher_in_the_agent_s_own_words_keeps_matching_under_it(
    tmp_path: Path,
) -> None:
    """A Gemini hook moved into hookd's config by ``install`` keeps its ``mcp_srv_echo``."""
    name = "gemini-0.61.0-BeforeTool"
    assert await _fire("gemini", "BeforeTool", name, "mcp_srv_echo", tmp_path)


# --- Claude Code's name → the agent's (output: doctor, explain, what the agent reads) ----

NATIVE_NAMES = [
    ("claude", []),
    ("claude-agent-sdk", []),
    ("codex", []),
    ("copilot", ["srv-echo"]),
    ("gemini", ["mcp_srv_echo"]),
    ("kiro", ["@srv/echo"]),
    ("goose", ["srv__echo"]),
    ("opencode", ["srv_echo"]),
    ("cursor", []),
]


@pytest.mark.parametrize(("agent", "names"), NATIVE_NAMES)
def test_claude_code_s_name_back_to_the_agent_s(agent: str, names: list[str]) -> None:
    assert adapter_for(agent).native_tools("mcp__srv__echo") == names


def test_every_adapter_declares_how_it_names_mcp_tools() -> None:
    """A new adapter must decide: Claude Code's names, its own (mapped), or none at all."""
    for adapter in ADAPTERS:
        naming = adapter.mcp
        assert isinstance(naming, McpNaming)
        if not naming.is_claude:
            assert naming.how, adapter.name
            if naming.named:
                own = naming.native("srv", "echo")
                assert own is not None
                assert adapter.canonical_tool(own) == "mcp__srv__echo", adapter.name


def test_parse_claude() -> None:
    assert parse_claude("mcp__srv__echo") == ("srv", "echo")
    assert parse_claude("mcp__brave-search__web_search") == ("brave-search", "web_search")
    assert parse_claude("mcp__srv") is None
    assert parse_claude("Bash") is None


# --- said out loud: doctor, explain and the daemon's load warnings ------------------------


@pytest.mark.parametrize(
    ("agent", "severity"),
    [
        ("claude", None),
        ("codex", None),
        ("claude-agent-sdk", None),
        ("windsurf", None),
        ("gemini", "info"),
        ("kiro", "info"),
        ("opencode", "info"),
        ("copilot", "warning"),
        ("goose", "warning"),
        ("cursor", "error"),
    ],
)
def test_an_mcp_matcher_is_reported_per_agent(agent: str, severity: str | None) -> None:
    found = mcp_matcher_report(adapter_for(agent), "mcp__srv__echo")
    assert (found[0] if found else None) == severity, found
    assert mcp_matcher_report(adapter_for(agent), "Bash") is None


def test_cursor_s_unnamed_server_is_an_error_in_the_report(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            {"matcher": "mcp__srv__echo", "hooks": [{"type": "command", "command": "true"}]}
        ]
    }
    config = load_config(None, str(tmp_path), [json.dumps({"hooks": hooks})])
    reports = report(adapter_for("cursor"), config.all_hooks())
    found = [r for r in reports if "MCP tool" in r.message]
    assert [r.severity for r in found] == ["error"]
    assert "never matches" in found[0].message


def test_install_moves_copilot_s_mcp_matchers_in_claude_code_s_words(tmp_path: Path) -> None:
    """A Claude-shaped Copilot hook on ``srv-echo`` moves as ``mcp__srv__echo``; a name that
    reads several ways stays as written (it still matches under Copilot), said so."""
    path = tmp_path / "hooks.json"
    guard = {"type": "command", "command": "guard"}
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "srv-echo|Bash", "hooks": [guard]},
                        {"matcher": "my-srv-get", "hooks": [guard]},
                    ]
                }
            }
        )
    )
    found = adapter_for("copilot").read_hooks(path)
    assert [g["matcher"] for g in found.hooks["PreToolUse"]] == [
        "mcp__srv__echo|Bash",
        "my-srv-get",
    ]
    assert any("reads several ways" in w for w in found.warnings)
    assert any("in Claude Code's words" in w for w in found.warnings)


def test_doctor_says_an_agent_s_mcp_name_in_hookd_s_config_guards_one_agent(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hooks.json"
    groups: list[dict[str, Any]] = [
        {"matcher": m, "hooks": []} for m in ("srv-echo", "mcp_srv_echo", "mcp__srv__echo")
    ]
    path.write_text(json.dumps({"hooks": {"PreToolUse": groups}}))
    found = hookd_config_findings(path, ADAPTERS)
    assert [(f.where, f.severity) for f in found] == [
        ("hooks.PreToolUse[0].matcher", "warning"),
        ("hooks.PreToolUse[1].matcher", "warning"),
    ]
    assert "write mcp__srv__echo" in found[0].message and "Copilot" in found[0].message
    assert "Gemini" in found[1].message


def test_every_reading_of_every_agent_s_mcp_name_has_a_server_and_a_tool() -> None:
    """A separator at either end, or two in a row, never makes a reading with an empty
    server or tool (``mcp____echo`` is no tool of any server), for every agent; and the
    hook's ``tool_name`` is the first reading, the agent's own name the last candidate."""
    from hookd.agents.copilot import PERMISSION_MCP_NAMING
    from hookd.agents.mcp_names import claude_name

    namings = {a.name: a.mcp for a in ADAPTERS} | {"copilot-permission": PERMISSION_MCP_NAMING}
    for agent, naming in namings.items():
        if not naming.named or naming.is_claude:
            continue
        p, s = naming.prefix, naming.sep
        for native in (f"{p}{s}echo", f"{p}srv{s}", f"{p}a{s}{s}b", f"{p}{s}a{s}b{s}", f"{p}a{s}b"):
            splits = naming.splits(native)
            assert all(server and tool for server, tool in splits), (agent, native, splits)
            tool = naming.tool(native)
            readings = [claude_name(server, name) for server, name in splits]
            assert (tool.candidates if tool else ()) == ((*readings, native) if readings else ())
        assert naming.splits(f"{p}a{s}b") == [("a", "b")], agent  # the plain case reads once

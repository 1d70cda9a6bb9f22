"""opencode (``opencode-ai``): no command hooks, so a plugin door; run here at 1.18.33.

opencode's hooks are functions of in-process JS plugins (a ``*.js`` in
``~/.config/opencode/plugins/`` or a project's ``.opencode/plugins/``, loaded
at start), not commands in a settings file: ``"tool.execute.before"(input,
output)`` blocks a tool call by throwing and rewrites it by changing
``output.args``; ``"tool.execute.after"`` may change the result the model
reads; ``"chat.message"`` may add parts to the user's message or throw.  So
``install`` writes a plugin of hookd's own (``hookd/doors/opencode_plugin/hookd.js``,
package data, with the relay's command line per hook filled in), which runs
``hookd-relay --agent opencode <hook>`` with the hook's ``input`` and
``output`` on stdin and applies the small answer this adapter prints:
``{"block": reason}``, ``{"args": {...}}``, ``{"context": text}``.

What the plugin sends (seen with the real CLI, ``tests/data/agents/opencode-1.18.33/``):
``{"directory", "worktree", "mcp_servers", "input": {...}, "output": {...}}``,
opencode's own objects as its hook got them — ``input.sessionID``,
``input.tool``, ``input.callID``, ``output.args`` (before), ``input.args`` and
the tool's result ``output`` (after: ``{title, output, metadata}``, an MCP
tool's ``{content, isError}``), the user message's ``output.parts``.

Tool names: opencode's own (``bash``, ``edit``, ``write`` …) map to Claude
Code's; an MCP server's tool is ``<server>_<tool>`` (each part with anything
but ``[A-Za-z0-9_-]`` made ``_``), split exactly where the plugin's
``mcp_servers`` (from opencode's merged config) says, else at every ``_``
(every reading a candidate).  Arguments keep opencode's names (``filePath``,
``oldString``), as Copilot's keep its own.

What opencode cannot do, declared so :mod:`hookd.agents.capabilities` says it:
ask the user from a hook (``permission.ask`` is declared in its plugin API but
never fired at 1.18.33: an ask is a deny), add context before a tool runs,
and every session event (``session.created``, ``session.idle``) reaches
plugins through its event bus without being awaited — so SessionStart, Stop
and SessionEnd hooks do not run under opencode at all (``explain`` says so).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from hookd.agents.base import (
    Adapter,
    AgentEvent,
    AgentReply,
    Capabilities,
    EventSpec,
    Installation,
    NativeHooks,
    Scope,
)
from hookd.agents.capabilities import degrade
from hookd.agents.detect import detect_binary
from hookd.agents.mcp_names import McpNaming, McpTool, claude_name
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["COMMANDS_LINE", "OpencodeAdapter", "plugin_template"]

EVENTS = (
    EventSpec(native="tool.execute.before", canonical="PreToolUse",
              caps=Capabilities(block=True, rewrite_input=True, matchers=False, parallel=False),
              note="a block throws: the model reads the reason as the tool's error; a rewrite"
                   " replaces the tool's arguments; no context before a tool runs, no ask"),
    EventSpec(native="tool.execute.after", canonical="PostToolUse",
              caps=Capabilities(block=True, add_context=True, matchers=False, parallel=False),
              note="the tool has run: a block's reason and context are appended to the result"
                   " the model reads"),
    EventSpec(native="chat.message", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, add_context=True, matchers=False, parallel=False),
              note="context is a part of the user's message; a block throws: no model"
                   " request, `opencode run` exits 1 (`Unexpected server error`)"),
)  # fmt: skip

COMMANDS_LINE = "const COMMANDS = {} // hookd:commands"
"""The template's line ``wire`` fills in with each hook's relay command line."""
_MARK = "// hookd:commands"
PLUGIN_FILE = "hookd.js"

_REASON = "Blocked by a hook (hookd)"


def plugin_template() -> str:
    """The plugin's source as shipped (package data beside the Claude Code mod)."""
    return resources.files("hookd").joinpath("doors", "opencode_plugin", PLUGIN_FILE).read_text()


def _config_home(home: Path) -> Path:
    """opencode's user config folder's parent: ``$XDG_CONFIG_HOME`` (xdg-basedir), else
    ``~/.config``."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else home / ".config"


class OpencodeAdapter(Adapter):
    name: ClassVar[str] = "opencode"
    title: ClassVar[str] = "opencode"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "1.18.33"
    binary: ClassVar[str] = "opencode"
    user_folder: ClassVar[str] = "opencode"
    """The user's config folder, under ``$XDG_CONFIG_HOME`` (``~/.config``)."""
    project_folder: ClassVar[str] = ".opencode"
    events = EVENTS
    tools: ClassVar[dict[str, str]] = {
        "bash": "Bash",
        "edit": "Edit",
        "write": "Write",
        "read": "Read",
        "glob": "Glob",
        "grep": "Grep",
        "task": "Task",
        "todowrite": "TodoWrite",
        "webfetch": "WebFetch",
        "websearch": "WebSearch",
        "skill": "Skill",
        "question": "AskUserQuestion",
        "apply_patch": "apply_patch",
        "list_mcp_resources": "ListMcpResourcesTool",
        "read_mcp_resource": "ReadMcpResourceTool",
        "list_mcp_resource_templates": "list_mcp_resource_templates",
    }
    """opencode's tools (1.18.33's ``bash``, ``edit`` …; its MCP resource tools, whose
    ``_`` must not read as an MCP server's tool)."""
    mcp: ClassVar[McpNaming] = McpNaming(
        prefix="",
        sep="_",
        exact=True,
        how="opencode names an MCP server's tool `<server>_<tool>`; hookd's plugin says"
        " which servers there are, so it splits exactly at the server's name",
    )

    def mcp_tool(self, native: str, data: Mapping[str, Any] | None = None) -> McpTool | None:
        """``srv_echo`` → ``mcp__srv__echo``: split after the longest MCP server's name the
        plugin listed (``mcp_servers``, opencode's config) that the tool's name starts with; a
        tool of no listed server is the agent's own (a custom tool, Kilo's ``cron_list``);
        without the list (an input hookd's plugin did not send), every reading."""
        if native in self.tools:
            return None
        servers = data.get("mcp_servers") if data is not None else None
        if not isinstance(servers, list):
            return self.mcp.tool(native)
        names = [s for s in servers if isinstance(s, str)]
        for server in sorted(names, key=len, reverse=True):
            prefix = _sanitised(server) + "_"
            if native.startswith(prefix) and len(native) > len(prefix):
                name = claude_name(server, native[len(prefix) :])
                return McpTool(name=name, candidates=(name, native))
        return None  # the plugin named every server: a tool of none is the agent's own

    # --- runtime --------------------------------------------------------------------

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        what = f"{self.title} {native_event} input"
        hook_in, hook_out = _object(raw, "input", what), _object(raw, "output", what)
        directory = raw.get("directory")
        if not isinstance(directory, str) or not directory:
            raise EventInputError(f"{what}: `$.directory` is missing")
        session = hook_in.get("sessionID")
        data: dict[str, Any] = {
            "session_id": session if isinstance(session, str) else "",
            "transcript_path": "",
            "cwd": directory,
            "hook_event_name": spec.canonical,
        }
        if native_event == "chat.message":
            data["prompt"] = _prompt(hook_out)
            # opencode 1.18 sends them in the message (`output.message`); the plugin
            # documentation, in the input: either way they reach the hooks.
            message = hook_out.get("message")
            if isinstance(message, dict):
                _copy(data, message, agent="agent", message_id="id")
            _copy(data, hook_in, agent="agent", message_id="messageID")
        else:
            tool = hook_in.get("tool")
            if not isinstance(tool, str) or not tool:
                raise EventInputError(f"{what}: `$.input.tool` is missing")
            args = hook_out.get("args") if native_event == "tool.execute.before" else None
            if native_event == "tool.execute.after":
                args = hook_in.get("args")
                data["tool_response"] = hook_out
            data["tool_name"] = tool
            data["tool_input"] = args if isinstance(args, dict) else {}
            data["tool_use_id"] = str(hook_in.get("callID") or "")
            data["mcp_servers"] = raw.get("mcp_servers")  # read by mcp_tool, not kept
            self.map_tool(data, tool)
            del data["mcp_servers"]
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        safe = degrade(result, event.spec)
        out: dict[str, Any] = {}
        if safe.blocked or not safe.continue_:
            messages = [m for m in safe.blocking_messages if m]
            out["block"] = "\n".join(messages) or safe.reason or safe.stop_reason or _REASON
        elif safe.updated_input is not None:
            out["args"] = safe.updated_input
        context = [*safe.plain_context, *safe.additional_context]
        if context and event.spec.caps.add_context:
            out["context"] = "\n".join(context)
        return AgentReply(stdout=json.dumps(out) + "\n" if out else "")

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        return detect_binary(self.binary)

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        if scope == "user":
            return [_config_home(home) / self.user_folder / "plugins" / PLUGIN_FILE]
        if project is None:
            return []
        return [project / self.project_folder / "plugins" / PLUGIN_FILE]

    def read_hooks(self, path: Path) -> NativeHooks:
        """hookd's plugin holds no hooks of the user's: opencode has no command hooks to
        move, and other plugins (their own files) keep running in opencode."""
        del path
        return NativeHooks()

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        """The plugin, with each hook's relay command line (the file is hookd's own: any
        text there before is replaced; install backs it up)."""
        del text
        commands = {spec.native: command(spec) for spec in self.events}
        template = plugin_template()
        line = f"const COMMANDS = {json.dumps(commands, indent=2)} {_MARK}"
        return template.replace(COMMANDS_LINE, line, 1)

    def is_wired(self, text: str) -> bool:
        """hookd's plugin with its commands filled in (the template's empty line is not)."""
        return _MARK in text and COMMANDS_LINE not in text

    def trust_steps(self, scope: Scope) -> list[str]:
        return [f"{self.title} loads plugins when it starts: start a new session"]


def _sanitised(name: str) -> str:
    """opencode's rule for the parts of an MCP tool's name: ``[^A-Za-z0-9_-]`` → ``_``."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in name)


def _object(raw: Mapping[str, Any], key: str, what: str) -> dict[str, Any]:
    value = raw.get(key)
    if not isinstance(value, dict):
        raise EventInputError(f"{what}: `$.{key}` must be an object")
    return value


def _prompt(output: Mapping[str, Any]) -> str:
    """The user's words: the message's text parts that opencode did not add itself."""
    parts = output.get("parts")
    texts = [
        str(p.get("text", ""))
        for p in (parts if isinstance(parts, list) else [])
        if isinstance(p, dict) and p.get("type") == "text" and not p.get("synthetic")
    ]
    return "\n".join(texts)


def _copy(data: dict[str, Any], source: Mapping[str, Any], **names: str) -> None:
    for ours, theirs in names.items():
        value = source.get(theirs)
        if isinstance(value, str):
            data[ours] = value

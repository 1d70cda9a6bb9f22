"""Cursor (agent and ``cursor-agent`` CLI): built from its documentation, not run here.

Cursor's hooks (``hooks.json`` v1: ``~/.cursor/hooks.json``,
``<project>/.cursor/hooks.json``; cursor.com/docs/agent/hooks) split Claude
Code's tool events by action, so the translation is per native event:

==========================  ===================  ==========================================
Cursor event                canonical            what hookd can do there
==========================  ===================  ==========================================
``beforeShellExecution``    PreToolUse (Bash)    deny / ask (``permission``), no rewrite
``beforeMCPExecution``      PreToolUse (MCP)     deny / ask, no rewrite
``beforeReadFile``          PreToolUse (Read)    deny only
``afterShellExecution``     PostToolUse (Bash)   observe only (fire-and-forget)
``afterMCPExecution``       PostToolUse (MCP)    observe only
``afterFileEdit``           PostToolUse (Edit)   observe only — there is **no before-edit
                                                 event**: an Edit guard runs after the fact
``beforeSubmitPrompt``      UserPromptSubmit     block (``continue: false``), no context
``stop``                    Stop                 continue with ``followup_message``
``sessionStart``            SessionStart         ``additional_context``
``sessionEnd``              SessionEnd           observe only
==========================  ===================  ==========================================

Cursor's newer generic ``preToolUse``/``postToolUse`` are not wired: they fire
for the same calls as the split events, and wiring both would run every
shell guard twice.

Input: ``conversation_id`` is the session, ``workspace_roots[0]`` the cwd when
the event has none; the shell command, file path or MCP arguments (a JSON
*string* in Cursor) become Claude Code's ``tool_input``.  Entries carry no
matcher (hookd filters in the daemon).  Cursor's own hooks speak Cursor's
protocol, so ``install`` leaves them where they are (:mod:`hookd.agents.flat_shape`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from hookd.agents.base import (
    Adapter,
    AgentEvent,
    AgentReply,
    Capabilities,
    EventSpec,
    Finding,
    Installation,
    NativeHooks,
    Scope,
)
from hookd.agents.capabilities import degrade
from hookd.agents.detect import detect_binary
from hookd.agents.flat_shape import read_flat, wire_flat, wired_flat
from hookd.agents.mcp_names import McpNaming
from hookd.json_object import parse_object
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["CursorAdapter"]

_GATE = Capabilities(block=True, ask=True, matchers=False)
_READ = Capabilities(block=True, matchers=False)
_AFTER = Capabilities(matchers=False)
_NOTE_AFTER = "fire-and-forget: Cursor does not wait for an answer"

EVENTS = (
    EventSpec(native="beforeShellExecution", canonical="PreToolUse", caps=_GATE,
              note="shell commands only (tool Bash); no input rewrite"),
    EventSpec(native="beforeMCPExecution", canonical="PreToolUse", caps=_GATE,
              note="MCP calls only; the server is not named, tool_input arrives as a JSON string"),
    EventSpec(native="beforeReadFile", canonical="PreToolUse", caps=_READ,
              note="file reads only (tool Read); allow or deny, no ask"),
    EventSpec(native="afterShellExecution", canonical="PostToolUse", caps=_AFTER,
              note=_NOTE_AFTER),
    EventSpec(native="afterMCPExecution", canonical="PostToolUse", caps=_AFTER,
              note=_NOTE_AFTER),
    EventSpec(native="afterFileEdit", canonical="PostToolUse", caps=_AFTER,
              note="the only edit event: no PreToolUse for Edit/Write, a guard runs after"),
    EventSpec(native="beforeSubmitPrompt", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, system_message=True, matchers=False),
              note="block only (continue: false); no added context"),
    EventSpec(native="stop", canonical="Stop",
              caps=Capabilities(block=True, continue_stop=True, matchers=False),
              note="a block becomes followup_message, sent as the next user message (at most 5)"),
    EventSpec(native="sessionStart", canonical="SessionStart",
              caps=Capabilities(add_context=True, matchers=False)),
    EventSpec(native="sessionEnd", canonical="SessionEnd", caps=_AFTER),
)  # fmt: skip

KNOWN_EVENTS = frozenset(
    {
        *(s.native for s in EVENTS),
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "subagentStart",
        "subagentStop",
        "preCompact",
        "afterAgentResponse",
        "afterAgentThought",
        "beforeTabFileRead",
        "afterTabFileEdit",
    }
)
"""Every event Cursor dispatches (for doctor: any other key is never fired)."""

_GATES = frozenset({"beforeShellExecution", "beforeMCPExecution", "beforeReadFile"})


def _json_arg(value: Any) -> Any:
    """Cursor sends MCP arguments and results as JSON strings."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


class CursorAdapter(Adapter):
    name: ClassVar[str] = "cursor"
    title: ClassVar[str] = "Cursor"
    verified: ClassVar[bool] = False
    events = EVENTS
    tools: ClassVar[dict[str, str]] = {"Shell": "Bash", "Read": "Read", "Write": "Write"}
    mcp: ClassVar[McpNaming] = McpNaming(
        named=False,
        how="Cursor's beforeMCPExecution names the tool (`echo`) but not its server",
    )

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"Cursor {native_event} input: not a JSON object")
        roots = raw.get("workspace_roots")
        cwd = raw.get("cwd") or (roots[0] if isinstance(roots, list) and roots else "")
        data: dict[str, Any] = {
            **raw,
            "session_id": str(raw.get("conversation_id") or raw.get("session_id") or ""),
            "hook_event_name": spec.canonical,
            "cwd": str(cwd),
        }
        data.setdefault("transcript_path", "")
        data.update(_tool_fields(native_event, raw))
        if native_event == "stop":
            data["stop_hook_active"] = int(raw.get("loop_count") or 0) > 0
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        safe = degrade(result, event.spec)
        native = event.native_event
        reason = (
            safe.reason
            or safe.stop_reason  # a `continue: false` alone denies with its stopReason
            or "; ".join(safe.blocking_messages)
            or "Blocked by a hook (hookd)"
        )
        out: dict[str, Any] = {}
        if native in _GATES:
            if safe.blocked or not safe.continue_:
                out = {"permission": "deny"}
                if native != "beforeReadFile":
                    out.update(user_message=reason, agent_message=reason)
            elif safe.decision == "ask":
                out = {"permission": "ask", "user_message": reason, "agent_message": reason}
            elif safe.decision == "allow":
                out = {"permission": "allow"}
        elif native == "beforeSubmitPrompt":
            stopped = safe.blocked or not safe.continue_
            out = {"continue": not stopped}
            if stopped:
                out["user_message"] = safe.stop_reason or reason
        elif native == "stop" and safe.blocked:
            out = {"followup_message": reason}
        elif native == "sessionStart":
            context = [*safe.plain_context, *safe.additional_context]
            if context:
                out = {"additional_context": "\n".join(context)}
        return AgentReply(stdout=json.dumps(out) + "\n" if out else "")

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        found = detect_binary("cursor-agent")
        return found if found.installed else detect_binary("cursor")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        if scope == "user":
            return [home / ".cursor" / "hooks.json"]
        return [] if project is None else [project / ".cursor" / "hooks.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        return read_flat(path, self.events, self.title)

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        return wire_flat(text, self.events, command, top={"version": 1}, what="Cursor hooks.json")

    def is_wired(self, text: str) -> bool:
        return wired_flat(text, self.events)

    def trust_steps(self, scope: Scope) -> list[str]:
        return ["Cursor reads hooks.json when it starts: restart Cursor (or cursor-agent)"]

    def lint(self, path: Path, text: str) -> list[Finding]:
        data = parse_object(str(path), text)
        out: list[Finding] = []
        if data.get("version") != 1:
            out.append(
                Finding(
                    severity="error",
                    message='Cursor runs no hook from a hooks.json without "version": 1',
                    path=str(path),
                    where="version",
                )
            )
        hooks = data.get("hooks")
        for event in hooks if isinstance(hooks, dict) else {}:
            if event not in KNOWN_EVENTS:
                out.append(
                    Finding(
                        severity="warning",
                        message=f"Cursor dispatches no event {event!r}: these hooks never run",
                        path=str(path),
                        where=f"hooks.{event}",
                    )
                )
        return out


def _tool_fields(native: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's ``tool_name``/``tool_input``/``tool_response`` for Cursor's split events."""
    if native in ("beforeShellExecution", "afterShellExecution"):
        out: dict[str, Any] = {
            "tool_name": "Bash",
            "native_tool_name": "Shell",
            "tool_input": {"command": str(raw.get("command", ""))},
        }
        if native == "afterShellExecution":
            out["tool_response"] = {"stdout": str(raw.get("output", "")), "stderr": ""}
        return out
    if native in ("beforeMCPExecution", "afterMCPExecution"):
        tool = raw.get("tool_name")
        if not isinstance(tool, str):
            raise EventInputError(f"Cursor {native} input: tool_name must be a string")
        out = {"tool_name": tool, "tool_input": _json_arg(raw.get("tool_input"))}
        if native == "afterMCPExecution":
            out["tool_response"] = _json_arg(raw.get("result_json"))
        return out
    if native == "beforeReadFile":
        return {
            "tool_name": "Read",
            "native_tool_name": "Read",
            "tool_input": {"file_path": str(raw.get("file_path", ""))},
        }
    if native == "afterFileEdit":
        path = str(raw.get("file_path", ""))
        edits = raw.get("edits") if isinstance(raw.get("edits"), list) else []
        return {
            "tool_name": "Edit",
            "native_tool_name": "Edit",
            "tool_input": {"file_path": path, "edits": edits},
            "tool_response": {"filePath": path, "success": True},
        }
    return {}

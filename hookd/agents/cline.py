"""Cline (VS Code extension and CLI): built from its documentation, not run here.

Cline's hooks (docs.cline.bot, "Hooks" and "Hook reference") are executables
named after their event — ``PreToolUse``, ``TaskStart`` … with no extension —
in ``~/Documents/Cline/Hooks/`` (global) or ``<workspace>/.clinerules/hooks/``.
One file per event, so one hook per event and scope: ``install`` writes a
small ``sh`` script per event that runs hookd's relay, and where the user
already has a script for an event it stays (Cline allows one), hookd is not
wired for that event, and ``install`` says so.

Stdin: ``{clineVersion, hookName, timestamp, taskId, workspaceRoots, userId,
<hookName in camelCase>: {…}}`` — ``preToolUse: {toolName, parameters}``,
``postToolUse: {toolName, parameters, result, success, executionTimeMs}``,
``userPromptSubmit: {prompt}``, ``taskStart: {taskMetadata}`` …  The task is
the session (``taskId``), ``workspaceRoots[0]`` the cwd.  Stdout:
``{"cancel": bool, "contextModification": str, "errorMessage": str}`` — cancel
stops the action, ``contextModification`` (≤ 50 KB) is added to the
conversation.  No rewrite, no ask, no matcher (hookd filters), no stop
continuation (TaskComplete is after the fact).

=================  ==================  =====================================
Cline hook         canonical           what hookd can do there
=================  ==================  =====================================
``TaskStart``      SessionStart        context
``TaskResume``     SessionStart        context (``source: "resume"``)
``UserPromptSubmit`` UserPromptSubmit  cancel, context
``PreToolUse``     PreToolUse          cancel, context
``PostToolUse``    PostToolUse         context
``PreCompact``     PreCompact          observe
``TaskComplete``   Stop                observe (the task is over)
``TaskCancel``     SessionEnd          observe
=================  ==================  =====================================
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
    Installation,
    NativeHooks,
    Scope,
)
from hookd.agents.capabilities import degrade
from hookd.agents.claude_shape import is_hookd_command
from hookd.agents.detect import detect_binary
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["ClineAdapter"]

_CONTEXT = Capabilities(add_context=True, matchers=False)
_OBSERVE = Capabilities(matchers=False)

EVENTS = (
    EventSpec(native="TaskStart", canonical="SessionStart", caps=_CONTEXT),
    EventSpec(native="TaskResume", canonical="SessionStart", caps=_CONTEXT,
              note="a resumed task (source: resume)"),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, add_context=True, matchers=False)),
    EventSpec(native="PreToolUse", canonical="PreToolUse",
              caps=Capabilities(block=True, add_context=True, matchers=False),
              note="cancel blocks the tool; no rewrite, no ask"),
    EventSpec(native="PostToolUse", canonical="PostToolUse", caps=_CONTEXT),
    EventSpec(native="PreCompact", canonical="PreCompact", caps=_OBSERVE),
    EventSpec(native="TaskComplete", canonical="Stop", caps=_OBSERVE,
              note="the task is complete: a block cannot continue it"),
    EventSpec(native="TaskCancel", canonical="SessionEnd", caps=_OBSERVE),
)  # fmt: skip

TOOLS = {
    "execute_command": "Bash",
    "read_file": "Read",
    "write_to_file": "Write",
    "replace_in_file": "Edit",
    "search_files": "Grep",
    "list_files": "LS",
    "web_fetch": "WebFetch",
}

_SCRIPT = """#!/bin/sh
# hookd: Cline's {event} hook, sent to hookd (hookctl agents install cline).
# `hookctl agents uninstall cline` puts back what was here before.
exec {command}
"""


def _key(native: str) -> str:
    return native[:1].lower() + native[1:]


class ClineAdapter(Adapter):
    name: ClassVar[str] = "cline"
    title: ClassVar[str] = "Cline"
    verified: ClassVar[bool] = False
    events = EVENTS
    tools: ClassVar[dict[str, str]] = TOOLS
    install_mode: ClassVar[int] = 0o700

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"Cline {native_event} input: not a JSON object")
        body = raw.get(_key(native_event)) if raw.get(_key(native_event)) is not None else {}
        if not isinstance(body, dict):
            raise EventInputError(
                f"Cline {native_event} input: {_key(native_event)} must be an object"
            )
        roots = raw.get("workspaceRoots")
        data: dict[str, Any] = {
            **raw,
            "session_id": str(raw.get("taskId") or ""),
            "transcript_path": "",
            "cwd": str(roots[0]) if isinstance(roots, list) and roots else "",
            "hook_event_name": spec.canonical,
        }
        if native_event in ("PreToolUse", "PostToolUse"):
            tool = body.get("toolName")
            if not isinstance(tool, str):
                raise EventInputError(f"Cline {native_event} input: toolName must be a string")
            found = body.get("parameters")
            params: dict[str, Any] = found if isinstance(found, dict) else {}
            data["tool_input"] = _tool_input(tool, params)
            data["tool_name"] = _tool_name(tool, params)
            if data["tool_name"] != tool:
                data["native_tool_name"] = tool
            if native_event == "PostToolUse":
                data["tool_response"] = {
                    "result": body.get("result"),
                    "success": body.get("success"),
                }
        elif native_event == "UserPromptSubmit":
            data["prompt"] = str(body.get("prompt", ""))
        elif spec.canonical == "SessionStart":
            data["source"] = "resume" if native_event == "TaskResume" else "startup"
        elif native_event == "TaskComplete":
            data["stop_hook_active"] = False
        elif native_event == "TaskCancel":
            data["reason"] = "other"
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        safe = degrade(result, event.spec)
        caps = event.spec.caps
        out: dict[str, Any] = {"cancel": False}
        if caps.block and (safe.blocked or not safe.continue_):
            reason = (
                safe.reason or safe.stop_reason or "; ".join(safe.blocking_messages)
                or "Blocked by a hook (hookd)"
            )  # fmt: skip
            out = {"cancel": True, "errorMessage": reason}
        context = [*safe.plain_context, *safe.additional_context]
        if caps.add_context and context:
            out["contextModification"] = "\n".join(context)
        return AgentReply(stdout=json.dumps(out) + "\n")

    # --- install: one executable per event ---------------------------------------------

    def detect(self) -> Installation:
        return detect_binary("cline")

    def _folder(self, scope: Scope, home: Path, project: Path | None) -> Path | None:
        if scope == "user":
            return home / "Documents" / "Cline" / "Hooks"
        return None if project is None else project / ".clinerules" / "hooks"

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        folder = self._folder(scope, home, project)
        names = dict.fromkeys(s.native for s in self.events)
        return [] if folder is None else [folder / n for n in names]

    def install_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        return self.hook_files(scope, home, project)

    def wire_file(self, path: Path, text: str | None, command: Callable[[EventSpec], str]) -> str:
        if text is not None and not is_hookd_command({"command": text}):
            return text  # the user's own hook for this event: Cline runs one, it stays
        spec = self.event_spec(path.name)
        return _SCRIPT.format(event=spec.native, command=command(spec))

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        raise ValueError("Cline reads one file per event: wire each with wire_file")

    def is_wired(self, text: str) -> bool:
        return is_hookd_command({"command": text})

    def read_hooks(self, path: Path) -> NativeHooks:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return NativeHooks()
        if is_hookd_command({"command": text}):
            return NativeHooks()
        return NativeHooks(
            warnings=[
                f"Cline runs one hook per event and this one speaks Cline's protocol: it stays, "
                f"and hookd is not wired for {path.name} (move it aside and install again to "
                "send the event to hookd)"
            ]
        )

    def trust_steps(self, scope: Scope) -> list[str]:
        return ["enable hooks in Cline's settings (Features → Hooks) if they are off"]


def _tool_name(tool: str, params: dict[str, Any]) -> str:
    if tool == "use_mcp_tool":
        return f"mcp__{params.get('server_name')}__{params.get('tool_name')}"
    return TOOLS.get(tool, tool)


def _tool_input(tool: str, params: dict[str, Any]) -> dict[str, Any]:
    """Cline's parameters, with Claude Code's names beside Cline's (``path`` → ``file_path``)."""
    out = dict(params)
    if "path" in params and tool in ("read_file", "write_to_file", "replace_in_file"):
        out.setdefault("file_path", params["path"])
    if tool == "use_mcp_tool" and isinstance(params.get("arguments"), str):
        try:
            return dict(json.loads(params["arguments"]))
        except (json.JSONDecodeError, TypeError, ValueError):
            return out
    return out

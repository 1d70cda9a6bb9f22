"""Windsurf Cascade / Devin Desktop: built from its documentation, not run here.

Cascade hooks (docs.windsurf.com/windsurf/cascade/hooks) live in
``~/.codeium/windsurf/hooks.json`` (user) and ``<workspace>/.windsurf/hooks.json``
(project), merged system → user → workspace and run in that order.  Events are
split by action and snake_case; every input has ``agent_action_name``,
``trajectory_id`` (the conversation), ``execution_id``, ``timestamp`` and the
action's fields under ``tool_info``:

=======================  ===================  ===========================================
Windsurf event           canonical            tool / fields
=======================  ===================  ===========================================
``pre_run_command``      PreToolUse           Bash ← ``command_line``, ``cwd``
``post_run_command``     PostToolUse          Bash
``pre_read_code``        PreToolUse           Read ← ``file_path``
``post_read_code``       PostToolUse          Read
``pre_write_code``       PreToolUse           Edit ← ``file_path``, ``edits``
``post_write_code``      PostToolUse          Edit
``pre_mcp_tool_use``     PreToolUse           ``mcp__<server>__<tool>`` ← ``mcp_tool_arguments``
``post_mcp_tool_use``    PostToolUse          same
``pre_user_prompt``      UserPromptSubmit     ``user_prompt``
``post_cascade_response``  Stop               observe only (the turn is over)
=======================  ===================  ===========================================

The only verdict Windsurf reads is the **exit code**: 2 blocks a ``pre_`` event
and its stderr is shown; there is no JSON answer, so no ask (an ask becomes a
deny), no rewrite (a rewrite becomes a block), no added context, no stop
continuation.  Entries carry no matcher (hookd filters in the daemon) and run
one after another.  Only ``run_command`` names a directory (``tool_info.cwd``);
the other events carry none, so hookd learns the project from the relay's
working directory (Windsurf runs hooks in the workspace root unless an entry
says ``working_directory``).  Windsurf's own hooks read Windsurf's ``tool_info``, so
``install`` leaves them where they are (:mod:`hookd.agents.flat_shape`).
"""

from __future__ import annotations

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
from hookd.json_object import parse_object
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["WindsurfAdapter"]

_PRE = Capabilities(block=True, matchers=False, parallel=False)
_POST = Capabilities(matchers=False, parallel=False)

EVENTS = (
    EventSpec(native="pre_run_command", canonical="PreToolUse", caps=_PRE,
              note="shell commands only; exit 2 is the only verdict"),
    EventSpec(native="post_run_command", canonical="PostToolUse", caps=_POST),
    EventSpec(native="pre_read_code", canonical="PreToolUse", caps=_PRE,
              note="file reads only; exit 2 is the only verdict"),
    EventSpec(native="post_read_code", canonical="PostToolUse", caps=_POST),
    EventSpec(native="pre_write_code", canonical="PreToolUse", caps=_PRE,
              note="file writes only (tool Edit); exit 2 is the only verdict"),
    EventSpec(native="post_write_code", canonical="PostToolUse", caps=_POST),
    EventSpec(native="pre_mcp_tool_use", canonical="PreToolUse", caps=_PRE,
              note="MCP calls only; exit 2 is the only verdict"),
    EventSpec(native="post_mcp_tool_use", canonical="PostToolUse", caps=_POST),
    EventSpec(native="pre_user_prompt", canonical="UserPromptSubmit", caps=_PRE,
              note="block only (exit 2); no added context"),
    EventSpec(native="post_cascade_response", canonical="Stop", caps=_POST,
              note="after the response is shown: a block cannot continue the turn"),
)  # fmt: skip

KNOWN_EVENTS = frozenset(
    {*(s.native for s in EVENTS), "post_cascade_response_with_transcript", "post_setup_worktree"}
)

_TOOLS = {"run_command": "Bash", "read_code": "Read", "write_code": "Edit"}


class WindsurfAdapter(Adapter):
    name: ClassVar[str] = "windsurf"
    title: ClassVar[str] = "Windsurf (Cascade) / Devin Desktop"
    verified: ClassVar[bool] = False
    events = EVENTS
    tools: ClassVar[dict[str, str]] = _TOOLS

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"Windsurf {native_event} input: not a JSON object")
        info = raw.get("tool_info") if raw.get("tool_info") is not None else {}
        if not isinstance(info, dict):
            raise EventInputError(f"Windsurf {native_event} input: tool_info must be an object")
        data: dict[str, Any] = {
            **raw,
            "session_id": str(raw.get("trajectory_id") or ""),
            "transcript_path": str(info.get("transcript_path") or ""),
            "hook_event_name": spec.canonical,
            "cwd": str(info.get("cwd") or raw.get("cwd") or ""),
        }
        action = native_event.removeprefix("pre_").removeprefix("post_")
        if action in _TOOLS:
            data["tool_name"] = _TOOLS[action]
            data["native_tool_name"] = action
            data["tool_input"] = _tool_input(action, info)
        elif action == "mcp_tool_use":
            server, tool = info.get("mcp_server_name"), info.get("mcp_tool_name")
            data["tool_name"] = f"mcp__{server}__{tool}"
            data["tool_input"] = info.get("mcp_tool_arguments") or {}
        elif action == "user_prompt":
            data["prompt"] = str(info.get("user_prompt", ""))
        elif action == "cascade_response":
            data["stop_hook_active"] = False
            data["last_assistant_message"] = str(info.get("response", ""))
        if native_event.startswith("post_") and "tool_name" in data:
            data["tool_response"] = {
                k: v for k, v in info.items() if k not in ("cwd", "command_line", "file_path")
            }
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        """Exit 2 with the reason on stderr blocks; anything else lets the action go on."""
        safe = degrade(result, event.spec)
        blocked = safe.blocked or not safe.continue_
        if blocked and event.spec.caps.block:
            reason = (
                safe.reason
                or safe.stop_reason
                or "; ".join(safe.blocking_messages)
                or "Blocked by a hook (hookd)"
            )
            return AgentReply(stderr=reason + "\n", exit_code=2)
        return AgentReply()

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        return detect_binary("windsurf")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        if scope == "user":
            return [home / ".codeium" / "windsurf" / "hooks.json"]
        return [] if project is None else [project / ".windsurf" / "hooks.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        return read_flat(path, self.events, "Windsurf")

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        return wire_flat(
            text,
            self.events,
            command,
            entry=lambda _spec, cmd: {"command": cmd, "show_output": True},
            what="Windsurf hooks.json",
        )

    def is_wired(self, text: str) -> bool:
        return wired_flat(text, self.events)

    def trust_steps(self, scope: Scope) -> list[str]:
        return ["Windsurf reads hooks.json when Cascade starts: reload the window"]

    def lint(self, path: Path, text: str) -> list[Finding]:
        data = parse_object(str(path), text)
        hooks = data.get("hooks")
        out: list[Finding] = []
        for event, entries in hooks.items() if isinstance(hooks, dict) else []:
            if event not in KNOWN_EVENTS:
                out.append(
                    Finding(
                        severity="warning",
                        message=f"Windsurf has no event {event!r}: these hooks never run",
                        path=str(path),
                        where=f"hooks.{event}",
                    )
                )
            for i, entry in enumerate(entries if isinstance(entries, list) else []):
                if isinstance(entry, dict) and entry.get("matcher") is not None:
                    out.append(
                        Finding(
                            severity="warning",
                            message="Windsurf entries have no matcher: it is ignored and the "
                            "hook runs for every action of the event",
                            path=str(path),
                            where=f"hooks.{event}[{i}].matcher",
                        )
                    )
        return out


def _tool_input(action: str, info: dict[str, Any]) -> dict[str, Any]:
    if action == "run_command":
        return {"command": str(info.get("command_line", ""))}
    if action == "write_code":
        return {"file_path": str(info.get("file_path", "")), "edits": info.get("edits") or []}
    return {"file_path": str(info.get("file_path", ""))}

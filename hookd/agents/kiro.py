"""Kiro CLI (v3 hooks): built from its documentation, not run here.

Kiro CLI 3 reads standalone hook files, ``.kiro/hooks/<name>.json`` in the
workspace and ``~/.kiro/hooks/<name>.json`` for the user (kiro.dev/docs/cli/v3/hooks):
``{"version": "v1", "hooks": [{"name", "trigger", "matcher", "action":
{"type": "command", "command"}, "timeout", "enabled"}]}`` — a list of hooks,
each naming its trigger, timeouts in seconds.  ``install`` writes hookd's own
file, ``hookd.json``, beside the user's: Kiro runs every file of the
directory, the user's keep running as they are (Kiro's stdin is close to
Claude Code's, but its tool names are not — ``execute_bash``, ``fs_write`` —
so their matchers and field reads would change meaning under hookd).

Stdin is ``{"hook_event_name", "cwd", "tool_name", "tool_input",
"tool_response"}``; exit 2 on PreToolUse blocks with stderr to the model;
stdout of AgentSpawn and UserPromptSubmit becomes context; CLI 3.4 reads
Claude Code's ``updatedInput`` and adds PermissionRequest.  Stop can neither
block nor add context.
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
from hookd.agents.claude_shape import is_hookd_command
from hookd.agents.detect import detect_binary
from hookd.agents.mcp_names import McpNaming
from hookd.engine.claude_output import render_claude
from hookd.json_object import parse_object
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["KiroAdapter"]

EVENTS = (
    EventSpec(native="AgentSpawn", canonical="SessionStart",
              caps=Capabilities(add_context=True), note="stdout becomes context"),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(add_context=True),
              note="stdout becomes context; the prompt cannot be blocked"),
    EventSpec(native="PreToolUse", canonical="PreToolUse",
              caps=Capabilities(block=True, rewrite_input=True),
              note="exit 2 blocks; updatedInput since CLI 3.4"),
    EventSpec(native="PostToolUse", canonical="PostToolUse", caps=Capabilities()),
    EventSpec(native="PermissionRequest", canonical="PermissionRequest",
              caps=Capabilities(block=True), note="CLI 3.4 and later"),
    EventSpec(native="Stop", canonical="Stop", caps=Capabilities(),
              note="neither blocks nor adds context"),
)  # fmt: skip

HOOKD_FILE = "hookd.json"


class KiroAdapter(Adapter):
    name: ClassVar[str] = "kiro"
    title: ClassVar[str] = "Kiro CLI"
    verified: ClassVar[bool] = False
    events = EVENTS
    mcp: ClassVar[McpNaming] = McpNaming(
        prefix="@", sep="/", how="Kiro names it `@<server>/<tool>` (its docs)"
    )
    tools: ClassVar[dict[str, str]] = {
        "execute_bash": "Bash",
        "shell": "Bash",
        "fs_read": "Read",
        "read": "Read",
        "fs_write": "Write",
        "write": "Write",
        "str_replace": "Edit",
        "glob": "Glob",
        "grep": "Grep",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
    }

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"Kiro {native_event} input: not a JSON object")
        data: dict[str, Any] = {**raw, "hook_event_name": spec.canonical}
        data.setdefault("session_id", str(raw.get("session_id") or ""))
        data.setdefault("transcript_path", "")
        tool = raw.get("tool_name")
        if tool is not None and not isinstance(tool, str):
            raise EventInputError(f"Kiro {native_event} input: tool_name must be a string")
        if isinstance(tool, str):
            self.map_tool(data, tool)
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        safe = degrade(result, event.spec)
        caps = event.spec.caps
        if caps.block and (safe.blocked or not safe.continue_):
            reason = (
                safe.reason
                or safe.stop_reason  # a `continue: false` alone blocks with its stopReason
                or "; ".join(safe.blocking_messages)
                or "Blocked by a hook (hookd)"
            )
            return AgentReply(stderr=reason + "\n", exit_code=2)
        if caps.rewrite_input and safe.updated_input is not None:
            out = render_claude(
                safe, str(event.input.get("native_tool_name") or event.input.get("tool_name") or "")
            )
            return AgentReply(stdout=out.stdout)
        context = [*safe.plain_context, *safe.additional_context]
        if caps.add_context and context:
            return AgentReply(stdout="\n".join(context) + "\n")
        return AgentReply()

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        return detect_binary("kiro-cli")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        if base is None:
            return []
        folder = base / ".kiro" / "hooks"
        others = sorted(p for p in folder.glob("*.json") if p.name != HOOKD_FILE)
        return [folder / HOOKD_FILE, *others]

    def read_hooks(self, path: Path) -> NativeHooks:
        """Nothing moves (see the module docstring); hooks of other files are reported."""
        text = path.read_text(encoding="utf-8") if path.exists() else None
        hooks = _hook_list(parse_object(str(path), text))
        own = [h for h in hooks if not _is_hookd(h)]
        out = NativeHooks()
        if own:
            out.warnings.append(
                f"{len(own)} Kiro hook(s) stay in {path} and Kiro keeps running them itself "
                "(its tool names differ from Claude Code's); port them to hookd's config to "
                "run them through hookd"
            )
        return out

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        data = parse_object("Kiro hooks file", text)
        own = [h for h in _hook_list(data) if not _is_hookd(h)]
        ours = [
            {
                "name": f"hookd-{spec.native}",
                "trigger": spec.native,
                "action": {"type": "command", "command": command(spec)},
                "timeout": 600,
                "enabled": True,
            }
            for spec in self.events
        ]
        data.setdefault("version", "v1")
        data["hooks"] = [*ours, *own]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def is_wired(self, text: str) -> bool:
        try:
            hooks = _hook_list(parse_object("Kiro hooks file", text))
        except ValueError:
            return False
        wired = {h.get("trigger") for h in hooks if _is_hookd(h)}
        return all(spec.native in wired for spec in self.events)

    def trust_steps(self, scope: Scope) -> list[str]:
        return ["Kiro reads .kiro/hooks when a session starts: start a new kiro-cli session"]

    def lint(self, path: Path, text: str) -> list[Finding]:
        data = parse_object(str(path), text)
        out: list[Finding] = []
        if data.get("version") != "v1":
            out.append(
                Finding(
                    severity="error",
                    message='Kiro v3 reads hook files with "version": "v1" only',
                    path=str(path),
                    where="version",
                )
            )
        for i, hook in enumerate(_hook_list(data)):
            if hook.get("enabled") is False:
                out.append(
                    Finding(
                        severity="info",
                        message=f"hook {hook.get('name')!r} is disabled (enabled: false)",
                        path=str(path),
                        where=f"hooks[{i}].enabled",
                    )
                )
            timeout = hook.get("timeout")
            if isinstance(timeout, (int, float)) and timeout >= 1000:
                out.append(
                    Finding(
                        severity="warning",
                        message=f"timeout {timeout} is in seconds for Kiro v3 "
                        f"({timeout / 60:.0f} minutes): milliseconds were probably meant",
                        path=str(path),
                        where=f"hooks[{i}].timeout",
                    )
                )
        return out


def _hook_list(data: dict[str, Any]) -> list[dict[str, Any]]:
    hooks = data.get("hooks")
    return [h for h in hooks if isinstance(h, dict)] if isinstance(hooks, list) else []


def _is_hookd(hook: dict[str, Any]) -> bool:
    action = hook.get("action")
    return isinstance(action, dict) and is_hookd_command(action)

"""Cline: run here with the real Cline CLI 3.0.65 (npm ``cline``); the VS Code extension
from its documentation.

The CLI (3.0.x, built on ``@cline/core``) runs hook *files*: every file named after an
event (case-insensitive; no extension or ``.sh``, ``.py``, ``.js`` … run through their
shebang or an interpreter chosen by the extension, so the file need not be executable)
in ``~/Documents/Cline/Hooks/``, ``~/.cline/hooks/`` (``$CLINE_DIR``), and the
workspace's ``.clinerules/hooks/`` and ``.cline/hooks/`` — all of them, one after
another, their answers merged (a cancel wins, contexts joined by a newline).  Each gets
one JSON object on stdin and is run in the session's working directory::

    {clineVersion, hookName: "tool_call", timestamp, taskId, sessionContext,
     workspaceRoots: [<git root>], workspaceInfo, userId, agent_id, parent_agent_id,
     iteration, tool_call: {id, name, input}, preToolUse: {toolName, parameters}}

(``parameters``' values are strings, JSON-encoded where the input had lists; ``tool_call``
has the input as the model wrote it.)  ``hookName`` is the CLI's own (``tool_call``,
``tool_result``, ``agent_start``, ``agent_end``, ``agent_error`` …), not the file's.  Its
exit code is ignored: only stdout counts, one JSON object (or the last line starting
``HOOK_CONTROL<TAB>``): ``{"cancel", "contextModification" | "context", "errorMessage",
"overrideInput"}``.  Stdout that is not JSON, a hook that fails or one that outlives 120 s
is logged and ignored — the tool runs.

What the CLI does with it, seen at 3.0.65 against a fake model server:

* ``PreToolUse`` (blocking): ``cancel: true`` — the tool does not run and the **whole
  task ends** (``finishReason: "aborted"``; the model is not asked again, the
  ``errorMessage`` reaches no one but the log; ``TaskError`` fires);
  ``contextModification`` — ``<hook_context source="PreToolUse" tool_name=…>CTX
  </hook_context>`` beside the tool's result; ``overrideInput`` replaces the tool's
  input entirely (a rewrite).
* ``PostToolUse`` (blocking): context as above (``source="PostToolUse"``); a cancel ends
  the task after the tool ran.
* ``TaskStart``, ``TaskResume`` (only with ``CLINE_HOOK_AGENT_RESUME=1``),
  ``UserPromptSubmit``, ``TaskComplete``, ``TaskCancel``, ``TaskError``,
  ``SessionShutdown``: fire-and-forget — started detached with stdout ignored, so
  nothing a hook answers there reaches the task.  ``UserPromptSubmit`` did not fire for
  a headless ``cline "<prompt>"`` run at all, nor ``SessionShutdown``.
* ``PreCompact`` is a file name the CLI knows but maps to no event: it never runs.

The extension (docs.cline.bot) sends the same camelCase bodies with its own tool names
(``execute_command``, ``use_mcp_tool`` …); both are decoded.

=====================  ==================  ==========================================
Cline hook file        canonical           what hookd can do there
=====================  ==================  ==========================================
``TaskStart``          SessionStart        observe (fire-and-forget)
``TaskResume``         SessionStart        observe (``source: "resume"``)
``UserPromptSubmit``   UserPromptSubmit    observe (fire-and-forget)
``PreToolUse``         PreToolUse          cancel (ends the task), context, rewrite
``PostToolUse``        PostToolUse         context
``TaskComplete``       Stop                observe (the task is over)
``TaskError``          StopFailure         observe (the task failed, a cancel's too)
``TaskCancel``         SessionEnd          observe
``SessionShutdown``    SessionEnd          observe
=====================  ==================  ==========================================
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
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
from hookd.agents.mcp_names import CANDIDATES_FIELD, McpNaming, McpTool
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["ClineAdapter"]

_OBSERVE = Capabilities(matchers=False)
_DETACHED = "fire-and-forget: Cline does not wait for the hook or read its answer"

EVENTS = (
    EventSpec(native="TaskStart", canonical="SessionStart", caps=_OBSERVE, note=_DETACHED),
    EventSpec(native="TaskResume", canonical="SessionStart", caps=_OBSERVE,
              note=f"a resumed task (source: resume); {_DETACHED}"),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit", caps=_OBSERVE,
              note=f"{_DETACHED}; not fired for a headless `cline PROMPT` (3.0.65)"),
    EventSpec(native="PreToolUse", canonical="PreToolUse",
              caps=Capabilities(block=True, rewrite_input=True, add_context=True,
                                matchers=False, parallel=False),
              note="a block cancels the tool and ends the whole task (Cline's cancel); "
                   "exit 2 blocks through hookd, where Cline ignores exit codes; no ask"),
    EventSpec(native="PostToolUse", canonical="PostToolUse",
              caps=Capabilities(add_context=True, matchers=False, parallel=False),
              note="a block cannot reach the model: Cline's cancel would end the task"),
    EventSpec(native="TaskComplete", canonical="Stop", caps=_OBSERVE,
              note=f"the task is complete: a block cannot continue it; {_DETACHED}"),
    EventSpec(native="TaskError", canonical="StopFailure", caps=_OBSERVE, note=_DETACHED),
    EventSpec(native="TaskCancel", canonical="SessionEnd", caps=_OBSERVE, note=_DETACHED),
    EventSpec(native="SessionShutdown", canonical="SessionEnd", caps=_OBSERVE,
              note=_DETACHED),
)  # fmt: skip

SHELL = frozenset({"run_commands", "execute_command"})
TOOLS = {
    # the CLI (3.0.65)
    "run_commands": "Bash",
    "read_files": "Read",
    "editor": "Edit",
    "search_codebase": "Grep",
    "fetch_web_content": "WebFetch",
    "web_search": "WebSearch",
    "ask_question": "AskUserQuestion",
    # the VS Code extension (its docs)
    "execute_command": "Bash",
    "read_file": "Read",
    "write_to_file": "Write",
    "replace_in_file": "Edit",
    "search_files": "Grep",
    "list_files": "LS",
    "web_fetch": "WebFetch",
}
PATH_TOOLS = frozenset({"editor", "read_file", "write_to_file", "replace_in_file"})
WRITERS = {
    "editor": ("Edit", "Write", "editor"),
    "apply_patch": ("apply_patch", "Edit", "Write"),
}
"""Cline's tools that both edit and create files: a matcher is tested against each name,
so a guard on ``Write`` (or ``Edit``) fires for every one of them — it may fire for an
edit, never miss a file written (``tool_name_candidates``, as for an MCP name)."""

MCP_NAMING = McpNaming(
    prefix="",
    sep="__",
    exact=False,
    how="Cline's CLI names an MCP server's tool `<server>__<tool>` (seen at 3.0.65)",
)

RELAY_TIMEOUT = 117
"""Seconds the relay waits for hookd: Cline kills a blocking hook at 120 s and then runs
the tool (a timed-out hook is ignored), so the relay answers first — with its own
failure mode, open or ``--fail-closed`` — rather than leave it to Cline's timeout."""

_SCRIPT = """#!/bin/sh
# hookd: Cline's {event} hook, sent to hookd (hookctl agents install cline).
# `hookctl agents uninstall cline` puts back what was here before.
exec {command} --timeout {timeout}
"""


def _key(native: str) -> str:
    return native[:1].lower() + native[1:]


class ClineAdapter(Adapter):
    name: ClassVar[str] = "cline"
    title: ClassVar[str] = "Cline"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "3.0.65"
    events = EVENTS
    tools: ClassVar[dict[str, str]] = TOOLS
    mcp: ClassVar[McpNaming] = MCP_NAMING
    install_mode: ClassVar[int] = 0o700

    def mcp_tool(self, native: str, data: Mapping[str, Any] | None = None) -> McpTool | None:
        """``srv__echo`` (the CLI) → ``mcp__srv__echo``; the extension's ``use_mcp_tool``
        names server and tool in its parameters (:func:`_tool_name`)."""
        del data
        if native in self.tools or native == "use_mcp_tool":
            return None
        return self.mcp.tool(native)

    def tool_candidates(self, native: str) -> tuple[str, ...]:
        return WRITERS.get(native, ())

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
            self._decode_tool(native_event, raw, body, data)
        elif native_event == "UserPromptSubmit":
            data["prompt"] = str(body.get("prompt", ""))
        elif spec.canonical == "SessionStart":
            data["source"] = "resume" if native_event == "TaskResume" else "startup"
        elif native_event == "TaskComplete":
            data["stop_hook_active"] = False
            turn = raw.get("turn")
            if isinstance(turn, dict) and isinstance(turn.get("outputText"), str):
                data["last_assistant_message"] = turn["outputText"]
        elif native_event == "TaskError":
            error = raw.get("error")
            data["error"] = error.get("message", "") if isinstance(error, dict) else ""
            data["native_error"] = error
        elif spec.canonical == "SessionEnd":
            data["reason"] = "other"
        return self.agent_event(native_event, spec, data)

    def _decode_tool(
        self, native_event: str, raw: dict[str, Any], body: dict[str, Any], data: dict[str, Any]
    ) -> None:
        """The tool and its input: the CLI's ``tool_call``/``tool_result`` (the input as the
        model wrote it), else the camelCase body (``parameters``, values as strings)."""
        call = raw.get("tool_call" if native_event == "PreToolUse" else "tool_result")
        call = call if isinstance(call, dict) else {}
        tool = call.get("name") if isinstance(call.get("name"), str) else body.get("toolName")
        if not isinstance(tool, str):
            raise EventInputError(f"Cline {native_event} input: toolName must be a string")
        found = call.get("input")
        if not isinstance(found, dict):
            found = body.get("parameters")
        params: dict[str, Any] = found if isinstance(found, dict) else {}
        data["tool_input"] = _tool_input(tool, params)
        data["tool_name"] = tool
        if tool == "use_mcp_tool":
            named = _tool_name(tool, params)
            data["tool_name"], data["native_tool_name"] = named, tool
        else:
            self.map_tool(data, tool)
        if self.tool_candidates(tool):
            data[CANDIDATES_FIELD] = list(self.tool_candidates(tool))
        if isinstance(call.get("id"), str):
            data["tool_use_id"] = call["id"]
        if native_event == "PostToolUse":
            response: dict[str, Any] = {
                "result": body.get("result"),
                "success": body.get("success"),
            }
            if "output" in call:
                response["output"] = call["output"]
            data["tool_response"] = response

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
        elif caps.rewrite_input and safe.updated_input is not None:
            out["overrideInput"] = _native_input(event, safe.updated_input)
        context = [*safe.plain_context, *safe.additional_context]
        if caps.add_context and context:
            out["contextModification"] = "\n".join(context)
        return AgentReply(stdout=json.dumps(out) + "\n")

    def hook_workdir(self, event: AgentEvent, env: Mapping[str, str] | None) -> str | None:
        """Cline runs its hooks in the session's working directory, which its input does
        not name (``workspaceRoots`` is the repository's root): started in ``proj/sub``,
        a hook's ``pwd`` is ``proj/sub`` (seen at 3.0.65).  The relay's ``sh`` script
        exports that as ``PWD``, so hookd runs the hooks there too."""
        del event
        found = (env or {}).get("PWD", "")
        return found if found.startswith("/") and os.path.isdir(found) else None

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
            return text  # the user's own hook for this event: the name is taken, it stays
        spec = self.event_spec(path.name)
        return _SCRIPT.format(event=spec.native, command=command(spec), timeout=RELAY_TIMEOUT)

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
                f"this hook speaks Cline's protocol: it stays and Cline keeps running it, and "
                f"hookd is not wired for {path.name} in this folder (its name is taken: move it "
                "aside and install again to send the event to hookd)"
            ]
        )

    def lint(self, path: Path, text: str) -> list[Finding]:
        """The user's own hook holding an event's name in a folder where install wired the
        other events: hookd is not wired for that event there, so a guard in hookd's
        config on it never runs for Cline — said, not silent (install said it too)."""
        if is_hookd_command({"command": text}) or path.name not in self._event_names():
            return []
        siblings = (path.with_name(name) for name in self._event_names() if name != path.name)
        if not any(_is_hookd_script(sibling) for sibling in siblings):
            return []  # not installed here: the user's own hooks, nothing of hookd's missing
        canonical = self.event_spec(path.name).canonical
        return [
            Finding(
                severity="warning",
                message=f"hookd is not wired for Cline's {path.name} in this folder (this hook "
                f"of Cline's own holds the name): hooks in hookd's config on {canonical} never "
                f"run for it here; move this file aside and `hookctl agents install cline` again",
                path=str(path),
            )
        ]

    def _event_names(self) -> list[str]:
        return list(dict.fromkeys(s.native for s in self.events))

    def trust_steps(self, scope: Scope) -> list[str]:
        return ["enable hooks in Cline's settings (Features → Hooks) if they are off"]


def _tool_name(tool: str, params: dict[str, Any]) -> str:
    """The extension's ``use_mcp_tool`` names its server and tool in its parameters."""
    return f"mcp__{params.get('server_name')}__{params.get('tool_name')}"


def _commands(params: Mapping[str, Any]) -> list[Any]:
    """``run_commands``' commands as the CLI reads them: ``commands`` (a list, or a string
    the extension's stringified parameters hold), else ``command``."""
    found = params.get("commands")
    if isinstance(found, str):
        try:
            found = json.loads(found)
        except json.JSONDecodeError:
            found = [found]
    if found is None and "command" in params:
        found = [params["command"]]
    return found if isinstance(found, list) else [found] if found is not None else []


def _shell_line(command: Any) -> str:
    if isinstance(command, dict):
        args = command.get("args")
        parts = [command.get("command", ""), *(args if isinstance(args, list) else [])]
        return " ".join(str(part) for part in parts)
    return str(command)


def _tool_input(tool: str, params: dict[str, Any]) -> dict[str, Any]:
    """Cline's input, with Claude Code's names beside Cline's: ``command`` for a shell
    call (``run_commands``' commands one a line), ``file_path`` beside ``path``, and for
    ``read_files`` every path in ``file_paths`` (``file_path`` too when it reads one)."""
    out = dict(params)
    if tool == "run_commands":
        out.setdefault("command", "\n".join(_shell_line(c) for c in _commands(params)))
    if "path" in params and tool in PATH_TOOLS:
        out.setdefault("file_path", params["path"])
    if tool == "read_files":
        paths = _read_paths(params)
        out.setdefault("file_paths", paths)
        if len(paths) == 1:
            out.setdefault("file_path", paths[0])
    if tool == "use_mcp_tool" and isinstance(params.get("arguments"), str):
        try:
            return dict(json.loads(params["arguments"]))
        except (json.JSONDecodeError, TypeError, ValueError):
            return out
    return out


def _read_paths(params: Mapping[str, Any]) -> list[str]:
    """``read_files``' paths: ``files: [{path, start_line, end_line}]``."""
    files = params.get("files")
    if not isinstance(files, list):
        return []
    return [str(f["path"]) for f in files if isinstance(f, dict) and "path" in f]


def _native_input(event: AgentEvent, updated: dict[str, Any]) -> dict[str, Any]:
    """A hook's ``updatedInput`` as Cline's ``overrideInput`` (which replaces the input):
    the names hookd added beside Cline's taken out again, or, where the hook changed one
    of them, carried back to Cline's (a new ``command`` is the one command to run; a new
    ``file_path`` the ``path``) — Cline reads ``commands`` before ``command``, so a
    rewrite of ``command`` alone would otherwise run the original commands."""
    before = event.input.get("tool_input")
    before = before if isinstance(before, dict) else {}
    tool = str(event.input.get("native_tool_name") or event.input.get("tool_name") or "")
    out = dict(updated)
    if tool == "run_commands" and "command" in out:
        command = out.pop("command")
        if command != before.get("command"):
            out["commands"] = [command]
    if tool in PATH_TOOLS and "file_path" in out:
        path = out.pop("file_path")
        if path != before.get("file_path"):
            out["path"] = path
    if tool == "read_files":
        out.pop("file_paths", None)
        path = out.pop("file_path", None)
        files = out.get("files")
        if path is not None and path != before.get("file_path") and isinstance(files, list):
            if len(files) == 1 and isinstance(files[0], dict):
                out["files"] = [{**files[0], "path": path}]
    return out


def _is_hookd_script(path: Path) -> bool:
    try:
        return is_hookd_command({"command": path.read_text(encoding="utf-8", errors="replace")})
    except OSError:
        return False

"""Qwen Code (``@qwen-code/qwen-code``, run for real at 0.24.4): Claude Code's hooks, Qwen's tools.

Qwen Code forked Gemini CLI but took Claude Code's hooks whole: ``hooks`` in
``~/.qwen/settings.json`` and ``<project>/.qwen/settings.json``, Claude Code's
event names, snake_case stdin (plus an ISO ``timestamp``, a ``tool_call_id``),
its answers and exit codes.  What differs, seen with the real CLI against a fake
model on loopback (tests/agents/test_qwen.py) and read in its bundle:

* **Tools** keep the names Qwen inherited from Gemini (``run_shell_command``,
  ``edit``, ``write_file``, ``read_file``, ``grep_search``, ``agent`` …), mapped
  here so a matcher ``Bash`` means the shell; MCP tools are Claude Code's
  ``mcp__<server>__<tool>`` already, also when the model reaches one through
  Qwen's deferred-tool bridge (``tool_call``): the hook sees the underlying tool.
  Qwen's own matchers also accept its display names and Claude Code's (``Shell``,
  ``Bash``), and read any other name as an unanchored regex (``edit`` matches
  ``notebook_edit`` too): :meth:`QwenAdapter.matcher_to_hookd` keeps that meaning
  when the user's hooks move into hookd's config.
* **Answers.**  An exit-2 hook's reason is its stderr, trimmed (no ``[<cmd>]:``
  label): :func:`native_reasons`.  ``updatedInput`` is applied on
  PermissionRequest only — on PreToolUse Qwen runs the call as the model wrote
  it, so a rewrite there is a capability Qwen lacks (hookd blocks, failing safe).
  A PostToolUse ``decision: "block"`` is ignored (only ``continue: false`` stops
  after the tool ran).  Several hooks of one PreToolUse: Qwen lets the *last*
  ``permissionDecision`` win (a deny followed by an allow runs the call); hookd's
  deny wins in any order.
* **Timeouts** are seconds, but a value of 1000 or more is Qwen's legacy
  milliseconds: read so when hooks move (:meth:`QwenAdapter.read_hooks`).
* **UserPromptSubmit** fires again, with ``prompt: ""``, before each model
  request that carries tool results (seen at 0.24.4), natively as through hookd.
* Two silent switches doctor looks for: ``disableAllHooks``; and, where the user
  turned folder trust on (``security.folderTrust.enabled``, off by default), an
  untrusted folder, in which Qwen loads no project settings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import msgspec

from hookd.agents.base import (
    AgentEvent,
    AgentReply,
    Capabilities,
    EventSpec,
    Finding,
    NativeHooks,
    Scope,
)
from hookd.agents.cc_dialect import ClaudeDialectAdapter
from hookd.json_object import parse_object
from hookd_client.results import FireResult

__all__ = ["QwenAdapter"]

_PRE_TOOL = Capabilities(block=True, add_context=True, ask=True, system_message=True)
"""No ``rewrite_input``: 0.24.4 reads ``updatedInput`` on PermissionRequest only; on
PreToolUse it runs the call as the model wrote it (seen with the real CLI)."""
_OBSERVE = Capabilities(system_message=True)
_CONTEXT = Capabilities(add_context=True, system_message=True)

EVENTS = (
    EventSpec(
        native="PreToolUse",
        canonical="PreToolUse",
        caps=_PRE_TOOL,
        note="no updatedInput (Qwen runs the call as the model wrote it); the model reads a"
        " block's reason as the tool's result",
        differs="a rewrite (`updatedInput`) blocks the call, where Qwen ignores it and runs"
        " the call unsanitised; with several hooks a deny wins, where Qwen lets the last"
        " hook's `permissionDecision` win (a later allow runs a denied call)",
    ),
    EventSpec(
        native="PostToolUse",
        canonical="PostToolUse",
        caps=_CONTEXT,
        note="a block is ignored (only `continue: false` stops); context follows the tool's"
        " output",
    ),
    EventSpec(native="PostToolUseFailure", canonical="PostToolUseFailure", caps=_CONTEXT),
    EventSpec(
        native="PostToolBatch",
        canonical="PostToolBatch",
        caps=Capabilities(block=True, add_context=True, system_message=True),
        note="Qwen gives the batch's hooks 15 s in all",
    ),
    EventSpec(
        native="UserPromptSubmit",
        canonical="UserPromptSubmit",
        caps=Capabilities(block=True, add_context=True, system_message=True),
        note="fires again with an empty prompt before each request carrying tool results;"
        " a block ends the run before any model request, its reason shown nowhere headless",
    ),
    EventSpec(native="PermissionRequest", canonical="PermissionRequest",
              caps=Capabilities(block=True, rewrite_input=True, system_message=True)),
    EventSpec(native="PermissionDenied", canonical="PermissionDenied", caps=_OBSERVE),
    EventSpec(native="SessionStart", canonical="SessionStart", caps=_CONTEXT,
              note="context goes into the system instructions"),
    EventSpec(native="SessionEnd", canonical="SessionEnd", caps=_OBSERVE),
    EventSpec(native="Stop", canonical="Stop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="SubagentStart", canonical="SubagentStart", caps=_CONTEXT),
    EventSpec(native="SubagentStop", canonical="SubagentStop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="PreCompact", canonical="PreCompact", caps=_OBSERVE),
    EventSpec(native="PostCompact", canonical="PostCompact", caps=_OBSERVE),
    EventSpec(native="Notification", canonical="Notification", caps=_OBSERVE),
    EventSpec(native="InstructionsLoaded", canonical="InstructionsLoaded", caps=_OBSERVE),
)  # fmt: skip
"""Qwen's events with a Claude Code counterpart.  Not wired: ``MessageDisplay``,
``StopFailure`` and ``SessionDelete`` (Qwen runs their hooks detached, outliving it),
``UserPromptExpansion`` (not seen), and Qwen's own ``TodoCreated``/``TodoCompleted``."""

TOOLS: dict[str, str] = {
    "run_shell_command": "Bash",
    "edit": "Edit",
    "write_file": "Write",
    "read_file": "Read",
    "glob": "Glob",
    "grep_search": "Grep",
    "list_directory": "LS",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
    "todo_write": "TodoWrite",
    "agent": "Agent",
    "notebook_edit": "NotebookEdit",
    "skill": "Skill",
    "ask_user_question": "AskUserQuestion",
    "enter_plan_mode": "EnterPlanMode",
    "exit_plan_mode": "ExitPlanMode",
    "tool_search": "ToolSearch",
    "enter_worktree": "EnterWorktree",
    "exit_worktree": "ExitWorktree",
}
"""Qwen Code 0.24.4's built-in tools (its ``ToolNames``) → Claude Code's.  The rest
(``save_memory``, ``monitor``, ``cron_*``, ``lsp`` …) have no counterpart and keep their
names."""

ALIASES: dict[str, str] = {
    "Shell": "run_shell_command",
    "ShellTool": "run_shell_command",
    "Bash": "run_shell_command",
    "EditTool": "edit",
    "replace": "edit",
    "WriteFile": "write_file",
    "WriteFileTool": "write_file",
    "Write": "write_file",
    "ReadFile": "read_file",
    "ReadFileTool": "read_file",
    "Read": "read_file",
    "GlobTool": "glob",
    "FindFiles": "glob",
    "Grep": "grep_search",
    "GrepTool": "grep_search",
    "search_file_content": "grep_search",
    "SearchFiles": "grep_search",
    "ListFiles": "list_directory",
    "ListFilesTool": "list_directory",
    "ReadFolder": "list_directory",
    "TodoList": "todo_write",
    "TodoWrite": "todo_write",
    "WebFetchTool": "web_fetch",
    "WebSearchTool": "web_search",
    "Agent": "agent",
    "AgentTool": "agent",
    "task": "agent",
    "Task": "agent",
    "NotebookEdit": "notebook_edit",
}
"""Other names Qwen's matchers accept for its tools, exactly (its ``TOOL_NAME_ALIASES``:
display names, legacy names, Claude Code's)."""

_PLAIN = re.compile(r"^[A-Za-z0-9_]+$")
LEGACY_MS = 1000
"""Qwen reads a hook timeout of 1000 or more as milliseconds (its legacy unit)."""


class QwenAdapter(ClaudeDialectAdapter):
    name: ClassVar[str] = "qwen"
    title: ClassVar[str] = "Qwen Code"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "0.24.4"
    binary: ClassVar[str] = "qwen"
    events = EVENTS
    tools: ClassVar[dict[str, str]] = TOOLS

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        return super().encode(native_reasons(result), event)

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        return [] if base is None else [base / ".qwen" / "settings.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        found = super().read_hooks(path)
        for event, groups in found.hooks.items():
            for i, group in enumerate(groups):
                handlers = group.get("hooks")
                if isinstance(handlers, list):
                    where = f"{path}: hooks.{event}[{i}]"
                    group["hooks"] = [_in_seconds(h, where, found.warnings) for h in handlers]
        return found

    def matcher_to_hookd(self, matcher: str, where: str, warnings: list[str]) -> str:
        """A matcher on Qwen's tools → one on Claude Code's, meaning the same tools.

        Qwen tests each name of a plain list against a tool's name and aliases exactly,
        then as an unanchored regex on the tool's name (``edit`` also matches
        ``notebook_edit``): each name becomes every Claude Code name it matched there,
        with a warning when that is more than one tool."""
        names = matcher.strip().split("|")
        if not all(_PLAIN.match(n) for n in names):
            return super().matcher_to_hookd(matcher, where, warnings)
        out: dict[str, None] = {}
        for name in names:
            matched = _matched_tools(name)
            if len(matched) > 1:
                warnings.append(
                    f"{where}: {name!r} matched {', '.join(matched)} in Qwen Code (its matcher"
                    " searches tool names): moved as all of them"
                )
            out.update(dict.fromkeys(matched or [self.canonical_tool(name)]))
        return "|".join(out)

    def trust_steps(self, scope: Scope) -> list[str]:
        if scope == "project":
            return ["Qwen Code loads a project's .qwen/settings.json in every folder unless "
                    "folder trust is on (security.folderTrust.enabled), then only in a trusted "
                    "folder: trust the project when Qwen Code asks (or in "
                    "~/.qwen/trustedFolders.json)"]  # fmt: skip
        return []

    def lint(self, path: Path, text: str) -> list[Finding]:
        data = parse_object(str(path), text)
        if data.get("disableAllHooks") is True:
            return [
                Finding(
                    severity="error",
                    message="disableAllHooks is true: Qwen Code runs no hook at all, hookd's "
                    "entries included",
                    path=str(path),
                    where="disableAllHooks",
                )
            ]
        return []


def native_reasons(result: FireResult) -> FireResult:
    """``result`` with its block's reason as Qwen Code's own hooks' would read.

    Qwen takes an exit-2 hook's stderr, trimmed, as the reason (and the model reads
    exactly that: the tool result of a denied call is the reason), where hookd's engine
    wrote Claude Code's ``[<cmd>]: <stderr>``; a JSON reason is verbatim in both.
    Several blocking hooks: their reasons one a line, in configuration order, as Qwen's
    aggregator joins them.  A block hookd made itself (fail-closed, a rewrite Qwen cannot
    apply) keeps hookd's words."""
    runs = [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]
    if not result.blocked or not runs or len(runs) != len(result.blocking_messages):
        return result
    reasons = [
        run.stderr.strip() if run.exit_code == 2 and run.output is None and run.stderr.strip()
        else message
        for run, message in zip(runs, result.blocking_messages, strict=True)
    ]  # fmt: skip
    reason = "\n".join(r for r in reasons if r)
    return msgspec.structs.replace(result, reason=reason, blocking_messages=[reason])


def _matched_tools(name: str) -> list[str]:
    """Claude Code's names of the Qwen tools a plain matcher name matches in Qwen: exactly
    (its name or an alias), else as a regex search in the tool's name."""
    exact = ALIASES.get(name, name)
    if exact in TOOLS:
        found = [exact, *(t for t in TOOLS if t != exact and name in t)]
    else:
        found = [t for t in TOOLS if name in t]
    return list(dict.fromkeys(TOOLS[t] for t in found))


def _in_seconds(handler: object, where: str, warnings: list[str]) -> object:
    """A moved handler's timeout in seconds (Qwen's 1000-or-more milliseconds converted)."""
    if not isinstance(handler, dict):
        return handler
    timeout = handler.get("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < LEGACY_MS:
        return handler
    seconds = timeout / 1000
    warnings.append(
        f"{where}: timeout {timeout} is milliseconds in Qwen Code (1000 or more): "
        f"moved as {seconds:g} s"
    )
    return {**handler, "timeout": int(seconds) if seconds.is_integer() else seconds}

"""Qwen Code (``@qwen-code/qwen-code``): built from its documentation, not run here.

Qwen Code forked Gemini CLI but took Claude Code's hooks whole
(qwenlm.github.io/qwen-code-docs, "Hooks"): ``hooks`` in
``~/.qwen/settings.json`` and ``<project>/.qwen/settings.json``, Claude Code's
event names, stdin and answers (``permissionDecision``, ``updatedInput``,
``additionalContext``, ``decision: "block"``, exit 2), timeouts in seconds,
``async`` hooks.  What is Qwen's own is the tool vocabulary it inherited from
Gemini — ``run_shell_command``, ``edit``, ``write_file``, ``read_file``,
``grep_search`` … — mapped here so a matcher ``Bash`` means the shell, and
two silent switches doctor looks for: ``disableAllHooks`` and an untrusted
folder (Qwen loads a project's settings only in a folder the user trusted).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from hookd.agents.base import AgentEvent, AgentReply, Capabilities, EventSpec, Finding, Scope
from hookd.agents.cc_dialect import ClaudeDialectAdapter
from hookd.agents.flat_shape import load_object
from hookd_client.results import FireResult

__all__ = ["QwenAdapter"]

_PRE_TOOL = Capabilities(
    block=True, add_context=True, ask=True, continue_stop=True, system_message=True
)
"""No ``rewrite_input``: 0.24.4 reads ``updatedInput`` on PermissionRequest only; on
PreToolUse it runs the call as the model wrote it (seen with the real CLI)."""
_OBSERVE = Capabilities(system_message=True)

EVENTS = (
    EventSpec(native="PreToolUse", canonical="PreToolUse", caps=_PRE_TOOL),
    # No block: Qwen reads only ``continue: false`` after the tool ran (seen at 0.24.4).
    EventSpec(native="PostToolUse", canonical="PostToolUse",
              caps=Capabilities(add_context=True, system_message=True)),
    EventSpec(native="PostToolUseFailure", canonical="PostToolUseFailure",
              caps=Capabilities(add_context=True, system_message=True)),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, add_context=True, system_message=True)),
    EventSpec(native="PermissionRequest", canonical="PermissionRequest",
              caps=Capabilities(block=True, rewrite_input=True, system_message=True)),
    EventSpec(native="SessionStart", canonical="SessionStart",
              caps=Capabilities(add_context=True, system_message=True)),
    EventSpec(native="SessionEnd", canonical="SessionEnd", caps=_OBSERVE),
    EventSpec(native="Stop", canonical="Stop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="SubagentStart", canonical="SubagentStart",
              caps=Capabilities(add_context=True, system_message=True)),
    EventSpec(native="SubagentStop", canonical="SubagentStop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="PreCompact", canonical="PreCompact", caps=_OBSERVE),
    EventSpec(native="Notification", canonical="Notification", caps=_OBSERVE),
)  # fmt: skip


class QwenAdapter(ClaudeDialectAdapter):
    name: ClassVar[str] = "qwen"
    title: ClassVar[str] = "Qwen Code"
    verified: ClassVar[bool] = False
    binary: ClassVar[str] = "qwen"
    events = EVENTS
    tools: ClassVar[dict[str, str]] = {
        "run_shell_command": "Bash",
        "edit": "Edit",
        "write_file": "Write",
        "read_file": "Read",
        "read_many_files": "Read",
        "glob": "Glob",
        "grep_search": "Grep",
        "list_directory": "LS",
        "web_fetch": "WebFetch",
        "web_search": "WebSearch",
        "todo_write": "TodoWrite",
        "task": "Task",
    }

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        return super().encode(native_reasons(result), event)

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        return [] if base is None else [base / ".qwen" / "settings.json"]

    def trust_steps(self, scope: Scope) -> list[str]:
        if scope == "project":
            return ["Qwen Code loads a project's .qwen/settings.json only in a trusted folder: "
                    "trust it when Qwen Code asks (or in ~/.qwen/trustedFolders.json)"]  # fmt: skip
        return []

    def lint(self, path: Path, text: str) -> list[Finding]:
        data = load_object(text, str(path))
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

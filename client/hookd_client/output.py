"""What a hook may answer: Claude Code's ``SyncHookJSONOutput`` and its variants.

A command hook prints this as JSON on stdout; an http hook returns it as the
body; an in-daemon Python hook or a client callback returns it directly.  The
same Structs validate all of them, so every handler kind is judged by one
schema (reference §4.4).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "HOOK_SPECIFIC_OUTPUTS",
    "HookOutput",
    "OutputSchemaError",
    "PermissionRequestDecision",
    "parse_hook_output",
]

PermissionDecision = Literal["allow", "deny", "ask", "defer"]


class HookOutput(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The universal fields (reference §4.4).  ``hookSpecificOutput`` is checked
    separately against the event's own variant, because a wrong
    ``hookEventName`` has its own error in Claude Code."""

    continue_: bool = msgspec.field(default=True, name="continue")
    stopReason: str | None = None
    suppressOutput: bool | None = None
    systemMessage: str | None = None
    terminalSequence: str | None = None
    decision: Literal["approve", "block"] | None = None
    reason: str | None = None
    hookSpecificOutput: dict[str, Any] | None = None
    # Output-level async acknowledgement ({"async": true, "asyncTimeout": ms}).
    async_: bool | None = msgspec.field(default=None, name="async")
    asyncTimeout: int | None = None


class _Specific(msgspec.Struct, kw_only=True, omit_defaults=True):
    hookEventName: str


class PreToolUseOutput(_Specific, kw_only=True):
    permissionDecision: PermissionDecision | None = None
    permissionDecisionReason: str | None = None
    updatedInput: dict[str, Any] | None = None
    additionalContext: str | None = None


class PermissionRequestDecision(msgspec.Struct, kw_only=True, omit_defaults=True):
    behavior: Literal["allow", "deny"]
    updatedInput: dict[str, Any] | None = None
    updatedPermissions: list[dict[str, Any]] | None = None
    message: str | None = None
    interrupt: bool | None = None


class PermissionRequestOutput(_Specific, kw_only=True):
    decision: PermissionRequestDecision | None = None


class PermissionDeniedOutput(_Specific, kw_only=True):
    retry: bool | None = None


class PostToolUseOutput(_Specific, kw_only=True):
    additionalContext: str | None = None
    classifierContext: str | None = None
    updatedToolOutput: Any = None
    updatedMCPToolOutput: Any = None


class ContextOutput(_Specific, kw_only=True):
    """The variant of every event whose only specific field is additionalContext."""

    additionalContext: str | None = None


class UserPromptSubmitOutput(_Specific, kw_only=True):
    additionalContext: str | None = None
    sessionTitle: str | None = None
    suppressOriginalPrompt: bool | None = None


class UserPromptExpansionOutput(_Specific, kw_only=True):
    additionalContext: str | None = None
    suppressOriginalPrompt: bool | None = None


class SessionStartOutput(_Specific, kw_only=True):
    additionalContext: str | None = None
    initialUserMessage: str | None = None
    sessionTitle: str | None = None
    watchPaths: list[str] | None = None
    reloadSkills: bool | None = None


class ElicitationOutput(_Specific, kw_only=True):
    action: Literal["accept", "decline", "cancel"] | None = None
    content: dict[str, Any] | None = None


class WatchPathsOutput(_Specific, kw_only=True):
    watchPaths: list[str] | None = None


class WorktreeCreateOutput(_Specific, kw_only=True):
    worktreePath: str | None = None


class MessageDisplayOutput(_Specific, kw_only=True):
    displayContent: str | None = None


class PreModelSwitchOutput(_Specific, kw_only=True):
    permissionDecision: Literal["allow", "deny", "ask"] | None = None
    permissionDecisionReason: str | None = None


HOOK_SPECIFIC_OUTPUTS: dict[str, type[_Specific]] = {
    "PreToolUse": PreToolUseOutput,
    "PermissionRequest": PermissionRequestOutput,
    "PermissionDenied": PermissionDeniedOutput,
    "PostToolUse": PostToolUseOutput,
    "PostToolUseFailure": ContextOutput,
    "PostToolBatch": ContextOutput,
    "UserPromptSubmit": UserPromptSubmitOutput,
    "UserPromptExpansion": UserPromptExpansionOutput,
    "SessionStart": SessionStartOutput,
    "Setup": ContextOutput,
    "SubagentStart": ContextOutput,
    "Stop": ContextOutput,
    "SubagentStop": ContextOutput,
    "Notification": ContextOutput,
    "Elicitation": ElicitationOutput,
    "ElicitationResult": ElicitationOutput,
    "CwdChanged": WatchPathsOutput,
    "FileChanged": WatchPathsOutput,
    "WorktreeCreate": WorktreeCreateOutput,
    "MessageDisplay": MessageDisplayOutput,
    "PreModelSwitch": PreModelSwitchOutput,
    "PostModelSwitch": ContextOutput,
}
"""Each event's ``hookSpecificOutput`` variant (reference §4.4).  Events not
listed accept no specific output; for an unknown event any object passes."""


class OutputSchemaError(ValueError):
    """Hook output that is JSON but not valid hook output."""


class WrongEventNameError(OutputSchemaError):
    """``hookSpecificOutput.hookEventName`` names another event: the whole output is discarded."""


def parse_hook_output(data: Any, event_name: str) -> tuple[HookOutput, dict[str, Any] | None]:
    """Validate one hook answer for ``event_name``.

    Returns the universal fields and the validated ``hookSpecificOutput`` (as
    a dict of the fields that were set), or raises :class:`OutputSchemaError`
    whose message names the bad field.
    """
    if not isinstance(data, dict):
        raise OutputSchemaError("hook output must be a JSON object")
    try:
        output = msgspec.convert(data, HookOutput, strict=True)
    except msgspec.ValidationError as exc:
        raise OutputSchemaError(f"hook output: {exc}") from None
    specific = output.hookSpecificOutput
    if specific is None:
        return output, None
    name = specific.get("hookEventName")
    if name != event_name:
        raise WrongEventNameError(
            f"Hook returned incorrect event name: expected '{event_name}' but got '{name}'"
        )
    variant = HOOK_SPECIFIC_OUTPUTS.get(event_name)
    if variant is None:
        return output, dict(specific)
    try:
        checked = msgspec.convert(specific, variant, strict=True)
    except msgspec.ValidationError as exc:
        raise OutputSchemaError(f"hook output: {exc} (in `$.hookSpecificOutput`)") from None
    return output, msgspec.to_builtins(checked)

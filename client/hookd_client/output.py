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
    "HookSpecificOutput",
    "OutputSchemaError",
    "PermissionRequestDecision",
    "ValidOutput",
    "parse_hook_output",
]

PermissionDecision = Literal["allow", "deny", "ask", "defer"]


class _Universal(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The universal fields of ``SyncHookJSONOutput`` (reference §4.4)."""

    continue_: bool = msgspec.field(default=True, name="continue")
    stopReason: str | None = None
    suppressOutput: bool | None = None
    systemMessage: str | None = None
    terminalSequence: str | None = None
    decision: Literal["approve", "block"] | None = None
    reason: str | None = None
    # Output-level async acknowledgement ({"async": true, "asyncTimeout": ms}).
    async_: bool | None = msgspec.field(default=None, name="async")
    asyncTimeout: int | None = None


class HookOutput(_Universal, kw_only=True):
    """What a hook may answer, as its author writes it (reference §4.4).

    ``hookSpecificOutput`` stays an open object here: it is checked separately
    against the event's own variant, because a wrong ``hookEventName`` has its
    own error in Claude Code.  :func:`parse_hook_output` turns a valid answer
    into a :class:`ValidOutput`.
    """

    hookSpecificOutput: dict[str, Any] | None = None


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


class HookSpecificOutput(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One hook's ``hookSpecificOutput`` after it passed its event's variant.

    One flat Struct with the fields of every variant (reference §4.4, "Exact
    keys"), so aggregation, async delivery and audit read fields instead of
    digging in dicts; only the fields the event's variant allows can be set,
    because :func:`parse_hook_output` validates against that variant first.
    Encoded, it is the object the hook wrote, minus fields its event ignores.
    """

    hookEventName: str
    permissionDecision: PermissionDecision | None = None
    permissionDecisionReason: str | None = None
    updatedInput: dict[str, Any] | None = None
    additionalContext: str | None = None
    decision: PermissionRequestDecision | None = None
    retry: bool | None = None
    classifierContext: str | None = None
    updatedToolOutput: Any = None
    updatedMCPToolOutput: Any = None
    sessionTitle: str | None = None
    suppressOriginalPrompt: bool | None = None
    initialUserMessage: str | None = None
    watchPaths: list[str] | None = None
    reloadSkills: bool | None = None
    action: Literal["accept", "decline", "cancel"] | None = None
    content: dict[str, Any] | None = None
    worktreePath: str | None = None
    displayContent: str | None = None
    unlisted: dict[str, Any] | None = None
    """For an event hookd has no variant for (a newer Claude Code's, or one
    whose output the reference lists no fields for): every field but
    ``hookEventName`` and a string ``additionalContext``, unchecked and kept
    verbatim, so they pass through to the agent (forward compatibility)."""


class ValidOutput(_Universal, kw_only=True):
    """A hook answer after validation: what :class:`~hookd_client.results.HookRun` carries."""

    hookSpecificOutput: HookSpecificOutput | None = None


class OutputSchemaError(ValueError):
    """Hook output that is JSON but not valid hook output."""


class WrongEventNameError(OutputSchemaError):
    """``hookSpecificOutput.hookEventName`` names another event: the whole output is discarded."""


def parse_hook_output(data: Any, event_name: str) -> ValidOutput:
    """Validate one hook answer for ``event_name``.

    Returns the answer as a :class:`ValidOutput`, or raises
    :class:`OutputSchemaError` whose message names the bad field
    (:class:`WrongEventNameError` when ``hookEventName`` names another event).
    """
    if not isinstance(data, dict):
        raise OutputSchemaError("hook output must be a JSON object")
    try:
        answer = msgspec.convert(data, HookOutput, strict=True)
    except msgspec.ValidationError as exc:
        raise OutputSchemaError(f"hook output: {exc}") from None
    fields = msgspec.structs.asdict(answer)
    fields["hookSpecificOutput"] = _specific(answer.hookSpecificOutput, event_name)
    return ValidOutput(**fields)


def _specific(specific: dict[str, Any] | None, event_name: str) -> HookSpecificOutput | None:
    if specific is None:
        return None
    name = specific.get("hookEventName")
    if name != event_name:
        raise WrongEventNameError(
            f"Hook returned incorrect event name: expected '{event_name}' but got '{name}'"
        )
    variant = HOOK_SPECIFIC_OUTPUTS.get(event_name)
    if variant is None:
        unlisted = {k: v for k, v in specific.items() if k != "hookEventName"}
        context = unlisted.get("additionalContext")
        if isinstance(context, str):
            del unlisted["additionalContext"]
        else:
            context = None
        return HookSpecificOutput(
            hookEventName=event_name, additionalContext=context, unlisted=unlisted or None
        )
    try:
        checked = msgspec.convert(specific, variant, strict=True)
    except msgspec.ValidationError as exc:
        raise OutputSchemaError(f"hook output: {exc} (in `$.hookSpecificOutput`)") from None
    return HookSpecificOutput(**msgspec.structs.asdict(checked))

"""Render an aggregated :class:`FireResult` as one Claude Code command hook's output.

The bridge installs hookd into Claude Code as a *single* hook per event; this
module decides what that single hook prints (stdout, stderr, exit code) so
that Claude Code does what it would have done had it run every hook itself.

Choices, and why:

* Verdicts travel as JSON with exit 0 wherever Claude Code accepts JSON,
  because JSON carries a reason verbatim: a native exit-2 block shows the
  model ``[<cmd>]: <stderr>`` and hookd puts exactly that string in the JSON
  reason, so the model reads the same text.
* Plain stdout that is context (UserPromptSubmit, SessionStart, …) stays plain
  when it is the only context, so Claude Code labels it "hook success" as it
  would natively; mixed with additionalContext it joins the JSON field.
* Events whose block Claude Code reads only from exit 2 (TeammateIdle,
  TaskCompleted, WorktreeCreate failures) get exit 2 and the reason on stderr.
* Late context from async hooks (``async_results``, already marked delivered
  when the result was made) joins ``additionalContext`` here, in the one
  function every Claude-format door renders with (``relay_reply``, the http
  endpoint, ``fire`` with ``format: "claude"``, ``hookctl fire --format
  claude``): a delivered result must reach its reader.  The daemon delivers
  onto such a reply only when :func:`carries_late_context` says it can.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hookd_client.output import HOOK_SPECIFIC_OUTPUTS
from hookd_client.protocol import ClaudeHookOutput
from hookd_client.results import FireResult

__all__ = ["carries_late_context", "render_claude"]

_EXIT2_ONLY_EVENTS = frozenset({"TeammateIdle", "TaskCompleted"})


def render_claude(result: FireResult) -> ClaudeHookOutput:
    """What the one installed hook prints and exits with, so that Claude Code acts on
    ``result`` as it would on its own hooks' outputs (reference §4.2–4.4)."""
    event = result.event
    if event == "WorktreeCreate":
        return _render_worktree_create(result)
    if event in _EXIT2_ONLY_EVENTS and result.decision == "block":
        return ClaudeHookOutput(stderr=(result.reason or "") + "\n", exit_code=2)
    out = _universal_fields(result)
    specific = _verdict_fields(result, out)
    other = _other_specific(result)
    late = result.async_results if carries_late_context(event) else []
    if result.plain_context and not (result.additional_context or late or out or specific or other):
        # Plain stdout alone stays plain: Claude Code labels it "hook success" (§4.2).
        return ClaudeHookOutput(stdout="\n".join(result.plain_context) + "\n")
    contexts = [*result.plain_context, *result.additional_context, *late]
    variant = HOOK_SPECIFIC_OUTPUTS.get(event)
    if contexts and (variant is None or "additionalContext" in variant.__struct_fields__):
        specific["additionalContext"] = "\n".join(contexts)
    specific.update(other)
    if specific:
        out["hookSpecificOutput"] = {"hookEventName": event, **specific}
    if not out:
        return ClaudeHookOutput()
    return ClaudeHookOutput(stdout=msgspec.json.encode(out).decode() + "\n")


def _render_worktree_create(result: FireResult) -> ClaudeHookOutput:
    """WorktreeCreate (§4.2): any non-zero exit fails creation; success prints the path."""
    if result.decision == "block":
        return ClaudeHookOutput(stderr=result.reason or "", exit_code=1)
    path = result.specific.get("worktreePath")
    return ClaudeHookOutput(stdout=f"{path}\n" if path else "")


def _universal_fields(result: FireResult) -> dict[str, Any]:
    """``continue``/``stopReason`` and the joined ``systemMessage`` (§4.4)."""
    out: dict[str, Any] = {}
    if not result.continue_:
        out["continue"] = False
        if result.stop_reason is not None:
            out["stopReason"] = result.stop_reason
    if result.system_messages:
        out["systemMessage"] = "\n".join(result.system_messages)
    return out


def _verdict_fields(result: FireResult, out: dict[str, Any]) -> dict[str, Any]:
    """The event's verdict: PreToolUse/PreModelSwitch as ``permissionDecision`` (with
    the winning ``updatedInput``), PermissionRequest as its ``decision`` object, every
    other blocking event as top-level ``decision: "block"`` (added to ``out``) with
    each blocking hook's message.  Returns the hookSpecificOutput fields it set."""
    event = result.event
    specific: dict[str, Any] = {}
    if event in ("PreToolUse", "PreModelSwitch"):
        if result.decision is not None:
            specific["permissionDecision"] = result.decision
            if result.reason:
                specific["permissionDecisionReason"] = result.reason
        if result.updated_input is not None:
            specific["updatedInput"] = result.updated_input
    elif event == "PermissionRequest":
        if "decision" in result.specific:
            specific["decision"] = result.specific["decision"]
    elif result.decision == "block":
        out["decision"] = "block"
        out["reason"] = "\n\n".join(m for m in result.blocking_messages if m) or (
            result.reason or ""
        )
    return specific


def _other_specific(result: FireResult) -> dict[str, Any]:
    variant = HOOK_SPECIFIC_OUTPUTS.get(result.event)
    fields = variant.__struct_fields__ if variant is not None else ()
    return {
        k: v
        for k, v in result.specific.items()
        if k != "decision" and (variant is None or k in fields)
    }


def carries_late_context(event: str) -> bool:
    """May this event's answer carry late context from earlier async hooks?

    Only events whose output has ``additionalContext`` — and not Stop or
    SubagentStop, where additionalContext makes Claude Code continue the turn,
    which a late async result must not do (natively it is simply shown with
    the next request).
    """
    if event in ("Stop", "SubagentStop"):
        return False
    variant = HOOK_SPECIFIC_OUTPUTS.get(event)
    return variant is not None and "additionalContext" in variant.__struct_fields__

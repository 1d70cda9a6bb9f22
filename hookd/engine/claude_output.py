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
* A Stop/SubagentStop block made only of exit-2 hooks stays an exit 2 with
  the hooks' stderr: natively exit 2 continues the turn with just "Stop hook
  feedback", while a JSON ``decision: "block"`` adds a system message
  ("Stop hook blocking error from command …") the native run does not have.
  (So the installed bridge reaches Stop and SubagentStop through the relay.)
* Several blocking PostToolUse/PostToolUseFailure hooks: natively each gets
  its own paragraph, ``<Event>:<tool> hook blocking error from command:
  "<cmd>": <reason>``.  Claude Code writes that header once, for hookd's
  single hook; the reason hookd answers carries the headers of the second and
  later hooks itself, so the model reads one paragraph per blocking hook.
* PreCompact: Claude Code shows a block as ``Compaction blocked by PreCompact
  hook: [<hook>]: <reason>`` whether the hook exited 2 or answered JSON, so
  the reason hookd answers is the bare one (stderr, or the JSON reason),
  without the ``[<cmd>]: `` an exit-2 block's message carries elsewhere —
  else the user reads the label twice.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hookd_client.output import HOOK_SPECIFIC_OUTPUTS
from hookd_client.protocol import ClaudeHookOutput
from hookd_client.results import FireResult, HookRun

__all__ = ["carries_late_context", "render_claude", "says_nothing"]

_EXIT2_ONLY_EVENTS = frozenset({"TeammateIdle", "TaskCompleted"})
_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})
_PER_HOOK_BLOCK_HEADER_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
_SELF_LABELLED_BLOCK_EVENTS = frozenset({"PreCompact"})
"""Events whose block reason Claude Code prefixes with ``[<hook>]: `` itself, JSON
reasons included (observed with 2.1.330)."""


def render_claude(result: FireResult, tool_name: str | None = None) -> ClaudeHookOutput:
    """What the one installed hook prints and exits with, so that Claude Code acts on
    ``result`` as it would on its own hooks' outputs (reference §4.2–4.4).

    ``tool_name``: the event input's, for Claude Code's ``<Event>:<tool>`` hook
    names in the per-hook block headers (PostToolUse)."""
    if says_nothing(result):
        return ClaudeHookOutput()  # most events: no hook ran, or none had anything to say
    event = result.event
    if event == "WorktreeCreate":
        return _render_worktree_create(result)
    if event in _EXIT2_ONLY_EVENTS and result.decision == "block":
        return ClaudeHookOutput(stderr=(result.reason or "") + "\n", exit_code=2)
    out = _universal_fields(result)
    stop_exit_two = _stop_exit_two(result) if not out else None
    if stop_exit_two is not None:
        return stop_exit_two
    specific = _verdict_fields(result, out, tool_name)
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


def says_nothing(result: FireResult) -> bool:
    """``result`` carries nothing an agent acts on: no verdict, no context, no message,
    no rewrite — every field render_claude reads is at its default.  (``errors`` and
    ``hooks`` are hookd's records, never rendered.)"""
    return (
        result.decision is None
        and result.continue_
        and not result.system_messages
        and not result.additional_context
        and not result.plain_context
        and not result.async_results
        and not result.specific
        and result.updated_input is None
        and result.reason is None
        and result.stop_reason is None
        and not result.blocking_messages
    )


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


def _verdict_fields(
    result: FireResult, out: dict[str, Any], tool_name: str | None = None
) -> dict[str, Any]:
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
        out["reason"] = _block_reason(result, tool_name)
    return specific


def _blocking_runs(result: FireResult) -> list[HookRun]:
    return [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]


def _stop_exit_two(result: FireResult) -> ClaudeHookOutput | None:
    """A Stop/SubagentStop block answered as exit 2 + stderr, when every blocking
    hook blocked by exit 2 alone (no JSON block reason) and there is nothing else
    to say; None otherwise.  Claude Code writes ``[<cmd>]: `` before the stderr,
    as it does for a native exit 2."""
    if result.event not in _STOP_EVENTS or result.decision != "block":
        return None
    runs = _blocking_runs(result)
    if not runs or result.additional_context or result.plain_context:
        return None
    texts = []
    for run in runs:
        if run.exit_code != 2 or (run.output is not None and run.output.decision == "block"):
            return None
        texts.append(run.stderr.strip())
    return ClaudeHookOutput(stderr="\n".join(t for t in texts if t), exit_code=2)


def _block_reason(result: FireResult, tool_name: str | None) -> str:
    """The one reason of hookd's block.  PostToolUse(Failure): one paragraph per
    blocking hook, as natively — the first is headed by Claude Code (naming the
    bridge's hook), the others carry their own header."""
    runs = _blocking_runs(result)
    if result.event in _SELF_LABELLED_BLOCK_EVENTS and runs:
        return "\n".join(_unlabelled(run) for run in runs)
    messages = result.blocking_messages
    if (
        result.event not in _PER_HOOK_BLOCK_HEADER_EVENTS
        or len(runs) != len(messages)
        or len(messages) < 2
    ):
        return "\n\n".join(m for m in messages if m) or (result.reason or "")
    name = f"{result.event}:{tool_name}" if tool_name else result.event
    parts = [messages[0]]
    for run, message in zip(runs[1:], messages[1:], strict=True):
        parts.append(f'{name} hook blocking error from command: "{run.hook.name}": {message}')
    return "\n\n".join(parts)


def _unlabelled(run: HookRun) -> str:
    """A blocking run's reason without hookd's ``[<cmd>]: `` label: the JSON reason,
    else an exit 2's stderr (Claude Code's ``No stderr output`` when empty), else the
    message after its label (a timeout, ``onFailure: "block"``)."""
    if run.output is not None and run.output.decision == "block" and run.output.reason:
        return run.output.reason
    if run.exit_code == 2:
        return run.stderr.strip() or "No stderr output"
    message = run.block_message or ""
    head, sep, rest = message.partition("]: ")
    return rest if sep and head.startswith("[") else message


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

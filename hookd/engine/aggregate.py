"""Combine the runs of one event into one answer (reference §6).

Claude Code's rules, with its races replaced by configuration order:

* ``continue: false`` wins over everything; the first ``stopReason`` is kept.
* PreToolUse decisions: ``deny`` > ``defer`` > ``ask`` > ``allow``; the reason is
  the one of the first hook (in configuration order) that gave the winning
  decision.  Exit 2 counts as ``deny``.
* ``updatedInput``: Claude Code keeps the rewrite of the hook that *finishes
  last*, which is a race.  hookd keeps the rewrite of the first hook in
  configuration order (policy before user before project …), among rewrites
  whose paired decision equals the final decision (or that have none) — the
  same filter Claude Code applies.  A sequential group counts as one unit whose
  rewrite is the end of its chain.
* every ``additionalContext`` and ``systemMessage`` is kept, in configuration
  order (Claude Code: completion order).
* other ``hookSpecificOutput`` fields: first in configuration order wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from hookd.engine.interpret import BLOCKING_EVENTS, MAX_CONTEXT_CHARS
from hookd_client.output import HookSpecificOutput, PermissionRequestDecision
from hookd_client.results import FireResult, HookRun

__all__ = ["CONTINUE_IGNORED_EVENTS", "aggregate"]

_DECISION_RANK = {"deny": 4, "defer": 3, "ask": 2, "allow": 1}

CONTINUE_IGNORED_EVENTS = frozenset(
    {
        "Notification",
        "ConfigChange",
        "Elicitation",
        "ElicitationResult",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "PreCompact",
        "PostCompact",
        "WorktreeCreate",
        "WorktreeRemove",
        "MessageDisplay",
        "InstructionsLoaded",
        "SessionEnd",
        "TaskCreated",
        "StopFailure",
    }
)
"""Events on which ``continue: false`` is ignored or discarded (reference §4.4)."""

_SPECIFIC_SKIP = frozenset(
    {
        "hookEventName",
        "additionalContext",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "decision",
        "unlisted",
    }
)
"""hookSpecificOutput fields merged by their own rule, not "first wins"."""

_OTHER_SPECIFIC = tuple(f for f in HookSpecificOutput.__struct_fields__ if f not in _SPECIFIC_SKIP)
"""The hookSpecificOutput fields that are merged "first in configuration order wins"."""

Spill = Callable[[str], str]
"""Saves an over-long hook string and returns the file's path (reference §4.1 step 4)."""


def _permission(run: HookRun) -> str | None:
    """One hook's permission verdict (§6 "Decision aggregation"): exit 2 counts as
    ``deny``; the legacy ``decision`` maps block→deny and approve→allow (§4.4)."""
    if run.outcome == "blocking":
        return "deny"
    output = run.output
    if output is None:
        return None
    specific = output.hookSpecificOutput
    if specific is not None and specific.permissionDecision is not None:
        return specific.permissionDecision
    if output.decision == "block":
        return "deny"
    if output.decision == "approve":
        return "allow"
    return None


def _permission_reason(run: HookRun) -> str | None:
    if run.block_message is not None:
        return run.block_message
    output = run.output
    if output is None:
        return None
    specific = output.hookSpecificOutput
    reason = specific.permissionDecisionReason if specific is not None else None
    return reason or output.reason


def cap_context(text: str, spill: Spill | None = None) -> str:
    """Claude Code caps hook strings at 10,000 characters; the rest goes to a file (§4.1 step 4)."""
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    if spill is not None:
        path = spill(text)
        preview = text[:2000]
        return f"{preview}\n… [output truncated: {len(text)} characters; full text saved to {path}]"
    return text[:MAX_CONTEXT_CHARS]


def aggregate(
    event: str,
    runs: Sequence[HookRun],
    units: Sequence[Sequence[int]] | None = None,
    spill: Spill | None = None,
) -> FireResult:
    """``runs`` in configuration order; ``units`` groups run indexes that form one
    sequential chain (default: every run is its own unit).

    First what every event merges the same way (:func:`_merge_run`), then the
    event's verdict by its own rule (§6 for PreToolUse, §4.4 for the rest).
    """
    result = FireResult(event=event, hooks=list(runs))
    if not runs:
        return result  # most events: nothing ran, nothing to merge
    if units is None:
        units = [[i] for i in range(len(runs))]
    for run in runs:
        if not run.is_async:
            _merge_run(event, run, result, spill)
    if event in ("PreToolUse", "PreModelSwitch"):
        _permission_decision(event, runs, units, result)
    elif event == "PermissionRequest":
        _permission_request(runs, result)
    elif event in BLOCKING_EVENTS:
        _block_decision(event, runs, result)
    if event == "WorktreeCreate" and "worktreePath" not in result.specific:
        _worktree_path_from_stdout(runs, result)
    return result


def _merge_run(event: str, run: HookRun, result: FireResult, spill: Spill | None) -> None:
    """The fields every event merges alike (§4.4, §6): the first ``continue: false``
    stops (unless the event ignores it), every systemMessage, additionalContext and
    plain-text context is kept in order, other specific fields: first one wins;
    non-blocking errors and cancellations become one line each."""
    output = run.output
    if output is not None:
        if not output.continue_ and event not in CONTINUE_IGNORED_EVENTS and result.continue_:
            result.continue_ = False
            result.stop_reason = output.stopReason
        if output.systemMessage:
            result.system_messages.append(cap_context(output.systemMessage, spill))
        specific = output.hookSpecificOutput
        if specific is not None:
            if specific.additionalContext:
                result.additional_context.append(cap_context(specific.additionalContext, spill))
            _merge_other_specific(specific, result.specific)
    if run.plain_text:
        result.plain_context.append(cap_context(run.plain_text, spill))
    if run.outcome == "non_blocking_error" and run.error:
        result.errors.append(f"{run.hook.name}: {run.error}")
    if run.outcome == "cancelled":
        result.errors.append(f"{run.hook.name}: {run.error or 'cancelled'}")


def _merge_other_specific(specific: HookSpecificOutput, merged: dict[str, Any]) -> None:
    """Fields without a rule of their own: the first hook in configuration order
    that set one wins (an event's unlisted fields pass through the same way)."""
    for key in _OTHER_SPECIFIC:
        value = getattr(specific, key)
        if value is not None and key not in merged:
            merged[key] = value
    for key, value in (specific.unlisted or {}).items():
        if key not in _SPECIFIC_SKIP and key not in merged and value is not None:
            merged[key] = value


def _block_decision(event: str, runs: Sequence[HookRun], result: FireResult) -> None:
    """§4.3: any blocking hook blocks; one message per blocking hook, in
    configuration order.  A blocked Elicitation's action becomes ``decline``."""
    blocks = [r for r in runs if r.outcome == "blocking" and not r.is_async]
    if not blocks:
        return
    result.decision = "block"
    result.blocking_messages = [r.block_message or "" for r in blocks]
    result.reason = "\n".join(m for m in result.blocking_messages if m) or None
    if event in ("Elicitation", "ElicitationResult"):
        result.specific["action"] = "decline"


def _worktree_path_from_stdout(runs: Sequence[HookRun], result: FireResult) -> None:
    """WorktreeCreate (§2.2): a command hook without JSON answers with the path as
    the last line of its stdout."""
    for run in runs:
        lines = [line for line in run.stdout.splitlines() if line.strip()]
        if run.outcome == "success" and lines and run.output is None:
            result.specific["worktreePath"] = lines[-1].strip()
            return


def _permission_decision(
    event: str, runs: Sequence[HookRun], units: Sequence[Sequence[int]], result: FireResult
) -> None:
    """§6 "Decision aggregation (PreToolUse)": ``deny`` > ``defer`` > ``ask`` >
    ``allow``; the reason of the first hook that gave the winning decision."""
    verdicts = [(run, _permission(run)) for run in runs if not run.is_async]
    best: str | None = None
    for _run, decision in verdicts:
        if decision in _DECISION_RANK and (
            best is None or _DECISION_RANK[decision] > _DECISION_RANK[best]
        ):
            best = decision
    result.decision = best
    if best is not None:
        result.reason = next(_permission_reason(r) for r, d in verdicts if d == best)
        result.blocking_messages = [
            r.block_message or _permission_reason(r) or "" for r, d in verdicts if d == "deny"
        ]
    if event == "PreToolUse" and best not in ("deny", "defer"):
        result.updated_input = _updated_input(runs, units, best)


def _updated_input(
    runs: Sequence[HookRun], units: Sequence[Sequence[int]], best: str | None
) -> dict[str, Any] | None:
    """§6 "updatedInput", made deterministic: the rewrite of the first unit in
    configuration order, among rewrites whose paired decision equals the final
    one (or that have none); a sequential unit's rewrite is the end of its chain."""
    for unit in units:
        rewrite: dict[str, Any] | None = None
        for index in unit:
            run = runs[index]
            if run.is_async or run.output is None:
                continue
            specific = run.output.hookSpecificOutput
            updated = specific.updatedInput if specific is not None else None
            own = _permission(run)
            if updated is not None and (own is None or own == best):
                rewrite = updated
        if rewrite is not None:
            return rewrite
    return None


def _permission_request(runs: Sequence[HookRun], result: FireResult) -> None:
    """PermissionRequest (§2.1): the first ``deny`` wins, else the first decision."""
    chosen: PermissionRequestDecision | None = None
    for run in runs:
        specific = run.output.hookSpecificOutput if run.output is not None else None
        decision = specific.decision if specific is not None else None
        if decision is None:
            continue
        if decision.behavior == "deny":
            chosen = decision
            break
        if chosen is None:
            chosen = decision
    if chosen is not None:
        result.decision = chosen.behavior
        result.reason = chosen.message
        result.specific["decision"] = msgspec.to_builtins(chosen)
        if chosen.behavior == "allow" and chosen.updatedInput is not None:
            result.updated_input = chosen.updatedInput

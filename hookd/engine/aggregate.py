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

from collections.abc import Sequence
from typing import Any

from hookd.engine.interpret import BLOCKING_EVENTS, MAX_CONTEXT_CHARS
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
    }
)


def _permission(event: str, run: HookRun) -> str | None:
    if run.outcome == "blocking":
        return "deny"
    output = run.output or {}
    specific = output.get("hookSpecificOutput") or {}
    decision = specific.get("permissionDecision")
    if isinstance(decision, str):
        return decision
    legacy = output.get("decision")
    if legacy == "block":
        return "deny"
    if legacy == "approve":
        return "allow"
    return None


def _permission_reason(run: HookRun) -> str | None:
    if run.block_message is not None:
        return run.block_message
    output = run.output or {}
    specific = output.get("hookSpecificOutput") or {}
    reason = specific.get("permissionDecisionReason") or output.get("reason")
    return str(reason) if reason is not None else None


def cap_context(text: str, spill: Any = None) -> str:
    """Claude Code caps hook strings at 10,000 characters; the rest goes to a file."""
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
    spill: Any = None,
) -> FireResult:
    """``runs`` in configuration order; ``units`` groups run indexes that form one
    sequential chain (default: every run is its own unit)."""
    result = FireResult(event=event, hooks=list(runs))
    if not runs:
        return result  # most events: nothing ran, nothing to merge
    if units is None:
        units = [[i] for i in range(len(runs))]

    for run in runs:
        if run.is_async:
            continue
        output = run.output or {}
        if output.get("continue") is False and event not in CONTINUE_IGNORED_EVENTS:
            if result.continue_:
                result.continue_ = False
                result.stop_reason = output.get("stopReason")
        message = output.get("systemMessage")
        if isinstance(message, str) and message:
            result.system_messages.append(cap_context(message, spill))
        specific = output.get("hookSpecificOutput") or {}
        context = specific.get("additionalContext")
        if isinstance(context, str) and context:
            result.additional_context.append(cap_context(context, spill))
        if run.plain_text:
            result.plain_context.append(cap_context(run.plain_text, spill))
        for key, value in specific.items():
            if key not in _SPECIFIC_SKIP and key not in result.specific and value is not None:
                result.specific[key] = value
        if run.outcome == "non_blocking_error" and run.error:
            result.errors.append(f"{run.hook.name}: {run.error}")
        if run.outcome == "cancelled":
            result.errors.append(f"{run.hook.name}: {run.error or 'cancelled'}")

    if event in ("PreToolUse", "PreModelSwitch"):
        _permission_decision(event, runs, units, result)
    elif event == "PermissionRequest":
        _permission_request(runs, result)
    elif event in BLOCKING_EVENTS:
        blocks = [r for r in runs if r.outcome == "blocking" and not r.is_async]
        if blocks:
            result.decision = "block"
            result.blocking_messages = [r.block_message or "" for r in blocks]
            result.reason = "\n".join(m for m in result.blocking_messages if m) or None
            if event in ("Elicitation", "ElicitationResult"):
                result.specific["action"] = "decline"
    if event == "WorktreeCreate" and "worktreePath" not in result.specific:
        for run in runs:
            lines = [line for line in run.stdout.splitlines() if line.strip()]
            if run.outcome == "success" and lines and run.output is None:
                result.specific["worktreePath"] = lines[-1].strip()
                break
    return result


def _permission_decision(
    event: str, runs: Sequence[HookRun], units: Sequence[Sequence[int]], result: FireResult
) -> None:
    best: str | None = None
    for run in runs:
        if run.is_async:
            continue
        decision = _permission(event, run)
        if decision in _DECISION_RANK and (
            best is None or _DECISION_RANK[decision] > _DECISION_RANK[best]
        ):
            best = decision
    result.decision = best
    if best is not None:
        for run in runs:
            if not run.is_async and _permission(event, run) == best:
                result.reason = _permission_reason(run)
                break
        result.blocking_messages = [
            r.block_message or _permission_reason(r) or ""
            for r in runs
            if not r.is_async and _permission(event, r) == "deny"
        ]
    if event != "PreToolUse" or best in ("deny", "defer"):
        return
    for unit in units:
        rewrite: dict[str, Any] | None = None
        for index in unit:
            run = runs[index]
            if run.is_async or run.output is None:
                continue
            specific = run.output.get("hookSpecificOutput") or {}
            updated = specific.get("updatedInput")
            own = _permission(event, run)
            if isinstance(updated, dict) and (own is None or own == best):
                rewrite = updated
        if rewrite is not None:
            result.updated_input = rewrite
            return


def _permission_request(runs: Sequence[HookRun], result: FireResult) -> None:
    chosen: dict[str, Any] | None = None
    for run in runs:
        specific = (run.output or {}).get("hookSpecificOutput") or {}
        decision = specific.get("decision")
        if not isinstance(decision, dict):
            continue
        if decision.get("behavior") == "deny":
            chosen = decision
            break
        if chosen is None:
            chosen = decision
    if chosen is not None:
        result.decision = chosen.get("behavior")
        result.reason = chosen.get("message")
        result.specific["decision"] = chosen
        if chosen.get("behavior") == "allow" and isinstance(chosen.get("updatedInput"), dict):
            result.updated_input = chosen["updatedInput"]

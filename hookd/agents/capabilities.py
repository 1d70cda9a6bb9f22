"""What happens to a hook's answer that an agent cannot carry out: decided, and said.

hookd aggregates every hook's answer with Claude Code's rules into one
:class:`~hookd_client.results.FireResult`.  Another agent may be unable to do
part of it on that event — apply a rewritten tool input, ask the user, add
context, go on after a stop.  Two things decide what happens then, both here:

* :func:`degrade` at run time, before the adapter encodes the answer.  The
  rule is *never less safe than the hook asked for*: a rewrite the agent
  cannot apply becomes a block with a reason (running the call as the model
  wrote it would skip the sanitising the hook did), an ``ask`` where the agent
  cannot ask becomes a deny (no one can be asked, so the cautious answer
  wins); what is merely lost (context, a system message, a stop continuation)
  is recorded in the result's ``errors`` and logged — never dropped in
  silence.
* :func:`report` at load time: for every configured hook × agent, what that
  agent will do with it — an event it never fires (the hook never runs under
  it), a before-event it only has as an after-event (a loud warning: a guard
  written for "before" would run too late), a matcher the agent ignores
  (hookd filters in the daemon, so it still holds), what a rewrite or an ask
  turns into.  ``hookctl doctor``/``explain`` print it; the daemon logs its
  warnings after each load.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec
import structlog

from hookd.agents.base import Adapter, EventSpec
from hookd.config.model import HookSpec
from hookd.config.schema import handler_label
from hookd_client.results import FireResult

__all__ = [
    "AFTER_EVENTS",
    "HookReport",
    "degrade",
    "mcp_install_notes",
    "mcp_matcher_report",
    "report",
]

log = structlog.get_logger("hookd.agents")

AFTER_EVENTS: dict[str, str] = {
    "PreToolUse": "PostToolUse",
    "UserPromptSubmit": "Stop",
    "PreCompact": "PostCompact",
    "SubagentStart": "SubagentStop",
}
"""A before-event → the after-event an agent may have in its place (a guard there runs too late)."""

_STOP_EVENTS = frozenset({"Stop", "SubagentStop"})
_TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
_MCP_IN_MATCHER = re.compile(r"mcp__")

Severity = Literal["error", "warning", "info"]


def degrade(result: FireResult, spec: EventSpec) -> FireResult:
    """``result`` made safe for what the agent does on ``spec``'s event (a new result).

    Each change is named in ``errors`` (``hookd: …``) so the audit log and
    ``hookctl tail`` show it, and logged.
    """
    where = f"{spec.native} ({spec.canonical})"
    changes: dict[str, object] = {}
    losses: list[str] = []
    decision, reason = _verdict(result, spec, where, changes, losses)
    _losses(result, spec, decision, where, changes, losses)
    if not losses:
        return result
    for loss in losses:
        log.warning(
            "capability loss", native_event=spec.native, canonical=spec.canonical, loss=loss
        )
    return msgspec.structs.replace(
        result,
        decision=decision,
        reason=reason,
        errors=[*result.errors, *losses],
        **changes,
    )


def _verdict(
    result: FireResult,
    spec: EventSpec,
    where: str,
    changes: dict[str, object],
    losses: list[str],
) -> tuple[str | None, str | None]:
    """The decision and reason the agent gets: a rewrite it cannot apply blocks, an ask
    it cannot ask denies (both never less safe than what the hook asked for)."""
    caps = spec.caps
    decision, reason = result.decision, result.reason
    if result.updated_input is not None and not caps.rewrite_input:
        if decision not in ("deny", "block"):
            decision = "deny" if caps.ask or spec.canonical == "PreToolUse" else "block"
            reason = (
                f"hookd: a hook rewrote this call's input, which the agent cannot apply on {where};"
                " blocked rather than run the call unsanitised"
            )
        changes["updated_input"] = None
        losses.append(f"hookd: updatedInput not applicable on {where}: turned into a block")
    if decision == "ask" and not caps.ask:
        decision = "deny"
        why = f" ({reason})" if reason else ""
        reason = (
            f"hookd: a hook asked for the user's confirmation{why},"
            f" which the agent cannot ask on {where}; denied"
        )
        losses.append(f"hookd: permissionDecision ask not available on {where}: denied")
    return decision, reason


def _losses(
    result: FireResult,
    spec: EventSpec,
    decision: str | None,
    where: str,
    changes: dict[str, object],
    losses: list[str],
) -> None:
    """What the agent cannot carry out at all: named in ``losses``, removed via ``changes``."""
    caps = spec.caps
    if decision in ("deny", "block") and not caps.block:
        losses.append(f"hookd: the agent cannot block on {where}: the block is lost")
    if spec.canonical in _STOP_EVENTS and decision == "block" and not caps.continue_stop:
        losses.append(f"hookd: the agent cannot continue after {where}: the stop stands")
    if (result.additional_context or result.plain_context) and not caps.add_context:
        losses.append(f"hookd: the agent cannot add context on {where}: context dropped")
        changes["additional_context"] = []
        changes["plain_context"] = []
    if result.system_messages and not caps.system_message:
        losses.append(f"hookd: the agent shows no systemMessage on {where}: message dropped")
        changes["system_messages"] = []


class HookReport(msgspec.Struct, frozen=True, kw_only=True):
    """What one agent does with one configured hook (explain, doctor, load warnings)."""

    agent: str
    event: str
    """The canonical event the hook is configured on."""
    hook: str
    source: str
    severity: Literal["error", "warning", "info"]
    message: str


def _by_canonical(specs: Sequence[EventSpec]) -> dict[str, list[EventSpec]]:
    out: dict[str, list[EventSpec]] = {}
    for spec in specs:
        out.setdefault(spec.canonical, []).append(spec)
    return out


def report(adapter: Adapter, hooks: Iterable[HookSpec]) -> list[HookReport]:
    """For each configured hook (``HookConfig.all_hooks()``): what ``adapter``'s agent does with it.

    Only what differs from Claude Code is reported; a hook the agent runs
    exactly as Claude Code would gets no entry.
    """
    events = _by_canonical(adapter.events)
    out: list[HookReport] = []
    for hook in hooks:
        event, matcher = hook.event, hook.matcher

        def add(
            severity: Literal["error", "warning", "info"], message: str, h: HookSpec = hook
        ) -> None:
            out.append(
                HookReport(
                    agent=adapter.name,
                    event=h.event,
                    hook=handler_label(h.handler),
                    source=h.source,
                    severity=severity,
                    message=message,
                )
            )

        specs = events.get(event)
        if not specs:
            after = AFTER_EVENTS.get(event)
            if after is not None and after in events:
                add(
                    "warning",
                    f"{adapter.title} has no {event}: this hook never runs under it, and the"
                    f" nearest event ({after}) fires only after the fact",
                )
            else:
                add("info", f"{adapter.title} fires no {event}: this hook never runs under it")
            continue
        mcp = mcp_matcher_report(adapter, matcher) if event in _TOOL_EVENTS else None
        if mcp is not None:
            add(*mcp)
        for spec in specs:
            caps = spec.caps
            native = spec.native if spec.native == event else f"{spec.native} ({event})"
            if matcher not in (None, "", "*") and not caps.matchers:
                add(
                    "info",
                    f"{adapter.title} ignores matchers on {native}: hookd applies {matcher!r}"
                    " in the daemon",
                )
            if event == "PreToolUse" and not caps.rewrite_input:
                add(
                    "info",
                    f"{adapter.title} cannot apply updatedInput on {native}: a rewrite becomes"
                    " a block with a reason",
                )
            if event in ("PreToolUse", "PermissionRequest") and not caps.ask:
                add(
                    "info",
                    f"{adapter.title} cannot ask the user on {native}: an ask becomes a deny",
                )
            if event in _STOP_EVENTS and not caps.continue_stop:
                add(
                    "warning",
                    f"{adapter.title} cannot continue after {native}: a block there is lost",
                )
            if spec.note:
                add("info", f"{native}: {spec.note}")
            if spec.differs:
                add("warning", f"{native}: hookd differs from {adapter.title}: {spec.differs}")
    return out


def mcp_matcher_report(adapter: Adapter, matcher: str | None) -> tuple[Severity, str] | None:
    """What ``adapter``'s agent does with a matcher naming MCP tools Claude Code's way
    (``mcp__srv__echo``, ``mcp__srv__.*``): None where the agent names them the same.

    The agent's own name for the tool is mapped back to Claude Code's at its door
    (:mod:`hookd.agents.mcp_names`), so the matcher fires — said as info; where the
    agent's name reads several ways, as a warning (the matcher is tested against every
    reading); where the agent does not name the server at all, as an error: the
    matcher cannot fire for that agent's MCP calls, and the user must know.
    """
    if not matcher or not _MCP_IN_MATCHER.search(matcher) or adapter.mcp.is_claude:
        return None
    naming = adapter.mcp
    if not naming.named:
        return (
            "error",
            f"{adapter.title} does not tell its hooks an MCP tool's server ({naming.how}):"
            f" {matcher!r} never matches its MCP calls; add the bare tool name to the matcher"
            " or drop the matcher",
        )
    if not naming.exact:
        return (
            "warning",
            f"{adapter.title}: {naming.describe()}: hookd maps the name back to Claude Code's,"
            " and where a"
            f" `{naming.sep}` inside a server or tool name makes it read several ways, tests"
            f" {matcher!r} against every reading (it may fire for a look-alike tool,"
            " never misses its own)",
        )
    return (
        "info",
        f"{adapter.title}: {naming.describe()}: hookd maps it back to Claude Code's, so"
        f" {matcher!r} fires there",
    )


def mcp_install_notes(adapter: Adapter, hooks: dict[str, object]) -> list[str]:
    """What ``hookctl agents install`` says about hookd's matchers naming MCP tools for
    this agent: every warning and error of :func:`mcp_matcher_report`, so a guard that
    reads several ways — or cannot match at all — is said when the agent is wired."""
    notes: list[str] = []
    for event, groups in hooks.items():
        if event not in _TOOL_EVENTS or not isinstance(groups, list):
            continue
        for group in groups:
            matcher = group.get("matcher") if isinstance(group, dict) else None
            found = mcp_matcher_report(adapter, matcher if isinstance(matcher, str) else None)
            if found is not None and found[0] != "info":
                notes.append(f"{found[0]}: {event} matcher {matcher!r}: {found[1]}")
    return notes

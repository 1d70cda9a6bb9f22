"""Every agent's block survives its adapter's encoding, in every form hookd can hold (issue 32).

For every registered agent and every event on which that agent can block
(``caps.block``), a block or deny — with a reason and without, made by a hook
or by hookd itself (:func:`~hookd.agents.capabilities.degrade` turning a rewrite
the agent cannot apply into a block), with ``continue: false`` beside it or not —
reaches the agent as something it obeys as a block: exit 2, or one of the
agents' own block fields.  And a reason the hook gave reaches the agent in its
words.  A guard whose block an encoder drops, or whose reason becomes ``null``,
is a guard that silently stops guarding.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookd.agents.base import Adapter, AgentReply, EventSpec
from hookd.agents.capabilities import degrade
from hookd.agents.registry import ADAPTERS
from hookd_client.results import FireResult

REASON = "NO-RM-PLEASE"

# Where an agent's documentation gives a block no room for a reason (Cursor's
# beforeReadFile takes the permission only).
NO_REASON = {("cursor", "beforeReadFile")}

# Agents that reject, or show as "undefined", a block without a reason: hookd always
# gives one (its default when no hook did).  Claude Code's dialect accepts a reason-less
# block (so do the agents that speak it), and Codex's PermissionRequest deny.
REASON_ALWAYS = {"codex", "gemini", "copilot", "cursor", "windsurf", "kiro", "cline"}
REASON_OPTIONAL = {("codex", "PermissionRequest")}
# Every agent's own field for a rewritten input (Claude Code's ``updatedInput`` may stand
# beside its deny: the deny wins there).
_REWRITE_KEYS = ("modifiedArgs", "tool_input", "overrideInput", "args")
_REASON_KEYS = (
    "reason",
    "permissionDecisionReason",
    "message",
    "errorMessage",
    "user_message",
    "agent_message",
    "followup_message",
)


def _reasons(reply: AgentReply) -> list[str]:
    """Every non-empty reason the agent is given with its block."""
    found = [reply.stderr.strip()] if reply.exit_code == 2 else []
    data = json.loads(reply.stdout) if reply.stdout else {}
    for place in (data, data.get("hookSpecificOutput") or {}):
        found += [place[k] for k in _REASON_KEYS if isinstance(place.get(k), str)]
    return [r for r in found if r.strip()]


def _blocks(data: Any) -> bool:
    """Does one JSON answer carry a block in any agent's words?"""
    if not isinstance(data, dict):
        return False
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    verdict = specific.get("decision")
    return (
        data.get("decision") in ("block", "deny")
        or specific.get("permissionDecision") in ("deny", "block")
        or (isinstance(verdict, dict) and verdict.get("behavior") == "deny")
        or data.get("permissionDecision") == "deny"
        or data.get("behavior") == "deny"
        or data.get("permission") == "deny"
        or data.get("continue") is False
        or data.get("cancel") is True
        or isinstance(data.get("followup_message"), str)
        or isinstance(data.get("block"), str)  # opencode's and Kilo's plugin throws it
    )


def _obeyed_as_block(reply: AgentReply) -> bool:
    if reply.exit_code == 2:
        return True
    if reply.exit_code != 0:
        return True  # a failing hook: Claude Code's WorktreeCreate fails the worktree
    return bool(reply.stdout) and _blocks(json.loads(reply.stdout))


def _forms(spec: EventSpec) -> list[FireResult]:
    """A block of every form hookd can hold for ``spec``'s canonical event."""
    event = spec.canonical
    decision = "deny" if event in ("PreToolUse", "PermissionRequest", "PreModelSwitch") else "block"
    forms = []
    for reason in (REASON, None):
        specific: dict[str, Any] = {}
        if event == "PermissionRequest":
            verdict = {"behavior": "deny", **({"message": reason} if reason else {})}
            specific = {"decision": verdict}
        for stop, rewrite in ((False, None), (True, None), (False, {"command": "y"})):
            forms.append(  # a rewrite beside a block: another hook's, never applied
                FireResult(
                    event=event,
                    decision=decision,
                    reason=reason,
                    blocking_messages=[reason] if reason else [],
                    specific=specific,
                    continue_=not stop,
                    updated_input=rewrite,
                )
            )
    # hookd's own block: a rewrite the agent cannot apply (degrade makes it a block),
    # as aggregation holds it (PermissionRequest's rides in its ``decision`` too)
    rewrite = {"command": "x"}
    specific = {}
    if event == "PermissionRequest":
        specific = {"decision": {"behavior": "allow", "updatedInput": rewrite}}
    forms.append(
        FireResult(event=event, decision="allow", updated_input=rewrite, specific=specific)
    )
    return forms


def _cases() -> list[tuple[Adapter, EventSpec]]:
    return [(a, s) for a in ADAPTERS for s in a.events if s.caps.block]


@pytest.mark.parametrize(
    ("adapter", "spec"), _cases(), ids=[f"{a.name}-{s.native}" for a, s in _cases()]
)
def test_a_block_reaches_the_agent_as_one_in_every_form(adapter: Adapter, spec: EventSpec) -> None:
    tool = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    data = {"hook_event_name": spec.canonical, "session_id": "s", "cwd": "/", **tool}
    event = adapter.agent_event(spec.native, spec, data)
    for result in _forms(spec):
        safe = degrade(result, spec)
        if safe.decision not in ("deny", "block"):
            assert spec.caps.rewrite_input and result.updated_input is not None, result
            continue  # the agent applies the rewrite itself: not a block
        reply = adapter.encode(safe, event)
        assert _obeyed_as_block(reply), (adapter.name, spec.native, result, reply)
        said = reply.stdout + reply.stderr
        if result.reason and (adapter.name, spec.native) not in NO_REASON:
            assert REASON in said, (adapter.name, spec.native, result, reply)
        if reply.stdout:
            assert "null" not in reply.stdout, reply  # no reason, or any field, left null
            # a blocked call is not rewritten: no rewrite in an agent's own dialect beside
            # the block (Claude Code's keeps updatedInput beside a deny, and deny wins)
            for rewrite in _REWRITE_KEYS:
                assert f'"{rewrite}"' not in reply.stdout, reply
        key = (adapter.name, spec.native)
        if adapter.name in REASON_ALWAYS and key not in NO_REASON | REASON_OPTIONAL:
            assert _reasons(reply), (adapter.name, spec.native, result, reply)


# ``continue: false`` alone: on a Stop it lets the agent stop (what it was doing
# anyway), so it is no block there; Claude Code's own dialect carries it as written;
# a PermissionRequest left unanswered goes to the user's own prompt, as without hooks.
_LETS_IT_STOP = {"Stop", "SubagentStop"}


def _stop_cases() -> list[tuple[Adapter, EventSpec]]:
    return [
        (a, s)
        for a, s in _cases()
        if a.name != "claude"
        and s.canonical not in _LETS_IT_STOP
        and (a.name, s.canonical) != ("codex", "PermissionRequest")
    ]


@pytest.mark.parametrize(
    ("adapter", "spec"), _stop_cases(), ids=[f"{a.name}-{s.native}" for a, s in _stop_cases()]
)
def test_continue_false_alone_stops_the_agent_on_every_event_it_can_block(
    adapter: Adapter, spec: EventSpec
) -> None:
    """A hook that answers only ``continue: false`` (stop everything), with a reason or
    without, is obeyed as a block wherever the agent can block: an encoder that reads
    the decision alone lets the call go ahead."""
    tool = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    data = {"hook_event_name": spec.canonical, "session_id": "s", "cwd": "/", **tool}
    event = adapter.agent_event(spec.native, spec, data)
    for reason in (REASON, None):
        result = FireResult(event=spec.canonical, continue_=False, stop_reason=reason)
        reply = adapter.encode(degrade(result, spec), event)
        assert _obeyed_as_block(reply), (adapter.name, spec.native, reason, reply)
        if reason and (adapter.name, spec.native) not in NO_REASON:
            assert REASON in reply.stdout + reply.stderr, (adapter.name, spec.native, reply)


def _every_event() -> list[tuple[Adapter, EventSpec]]:
    return [(a, s) for a in ADAPTERS for s in a.events]


@pytest.mark.parametrize(
    ("adapter", "spec"), _every_event(), ids=[f"{a.name}-{s.native}" for a, s in _every_event()]
)
def test_an_allow_reaches_the_agent_as_no_block_on_every_event(
    adapter: Adapter, spec: EventSpec
) -> None:
    """The other side of the guard: when every hook allowed (or none matched), no agent
    is told to block — with nothing said, with a context, with a reason beside the allow.
    An encoder that blocks whatever it is given stops every tool call of that agent."""
    tool = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    data = {"hook_event_name": spec.canonical, "session_id": "s", "cwd": "/", **tool}
    event = adapter.agent_event(spec.native, spec, data)
    allows = [
        FireResult(event=spec.canonical),
        FireResult(event=spec.canonical, additional_context=["ctx"]),
        FireResult(event=spec.canonical, decision="allow", reason="fine"),
    ]
    for result in allows:
        reply = adapter.encode(degrade(result, spec), event)
        assert reply.exit_code == 0, (adapter.name, spec.native, result, reply)
        try:
            said = json.loads(reply.stdout) if reply.stdout else None
        except json.JSONDecodeError:
            said = None  # plain text: a context the agent shows (Kiro's), never a verdict
        assert not _blocks(said), (adapter.name, spec.native, result, reply)

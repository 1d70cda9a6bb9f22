"""What hookd answers the Claude Code mod: one settings-hook output, in a mod's words.

The mod (``hookd/doors/claude_mod``) posts each event it carries to
``/mod/<Event>`` on the daemon's http socket.  The event runs exactly as one
posted to ``/hooks/<Event>`` by an http hook; only the answer differs, because
a mod does not print a hook output — it *returns* Claude Code's own result
object for the event (``ClassicResult``; ``PreToolUseResult`` for PreToolUse),
and decides whether the hooks beneath it (other mods, settings hooks hookd
does not own) run at all by calling ``next`` or not.

So this module turns the http hook's JSON (:func:`render_http`'s, which
already holds every aggregation rule) into a small instruction for the mod,
:class:`ModAnswer`:

* ``final``: return ``result`` without calling ``next`` — a deny, an ask, a
  block, ``continue: false``; natively one blocking hook decides too.
* otherwise call ``next`` (with ``input`` as the tool's new arguments when a
  hook rewrote them) and lay ``result`` over what it returns: contexts are
  appended, and an allow only stands when nothing beneath denied or asked.

Why the conversion is here, not in the mod's TypeScript: it is where the
aggregation rules and their tests already are, and the mod stays a few lines
that only carry bytes and apply an answer (each line of it costs a session's
every tool call, and Claude Code checks its source statically).

What the answer cannot carry, because a mod's result has no field for it
(docs/claude-code.md, "The mod transport"): ``systemMessage`` and
``suppressOutput`` (Claude Code drops them; hookd logs them with the run).  The
text of a PreToolUse deny is the one a settings hook's deny produces,
``PreToolUse:<tool> hook error: <reason>``: a mod's bare ``{deny}`` reason would
reach the model without that prefix.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["MOD_EVENTS", "ModAnswer", "mod_answer", "render_mod"]

MOD_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch"})
"""The events the mod carries; every other event goes through a settings hook (the
relay), whose output Claude Code applies exactly as a native hook's.  These are the
ones fired per tool call, where a process per event is the cost users leave for."""

_PASSED_THROUGH = {
    "PostToolUse": ("updatedToolOutput", "updatedMCPToolOutput"),
}
"""hookSpecificOutput fields the event's ClassicResult carries under the same name."""


class ModAnswer(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What the mod does with one event (see the module docstring)."""

    result: dict[str, Any] = msgspec.field(default_factory=dict)
    final: bool = False
    input: dict[str, Any] | None = None
    """PreToolUse: the tool's new arguments (``updatedInput``), passed to ``next``."""


def render_mod(http_body: bytes, event: str, tool_name: str | None) -> bytes:
    """The response body for the mod: a :class:`ModAnswer`, or empty for "no opinion"."""
    if not http_body:
        return b""
    answer = mod_answer(event, json.loads(http_body), tool_name)
    return msgspec.json.encode(answer) if answer is not None else b""


def mod_answer(event: str, output: dict[str, Any], tool_name: str | None) -> ModAnswer | None:
    """One http hook output (what hookd would answer an http hook) as a mod's instruction."""
    answer = ModAnswer()
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context:
        answer.result["additionalContext"] = [context]
    if event == "PreToolUse":
        _pre_tool_use(answer, output, specific, tool_name or "")
    else:
        if output.get("decision") == "block":
            answer.result["block"] = str(output.get("reason") or "")
            answer.final = True
        for name in _PASSED_THROUGH.get(event, ()):
            if name in specific:
                answer.result[name] = specific[name]
    if output.get("continue") is False:
        answer.result["preventContinuation"] = True
        if isinstance(output.get("stopReason"), str):
            answer.result["stopReason"] = output["stopReason"]
        answer.final = True
    if not answer.result and answer.input is None:
        return None
    return answer


def _pre_tool_use(
    answer: ModAnswer, output: dict[str, Any], specific: dict[str, Any], tool: str
) -> None:
    decision = specific.get("permissionDecision")
    reason = specific.get("permissionDecisionReason")
    if output.get("decision") in ("block", "deny"):  # the legacy top-level form
        decision, reason = "deny", output.get("reason")
    elif output.get("decision") == "approve":
        decision = "allow"
    text = str(reason or "")
    if decision == "deny":
        answer.result["deny"] = f"PreToolUse:{tool} hook error: {text}"
        answer.final = True
    elif decision == "ask":
        answer.result["ask"] = text
        answer.final = True
    elif decision == "allow":
        answer.result["allow"] = True
    updated = specific.get("updatedInput")
    if isinstance(updated, dict) and not answer.final:
        answer.input = updated

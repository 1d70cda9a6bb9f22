"""The ``prompt`` handler: one Messages-API call that answers ``{ok, reason, impossible}``.

Reference §9.  The hook's ``prompt`` has ``$ARGUMENTS`` replaced by the event
input JSON (appended after a blank line when the prompt has no
``$ARGUMENTS``; ``\\$`` is a literal ``$``).  The assistant turn is pre-filled
with ``{`` so the model continues a JSON object rather than chatting.

The verdict becomes the hook JSON a command hook would have printed for the
same effect (:func:`verdict_output`), so interpretation and aggregation stay
in :mod:`hookd.engine.interpret` / :mod:`hookd.engine.aggregate`.  A reply
that is not a valid verdict is a *failure* (a non-blocking error, or a block
with ``onFailure: "block"``) — never a silent allow.
"""

from __future__ import annotations

from typing import Any

import msgspec
import trio

from hookd.config.schema import PromptHandler
from hookd.handlers.base import HandlerResult, Invocation, failed_with
from hookd.handlers.messages_api import MessagesApiError, MessagesClient, text_of

__all__ = ["PromptRunner", "Verdict", "parse_verdict", "render_prompt", "verdict_output"]

SYSTEM_PROMPT = (
    "You are a verification hook inside an AI coding agent. You are given an instruction and "
    "the JSON input of one hook event. Decide whether the condition in the instruction is met. "
    'Answer with exactly one JSON object and nothing else: {"ok": true} when it is met, or '
    '{"ok": false, "reason": "<why, addressed to the agent>"} when it is not. Add '
    '"impossible": true when the agent cannot possibly satisfy the condition.'
)

_TURN_ENDS_BY_DEFAULT = frozenset({"PreToolUse", "PostToolUse", "PostToolBatch", "TeammateIdle"})
_NO_EFFECT = frozenset({"PermissionRequest", "PermissionDenied"})


class Verdict(msgspec.Struct, kw_only=True):
    ok: bool
    reason: str | None = None
    impossible: bool = False


class VerdictError(ValueError):
    """The model's reply is not a ``{ok, reason}`` object."""


def render_prompt(template: str, arguments: str) -> str:
    """Substitute ``$ARGUMENTS`` (every occurrence); ``\\$`` escapes a literal ``$``."""
    out: list[str] = []
    found = False
    i = 0
    while i < len(template):
        if template.startswith("\\$", i):
            out.append("$")
            i += 2
        elif template.startswith("$ARGUMENTS", i):
            out.append(arguments)
            found = True
            i += len("$ARGUMENTS")
        else:
            out.append(template[i])
            i += 1
    text = "".join(out)
    return text if found else f"{text}\n\n{arguments}"


def parse_verdict(text: str) -> Verdict:
    """Strictly decode a verdict: one JSON object, ``ok`` a boolean."""
    try:
        return msgspec.json.decode(text.strip(), type=Verdict)
    except (msgspec.DecodeError, UnicodeError, RecursionError) as exc:
        shown = text.strip()
        shown = shown if len(shown) <= 200 else shown[:199] + "…"
        raise VerdictError(f"model reply is not a valid verdict ({exc}): {shown}") from None


def verdict_output(event: str, verdict: Verdict, continue_on_block: bool) -> dict[str, Any] | None:
    """The hook JSON that has the effect §9 lists for ``ok: false`` on ``event``.

    "Turn ends" is ``continue: false`` (plus the block itself where the event
    has one); ``continueOnBlock`` turns that into a plain block whose reason
    goes back to the model.
    """
    if verdict.ok or event in _NO_EFFECT:
        return None
    reason = verdict.reason or "the hook's condition was not met"
    if event in ("Stop", "SubagentStop"):
        if verdict.impossible:
            return None
        return {"decision": "block", "reason": reason}
    answer: dict[str, Any]
    if event == "PreToolUse":
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    elif event in _TURN_ENDS_BY_DEFAULT and not continue_on_block:
        answer = {}
    else:
        answer = {"decision": "block", "reason": reason}
    if event in _TURN_ENDS_BY_DEFAULT and not continue_on_block:
        answer["continue"] = False
        answer["stopReason"] = reason
    return answer


async def ask_verdict(
    client: MessagesClient, inv: Invocation, model: str, user_text: str
) -> tuple[Verdict, str]:
    """One call with the ``{`` pre-fill; returns the verdict and the raw reply text."""
    message = await client.create(
        env=inv.env,
        model=model,
        system=SYSTEM_PROMPT,
        messages=[
            {"role": "user", "content": user_text},
            {"role": "assistant", "content": "{"},
        ],
    )
    reply = "{" + text_of(message)
    return parse_verdict(reply), reply


class PromptRunner:
    def __init__(self, client: MessagesClient, default_model: str) -> None:
        self.client = client
        self.default_model = default_model

    async def run(self, handler: PromptHandler, inv: Invocation) -> HandlerResult:
        arguments = inv.stdin.decode("utf-8").rstrip("\n")
        text = render_prompt(handler.prompt, arguments)
        with trio.move_on_after(inv.timeout) as deadline:
            try:
                verdict, reply = await ask_verdict(
                    self.client, inv, handler.model or self.default_model, text
                )
            except (MessagesApiError, VerdictError) as exc:
                return failed_with(str(exc), exc)
        if deadline.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        output = verdict_output(inv.event_name, verdict, handler.continueOnBlock)
        return HandlerResult(exit_code=0, stdout=reply, json_output=output)

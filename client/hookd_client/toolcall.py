"""Run one tool call the way Claude Code does, with hookd deciding at each hook point.

For agent authors: instead of wiring PreToolUse and PostToolUse by hand,
call :func:`run_tool_call` (async, with either async client) or
:func:`run_tool_call_blocking` (with the blocking :class:`~hookd_client.client.Client`)::

    outcome = await run_tool_call(
        client, base=session_fields, tool_name="Bash", tool_input={"command": "ls"},
        tool=run_bash, permission=ask_user,
    )

The sequence (reference §4.4, §6):

1. **PreToolUse**.  ``continue: false`` stops here (the tool does not run,
   ``stop`` is set).  ``deny`` and ``defer`` end the call without running the
   tool.  ``updatedInput`` replaces the whole input.
2. **The caller's permission check** on the possibly rewritten input, told the
   hooks' verdict: ``"allow"`` (hooks vouched for it: skip prompting, but
   keep your own deny rules), ``"ask"`` (hooks want the user asked) or
   ``None`` (hooks had no opinion: the normal flow).  With no check given,
   ``ask`` is a denial — nobody is there to ask — and anything else runs.
3. **The tool.**  An exception is a failed call, not a crash of the agent.
4. **PostToolUse** (or **PostToolUseFailure**).  ``updatedToolOutput``
   replaces what the model sees; a ``block`` becomes feedback for the model;
   ``continue: false`` sets ``stop``.

Context from every step is collected on the outcome — ``additional_context``
(late context from earlier async hooks included, which each fire hands over
once) and ``feedback`` for the model, ``system_messages`` for the user —
because where it is shown is the agent's business.
"""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from hookd_client import protocol
from hookd_client._core import FailurePolicy, error_text
from hookd_client.client import Client
from hookd_client.results import FireResult

__all__ = [
    "AsyncHookClient",
    "PermissionCheck",
    "ToolCallOutcome",
    "run_tool_call",
    "run_tool_call_blocking",
]

ToolStatus = Literal["completed", "failed", "denied", "deferred", "stopped"]

PermissionCheck: TypeAlias = Callable[
    [str, dict[str, Any], str | None], bool | str | Awaitable[bool | str]
]
"""``check(tool_name, tool_input, hook_decision)``: True runs the tool; False or a
reason (str) denies it."""


class AsyncHookClient(Protocol):
    """What :func:`run_tool_call` needs: both async clients have it."""

    async def fire(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        on_unavailable: FailurePolicy | None = None,
    ) -> protocol.FireReply: ...


class ToolCallOutcome(msgspec.Struct, kw_only=True):
    """What happened to one tool call, and what the agent should show where."""

    status: ToolStatus
    """``completed``/``failed``: the tool ran (and raised, for failed);
    ``denied``/``deferred``/``stopped``: it did not run."""
    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]
    """The input the tool ran with (or would have): after any rewrite."""
    input_rewritten: bool = False
    output: Any = None
    """The tool's output as the model should see it: after ``updatedToolOutput``."""
    output_rewritten: bool = False
    error: str | None = None
    """The tool's error (``failed``)."""
    decision: str | None = None
    """The PreToolUse verdict: ``allow``, ``ask``, ``deny``, ``defer`` or None."""
    reason: str | None = None
    """Why the call was denied, deferred or stopped."""
    stop: bool = False
    """A hook said ``continue: false``: end the agent's loop after this call."""
    stop_reason: str | None = None
    additional_context: list[str] = msgspec.field(default_factory=list)
    """For the model, next to the tool result."""
    feedback: list[str] = msgspec.field(default_factory=list)
    """PostToolUse block reasons: for the model (the tool already ran)."""
    system_messages: list[str] = msgspec.field(default_factory=list)
    """For the user."""
    hook_errors: list[str] = msgspec.field(default_factory=list)
    """Non-blocking hook errors, one line each (a transcript notice, a log)."""
    pre: FireResult | None = None
    post: FireResult | None = None


# --- the steps, free of I/O so both drivers share them ----------------------------


def _payload(
    base: Mapping[str, Any], event: str, tool_name: str, tool_input: dict[str, Any], tid: str
) -> dict[str, Any]:
    return {
        **base,
        "hook_event_name": event,
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": tid,
    }


def _collect(outcome: ToolCallOutcome, result: FireResult) -> None:
    # Late context from earlier async hooks arrives on whichever fire comes next
    # and is then delivered (never offered again): it must reach the model too.
    outcome.additional_context += result.additional_context + result.async_results
    outcome.system_messages += result.system_messages
    outcome.hook_errors += result.errors
    if not result.continue_:
        outcome.stop = True
        outcome.stop_reason = result.stop_reason


def _after_pre(outcome: ToolCallOutcome, result: FireResult) -> bool:
    """Apply PreToolUse; True when the call goes on to the permission check."""
    outcome.pre = result
    _collect(outcome, result)
    outcome.decision = result.decision
    if outcome.stop:
        outcome.status = "stopped"
        outcome.reason = result.stop_reason
        return False
    if result.decision in ("deny", "defer"):
        outcome.status = "denied" if result.decision == "deny" else "deferred"
        outcome.reason = result.reason or next(iter(result.blocking_messages), None)
        return False
    if result.updated_input is not None:
        outcome.tool_input = result.updated_input
        outcome.input_rewritten = True
    return True


def _after_permission(outcome: ToolCallOutcome, verdict: bool | str | None) -> bool:
    """Apply the caller's check (None: no check given); True when the tool runs."""
    if verdict is None:
        if outcome.decision != "ask":
            return True
        verdict = "a hook asked for confirmation and no permission check was given"
    if verdict is True:
        return True
    outcome.status = "denied"
    outcome.reason = verdict if isinstance(verdict, str) else "denied by the permission check"
    return False


def _post_payload(
    outcome: ToolCallOutcome, base: Mapping[str, Any], started: float
) -> tuple[str, dict[str, Any]]:
    event = "PostToolUse" if outcome.status == "completed" else "PostToolUseFailure"
    payload = _payload(base, event, outcome.tool_name, outcome.tool_input, outcome.tool_use_id)
    if outcome.status == "completed":
        payload["tool_response"] = msgspec.to_builtins(outcome.output)
    else:
        payload["error"] = outcome.error or ""
        payload["is_interrupt"] = False
    payload["duration_ms"] = round((time.monotonic() - started) * 1000)
    return event, payload


def _after_post(outcome: ToolCallOutcome, result: FireResult) -> None:
    outcome.post = result
    _collect(outcome, result)
    outcome.feedback += result.blocking_messages
    for key in ("updatedToolOutput", "updatedMCPToolOutput"):
        if key in result.specific:
            outcome.output = result.specific[key]
            outcome.output_rewritten = True
            break


def _start(tool_name: str, tool_input: dict[str, Any], tool_use_id: str | None) -> ToolCallOutcome:
    return ToolCallOutcome(
        status="completed",
        tool_name=tool_name,
        tool_use_id=tool_use_id or f"toolu_{uuid.uuid4().hex[:24]}",
        tool_input=dict(tool_input),
    )


# --- the drivers ----------------------------------------------------------------------


async def run_tool_call(
    client: AsyncHookClient,
    *,
    base: Mapping[str, Any],
    tool_name: str,
    tool_input: dict[str, Any],
    tool: Callable[[dict[str, Any]], Any],
    permission: PermissionCheck | None = None,
    tool_use_id: str | None = None,
    on_unavailable: FailurePolicy | None = None,
) -> ToolCallOutcome:
    """Run one tool call through PreToolUse → permission → tool → PostToolUse[Failure].

    ``base`` holds the session's common input fields (``session_id``, ``cwd``,
    ``transcript_path``, ``permission_mode``…).  ``tool`` and ``permission``
    may be sync or async.  ``on_unavailable`` is passed to each fire.
    """
    outcome = _start(tool_name, tool_input, tool_use_id)
    pre = await client.fire(
        "PreToolUse",
        _payload(base, "PreToolUse", tool_name, outcome.tool_input, outcome.tool_use_id),
        on_unavailable=on_unavailable,
    )
    if not _after_pre(outcome, pre.result):
        return outcome
    verdict = None
    if permission is not None:
        verdict = await _resolve(permission(tool_name, outcome.tool_input, outcome.decision))
    if not _after_permission(outcome, verdict):
        return outcome
    started = time.monotonic()
    try:
        outcome.output = await _resolve(tool(outcome.tool_input))
    except Exception as exc:  # the tool's failure is PostToolUseFailure's input
        outcome.status = "failed"
        outcome.error = error_text(exc)
    event, payload = _post_payload(outcome, base, started)
    post = await client.fire(event, payload, on_unavailable=on_unavailable)
    _after_post(outcome, post.result)
    return outcome


def run_tool_call_blocking(
    client: Client,
    *,
    base: Mapping[str, Any],
    tool_name: str,
    tool_input: dict[str, Any],
    tool: Callable[[dict[str, Any]], Any],
    permission: Callable[[str, dict[str, Any], str | None], bool | str] | None = None,
    tool_use_id: str | None = None,
    on_unavailable: Literal["open", "closed", "raise"] = "raise",
) -> ToolCallOutcome:
    """:func:`run_tool_call` for the blocking client; ``tool`` and ``permission`` are sync."""
    outcome = _start(tool_name, tool_input, tool_use_id)
    pre = client.fire(
        "PreToolUse",
        _payload(base, "PreToolUse", tool_name, outcome.tool_input, outcome.tool_use_id),
        on_unavailable=on_unavailable,
    )
    if not _after_pre(outcome, pre.result):
        return outcome
    verdict = None
    if permission is not None:
        verdict = permission(tool_name, outcome.tool_input, outcome.decision)
    if not _after_permission(outcome, verdict):
        return outcome
    started = time.monotonic()
    try:
        outcome.output = tool(outcome.tool_input)
    except Exception as exc:  # the tool's failure is PostToolUseFailure's input
        outcome.status = "failed"
        outcome.error = error_text(exc)
    event, payload = _post_payload(outcome, base, started)
    post = client.fire(event, payload, on_unavailable=on_unavailable)
    _after_post(outcome, post.result)
    return outcome


async def _resolve(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value

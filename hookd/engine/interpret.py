"""Read one hook's result the way Claude Code 2.1.330 does (reference §4.1–4.3, §4.7).

Input: what the handler produced (exit code, stdout, stderr, or an already
decoded answer).  Output: a :class:`HookRun` with an outcome of
``success`` / ``blocking`` / ``non_blocking_error`` / ``cancelled`` and the
validated JSON answer, if any.  Aggregation is a separate step.

:func:`interpret` reads top to bottom in the reference's order: a timeout
(§4.7), a handler that failed to run, how stdout is read (§4.1), then the
exit code — signal, 2 (§4.3), other non-zero, 0 (§4.2) — each in a function
of its own that can be checked against its table row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from hookd.config.model import HookSpec
from hookd.config.schema import CallbackHandler, CommandHandler, Handler
from hookd.handlers.base import NO_JSON, HandlerResult
from hookd_client.output import (
    OutputSchemaError,
    ValidOutput,
    WrongEventNameError,
    parse_hook_output,
)
from hookd_client.results import HookRun

__all__ = [
    "BLOCKING_EVENTS",
    "EXIT2_IGNORED_EVENTS",
    "PLAIN_TEXT_CONTEXT_EVENTS",
    "interpret",
    "paused_run",
    "read_stdout",
]

BLOCKING_EVENTS = frozenset(
    {
        "PreToolUse",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Stop",
        "SubagentStop",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
        "PreCompact",
        "PostToolBatch",
        "Elicitation",
        "ElicitationResult",
        "WorktreeCreate",
        "PreModelSwitch",
        # Cannot undo the tool, but exit 2 is a "blocking error" whose stderr reaches the model.
        "PostToolUse",
        "PostToolUseFailure",
    }
)
"""Events on which exit code 2 (or ``decision: "block"``) blocks (reference §4.3)."""

EXIT2_IGNORED_EVENTS = frozenset(
    {
        "PermissionRequest",
        "Notification",
        "PermissionDenied",
        "InstructionsLoaded",
        "StopFailure",
        "WorktreeRemove",
        "MessageDisplay",
    }
)
"""Events where exit 2 has no effect at all."""

PLAIN_TEXT_CONTEXT_EVENTS = frozenset(
    {"UserPromptSubmit", "UserPromptExpansion", "SessionStart", "PostModelSwitch"}
)
"""Events whose plain (non-JSON) stdout on exit 0 becomes context for the model."""

ON_FAILURE_IGNORED_EVENTS = frozenset({"Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"})

MAX_CONTEXT_CHARS = 10_000

CALLBACK_TIMEOUT_BLOCKS = frozenset({"PreToolUse", "UserPromptSubmit", "UserPromptExpansion"})
"""Events on which a timed-out client callback blocks (reference §4.7, SDK callbacks)."""


def inv_timeout(spec: HookSpec) -> str:
    return f"{spec.timeout:g}s" if spec.timeout is not None else "its timeout"


class _Stdout(msgspec.Struct):
    """How stdout was read: as JSON (``data``), as plain text, or as an error."""

    kind: str  # "empty" | "plain" | "json" | "async" | "bad_json"
    data: Any = None
    text: str = ""


def read_stdout(stdout: str) -> _Stdout:
    """Reference §4.1: only text that starts with ``{`` is a JSON candidate.

    Not valid JSON: plain text when it does not end with ``}`` or is several
    JSON documents (JSON lines); otherwise "looks like JSON but is not" (2.1.248).
    """
    text = stdout.strip()
    if not text:
        return _Stdout("empty")
    if not text.startswith("{"):
        return _Stdout("plain", text=text)
    try:
        data = msgspec.json.decode(text)
    except (msgspec.DecodeError, UnicodeError, RecursionError) as exc:
        # UnicodeError: a lone surrogate (python hooks); RecursionError: nesting deeper
        # than the parser goes.  Claude Code's JSON.parse fails on both the same way.
        if not text.endswith("}") or _is_json_lines(text):
            return _Stdout("plain", text=text)
        why = "nested too deeply" if isinstance(exc, RecursionError) else None
        return _Stdout("bad_json", data=why, text=text)
    if isinstance(data, dict) and data.get("async") is True:
        return _Stdout("async", data=data, text=text)
    return _Stdout("json", data=data, text=text)


def _is_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        for line in lines:
            msgspec.json.decode(line)
    except (msgspec.DecodeError, UnicodeError, RecursionError):
        return False
    return True


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _cmd_label(spec: HookSpec) -> str:
    handler = spec.handler
    if isinstance(handler, CommandHandler):
        if handler.args is not None:
            return " ".join([handler.command, *handler.args])
        return handler.command
    return spec.label


def _block_reason(event: str, output: ValidOutput) -> str | None:
    """The reason a JSON answer gives for blocking, if it blocks (§4.2, §4.4 ``decision``)."""
    specific = output.hookSpecificOutput
    if (
        event in ("PreToolUse", "PreModelSwitch")
        and specific is not None
        and specific.permissionDecision == "deny"
    ):
        return specific.permissionDecisionReason or ""
    if output.decision == "block":
        return output.reason or ""
    return None


@dataclass(slots=True)
class _Reading:
    """One hook's result being read: the run built so far and what every rule needs."""

    run: HookRun
    event: str
    label: str
    stderr: str
    on_failure_block: bool
    """``onFailure: "block"`` applies to this hook on this event (§4.7)."""

    def failed(self, why: str) -> HookRun:
        """A hook that could not give an answer: fail open, or block under ``onFailure`` (§4.7)."""
        run = self.run
        if self.on_failure_block and self.event not in EXIT2_IGNORED_EVENTS:
            run.outcome = "blocking"
            detail = self.stderr.strip() or why
            run.block_message = (
                f'[{self.label}]: failed; blocking because onFailure is "block"\n{detail}'
            )
        else:
            run.outcome = "non_blocking_error"
        run.error = why
        return run

    def non_blocking(self, why: str, output: ValidOutput | None = None) -> HookRun:
        self.run.outcome = "non_blocking_error"
        self.run.error = why
        self.run.output = output
        return self.run


def _on_failure_blocks(handler: Handler, event: str) -> bool:
    """§4.7: ``onFailure: "block"`` is ignored for async hooks and on Stop, SubagentStop,
    TaskCompleted and TeammateIdle."""
    return (
        handler.onFailure == "block"
        and event not in ON_FAILURE_IGNORED_EVENTS
        and not (isinstance(handler, CommandHandler) and (handler.async_ or handler.asyncRewake))
    )


def interpret(spec: HookSpec, event: str, result: HandlerResult, duration_ms: float) -> HookRun:
    """One handler result → one :class:`HookRun` (§4.1–4.3, §4.7)."""
    run = HookRun(
        hook=spec.ref(),
        outcome="success",
        exit_code=result.exit_code,
        duration_ms=round(duration_ms, 3),
        stdout=result.stdout,
        stderr=result.stderr,
        truncated=result.truncated,
        timed_out=result.timed_out,
        pid=result.pid,
        daemon_fault=result.daemon_fault,
    )
    reading = _Reading(
        run=run,
        event=event,
        label=_cmd_label(spec),
        stderr=result.stderr,
        on_failure_block=_on_failure_blocks(spec.handler, event),
    )
    if result.timed_out:
        return _timed_out(reading, spec)
    if result.failure is not None:
        return reading.failed(result.failure)

    parsed = _decode_answer(spec.handler, result)
    if parsed.kind == "async":
        run.is_async = True
        return run
    try:
        output, schema_error = _validate(parsed, event)
    except WrongEventNameError as exc:
        return reading.non_blocking(str(exc))

    exit_code = result.exit_code
    if exit_code is not None and exit_code < 0:
        return reading.failed(f"killed by signal {-exit_code}")
    if exit_code == 2 or (event == "WorktreeCreate" and exit_code not in (0, None)):
        return _exit_two(reading, output)
    if exit_code not in (0, None):
        return _exit_other(reading, output, schema_error)
    return _exit_zero(reading, output, schema_error, parsed)


def paused_run(spec: HookSpec, event: str, reason: str, blocked: bool) -> HookRun | None:
    """The answer of a hook the circuit breaker paused: a block when it fails closed
    here, else None (the hook is skipped and ``reason`` becomes one of the event's errors).

    It fails closed when ``onFailure: "block"`` applies to it on this event (§4.7,
    :func:`_on_failure_blocks`), or when the failures that paused it blocked
    (``blocked``: a timed-out PreModelSwitch hook or SDK callback on the events
    where a callback timeout blocks).  A pause must never turn a guard that fails
    closed into one that fails open (issue 28: 39 calls blocked, then 317 allowed)."""
    by_policy = _on_failure_blocks(spec.handler, event) and event not in EXIT2_IGNORED_EVENTS
    if not (by_policy or blocked):
        return None
    why = 'onFailure is "block"' if by_policy else "each of those failures blocked"
    return HookRun(
        hook=spec.ref(),
        outcome="blocking",
        exit_code=None,
        error=reason,
        block_message=f"[{_cmd_label(spec)}]: {reason}; blocking because {why}",
        paused=True,
    )


def _timed_out(reading: _Reading, spec: HookSpec) -> HookRun:
    """§4.7: a timed-out hook fails open — except under ``onFailure: "block"``, on
    PreModelSwitch, and for an SDK callback on PreToolUse / UserPromptSubmit /
    UserPromptExpansion (2.1.208); on Post* and Stop events a callback timeout is plain."""
    run = reading.run
    run.outcome = "cancelled"
    run.error = "timed out"
    if reading.on_failure_block:
        return reading.failed(f"timed out after {spec.timeout or 0:g}s")
    if reading.event == "PreModelSwitch":
        run.outcome = "blocking"
        run.block_message = f"[{reading.label}]: timed out"
    elif isinstance(spec.handler, CallbackHandler) and reading.event in CALLBACK_TIMEOUT_BLOCKS:
        run.outcome = "blocking"
        run.block_message = f"[{reading.label}]: callback did not answer within {inv_timeout(spec)}"
    return run


def _decode_answer(handler: Handler, result: HandlerResult) -> _Stdout:
    """The answer as §4.1 reads it: already decoded (python, callback, http — a
    string answer is read like stdout) or from a command's stdout, unless the
    command hook asked for its stdout not to be parsed."""
    if result.json_output is not NO_JSON:
        answer = result.json_output
        if answer is None:
            return _Stdout("empty")
        if isinstance(answer, str):
            return read_stdout(answer)
        return _Stdout("json", data=answer)
    if isinstance(handler, CommandHandler) and not handler.parse_result:
        return _Stdout("empty")
    return read_stdout(result.stdout)


def _validate(parsed: _Stdout, event: str) -> tuple[ValidOutput | None, str | None]:
    """§4.1 step 3: schema-valid JSON, or the schema error that replaces it.

    A wrong ``hookEventName`` raises :class:`WrongEventNameError`: Claude Code
    discards the whole output whatever the exit code (observed ``pre_wrong_event_name``).
    """
    if parsed.kind == "json":
        try:
            return parse_hook_output(parsed.data, event), None
        except WrongEventNameError:
            raise
        except OutputSchemaError as exc:
            return None, str(exc)
    if parsed.kind == "bad_json":
        why = f" ({parsed.data})" if parsed.data else ""
        return None, f"hook output looks like a JSON object but is not valid JSON{why}"
    return None, None


def _exit_two(reading: _Reading, output: ValidOutput | None) -> HookRun:
    """§4.2–4.3: exit 2 blocks on the events that can block, whatever the JSON says;
    the message is the JSON's block reason, else ``[cmd]: stderr``.  Ignored on the
    events of the table's "ignored" rows; a plain hook error elsewhere.
    (WorktreeCreate: any non-zero exit fails creation, so it comes here too.)"""
    event = reading.event
    if event in EXIT2_IGNORED_EVENTS:
        return reading.non_blocking("exit code 2 has no effect on this event", output)
    if event not in BLOCKING_EVENTS:
        first = _first_line(reading.stderr) or "No stderr output"
        return reading.non_blocking(f"exit code 2: {first}", output)
    run = reading.run
    run.outcome = "blocking"
    reason = _block_reason(event, output) if output is not None else None
    if reason:
        run.block_message = reason
    else:
        run.block_message = f"[{reading.label}]: {reading.stderr.strip() or 'No stderr output'}"
    if event not in ("Elicitation", "ElicitationResult"):
        run.output = output  # an exit-2 Elicitation hook's hookSpecificOutput is ignored
    return run


def _exit_other(reading: _Reading, output: ValidOutput | None, schema_error: str | None) -> HookRun:
    """§4.2 "Other non-zero": schema-valid JSON decides and the exit code is ignored;
    otherwise a non-blocking error naming the first stderr line (or a block under
    ``onFailure: "block"``, §4.7)."""
    if output is not None and not reading.on_failure_block:
        return _apply_json(reading.run, reading.event, output)
    first = _first_line(reading.stderr) or "No stderr output"
    why = f"Failed with non-blocking status code: {first}"
    if schema_error:
        why = f"{why} ({schema_error})"
    return reading.failed(why)


def _exit_zero(
    reading: _Reading, output: ValidOutput | None, schema_error: str | None, parsed: _Stdout
) -> HookRun:
    """§4.2 "Exit 0": JSON decides; a schema error is a non-blocking error; plain
    stdout is context only on the events of :data:`PLAIN_TEXT_CONTEXT_EVENTS`."""
    if schema_error is not None:
        if reading.on_failure_block:
            return reading.failed(schema_error)
        return reading.non_blocking(schema_error)
    if output is not None:
        return _apply_json(reading.run, reading.event, output)
    if parsed.kind == "plain" and reading.event in PLAIN_TEXT_CONTEXT_EVENTS:
        reading.run.plain_text = parsed.text
    return reading.run


def _apply_json(run: HookRun, event: str, output: ValidOutput) -> HookRun:
    run.output = output
    reason = _block_reason(event, output)
    if reason is not None and event in BLOCKING_EVENTS:
        run.outcome = "blocking"
        run.block_message = reason
    return run

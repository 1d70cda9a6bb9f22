"""Read one hook's result the way Claude Code 2.1.330 does (reference §4.1–4.3, §4.7).

Input: what the handler produced (exit code, stdout, stderr, or an already
decoded answer).  Output: a :class:`HookRun` with an outcome of
``success`` / ``blocking`` / ``non_blocking_error`` / ``cancelled`` and the
validated JSON answer, if any.  Aggregation is a separate step.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hookd.config.model import HookSpec
from hookd.config.schema import CallbackHandler, CommandHandler, handler_label
from hookd.handlers.base import NO_JSON, HandlerResult
from hookd_client.output import OutputSchemaError, WrongEventNameError, parse_hook_output
from hookd_client.results import HookRun

__all__ = [
    "BLOCKING_EVENTS",
    "EXIT2_IGNORED_EVENTS",
    "PLAIN_TEXT_CONTEXT_EVENTS",
    "interpret",
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
    except msgspec.DecodeError:
        if not text.endswith("}") or _is_json_lines(text):
            return _Stdout("plain", text=text)
        return _Stdout("bad_json", text=text)
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
    except msgspec.DecodeError:
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
    return handler_label(handler)


def _block_reason(event: str, output: dict[str, Any]) -> str | None:
    """The reason a JSON answer gives for blocking, if it blocks."""
    specific = output.get("hookSpecificOutput") or {}
    if event in ("PreToolUse", "PreModelSwitch"):
        if specific.get("permissionDecision") == "deny":
            return str(specific.get("permissionDecisionReason") or "")
    if output.get("decision") == "block":
        return str(output.get("reason") or "")
    return None


def interpret(spec: HookSpec, event: str, result: HandlerResult, duration_ms: float) -> HookRun:
    handler = spec.handler
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
    )
    on_failure_block = (
        handler.onFailure == "block"
        and event not in ON_FAILURE_IGNORED_EVENTS
        and not (isinstance(handler, CommandHandler) and (handler.async_ or handler.asyncRewake))
    )
    label = _cmd_label(spec)

    def failed(why: str) -> HookRun:
        if on_failure_block and event not in EXIT2_IGNORED_EVENTS:
            run.outcome = "blocking"
            detail = result.stderr.strip() or why
            run.block_message = (
                f'[{label}]: failed; blocking because onFailure is "block"\n{detail}'
            )
        else:
            run.outcome = "non_blocking_error"
        run.error = why
        return run

    if result.timed_out:
        run.outcome = "cancelled"
        run.error = "timed out"
        if on_failure_block:
            return failed(f"timed out after {spec.timeout or 0:g}s")
        if event == "PreModelSwitch":  # a timed-out PreModelSwitch hook blocks the switch
            run.outcome = "blocking"
            run.block_message = f"[{label}]: timed out"
        elif isinstance(handler, CallbackHandler) and event in CALLBACK_TIMEOUT_BLOCKS:
            # §4.7 (2.1.208): an SDK callback that times out blocks the tool call or
            # the prompt; on Post* and Stop events it is a plain timeout.
            run.outcome = "blocking"
            run.block_message = f"[{label}]: callback did not answer within {inv_timeout(spec)}"
        return run
    if result.failure is not None:
        return failed(result.failure)

    # Decode the answer: already decoded (python/callback/http) or from stdout.
    parse_json = not (isinstance(handler, CommandHandler) and not handler.parse_result)
    if result.json_output is not NO_JSON:
        answer = result.json_output
        parsed = _Stdout("empty") if answer is None else _Stdout("json", data=answer)
        if isinstance(answer, str):
            parsed = read_stdout(answer)
    elif parse_json:
        parsed = read_stdout(result.stdout)
    else:
        parsed = _Stdout("empty")

    output: dict[str, Any] | None = None
    schema_error: str | None = None
    if parsed.kind == "async":
        run.is_async = True
        return run
    if parsed.kind == "json":
        try:
            universal, specific = parse_hook_output(parsed.data, event)
        except WrongEventNameError as exc:
            run.outcome = "non_blocking_error"
            run.error = str(exc)
            return run
        except OutputSchemaError as exc:
            schema_error = str(exc)
        else:
            output = msgspec.to_builtins(universal)
            output.pop("hookSpecificOutput", None)
            if specific is not None:
                output["hookSpecificOutput"] = specific
    elif parsed.kind == "bad_json":
        schema_error = "hook output looks like a JSON object but is not valid JSON"

    exit_code = result.exit_code
    if exit_code is not None and exit_code < 0:
        return failed(f"killed by signal {-exit_code}")

    if exit_code == 2 or (event == "WorktreeCreate" and exit_code not in (0, None)):
        if event in EXIT2_IGNORED_EVENTS:
            run.outcome = "non_blocking_error"
            run.error = "exit code 2 has no effect on this event"
            run.output = output
            return run
        if event in BLOCKING_EVENTS:
            run.outcome = "blocking"
            reason = _block_reason(event, output) if output else None
            if reason:
                run.block_message = reason
            else:
                stderr = result.stderr.strip()
                run.block_message = f"[{label}]: {stderr or 'No stderr output'}"
            if event not in ("Elicitation", "ElicitationResult"):
                run.output = output
            return run
        run.outcome = "non_blocking_error"
        run.error = f"exit code 2: {_first_line(result.stderr) or 'No stderr output'}"
        run.output = output
        return run

    if exit_code not in (0, None):
        if output is not None and not on_failure_block:
            run.output = output  # schema-valid JSON decides; the exit code is ignored
            return _apply_json(run, event, output)
        first = _first_line(result.stderr) or "No stderr output"
        why = f"Failed with non-blocking status code: {first}"
        if schema_error:
            why = f"{why} ({schema_error})"
        return failed(why)

    # exit 0
    if schema_error is not None:
        if on_failure_block:
            return failed(schema_error)
        run.outcome = "non_blocking_error"
        run.error = schema_error
        return run
    if output is not None:
        run.output = output
        return _apply_json(run, event, output)
    if parsed.kind == "plain" and event in PLAIN_TEXT_CONTEXT_EVENTS:
        run.plain_text = parsed.text
    return run


def _apply_json(run: HookRun, event: str, output: dict[str, Any]) -> HookRun:
    reason = _block_reason(event, output)
    if reason is not None and event in BLOCKING_EVENTS:
        run.outcome = "blocking"
        run.block_message = reason
    return run

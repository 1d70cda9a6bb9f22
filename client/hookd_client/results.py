"""The engine's answers: one :class:`HookRun` per hook, one :class:`FireResult` per event.

These cross the socket, so they are Structs in the client package.  Field
names follow Claude Code's vocabulary (outcome values are those of its
``hook_response`` stream messages and of the seed design).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from hookd_client.output import ValidOutput

__all__ = ["FireResult", "HookRef", "HookRun", "Outcome"]

Outcome = Literal["success", "blocking", "non_blocking_error", "cancelled"]


class HookRef(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):
    """Where a hook came from, for reports: status, tail, audit, ``--format json``."""

    name: str
    """A readable label: the command, URL, callable or prompt (shortened)."""
    type: str
    scope: str
    source: str
    """The file (or registration) that declared the hook."""
    event: str
    matcher: str | None = None
    group: int = 0
    index: int = 0


class HookRun(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one hook did and how hookd read it."""

    hook: HookRef
    outcome: Outcome
    exit_code: int | None = None
    duration_ms: float = 0.0
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    """stdout or stderr passed the byte cap; the rest was drained and dropped."""
    timed_out: bool = False
    error: str | None = None
    """Why a non_blocking_error or cancelled outcome happened, in words."""
    output: ValidOutput | None = None
    """The validated JSON answer (universal fields plus hookSpecificOutput)."""
    plain_text: str | None = None
    """stdout that was not JSON; context on the events that take plain text."""
    block_message: str | None = None
    """The message a block carries (exit-2 stderr as ``[cmd]: text`` or the JSON reason)."""
    is_async: bool = False
    """The hook runs in the background; its result is delivered later."""
    pid: int | None = None
    daemon_fault: bool = False
    """The daemon could not start the hook for want of processes, memory or descriptors
    (EAGAIN, ENOMEM, EMFILE, ENFILE): the daemon's failure, not the hook's, so the
    circuit breaker does not count it (``error`` says what happened)."""
    paused: bool = False
    """The hook did not run: the circuit breaker paused it, and because its failures
    blocked (fail-closed) this run stands for it with a block (``block_message``)."""
    launch: str | None = None
    """How a command hook's process started: ``warm`` (a warm Python spare of its own
    interpreter) or ``cold: <why not warm>``; None for other hook kinds."""


class FireResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The aggregated answer for one event (reference §6, hookd's deterministic rules).

    ``decision`` is the event's verdict in Claude Code's words: for PreToolUse
    and PreModelSwitch a ``permissionDecision`` (``deny`` > ``defer`` > ``ask`` >
    ``allow``); for PermissionRequest a ``behavior``; for blocking events
    ``"block"``.  ``blocking_messages`` keeps one message per blocking hook, in
    configuration order.
    """

    event: str
    continue_: bool = msgspec.field(default=True, name="continue")
    stop_reason: str | None = None
    decision: str | None = None
    reason: str | None = None
    blocking_messages: list[str] = msgspec.field(default_factory=list)
    updated_input: dict[str, Any] | None = None
    additional_context: list[str] = msgspec.field(default_factory=list)
    plain_context: list[str] = msgspec.field(default_factory=list)
    """Plain stdout that became context (UserPromptSubmit, SessionStart, …)."""
    system_messages: list[str] = msgspec.field(default_factory=list)
    specific: dict[str, Any] = msgspec.field(default_factory=dict)
    """Other hookSpecificOutput fields (sessionTitle, watchPaths, updatedToolOutput, …)."""
    errors: list[str] = msgspec.field(default_factory=list)
    """Non-blocking errors, one line each: ``<hook>: <why>``."""
    hooks: list[HookRun] = msgspec.field(default_factory=list)
    generation: int = 0
    """The config generation the event ran on."""
    async_results: list[str] = msgspec.field(default_factory=list)
    """Context delivered late by async hooks of earlier events (daemon only)."""

    @property
    def blocked(self) -> bool:
        return self.decision in ("block", "deny")

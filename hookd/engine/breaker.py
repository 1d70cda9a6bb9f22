"""The circuit breaker: a hook that keeps failing is paused instead of failing every event.

A hook that times out or errors on every call costs each event its full
timeout and floods the agent with the same error.  clooks pauses a hook after
3 consecutive failures; hookd pauses one after ``threshold`` (default 5)
consecutive failures and lets it run again after ``cooldown`` seconds (default
60) or when an operator resets it (``hookctl reset``).

What counts as a failure: a run whose outcome is ``non_blocking_error`` or
``cancelled`` (timeouts), or a ``blocking`` run that blocked *because it
failed* (``onFailure: "block"``, which sets ``error``).  A hook that blocks
by design (exit 2, ``decision: "block"``) is doing its job and resets the
count, as does any success.

After the cool-down the breaker is *half open*: the hook runs again, one
success closes the breaker, one failure pauses it again at once (the count
is still at the threshold), so a still-broken hook costs one run per
cool-down rather than ``threshold`` runs.

The breaker owns no clock of its own (``clock`` is injectable) and never
awaits: it is consulted synchronously while an event selects its hooks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

import msgspec

from hookd.config.model import HookSpec, Scope
from hookd_client.results import HookRun

__all__ = ["BreakerState", "CircuitBreaker", "breaker_key", "is_failure"]


class BreakerState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One hook's breaker as ``hookctl status`` shows it."""

    key: str
    hook: str
    failures: int
    paused: bool
    resumes_in: float | None = None
    """Seconds until the pause ends (None when not paused)."""
    last_error: str | None = None


@dataclass(slots=True)
class _Entry:
    hook: str
    failures: int = 0
    paused_until: float | None = None
    last_error: str | None = None


def breaker_key(spec: HookSpec, session_id: str) -> str:
    """The identity a breaker counts against.

    Settings hooks are shared by every session, so one key per hook
    definition (source, event, position).  Session and skill hooks belong to
    one session (a client's callback that fails in one agent says nothing
    about another agent's), so their key carries the session.
    """
    base = spec.hook_id
    if spec.scope in (Scope.SESSION, Scope.SKILL):
        return f"{session_id}/{base}"
    return base


def is_failure(run: HookRun) -> bool:
    """True for a run the breaker counts; see the module docstring."""
    if run.is_async:
        return False
    if run.outcome in ("non_blocking_error", "cancelled"):
        return True
    return run.outcome == "blocking" and run.error is not None


class CircuitBreaker:
    def __init__(
        self,
        threshold: int = 5,
        cooldown: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown = cooldown
        self.clock = clock
        self._entries: dict[str, _Entry] = {}

    @property
    def enabled(self) -> bool:
        return self.threshold > 0

    def paused(self, key: str) -> str | None:
        """Why the hook is paused now, or None when it may run."""
        if not self.enabled:
            return None
        entry = self._entries.get(key)
        if entry is None or entry.paused_until is None:
            return None
        left = entry.paused_until - self.clock()
        if left <= 0:
            entry.paused_until = None  # half open: the next run decides
            return None
        return (
            f"paused by the circuit breaker after {entry.failures} consecutive failures "
            f"(last: {entry.last_error or 'unknown'}); resumes in {left:.0f}s "
            "or with `hookctl reset`"
        )

    def skip_reason(self, spec: HookSpec, session_id: str) -> str | None:
        """The engine's gate: why ``spec`` is skipped for this session (paused), or None."""
        return self.paused(breaker_key(spec, session_id))

    def record(self, key: str, hook: str, run: HookRun) -> str | None:
        """Count one finished run; returns ``"paused"`` when this run paused the hook."""
        if not self.enabled or run.is_async:
            return None
        if not is_failure(run):
            self._entries.pop(key, None)
            return None
        entry = self._entries.setdefault(key, _Entry(hook))
        entry.failures += 1
        entry.last_error = run.error or run.outcome
        if entry.failures >= self.threshold and entry.paused_until is None:
            entry.paused_until = self.clock() + self.cooldown
            return "paused"
        return None

    def reset(self, pattern: str | None = None) -> list[str]:
        """Close breakers: all of them, or those whose key or hook name contains ``pattern``."""
        keys = [
            k
            for k, e in self._entries.items()
            if pattern is None or pattern in k or pattern in e.hook
        ]
        for key in keys:
            del self._entries[key]
        return sorted(keys)

    def retain(self, live: Collection[str]) -> list[str]:
        """Forget the breakers of hooks that no longer exist; returns the keys dropped.

        A key names one hook definition (and, for session hooks, one session):
        an edited hook is a new definition, an ended session takes its hooks
        along.  Without this the table would keep every definition that ever
        failed — status once showed 24 breakers for a config of one hook.
        """
        gone = [k for k in self._entries if k not in live]
        for key in gone:
            del self._entries[key]
        return gone

    def states(self) -> list[BreakerState]:
        now = self.clock()
        out = []
        for key, entry in sorted(self._entries.items()):
            paused = entry.paused_until is not None and entry.paused_until > now
            out.append(
                BreakerState(
                    key=key,
                    hook=entry.hook,
                    failures=entry.failures,
                    paused=paused,
                    resumes_in=round(entry.paused_until - now, 1)
                    if paused and entry.paused_until is not None
                    else None,
                    last_error=entry.last_error,
                )
            )
        return out

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
count, as does any success.  A run the daemon could not start for want of
processes, memory or descriptors (``HookRun.daemon_fault``) neither counts
nor resets: it says nothing about the hook.  Nor does any failure while the
daemon is *short of resources* — from such a run until ``cooldown`` seconds
after the last one: a hook that did start then may fail for the same reason
(its shell cannot fork its pipeline, it is starved), and the daemon cannot
tell that from the hook's own fault.

**One breaker per hook and session** (issue 28): a count is kept per
(session, hook definition), never shared between sessions.  With one breaker
per hook for every session, a fork bomb in one session exhausted the user's
processes, an unrelated session's guard "could not start" five times, and the
shared breaker switched that guard off for everyone.  Now what one session's
runs do pauses the hook for that session only.

**A paused fail-closed hook keeps blocking.**  :class:`Pause` says whether the
failures that paused the hook were blocks (``onFailure: "block"``, a
timed-out PreModelSwitch hook or SDK callback); the engine then answers for
the paused hook with a block (:func:`hookd.engine.interpret.paused_run`)
instead of skipping it, so a pause saves the hook's cost but never turns
"block" into "allow".

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

from hookd.config.model import HookSpec
from hookd_client.results import HookRun

__all__ = ["BreakerState", "CircuitBreaker", "Pause", "breaker_key", "is_failure"]


class BreakerState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One hook's breaker in one session, as ``hookctl status`` shows it."""

    key: str
    hook: str
    failures: int
    paused: bool
    resumes_in: float | None = None
    """Seconds until the pause ends (None when not paused)."""
    last_error: str | None = None
    session: str = ""
    """The session whose runs the count is of (the breaker pauses the hook there only)."""
    blocks: bool = False
    """The failures blocked (fail-closed): while paused the hook answers with a block."""


@dataclass(frozen=True, slots=True)
class Pause:
    """Why a hook is paused for a session, and how it answers meanwhile."""

    reason: str
    blocks: bool
    """The last failure blocked (the hook fails closed here): the pause blocks too."""


@dataclass(slots=True)
class _Entry:
    hook: str
    session: str
    hook_id: str
    failures: int = 0
    paused_until: float | None = None
    last_error: str | None = None
    blocks: bool = False


def breaker_key(spec: HookSpec, session_id: str) -> str:
    """The identity a breaker counts against, as status and ``hookctl reset`` show it:
    the session, then the hook definition (source, event, matcher, handler content)."""
    return f"{session_id}/{spec.hook_id}"


def is_failure(run: HookRun) -> bool:
    """True for a run the breaker counts; see the module docstring."""
    if run.is_async or run.daemon_fault:
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
        self._short_until = float("-inf")
        """Failures are not counted before this time: the daemon was short of resources."""

    @property
    def enabled(self) -> bool:
        return self.threshold > 0

    @property
    def short_of_resources(self) -> bool:
        """A run could not start for want of resources within the last ``cooldown`` seconds."""
        return self.clock() < self._short_until

    def paused(self, key: str) -> Pause | None:
        """Why the hook is paused now (and whether it blocks meanwhile), or None when it may run."""
        if not self.enabled:
            return None
        entry = self._entries.get(key)
        if entry is None or entry.paused_until is None:
            return None
        left = entry.paused_until - self.clock()
        if left <= 0:
            entry.paused_until = None  # half open: the next run decides
            return None
        reason = (
            f"paused by the circuit breaker after {entry.failures} consecutive failures "
            f"in this session (last: {entry.last_error or 'unknown'}); resumes in {left:.0f}s "
            "or with `hookctl reset`"
        )
        return Pause(reason, entry.blocks)

    def pause(self, spec: HookSpec, session_id: str) -> Pause | None:
        """The engine's gate: ``spec``'s pause in this session, or None when it runs."""
        if not self._entries:  # the usual case: nothing failing anywhere
            return None
        return self.paused(breaker_key(spec, session_id))

    def skip_reason(self, spec: HookSpec, session_id: str) -> str | None:
        """Why ``spec`` does not run for this session (paused), or None."""
        pause = self.pause(spec, session_id)
        return pause.reason if pause is not None else None

    def record(self, spec: HookSpec, session_id: str, run: HookRun) -> str | None:
        """Count one finished run; returns ``"paused"`` when this run paused the hook."""
        if not self.enabled or run.is_async:
            return None
        if run.daemon_fault:
            self._short_until = self.clock() + self.cooldown
            return None
        key = breaker_key(spec, session_id)
        if not is_failure(run):
            self._entries.pop(key, None)
            return None
        if self.clock() < self._short_until:
            return None  # the daemon is short of resources: not the hook's failure to count
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry(run.hook.name, session_id, spec.hook_id)
        entry.failures += 1
        entry.last_error = run.error or run.outcome
        entry.blocks = run.outcome == "blocking"
        if entry.failures >= self.threshold and entry.paused_until is None:
            entry.paused_until = self.clock() + self.cooldown
            return "paused"
        return None

    def reset(self, pattern: str | None = None) -> list[str]:
        """Close breakers: all of them, or those whose key or hook name contains ``pattern``
        (the key starts with the session id, so a session's id resets its breakers)."""
        keys = [
            k
            for k, e in self._entries.items()
            if pattern is None or pattern in k or pattern in e.hook
        ]
        for key in keys:
            del self._entries[key]
        return sorted(keys)

    def retain(self, hooks: Collection[str], sessions: Collection[str]) -> list[str]:
        """Forget breakers whose hook or session no longer exists; returns the keys dropped.

        ``hooks``: the ``hook_id`` of every configured hook (an edited hook is a
        new definition); ``sessions``: the live sessions (an ended one takes its
        breakers along).  Without this the table would keep every definition
        that ever failed — status once showed 24 breakers for a config of one hook.
        """
        gone = [
            k
            for k, e in self._entries.items()
            if e.hook_id not in hooks or e.session not in sessions
        ]
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
                    session=entry.session,
                    blocks=entry.blocks,
                )
            )
        return out

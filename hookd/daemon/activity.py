"""What the daemon is doing right now and has just done: the live view status and tail read.

The event pipeline writes here (a hook started, a hook finished, an event
began and ended); ``hookctl status`` and ``hookctl tail`` read from here; the
server waits here for in-flight events at shutdown.  It is one small object
below all three, so none of them needs the others to see it.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Any

import msgspec
import trio

from hookd.daemon.async_store import AsyncEntry
from hookd.handlers.base import Invocation
from hookd_client.results import HookRef, HookRun

__all__ = ["Activity", "RunningHook", "RunningHookInfo"]


@dataclass(slots=True)
class RunningHook:
    ref: HookRef
    session_id: str
    started: float
    timeout: float
    invocation: Invocation


class RunningHookInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One hook running now, as ``hookctl status`` shows it."""

    hook: str
    event: str
    source: str
    session_id: str
    pid: int | None
    elapsed: float
    timeout: float


class Activity:
    """Counters, hooks running now, the recent runs ring and its followers, events in flight."""

    def __init__(self, tail_buffer: int) -> None:
        self.counters: collections.Counter[str] = collections.Counter()
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=tail_buffer)
        self._running: dict[int, RunningHook] = {}
        self._followers: set[trio.MemorySendChannel[dict[str, Any]]] = set()
        self.in_flight = 0
        """Events whose hooks are running (events answered inline never count)."""
        self._idle = trio.Event()
        self._idle.set()

    # --- events in flight ------------------------------------------------------------

    def event_started(self) -> None:
        self.in_flight += 1
        if self._idle.is_set():
            self._idle = trio.Event()

    def event_finished(self) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Until no event is running hooks (shutdown's grace waits on this)."""
        await self._idle.wait()

    # --- hook runs ---------------------------------------------------------------------

    def hook_started(self, ref: HookRef, session_id: str, invocation: Invocation) -> None:
        # Keyed by the run (its invocation), not the hook: one hook may run for
        # several sessions at once, and its HookRef is one object made at load.
        self._running[id(invocation)] = RunningHook(
            ref, session_id, time.time(), invocation.timeout, invocation
        )

    def hook_finished(
        self,
        ref: HookRef,
        session_id: str,
        run: HookRun | None,
        invocation: Invocation,
        agent: str = "",
    ) -> None:
        """Drop the run from the running view; count and publish it (if it ran)."""
        self._running.pop(id(invocation), None)
        if run is None:
            return
        self.counters[f"outcome.{run.outcome}"] += 1
        self._publish(
            {
                "time": time.time(),
                "session_id": session_id,
                "agent": agent,
                "event": ref.event,
                "hook": ref.name,
                "source": ref.source,
                "outcome": run.outcome,
                "exit_code": run.exit_code,
                "duration_ms": run.duration_ms,
            }
        )

    def async_finished(self, entry: AsyncEntry) -> None:
        """An async hook's run ended (the async runner calls this): it goes to ``tail`` too.

        The event that started it was answered long ago (its own record says the
        hook went async); this record is the run itself, marked ``async``.
        """
        if entry.state == "finished":
            outcome = "success" if entry.exit_code == 0 else "non_blocking_error"
            if entry.rewake:
                outcome = "blocking"
        else:
            outcome = "cancelled"
        started = entry.start_time or entry.queued_time
        self._publish(
            {
                "time": time.time(),
                "session_id": entry.session_id,
                "event": entry.hook_event,
                "hook": entry.hook_name,
                "source": entry.source,
                "outcome": outcome,
                "exit_code": entry.exit_code,
                "duration_ms": round(((entry.end_time or started) - started) * 1000, 3),
                "async": True,
                "state": entry.state,
            }
        )

    def _publish(self, record: dict[str, Any]) -> None:
        self.recent.append(record)
        for follower in list(self._followers):
            try:
                follower.send_nowait(record)
            except trio.WouldBlock:
                pass  # a slow tail reader misses records rather than slowing hooks
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self._followers.discard(follower)

    def running_hooks(self) -> list[RunningHookInfo]:
        now = time.time()
        return [
            RunningHookInfo(
                hook=r.ref.name,
                event=r.ref.event,
                source=r.ref.source,
                session_id=r.session_id,
                pid=r.invocation.pid,
                elapsed=round(now - r.started, 3),
                timeout=r.timeout,
            )
            for r in self._running.values()
        ]

    # --- tail followers --------------------------------------------------------------

    def follow(self, channel: trio.MemorySendChannel[dict[str, Any]]) -> None:
        """Send every new run record to ``channel`` (dropped when it is full)."""
        self._followers.add(channel)

    def unfollow(self, channel: trio.MemorySendChannel[dict[str, Any]]) -> None:
        self._followers.discard(channel)

    @property
    def following(self) -> int:
        """How many tail readers follow the runs now."""
        return len(self._followers)

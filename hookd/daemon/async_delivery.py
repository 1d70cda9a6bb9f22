"""Finished async results, each handed to exactly one reader.

The runner (:mod:`hookd.daemon.async_runner`) offers every run that ends;
this module owns what happens next, with one index: the finished, undelivered
results of each session, oldest first.  A result leaves the index in exactly
one of three ways:

* **taken** (:meth:`AsyncDelivery.take`) by ``check_async`` (:meth:`collect`)
  or by the session's next reply that can carry it (:meth:`attach`);
* **pushed** to a connection that subscribed (``subscribe_async``) — only an
  ``asyncRewake`` wake-up, at the moment it finishes or when the subscription
  arrives;
* **dropped** by retention (age, count per session), reported as expired.

Why each result is delivered at most once: every one of those paths removes
the entry from the index, marks it and journals the mark in one synchronous
stretch — no ``await`` anywhere in this module — and trio runs one task at a
time, so two requests racing for a session's results cannot both see one
entry.  A push marks only what the subscriber accepted (``send`` returned
True), and what a subscriber refuses stays indexed for the others.

Why at least once (while retention allows): a finished result is indexed
before :meth:`offer` returns unless a push took it; the index is left only
through the three paths above; and the journal carries every finished result
and every delivery mark (:mod:`hookd.daemon.async_store`), so after a restart
:meth:`restore` indexes exactly the results finished but never marked
delivered.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from hookd.daemon.async_store import AsyncEntry, AsyncStore
from hookd_client.results import FireResult

__all__ = ["AsyncDelivery", "Retention"]

log = structlog.get_logger("hookd.async")


@dataclass(frozen=True)
class Retention:
    """How long, and how many, undelivered results a session keeps (from ``AsyncLimits``,
    whose values are the daemon's ``async_retention_*`` settings)."""

    seconds: float
    per_session: int


@dataclass
class _Subscriber:
    agent_pid: int | None
    session_id: str | None
    send: Callable[[AsyncEntry], bool]
    """Queue a push; False when the subscriber is gone."""
    alive: Callable[[], bool]

    def wants(self, entry: AsyncEntry) -> bool:
        if self.session_id is not None:
            return self.session_id == entry.session_id
        return self.agent_pid is not None and self.agent_pid == entry.agent_pid


class AsyncDelivery:
    """The one index of finished, undelivered results, and every way out of it.

    ``journal(fn, *args)`` writes to the async journal without raising (the
    runner's writer); ``settled(entries)`` is told of every entry that left the
    index — delivered (``response_attachment_sent``) or dropped — so that the
    runner's views can keep or forget it.
    """

    def __init__(
        self,
        retention: Retention,
        journal: Callable[..., None],
        settled: Callable[[list[AsyncEntry]], None],
        counters: collections.Counter[str],
        store: AsyncStore,
    ) -> None:
        self.retention = retention
        self._journal = journal
        self._settled = settled
        self._counters = counters
        self._store = store
        self._waiting: dict[str, dict[str, AsyncEntry]] = {}
        """Finished, undelivered results per session, oldest first."""
        self._subscribers: list[_Subscriber] = []

    # --- in ------------------------------------------------------------------------

    def offer(self, entry: AsyncEntry) -> None:
        """A run ended: push a wake-up to a subscriber, or index it for the next taker."""
        if entry.rewake and self._push(entry):
            self._delivered([entry])
            return
        self._waiting.setdefault(entry.session_id, {})[entry.process_id] = entry
        self._prune_session(entry.session_id, time.time())

    def restore(self, entry: AsyncEntry) -> None:
        """A result the last daemon left undelivered (from the journal at start-up)."""
        self._waiting.setdefault(entry.session_id, {})[entry.process_id] = entry

    # --- out: taken ----------------------------------------------------------------

    def take(self, session_id: str) -> list[AsyncEntry]:
        """Every waiting result of the session, marked delivered.  Never awaits."""
        entries = self._waiting.pop(session_id, None)
        if not entries:
            return []
        taken = list(entries.values())
        self._delivered(taken)
        return taken

    def collect(self, session_id: str) -> list[dict[str, Any]]:
        """``check_async``: the session's new results, each returned exactly once."""
        return [msgspec.to_builtins(e) for e in self.take(session_id)]

    def attach(self, result: FireResult, session_id: str) -> list[AsyncEntry]:
        """Put the session's new results on a reply, as Claude Code does at its next request.

        Text goes to ``async_results`` (bare context; the Claude-format renderer
        folds it into additionalContext); runs that timed out, were cancelled or
        failed become lines in ``errors``.  Returns the entries taken (telemetry links
        the event's span to theirs).
        """
        taken = self.take(session_id)
        for entry in taken:
            result.async_results.extend(entry.messages)
            if entry.state != "finished" or entry.error:
                result.errors.append(
                    f"{entry.hook_name}: async hook {entry.state}: {entry.error or entry.state}"
                )
        return taken

    # --- out: pushed -----------------------------------------------------------------

    def subscribe(
        self,
        agent_pid: int | None,
        session_id: str | None,
        send: Callable[[AsyncEntry], bool],
        alive: Callable[[], bool],
    ) -> None:
        """Push wake-ups to ``send`` while ``alive``; any already waiting are pushed now."""
        subscriber = _Subscriber(agent_pid, session_id, send, alive)
        self._subscribers.append(subscriber)
        for session, entries in list(self._waiting.items()):
            waiting = [e for e in entries.values() if e.rewake and subscriber.wants(e)]
            pushed = [e for e in waiting if subscriber.send(e)]
            for entry in pushed:
                del entries[entry.process_id]
            if not entries:
                del self._waiting[session]
            if pushed:
                self._delivered(pushed)

    def _push(self, entry: AsyncEntry) -> bool:
        for subscriber in list(self._subscribers):
            if not subscriber.alive():
                self._subscribers.remove(subscriber)
                continue
            if not subscriber.wants(entry):
                continue
            if subscriber.send(entry):
                return True
            self._subscribers.remove(subscriber)
        return False

    def _delivered(self, entries: list[AsyncEntry]) -> None:
        now = time.time()
        for entry in entries:
            entry.response_attachment_sent = True
            entry.delivered_time = now
        self._counters["delivered"] += len(entries)
        self._journal(self._store.delivered, [e.process_id for e in entries], now)
        self._settled(entries)

    # --- out: dropped ----------------------------------------------------------------

    def prune(self, now: float) -> None:
        """Housekeeping: apply retention to every session; forget dead subscribers."""
        for session in list(self._waiting):
            self._prune_session(session, now)
        self._subscribers = [s for s in self._subscribers if s.alive()]

    def _prune_session(self, session: str, now: float) -> None:
        entries = self._waiting.get(session)
        if not entries:
            return
        horizon = now - self.retention.seconds
        expired = [e for e in entries.values() if (e.end_time or now) < horizon]
        over = len(entries) - len(expired) - self.retention.per_session
        if over > 0:
            gone = {e.process_id for e in expired}
            expired.extend([e for e in entries.values() if e.process_id not in gone][:over])
        if not expired:
            return
        for entry in expired:
            del entries[entry.process_id]
        if not entries:
            del self._waiting[session]
        self._counters["expired"] += len(expired)
        log.warning("undelivered async results dropped", session=session, results=len(expired))
        self._journal(self._store.dropped, [e.process_id for e in expired])
        self._settled(expired)

    # --- views -------------------------------------------------------------------------

    def waiting(self) -> int:
        """How many results wait for a reader."""
        return sum(len(entries) for entries in self._waiting.values())

"""Long-lived tasks that survive their own exceptions, and the record of what went wrong.

hookd is one process that every agent session of the user depends on.  A bug
in the watcher, a sweep or the http listener must cost that one task a
restart, not the daemon its life: trio's structured concurrency would
otherwise carry the exception up through ``Daemon.run``'s nursery and stop
everything (issue 14: a reload raising inside the watcher did exactly that).

:func:`supervise` runs such a task; when it raises, the exception is logged
with its traceback, counted in the :class:`FaultLog` (``hookctl status``
shows it under ``faults``), and the task starts again after a back-off that
grows from ``RESTART_MIN`` to ``RESTART_MAX`` — a task that fails at once
every time must not spin a core.  Cancellation is never caught: it is a
``BaseException`` and leaves as trio designed.

``inject_faults`` (a daemon setting, for tests and drills) makes a named
fault point raise its first N times, so the survival is proven through the
real daemon rather than a mock of it.  Every supervised task is a fault point
under its own name at each (re)start (``watcher``, ``sweep``, ``reaper``,
``signals``, ``http``); ``reload`` is one inside every reload.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import structlog
import trio

__all__ = ["Fault", "FaultLog", "InjectedFault", "supervise"]

log = structlog.get_logger("hookd.faults")

RESTART_MIN = 0.05
RESTART_MAX = 30.0


class InjectedFault(RuntimeError):
    """Raised at a fault point named in the ``inject_faults`` setting."""


class Fault(msgspec.Struct, kw_only=True):
    """One task's failures, as ``hookctl status`` shows them."""

    task: str
    error: str
    """The last exception, ``repr``-ed (type and message)."""
    count: int
    first: float
    last: float


class FaultLog:
    """Failures per task, plus the injected faults still to fire."""

    def __init__(self, inject: dict[str, int] | None = None) -> None:
        self._faults: dict[str, Fault] = {}
        self._inject = dict(inject or {})

    def record(self, task: str, exc: BaseException) -> None:
        now = time.time()
        log.error("task failed; it keeps going", task=task, error=repr(exc), exc_info=exc)
        fault = self._faults.get(task)
        if fault is None:
            self._faults[task] = Fault(task=task, error=repr(exc), count=1, first=now, last=now)
        else:
            fault.error, fault.count, fault.last = repr(exc), fault.count + 1, now

    def point(self, name: str) -> None:
        """A fault point: raise :class:`InjectedFault` while ``name`` has injections left."""
        left = self._inject.get(name, 0)
        if left > 0:
            self._inject[name] = left - 1
            raise InjectedFault(f"injected fault at {name!r} (setting inject_faults)")

    def all(self) -> list[Fault]:
        return sorted(self._faults.values(), key=lambda f: f.first)


class _StartedOnce:
    """Forwards ``started()`` to the real task status the first time only: a restarted
    task calls it again, and trio allows it once."""

    def __init__(self, real: trio.TaskStatus[None]) -> None:
        self.real = real
        self.done = False

    def started(self, value: None = None) -> None:
        if not self.done:
            self.done = True
            self.real.started()


async def supervise(
    name: str,
    faults: FaultLog,
    fn: Callable[..., Awaitable[Any]],
    *args: Any,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
    takes_status: bool = False,
) -> None:
    """Run ``fn(*args)`` until it returns; restart it (with back-off) whenever it raises.

    ``takes_status``: ``fn`` accepts ``task_status`` (it is started with
    ``nursery.start``); the caller's ``start`` returns once the first run
    said it started.
    """
    status = _StartedOnce(task_status)
    delay = RESTART_MIN
    while True:
        began = trio.current_time()
        try:
            faults.point(name)  # inject_faults = {name = N}: fail the first N starts
            if takes_status:
                await fn(*args, task_status=status)
            else:
                status.started()
                await fn(*args)
            return
        except Exception as exc:
            faults.record(name, exc)
        if trio.current_time() - began > RESTART_MAX:
            delay = RESTART_MIN  # it ran well for a while: a fresh failure, not a loop
        await trio.sleep(delay)
        delay = min(delay * 2, RESTART_MAX)

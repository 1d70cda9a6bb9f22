"""``async def`` python policies run inside the daemon, under trio cancellation.

``{"type": "python", "callable": "/path/guard.py:check", "inDaemon": true}``.

Why: a python hook normally costs a round trip to a worker *process* — two
process wake-ups, the input encoded and decoded on both sides (~0.3–0.6 ms
here).  An in-process peer (the clooks and Edmonds daemons) answers in the
time of a function call, but its policies cannot be stopped when they hang.
Here a policy written as ``async def`` runs as a trio task of the event, so:

* **a hang is cut at the hook's timeout**: the function awaits (trio or anyio
  primitives), and the event's cancel scope cancels it at its deadline, like
  a killed process; the daemon keeps serving every other event meanwhile;
* **a raise is a non-blocking error** with the exception text (a block under
  ``onFailure: "block"``), exactly as from a worker;
* **its answer counts like any hook's** (deny wins, the output is capped at
  ``output_cap``): the value goes through the worker's own conversion.

What cancellation cannot do is interrupt code that never yields: a CPU-bound
loop or a blocking call (``time.sleep``, blocking I/O) inside the coroutine
holds the event loop.  Each step of the coroutine (the code between two
awaits) is timed; a step over ``STEP_LIMIT`` *demotes* the callable: it is
logged, and every later call of it runs in the worker pool, where a deadline
kills the process.  One stall is the worst a policy can cost, and it is
visible in the log (``python policy demoted to a worker``).

Only what is safe to run in the daemon runs here: ``async def`` functions of
a *file* (``/abs/guard.py:check`` or a path relative to a trusted project),
loaded under a private module name without touching ``sys.path``.  Anything
else with ``inDaemon`` — a ``def`` function, a ``module:function`` reference,
a stop function — is run by the worker pool as without it.  The first load
of a file (its top-level code) runs in a worker thread within the hook's
timeout; it is reloaded, again in a thread, when its mtime or size changes.
The function sees the daemon's environment and working directory (the worker
``chdir``\\ s to the event's cwd; in the daemon that would move every session).
"""

from __future__ import annotations

import dis
import functools
import inspect
import os
import time
import traceback
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any

import msgspec
import structlog
import trio

from hookd.config.schema import PythonHandler
from hookd.handlers.base import HandlerResult, Invocation, failed_with
from hookd.handlers.pyworker import (
    HookLoadError,
    WorkerReply,
    callable_at,
    encode_capped,
    hook_answer,
    load_file,
)
from hookd_client.events import decode_event

__all__ = ["STEP_LIMIT", "InDaemonPolicies"]

log = structlog.get_logger("hookd.handlers.python_inline")

STEP_LIMIT = 0.05
"""Seconds one step of an in-daemon policy may hold the event loop before the
callable is demoted to the worker pool (every other session waits meanwhile)."""


class _Timed:
    """Drives a policy's coroutine for trio, timing every step it runs on the loop.

    trio steps a task by ``send``/``throw`` on its coroutine; this awaitable
    sits in that chain and passes every trap through unchanged, so the policy
    awaits trio exactly as it would directly.
    """

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro
        self.longest = 0.0

    def __await__(self) -> Generator[Any, Any, Any]:
        return self

    def __iter__(self) -> _Timed:
        return self

    def __next__(self) -> Any:
        return self.send(None)

    def send(self, value: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.coro.send(value)
        finally:
            self.longest = max(self.longest, time.perf_counter() - start)

    def throw(self, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.coro.throw(*args)
        finally:
            self.longest = max(self.longest, time.perf_counter() - start)

    def close(self) -> None:
        self.coro.close()


class InDaemonPolicies:
    """The in-daemon side of the python handler: loaded functions, demotions, calls."""

    def __init__(self, output_cap: int, step_limit: float = STEP_LIMIT) -> None:
        self.output_cap = output_cap
        self.step_limit = step_limit
        self._loaded: dict[str, tuple[tuple[int, int], Callable[..., Any], bool]] = {}
        """key → (file stamp, function, never suspends)."""
        self.demoted: set[str] = set()
        """Callables (resolved file:function) that stalled the loop: the workers run them."""
        self.calls = 0
        """Calls answered in the daemon (tests and status read it)."""
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(WorkerReply)

    def answers_at_once(self, handler: PythonHandler, project_dir: str, trusted: bool) -> bool:
        """The policy will be called in one synchronous step: loaded, not demoted, and
        its code cannot suspend.  Such a call starts nothing and cannot be interrupted,
        so there is nothing to watch for while it runs (the event pipeline skips the
        requester's hang-up watch for it).  A file edited since it was loaded still
        says True; its reload then runs under the hook's timeout like a first load."""
        target = _file_target(handler, project_dir, trusted)
        if target is None:
            return False
        key = target[0]
        cached = self._loaded.get(key)
        return key not in self.demoted and cached is not None and cached[2]

    async def run(self, handler: PythonHandler, inv: Invocation) -> HandlerResult | None:
        """The hook's result, or None when the worker pool must run it instead."""
        target = _file_target(handler, inv.project_dir, inv.project_trusted)
        if target is None:
            return None
        key, path, attr = target
        if key in self.demoted:
            return None
        try:
            loaded = self._current(key, path)
        except OSError as exc:
            return failed_with(str(exc), exc)
        if loaded is not None and loaded[1]:
            return self._call_at_once(key, loaded[0], inv)
        with trio.move_on_after(inv.timeout) as deadline:
            try:
                fn = loaded[0] if loaded is not None else await self._function(key, path, attr)
            except (HookLoadError, OSError) as exc:
                return failed_with(str(exc), exc)
            except Exception as exc:  # the module's own code raised while loading
                return _raised(exc)
            if not inspect.iscoroutinefunction(fn):
                return None  # a plain def cannot be cancelled here: the worker runs it
            timed = _Timed(fn(decode_event(inv.input, inv.event_name)))
            try:
                value = await timed
            except Exception as exc:
                return _raised(exc)
            finally:
                self._held(key, timed.longest)
        if deadline.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        return self._answer(value)

    def _call_at_once(self, key: str, fn: Callable[..., Any], inv: Invocation) -> HandlerResult:
        """Call a policy that never suspends (no ``await`` in its code): one synchronous
        step.  No cancel scope — with no checkpoint there is nothing a deadline could
        cancel, in a scope or not; what guards the loop is the step's timing (demotion),
        as for any step."""
        coro = fn(decode_event(inv.input, inv.event_name))
        start = time.perf_counter()
        try:
            coro.send(None)
        except StopIteration as done:
            value = done.value
        except Exception as exc:
            return _raised(exc)
        else:  # unreachable for code without a yield; never leave a coroutine half-run
            coro.close()
            return HandlerResult(exit_code=None, failure=f"{key} suspended unexpectedly")
        finally:
            self._held(key, time.perf_counter() - start)
        return self._answer(value)

    def _answer(self, value: Any) -> HandlerResult:
        """The policy's return value as the worker would have sent it back."""
        self.calls += 1
        if type(value) is dict:
            # The usual answer, read as the worker's round trip reads it (JSON types
            # only) in one encode and one decode; anything unusual — not JSON-able,
            # over the cap — takes the worker's own path below, and its words.
            try:
                body = self._encoder.encode(value)
            except (UnicodeError, msgspec.EncodeError, TypeError, ValueError):
                pass
            else:
                if len(body) <= self.output_cap:
                    return HandlerResult(exit_code=0, json_output=msgspec.json.decode(body))
        reply = self._decoder.decode(
            encode_capped(self._encoder, hook_answer(value), self.output_cap)
        )
        if reply.kind == "error":
            return HandlerResult(exit_code=None, failure=reply.error or "python hook failed")
        if reply.kind == "none":
            return HandlerResult(exit_code=0, json_output=None)
        if reply.truncated:
            return HandlerResult(exit_code=0, stdout=str(reply.value), truncated=True)
        return HandlerResult(exit_code=0, json_output=reply.value)

    def _current(self, key: str, path: str) -> tuple[Callable[..., Any], bool] | None:
        """``(function, never suspends)`` when loaded from the file as it is now, else None."""
        cached = self._loaded.get(key)
        if cached is None:
            return None
        if cached[0] != _stamp(path):
            return None
        return cached[1], cached[2]

    async def _function(self, key: str, path: str, attr: str) -> Callable[..., Any]:
        """The function, loaded (or reloaded after an edit) in a worker thread: a
        module's top-level code must not hold the loop."""
        stamp = _stamp(path)
        module = await trio.to_thread.run_sync(load_file, path, abandon_on_cancel=True)
        fn = callable_at(module, attr, path, key)
        self._loaded[key] = (stamp, fn, _never_suspends(fn))
        return fn

    def _held(self, key: str, held: float) -> None:
        """A step of ``key`` held the loop ``held`` seconds: over the limit, it is demoted."""
        if held <= self.step_limit:
            return
        self.demoted.add(key)
        log.warning(
            "python policy demoted to a worker",
            callable=key,
            held_loop_ms=round(held * 1000, 1),
            limit_ms=round(self.step_limit * 1000, 1),
            reason="a step between two awaits held the event loop (CPU-bound or blocking code)",
        )


def _file_target(
    handler: PythonHandler, project_dir: str, trusted: bool
) -> tuple[str, str, str] | None:
    """``(key, file path, attribute)`` when the reference may run in the daemon, else None."""
    if handler.function != "hook":
        return None
    return _resolve_file(handler.callable, project_dir, trusted)


@functools.lru_cache(maxsize=1024)
def _resolve_file(reference: str, project_dir: str, trusted: bool) -> tuple[str, str, str] | None:
    """:func:`_file_target` for a ``hook`` function.  Cached: it is asked twice per event
    (the pipeline's hang-up decision, then the call) with the same few references."""
    target, sep, attr = reference.rpartition(":")
    if not sep or not attr or not (target.endswith(".py") or os.sep in target):
        return None
    if not os.path.isabs(target):
        if not trusted:
            return None  # the worker refuses it with the trust message
        target = os.path.join(project_dir, target)
    return f"{target}:{attr}", target, attr


def _stamp(path: str) -> tuple[int, int]:
    """What says a policy file changed since it was loaded."""
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _never_suspends(fn: object) -> bool:
    """``fn`` is an ``async def`` whose own code has no suspension point: a coroutine
    can only suspend at a ``YIELD_VALUE`` (what ``await``, ``async for`` and ``async with``
    compile to), so one without it always finishes in its first step.  Only a plain
    function's own code object is trusted with this; anything else (a callable object,
    a wrapper) is driven under the cancel scope like any coroutine."""
    if not isinstance(fn, types.FunctionType) or not fn.__code__.co_flags & inspect.CO_COROUTINE:
        return False
    return not any(i.opname == "YIELD_VALUE" for i in dis.get_instructions(fn.__code__))


def _raised(exc: Exception) -> HandlerResult:
    return HandlerResult(
        exit_code=None, failure=f"{type(exc).__name__}: {exc}", stderr=traceback.format_exc()
    )

"""Property tests of the daemon's limits as ledgers: what is charged is what is given back.

``hookd.daemon.limits`` keeps three counts that decide who is served: the buffer budget
(bytes large frames, their events and hook output hold), one event's share of it, and
the open connections, all together and per peer process.  A count that drifts — a
``give`` that frees nothing or too much, a fit test off by one byte, a per-process count
never taken back — is a daemon that refuses everyone after a while, or lets a peer go
past its cap.  Each rule here runs the real objects against a plain model of the rule
over arbitrary sequences of operations; waiting is on trio's mock clock (virtual time),
so ``buffer_wait`` is checked exactly without a wall clock.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hookd.daemon.limits import (
    HELD_COPIES,
    BufferBudget,
    ConnectionLimits,
    EventCharge,
)
from hookd.daemon.settings import DaemonSettings

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(fn: Callable[[], Awaitable[None]]) -> None:
    """Run an async test body on a mock clock that jumps as soon as every task waits."""
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


# --- the budget's ledger ---------------------------------------------------------------

_OPS = st.lists(
    st.tuples(st.sampled_from(["take", "give", "force"]), st.integers(0, 120)), max_size=40
)


@FAST
@given(total=st.integers(0, 200), ops=_OPS)
def test_the_budget_holds_exactly_what_was_taken_and_not_given_back(
    total: int, ops: list[tuple[str, int]]
) -> None:
    """``take`` succeeds exactly when the bytes fit (a take that fills the budget to the
    byte fits), ``force`` always counts, ``give`` frees what it is given and never goes
    below nothing; ``used`` is at every step what the model holds."""
    budget = BufferBudget(total=total)
    used = 0
    for op, size in ops:
        if op == "take":
            fits = used + size <= total
            assert budget.take(size) is fits, (op, size, used, total)
            used += size if fits else 0
        elif op == "force":
            budget.force(size)
            used += size
        else:
            budget.give(size)
            used = max(0, used - size)
        assert budget.used == used, (op, size)
    assert budget.refused == 0  # only a request that waited in vain is counted


@FAST
@given(total=st.integers(3, 300), held=st.integers(0, 300), size=st.integers(0, 100))
@example(total=30, held=0, size=10)  # fills the budget to the byte: fits
@example(total=30, held=1, size=10)  # one byte short: waits, refused
@example(total=30, held=0, size=11)  # over the whole budget: refused at once
def test_a_large_request_is_charged_its_held_copies_or_refused_after_the_wait(
    total: int, held: int, size: int
) -> None:
    """``hold`` charges ``HELD_COPIES`` times the size when that fits; when it does not
    and nothing is given back, it waits exactly ``buffer_wait`` (no less) and is refused,
    counted once, with nothing charged; a charge over the whole budget is refused at once."""
    wait = 5.0

    async def main() -> None:
        budget = BufferBudget(total=total, wait=wait)
        budget.force(held)
        charge = size * 3  # "each is charged three times its size" (docs, hookd.toml)
        assert HELD_COPIES == 3
        started = trio.current_time()
        got = await budget.hold(size)
        waited = trio.current_time() - started
        if held + charge <= total:
            assert (got, budget.used, budget.refused, waited) == (charge, held + charge, 0, 0)
        elif charge > total:
            assert (got, budget.used, budget.refused, waited) == (0, held, 1, 0)
        else:
            assert (got, budget.used, budget.refused) == (0, held, 1)
            assert waited == pytest.approx(wait)  # virtual time: the whole wait, no less
        budget.give(got)
        assert budget.used == held

    _run(main)


@FAST
@given(
    total=st.integers(10, 200),
    waiters=st.lists(st.integers(1, 60), min_size=1, max_size=6),
)
def test_every_waiter_is_served_once_the_bytes_it_needs_are_given_back(
    total: int, waiters: list[int]
) -> None:
    """A full budget and requests waiting for room (each fits the budget alone): each
    ``give`` wakes them; every one that fits is served before its wait runs out, none is
    refused, and once all have given back, the budget holds nothing."""
    waiters = [min(w, total) for w in waiters]

    async def main() -> None:
        budget = BufferBudget(total=total)
        budget.force(total)
        served: list[int] = []
        deadline = trio.current_time() + 1000

        async def wait_for(size: int) -> None:
            assert await budget.take_by(size, deadline)
            served.append(size)
            await trio.sleep(1)  # hold it a while, then give it back
            budget.give(size)

        async with trio.open_nursery() as nursery:
            for size in waiters:
                nursery.start_soon(wait_for, size)
            await trio.testing.wait_all_tasks_blocked()
            assert served == []  # no room yet: all wait
            budget.give(total)
        assert sorted(served) == sorted(waiters)
        assert (budget.used, budget.refused) == (0, 0)
        assert trio.current_time() < deadline

    _run(main)


# --- one event's share: hook output ----------------------------------------------------


@FAST
@given(
    total=st.integers(0, 200),
    before=st.integers(0, 200),
    chunks=st.lists(st.integers(0, 80), max_size=12),
    after=st.lists(st.integers(0, 80), max_size=4),
)
def test_an_events_output_charge_is_given_back_whole_when_it_is_answered(
    total: int, before: int, chunks: list[int], after: list[int]
) -> None:
    """Output is charged as it arrives while it fits (no room: refused and counted in
    ``outputs_cut``, the budget untouched); answering the event gives back exactly what it
    held; output after that (a hook gone async) is accepted and charged nothing."""
    budget = BufferBudget(total=total)
    budget.force(before)
    charge = EventCharge(budget)
    held, cut = 0, 0
    for size in chunks:
        fits = before + held + size <= total
        assert charge.take(size) is fits
        held += size if fits else 0
        cut += 0 if fits else 1
        assert (budget.used, charge.held, budget.outputs_cut) == (before + held, held, cut)
    charge.close()
    assert (budget.used, charge.held) == (before, 0)
    for size in after:
        assert charge.take(size) is True
    assert (budget.used, charge.held, budget.outputs_cut) == (before, 0, cut)


# --- connections: all together and per peer process ------------------------------------


@dataclass
class _Model:
    total: int
    per_pid: int
    open: int = 0

    def __post_init__(self) -> None:
        self.by_pid: collections.Counter[int] = collections.Counter()


_CONN_OPS = st.lists(
    st.tuples(st.sampled_from(["admit", "leave"]), st.sampled_from([None, 101, 102, 103])),
    max_size=60,
)


@FAST
@given(total=st.integers(0, 8), per_pid=st.integers(0, 5), ops=_CONN_OPS)
@example(total=2, per_pid=1, ops=[("admit", 101), ("admit", 101), ("admit", None),
                                  ("admit", None), ("leave", 101), ("admit", 102)])  # fmt: skip
def test_connections_are_admitted_exactly_while_both_caps_have_room(
    total: int, per_pid: int, ops: list[tuple[str, int | None]]
) -> None:
    """A connection is admitted exactly when fewer than ``max_connections`` are open and
    its process holds fewer than ``max_connections_per_pid`` (a peer whose pid is unknown
    counts only toward the total); a refusal names the setting and its value; closing
    takes the count back, so a process that closed everything holds nothing — whatever
    the order of connects and closes."""
    limits = ConnectionLimits(
        DaemonSettings(max_connections=total, max_connections_per_pid=per_pid)
    )
    model = _Model(total, per_pid)
    admitted: list[int | None] = []
    for op, pid in ops:
        if op == "leave":
            if pid not in admitted:
                continue
            admitted.remove(pid)
            limits.leave(pid)
            model.open -= 1
            if pid is not None:
                model.by_pid[pid] -= 1
        else:
            refusal = limits.admit(pid)
            if model.open >= total:
                assert refusal is not None and f"max_connections = {total}" in refusal
            elif pid is not None and model.by_pid[pid] >= per_pid:
                assert refusal is not None
                assert f"max_connections_per_pid = {per_pid}" in refusal
                assert f"process {pid} already has {model.by_pid[pid]}" in refusal
            else:
                assert refusal is None, refusal
                admitted.append(pid)
                model.open += 1
                if pid is not None:
                    model.by_pid[pid] += 1
        assert limits.open == model.open
        assert dict(limits.per_pid) == {p: n for p, n in model.by_pid.items() if n > 0}
    for pid in admitted:
        limits.leave(pid)
    assert (limits.open, dict(limits.per_pid)) == (0, {})

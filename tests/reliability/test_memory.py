"""Memory is bounded per event in flight, and given back after a burst (issue 28, item 9).

Forty clients sending 8 MiB inputs took a daemon to 1.8 GB and left it at
874 MB: the buffer budget counted a frame only while it arrived, and each
event then held its input several times over (decoded, once per hook as its
stdin, the audit's JSON) with nothing counting them; freed, those blocks stayed
in glibc's heap.  Here a real ``hookd serve`` (bench/big_inputs.py's burst, a
short version) gets many concurrent multi-MiB events on a small budget: its RSS,
read from ``/proc``, stays within the budget of where it started, every big event
is answered or refused by name (``busy``), a small event of another session is
answered meanwhile, and after the burst the memory is back.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from reliability.helpers import bench_module

big_inputs = bench_module("big_inputs")
fuzz = bench_module("fuzz")

MIB = 1024 * 1024
BUDGET = 32 * MIB
SLACK = 24 * MIB
"""Beyond the budget: the interpreter's own growth under load (hook processes' pipes,
trio's tasks, 17 connections' reads) — small next to what one event held before."""


@pytest.mark.slow
async def test_many_clients_with_big_inputs_stay_within_the_budget() -> None:
    extra = ("--buffer-budget", str(BUDGET), "--buffer-wait", "2")
    with fuzz.daemon_process(big_inputs.hooks(2), extra) as daemon:
        before = daemon.rss_kb() * 1024
        outcome = await _burst(daemon, clients=16, mib=4, rounds=2)
        after = big_inputs.idle_rss_kb(daemon) * 1024
        assert daemon.proc.poll() is None
    print(
        f"RSS before {before / MIB:.1f} MiB, peak {outcome.peak_kb / 1024:.1f} MiB, "
        f"after {after / MIB:.1f} MiB; {dict(outcome.answers)}; "
        f"small events answered during the burst: {outcome.small_during}"
    )
    # Every big event was answered, or refused by name: never a broken pipe.
    assert set(outcome.answers) <= {"reply", "error:busy"}, outcome.answers
    assert outcome.answers["reply"] > 0
    assert sum(outcome.answers.values()) == 16 * 2
    assert outcome.small_failed == [] and outcome.small_during > 0
    assert outcome.peak_kb * 1024 < before + BUDGET + SLACK, "RSS went past the budget"
    assert after < before + SLACK, "the burst's memory was not given back"


@pytest.mark.slow
async def test_big_http_bodies_stay_within_the_same_budget() -> None:
    """The http door (its owner-only socket) charges the same budget: ``503`` naming it
    when full, RSS within it, a small socket event answered meanwhile."""
    extra = ("--buffer-budget", str(BUDGET), "--buffer-wait", "2")
    with fuzz.daemon_process(big_inputs.hooks(2), extra) as daemon:
        before = daemon.rss_kb() * 1024
        outcome = await _burst(daemon, clients=16, mib=4, rounds=2, door="http")
        after = big_inputs.idle_rss_kb(daemon) * 1024
        assert daemon.proc.poll() is None
    print(f"http: peak {outcome.peak_kb / 1024:.1f} MiB; {dict(outcome.answers)}")
    assert set(outcome.answers) <= {"reply", "http:503"}, outcome.answers
    assert outcome.answers["reply"] > 0 and sum(outcome.answers.values()) == 16 * 2
    assert outcome.small_failed == [] and outcome.small_during > 0
    assert outcome.peak_kb * 1024 < before + BUDGET + SLACK, "RSS went past the budget"
    assert after < before + SLACK, "the burst's memory was not given back"


async def _burst(
    daemon: Any, *, clients: int, mib: float, rounds: int, door: str = "socket"
) -> Any:
    return await trio.to_thread.run_sync(
        lambda: big_inputs.burst(daemon, clients, mib, rounds, True, door)
    )

"""Two awaitables at once, both results kept: a real-CLI scenario's native and hookd runs.

Each side of a scenario runs in its own HOME with its own fake model server and (through
hookd) its own daemon, so nothing orders them; running them together halves the wait on
CLI start-up, which dominates these tests' time.  A side that raises cancels the other and
the error propagates (trio's nursery), so a failure is never lost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

__all__ = ["together"]

A = TypeVar("A")
B = TypeVar("B")


async def together(
    first: Callable[[], Awaitable[A]], second: Callable[[], Awaitable[B]]
) -> tuple[A, B]:
    """``(await first(), await second())``, the two run concurrently."""
    firsts: list[A] = []
    seconds: list[B] = []

    async def run_first() -> None:
        firsts.append(await first())

    async def run_second() -> None:
        seconds.append(await second())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_first)
        nursery.start_soon(run_second)
    return firsts[0], seconds[0]

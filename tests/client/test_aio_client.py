"""The asyncio flavour against a real daemon: what only it has (test_flavours.py: both flavours).

The daemon runs in this test's trio loop; each asyncio program runs with
``asyncio.run`` in a worker thread, so both loops are real and independent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

T = TypeVar("T")
HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


async def run_asyncio(main: Callable[[], Awaitable[T]]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(main(), HANG_GUARD)

    return await trio.to_thread.run_sync(asyncio.run, guarded())

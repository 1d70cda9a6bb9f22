"""The asyncio flavour against a real daemon: what only it has (test_flavours.py: both flavours).

The daemon runs in this test's trio loop; each asyncio program runs with
``asyncio.run`` in a worker thread, so both loops are real and independent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import trio

from hookd_client import protocol
from hookd_client.aio import AsyncClient

T = TypeVar("T")
HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


async def run_asyncio(main: Callable[[], Awaitable[T]]) -> T:
    async def guarded() -> T:
        return await asyncio.wait_for(main(), HANG_GUARD)

    return await trio.to_thread.run_sync(asyncio.run, guarded())


async def test_connects_to_a_daemon_that_starts_a_moment_later(
    daemon_factory: Any, make_event: Any, unused_socket: Path
) -> None:
    client = AsyncClient(unused_socket, retries=60, backoff=0.02, max_backoff=0.2)

    async def main() -> protocol.FireReply:
        async with client:
            return await client.fire("PreToolUse", make_event("PreToolUse-Bash"))

    replies: list[protocol.FireReply] = []

    async def in_thread() -> None:
        replies.append(await run_asyncio(main))

    with trio.fail_after(HANG_GUARD):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(in_thread)
            while client.connect_attempts < 2:  # it has failed at least once
                await trio.sleep(0.01)
            await daemon_factory(socket=str(unused_socket))
    assert replies[0].result.event == "PreToolUse"
    assert client.connect_attempts >= 2

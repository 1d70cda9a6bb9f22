"""One connect-retry policy for every client flavour (issue 31): nobody listening is
answered at once, a daemon that is there but busy is retried with backoff.

A missing socket file (``ENOENT``) or a socket nobody listens on
(``ECONNREFUSED``) means no daemon: retrying only delayed the caller's
``on_unavailable`` answer (an asyncio client paid 1.55 s per fire, the blocking
one 0.35 s).  Counted in connect attempts, not in seconds.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client import aio, trio_client
from hookd_client.client import Client, DaemonUnavailable

HANG_GUARD = 30
"""Seconds before a stuck test fails instead of hanging; never a timing assertion."""


@pytest.fixture(params=["missing", "refused"])
def nobody_listens(request: pytest.FixtureRequest, unused_socket: Path) -> Path:
    """No socket file at all, or one whose listener is gone (a crashed daemon's)."""
    if request.param == "refused":
        gone = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        gone.bind(str(unused_socket))
        gone.close()  # bound, never listened: connecting is refused
    return unused_socket


def test_blocking_client_does_not_retry_when_nobody_listens(
    nobody_listens: Path, make_event: Any
) -> None:
    client = Client(nobody_listens)  # the default retries
    reply = client.fire("PreToolUse", make_event("PreToolUse-Bash"), on_unavailable="open")
    assert reply.result.system_messages[0].startswith("hookd unavailable")
    assert client.connect_attempts == 1


async def test_trio_client_does_not_retry_when_nobody_listens(
    nobody_listens: Path, make_event: Any
) -> None:
    with trio.fail_after(HANG_GUARD):
        async with trio_client.open_client(nobody_listens, on_unavailable="open") as client:
            reply = await client.fire("PreToolUse", make_event("PreToolUse-Bash"))
    assert reply.result.system_messages[0].startswith("hookd unavailable")
    assert client.connect_attempts == 1


async def test_asyncio_client_does_not_retry_when_nobody_listens(
    nobody_listens: Path, make_event: Any
) -> None:
    client = aio.AsyncClient(nobody_listens, on_unavailable="open")

    async def main() -> Any:
        async with client:
            return await asyncio.wait_for(
                client.fire("PreToolUse", make_event("PreToolUse-Bash")), HANG_GUARD
            )

    reply = await trio.to_thread.run_sync(asyncio.run, main())
    assert reply.result.system_messages[0].startswith("hookd unavailable")
    assert client.connect_attempts == 1


def test_every_flavour_has_the_same_retry_defaults() -> None:
    blocking = Client()
    asyncio_client = aio.AsyncClient()
    trio_client_ = trio_client.TrioClient()
    for flavour in (asyncio_client, trio_client_):
        assert (flavour.retries, flavour.backoff, flavour.max_backoff) == (
            blocking.retries,
            blocking.backoff,
            blocking.max_backoff,
        )


@pytest.fixture
def full_backlog(unused_socket: Path) -> Iterator[Path]:
    """A daemon that is there but does not accept yet: its listen backlog is full, so a
    connect fails with EAGAIN — the one case worth a retry."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(unused_socket))
    listener.listen(0)
    queued: list[socket.socket] = []
    while True:
        waiting = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        waiting.setblocking(False)
        try:
            waiting.connect(str(unused_socket))
        except BlockingIOError:
            waiting.close()
            break
        queued.append(waiting)
    yield unused_socket
    for waiting in queued:
        waiting.close()
    listener.close()


def test_a_full_backlog_is_retried_with_doubling_backoff(
    full_backlog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr("hookd_client.client.time.sleep", slept.append)
    client = Client(full_backlog, retries=5, backoff=0.1, max_backoff=0.3, timeout=5)
    with pytest.raises(DaemonUnavailable):
        client.connect()
    assert slept == pytest.approx([0.1, 0.2, 0.3, 0.3, 0.3])
    assert client.connect_attempts == 6

"""Async hook runs appear in ``hookctl tail`` when they end, marked ``async``."""

from __future__ import annotations

from typing import Any

import trio

from cli.helpers import hookctl
from hookd_client import protocol
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure


async def test_an_async_hooks_run_appears_in_tail(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    hook = {"type": "command", "command": "echo async-ran; exit 3", "async": True}
    configure(handle, {"PostToolUse": [{"hooks": [hook]}]})
    project = handle.project()

    def fire() -> None:
        with Client(handle.socket) as client:
            client.fire("PostToolUse", event("PostToolUse-Bash", cwd=str(project)))

    def finished() -> bool:
        with Client(handle.socket) as client:
            listing = client.call(protocol.AsyncList(id=client.next_id()))
        return bool(listing) and all(e["state"] not in ("queued", "running") for e in listing)

    def tail() -> list[dict[str, Any]]:
        with Client(handle.socket) as client:
            return list(client.tail(follow=False, last=100))

    await trio.to_thread.run_sync(fire)
    while not await trio.to_thread.run_sync(finished):  # the run ends after the reply
        await trio.sleep(0.02)
    async_records = [r for r in await trio.to_thread.run_sync(tail) if r.get("async")]
    assert len(async_records) == 1, async_records
    record = async_records[0]
    assert record["event"] == "PostToolUse" and record["exit_code"] == 3
    assert record["outcome"] == "non_blocking_error" and record["state"] == "finished"
    text = await trio.to_thread.run_sync(
        lambda: hookctl("--socket", str(handle.socket), "tail", "--last", "100").stdout
    )
    assert "[async]" in text

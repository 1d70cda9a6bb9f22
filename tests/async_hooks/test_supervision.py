"""Supervision: output-level handoff, timeouts that kill the whole tree, limits and queue."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol

from .helpers import (
    alive,
    async_hook,
    command_hook,
    configure,
    event,
    kill_quietly,
    poll_results,
    read_pids,
    script,
    wait_until,
)


async def test_a_hook_that_acks_async_on_its_first_line_is_backgrounded_not_killed(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go, done = tmp_path / "go", tmp_path / "done"
    configure(
        handle,
        {"PreToolUse": [{"hooks": [command_hook(script("ack_then_wait.sh", go, done))]}]},
    )
    conn = await wire(handle.socket)
    # The hook cannot finish before `go` exists, and `go` is made only after the reply.
    reply = await conn.fire("PreToolUse", event("PreToolUse-Bash", "s-ack"))
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.hooks[0].is_async and reply.result.decision is None
    rows = await conn.listing("s-ack")
    assert [(r["kind"], r["state"], r["timeout"]) for r in rows] == [("output", "running", 20.0)]
    assert rows[0]["pid"] is not None and alive(rows[0]["pid"])
    go.touch()
    results = await poll_results(conn, "s-ack", 1)
    assert done.read_text() == "done\n"
    # Its output after the ack was read by the supervisor; like Claude Code it delivers no text.
    assert results[0]["stdout"] == "after the ack\n"
    assert results[0]["state"] == "finished" and results[0]["messages"] == []


async def test_output_level_async_timeout_kills_the_whole_tree(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    pids_file = tmp_path / "pids"
    configure(
        handle,
        {"PostToolUse": [{"hooks": [command_hook(script("ack_then_tree.sh", pids_file))]}]},
    )
    conn = await wire(handle.socket)
    try:
        await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-tree"))
        results = await poll_results(conn, "s-tree", 1)
        assert results[0]["state"] == "timed_out" and results[0]["timeout"] == 0.3
        pids = read_pids(pids_file)
        assert len(pids) == 3
        # kill_tree waits (bounded) until every marked process is gone.
        await wait_until(lambda: not any(alive(p) for p in pids), timeout=10)
    finally:
        kill_quietly(read_pids(pids_file))


async def test_config_async_timeout_kills_the_whole_tree(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    pids_file = tmp_path / "pids"
    configure(
        handle,
        {
            "PostToolUse": [
                {
                    "hooks": [
                        {
                            **command_hook(script("tree.sh", pids_file)),
                            "async": True,
                            "timeout": 0.5,
                        }
                    ]
                }
            ]
        },
    )
    conn = await wire(handle.socket)
    try:
        await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-ctree"))
        results = await poll_results(conn, "s-ctree", 1)
        assert results[0]["state"] == "timed_out" and results[0]["kind"] == "async"
        pids = read_pids(pids_file)
        assert len(pids) == 3
        await wait_until(lambda: not any(alive(p) for p in pids), timeout=10)
        reply = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-ctree"))
        assert isinstance(reply, protocol.FireReply) and reply.result.async_results == []
    finally:
        kill_quietly(read_pids(pids_file))


async def test_limits_queue_then_refuse_clearly(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(
        async_max_running=3, async_max_running_per_session=2, async_max_queued_per_session=3
    )
    go = tmp_path / "go"
    hooks = [async_hook(script("wait_go.sh", go, "", f"Q{i}")) for i in range(8)]
    configure(handle, {"PostToolUse": [{"hooks": hooks}]})
    conn = await wire(handle.socket)
    reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-cap"))
    assert isinstance(reply, protocol.FireReply)
    refused = [r for r in reply.result.hooks if r.outcome == "non_blocking_error"]
    assert len(refused) == 3
    assert all("async hook refused" in (r.error or "") for r in refused)
    assert len([e for e in reply.result.errors if "2 running and 3 queued" in e]) == 3
    states = Counter(r["state"] for r in await conn.listing("s-cap"))
    assert states == {"running": 2, "queued": 3}
    # Another session is bound by the global cap: one runs, the rest queue.
    other = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-cap2"))
    assert isinstance(other, protocol.FireReply)
    states = Counter(r["state"] for r in await conn.listing("s-cap2"))
    assert states == {"running": 1, "queued": 3}
    go.touch()
    first = await poll_results(conn, "s-cap", 5)
    second = await poll_results(conn, "s-cap2", 4)
    # Hooks of one event start in parallel, so which five got in is not config order;
    # exactly the refused ones are missing.
    delivered = {m for r in first for m in r["messages"]}
    refused_names = {
        f"Q{i}" for i, run in enumerate(reply.result.hooks) if run.outcome != "success"
    }
    assert len(delivered) == 5 and delivered | refused_names == {f"Q{i}" for i in range(8)}
    assert len(second) == 4


async def test_500_async_hooks_fired_at_once_stay_inside_the_caps(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory(
        async_max_running=40, async_max_running_per_session=12, async_max_queued_per_session=30
    )
    # Each run says who it is (a fresh uuid), so every delivery can be counted.
    unique = 'sleep 0.2; printf \'{"systemMessage":"%s"}\' "$(cat /proc/sys/kernel/random/uuid)"'
    configure(handle, {"PostToolUse": [{"hooks": [async_hook(unique)]}]})
    supervisor = handle.daemon.async_runner
    sessions = [f"s-load-{i}" for i in range(5)]
    peak = {"running": 0, "session": 0}
    delivered: list[str] = []
    refused: list[str] = []
    stop = trio.Event()

    async def sample() -> None:
        while not stop.is_set():
            rows = supervisor.listing(None)
            per = Counter(r["session_id"] for r in rows if r["state"] == "running")
            peak["running"] = max(peak["running"], sum(per.values()))
            peak["session"] = max([peak["session"], *per.values()])
            await trio.sleep(0.01)

    async def fire(conn: Any, session: str) -> None:
        reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", session))
        assert isinstance(reply, protocol.FireReply)
        # Earlier results of the session ride on this reply (the way Claude Code delivers).
        delivered.extend(reply.result.async_results)
        refused.extend(r.error or "" for r in reply.result.hooks if r.outcome != "success")

    conns = [await wire(handle.socket) for _ in range(10)]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sample)
            async with trio.open_nursery() as firing:
                for i in range(500):
                    firing.start_soon(fire, conns[i % 10], sessions[i % 5])
            while len(delivered) + len(refused) < 500:
                for session in sessions:
                    for result in await conns[0].check(session):
                        assert result["state"] == "finished" and result["exitCode"] == 0
                        delivered.extend(result["messages"])
                await trio.sleep(0.05)
            stop.set()
    assert all(r.startswith("async hook refused: ") for r in refused)
    assert len(delivered) == len(set(delivered)) == 500 - len(refused)
    assert 0 < peak["running"] <= 40
    assert 0 < peak["session"] <= 12
    assert supervisor.stats()["running"] == 0 and supervisor.stats()["queued"] == 0
    print(f"500 fired: {len(refused)} refused, peak running {peak}")

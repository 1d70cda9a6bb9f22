"""Async bookkeeping: retention, failures in the next reply, timeouts, no dedup.

- Undelivered results are dropped by age (``async_retention_seconds``, applied
  every ``async_housekeeping_seconds``) and beyond ``async_retention_per_session``
  (oldest first), and only then.
- A run that failed or timed out is reported in the ``errors`` of the session's
  next reply.
- A config async hook gets its own ``timeout`` or 600 s, never the event's
  (UserPromptSubmit) or the SessionEnd budget.
- Async command hooks are never deduplicated: identical ones all run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol

from .helpers import (
    Wire,
    alive,
    async_hook,
    command_hook,
    configure,
    event,
    script,
    wait_until,
    wait_until_async,
)


async def _wait_state(conn: Wire, session: str, states: list[str]) -> list[dict[str, Any]]:
    """Wait until the session's runs are in ``states`` (in listing order)."""

    seen: list[str] = []

    async def reached() -> list[dict[str, Any]] | None:
        rows = await conn.listing(session)
        seen[:] = [r["state"] for r in rows]
        return rows if seen == states else None

    try:
        rows: list[dict[str, Any]] = await wait_until_async(reached)
    except trio.TooSlowError:
        raise AssertionError(f"wanted {states}, last saw {seen}") from None
    return rows


# --- retention --------------------------------------------------------------------------


async def test_beyond_the_per_session_count_the_oldest_results_are_dropped(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(async_retention_per_session=2)
    supervisor = handle.daemon.async_runner
    gates = [tmp_path / f"go{i}" for i in range(4)]
    configure(
        handle,
        {
            "PostToolUse": [
                {
                    "hooks": [
                        async_hook(script("wait_go.sh", go, "", f"R{i}"))
                        for i, go in enumerate(gates)
                    ]
                }
            ]
        },
    )
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-count"))
    # Another session's results count on their own.
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-other"))
    for i, go in enumerate(gates):  # finish in a known order: R0 is the oldest
        go.touch()
        finished = 2 * (i + 1)
        await wait_until(lambda: supervisor.counters["finished"] == finished)  # noqa: B023
    kept = await conn.check("s-count")
    assert [r["messages"] for r in kept] == [["R2"], ["R3"]]
    assert [r["messages"] for r in await conn.check("s-other")] == [["R2"], ["R3"]]
    assert supervisor.counters["expired"] == 4


async def test_results_older_than_the_retention_age_are_dropped(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory(async_retention_seconds=0.2, async_housekeeping_seconds=0.05)
    configure(handle, {"PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "OLD"))]}]})
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-age"))
    supervisor = handle.daemon.async_runner
    await wait_until(lambda: supervisor.counters["finished"] == 1)
    # Nothing else happens in the session: only housekeeping can drop it.
    await wait_until(lambda: supervisor.counters["expired"] == 1)
    assert await conn.listing("s-age") == []
    assert await conn.check("s-age") == []


async def test_results_younger_than_the_retention_age_survive_housekeeping(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory(async_housekeeping_seconds=0.02)
    supervisor = handle.daemon.async_runner
    configure(
        handle, {"PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "YOUNG"))]}]}
    )
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-young"))
    await _wait_state(conn, "s-young", ["finished"])
    rounds = supervisor.counters["housekeeping"]
    await wait_until(lambda: supervisor.counters["housekeeping"] >= rounds + 3)
    (result,) = await conn.check("s-young")
    assert result["messages"] == ["YOUNG", "SYS-YOUNG"]
    assert supervisor.counters["expired"] == 0


# --- failures reach the next reply ------------------------------------------------------


async def test_a_failed_async_run_is_reported_in_the_next_replys_errors(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    broken = "cat >/dev/null; echo ASYNC-BROKE >&2; exit 1"
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook(broken)]}],
            "UserPromptSubmit": [{"hooks": [command_hook("true")]}],
        },
    )
    conn = await wire(handle.socket)
    first = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-fail"))
    assert isinstance(first, protocol.FireReply) and first.result.errors == []
    await _wait_state(conn, "s-fail", ["finished"])
    reply = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-fail"))
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.errors == [
        f"{broken}: async hook finished: Failed with non-blocking status code: ASYNC-BROKE"
    ]
    # Reported once: the run is delivered.
    again = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-fail"))
    assert isinstance(again, protocol.FireReply) and again.result.errors == []


async def test_a_timed_out_async_run_is_reported_in_the_next_replys_errors(
    daemon_factory: Any, wire: Any
) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook("cat >/dev/null; sleep 30", timeout=0.3)]}],
            "UserPromptSubmit": [{"hooks": [command_hook("true")]}],
        },
    )
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-slow"))
    await _wait_state(conn, "s-slow", ["timed_out"])
    reply = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-slow"))
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.errors == ["cat >/dev/null; sleep 30: async hook timed_out: timed out"]


async def test_a_successful_async_run_adds_no_error(daemon_factory: Any, wire: Any) -> None:
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "FINE"))]}],
            "UserPromptSubmit": [{"hooks": [command_hook("true")]}],
        },
    )
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-fine"))
    await _wait_state(conn, "s-fine", ["finished"])
    reply = await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-fine"))
    assert isinstance(reply, protocol.FireReply)
    assert reply.result.errors == [] and reply.result.async_results == ["FINE", "SYS-FINE"]


# --- which timeout ----------------------------------------------------------------------


async def test_config_async_hooks_get_their_own_timeout_or_600_s_on_user_prompt_submit(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(
        handle,
        {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        async_hook(script("wait_go.sh", go, "", "DEFAULT")),
                        async_hook(script("wait_go.sh", go, "", "OWN"), timeout=45),
                    ]
                }
            ]
        },
    )
    conn = await wire(handle.socket)
    await conn.fire("UserPromptSubmit", event("UserPromptSubmit", "s-ups"))
    rows = await _wait_state(conn, "s-ups", ["running", "running"])
    assert sorted(r["timeout"] for r in rows) == [45.0, 600.0]
    go.touch()
    await _wait_state(conn, "s-ups", ["finished", "finished"])


async def test_a_config_async_session_end_hook_outlives_the_session_end_budget(
    daemon_factory: Any, wire: Any
) -> None:
    """SessionEnd's hooks share a 1.5 s budget; a background one is not bound by it."""
    handle = await daemon_factory()
    configure(
        handle, {"SessionEnd": [{"hooks": [async_hook(script("late_context.sh", "BYE", "2"))]}]}
    )
    conn = await wire(handle.socket)
    reply = await conn.fire("SessionEnd", event("SessionEnd-other", "s-end"))
    assert isinstance(reply, protocol.FireReply)
    (row,) = await conn.listing("s-end")
    assert row["timeout"] == 600.0
    # It sleeps 2 s, past the budget, and still finishes.
    (done,) = await _wait_state(conn, "s-end", ["finished"])
    assert done["exit_code"] == 0
    (result,) = await conn.check("s-end")
    assert result["messages"] == ["BYE", "SYS-BYE"]


# --- the listing ------------------------------------------------------------------------


async def test_a_listed_runs_elapsed_time_is_measured_from_its_start(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """``elapsed`` in ``async_list`` (``hookctl async``, ``top``): since the run started,
    up to now while it runs and up to its end once finished — so never negative and
    never more than this test has been running (a surviving mutant added the start
    time instead of subtracting it). A correctness bound, not a speed claim."""
    handle = await daemon_factory()
    go = tmp_path / "go"
    configure(handle, {"PostToolUse": [{"hooks": [async_hook(script("wait_go.sh", go, "", "X"))]}]})
    conn = await wire(handle.socket)
    began = time.time()
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-elapsed"))
    [running] = await _wait_state(conn, "s-elapsed", ["running"])
    assert 0 <= running["elapsed"] <= time.time() - began + 0.001
    go.touch()
    [finished] = await _wait_state(conn, "s-elapsed", ["finished"])
    assert running["elapsed"] <= finished["elapsed"] <= time.time() - began + 0.001


# --- no dedup ---------------------------------------------------------------------------


async def test_identical_async_command_hooks_all_run(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    pids = tmp_path / "pids"
    same = async_hook(f"cat >/dev/null; echo $$ >> {pids}")
    groups = [{"hooks": [same]}, {"matcher": "Bash", "hooks": [same]}, {"hooks": [same, same]}]
    configure(handle, {"PostToolUse": groups})
    configure(handle, {"PostToolUse": [{"hooks": [same]}]}, policy=True)
    conn = await wire(handle.socket)
    reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-dedup"))
    assert isinstance(reply, protocol.FireReply)
    assert [r.is_async for r in reply.result.hooks] == [True] * 5
    await _wait_state(conn, "s-dedup", ["finished"] * 5)
    assert len(set(pids.read_text().split())) == 5


async def test_identical_sync_command_hooks_run_once(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """The contrast: the same hook without ``async`` is deduplicated."""
    handle = await daemon_factory()
    pids = tmp_path / "pids"
    same = command_hook(f"cat >/dev/null; echo $$ >> {pids}")
    groups = [{"hooks": [same]}, {"matcher": "Bash", "hooks": [same]}, {"hooks": [same, same]}]
    configure(handle, {"PostToolUse": groups})
    configure(handle, {"PostToolUse": [{"hooks": [same]}]}, policy=True)
    conn = await wire(handle.socket)
    reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-sync"))
    assert isinstance(reply, protocol.FireReply) and len(reply.result.hooks) == 1
    assert len(pids.read_text().split()) == 1


# --- queue accounting ---------------------------------------------------------------


async def test_a_drained_queue_keeps_the_per_session_limits(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """One running per session: finishing one starts exactly one queued hook, and the
    queue's room is counted right afterwards (one more fits, the next is refused)."""
    handle = await daemon_factory(
        async_max_running=10, async_max_running_per_session=1, async_max_queued_per_session=2
    )
    gates = [tmp_path / f"go{i}" for i in range(5)]

    def gated(*indexes: int) -> dict[str, Any]:
        """Hook ``i`` marks that it started, then waits for its gate."""
        hooks = [
            async_hook(
                f"cat >/dev/null; touch {tmp_path}/started{i}; "
                f"while [ ! -e {gates[i]} ]; do sleep 0.02; done"
            )
            for i in indexes
        ]
        return {"PostToolUse": [{"hooks": hooks}]}

    async def states(*wanted: str) -> list[dict[str, Any]]:
        """The session's runs in these states, in any order (hooks are submitted at once)."""
        seen: list[str] = []

        async def reached() -> list[dict[str, Any]] | None:
            rows = await conn.listing("s-queue")
            seen[:] = sorted(r["state"] for r in rows)
            return rows if seen == sorted(wanted) else None

        try:
            found: list[dict[str, Any]] = await wait_until_async(reached)
        except trio.TooSlowError:
            raise AssertionError(f"wanted {sorted(wanted)}, last saw {seen}") from None
        return found

    async def release_running(_rows: list[dict[str, Any]]) -> None:
        def started() -> list[int]:
            return [i for i in range(len(gates)) if (tmp_path / f"started{i}").exists()]

        (running,) = await wait_until(started)
        gates[running].touch()

    configure(handle, gated(0, 1, 2))
    conn = await wire(handle.socket)
    try:
        await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-queue"))
        await release_running(await states("running", "queued", "queued"))
        await states("finished", "running", "queued")
        configure(handle, gated(3, 4))
        reply = await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-queue"))
        assert isinstance(reply, protocol.FireReply)
        refused = [e for e in reply.result.errors if "async hook refused" in e]
        assert len(refused) == 1, reply.result.errors
        # The reply took the finished result along (delivered); one runs, two wait.
        await states("delivered", "running", "queued", "queued")
    finally:
        for gate in gates:
            gate.touch()


async def test_the_journal_directory_is_private(daemon_factory: Any, wire: Any) -> None:
    """The journal holds hook outputs (stdout, stderr): only the user may read it."""
    handle = await daemon_factory()
    configure(handle, {"PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "P"))]}]})
    conn = await wire(handle.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-private"))
    await _wait_state(conn, "s-private", ["finished"])
    directory = handle.daemon.settings.state_path() / "async"
    assert directory.stat().st_mode & 0o777 == 0o700
    assert any(directory.iterdir())


async def test_a_backgrounded_hook_still_running_when_hookd_stops_is_killed(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """Output-level async: the supervisor owns the handed-over process, so stopping the
    daemon (a cancellation, not a timeout) must kill it too."""
    handle = await daemon_factory()
    go, done = tmp_path / "go", tmp_path / "done"
    hook = command_hook(script("ack_then_wait.sh", go, done))
    configure(handle, {"PreToolUse": [{"hooks": [hook]}]})
    conn = await wire(handle.socket)
    await conn.fire("PreToolUse", event("PreToolUse-Bash", "s-stop"))
    (row,) = await _wait_state(conn, "s-stop", ["running"])
    pid = row["pid"]
    assert pid is not None and alive(pid)
    handle.daemon.stop_requested.set()
    try:
        await wait_until(lambda: not alive(pid), timeout=20)
    finally:
        go.touch()
    assert not done.exists()


async def test_a_backgrounded_hooks_exit_code_is_reported(daemon_factory: Any, wire: Any) -> None:
    """After the ack the supervisor waits for the process: its real exit status is kept."""
    handle = await daemon_factory()
    hook = command_hook("""cat >/dev/null; echo '{"async": true}'; echo late >&2; exit 3""")
    configure(handle, {"PreToolUse": [{"hooks": [hook]}]})
    conn = await wire(handle.socket)
    reply = await conn.fire("PreToolUse", event("PreToolUse-Bash", "s-exit"))
    assert isinstance(reply, protocol.FireReply) and reply.result.hooks[0].is_async
    await _wait_state(conn, "s-exit", ["finished"])
    (result,) = await conn.check("s-exit")
    assert (result["exitCode"], result["stderr"]) == (3, "late\n")

"""Across restarts — graceful or SIGKILL — no async result is lost and none is repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from .helpers import (
    Wire,
    alive,
    async_hook,
    configure,
    event,
    kill_quietly,
    poll_results,
    read_pids,
    script,
    wait_until,
    wait_until_async,
)

ROOT = Path(__file__).resolve().parent.parent.parent


def _fast(text: str) -> dict[str, Any]:
    return {"hooks": [async_hook(script("late_context.sh", text))]}


def _gated(go: Path, text: str) -> dict[str, Any]:
    return {"hooks": [async_hook(script("wait_go.sh", go, "", text))]}


def _stuck(go: Path, pids: Path) -> dict[str, Any]:
    return {"hooks": [async_hook(script("wait_go.sh", go, pids, "NEVER"))]}


async def _phase_one(conn: Any, write_config: Any, tmp_path: Path, session: str) -> str:
    """Leave behind: one delivered result, one finished-undelivered, one still running.

    Returns the process id of the delivered one (it must never come back).  The
    undelivered one waits for a go file made only after its fire's reply, so
    no reply can take it.
    """
    write_config({"PostToolUse": [_fast("DELIVERED")]})
    await conn.fire("PostToolUse", event("PostToolUse-Bash", session))
    (first,) = await poll_results(conn, session, 1)
    assert first["messages"] == ["DELIVERED", "SYS-DELIVERED"]
    write_config({"PostToolUse": [_stuck(tmp_path / "never", tmp_path / "pids")]})
    await conn.fire("PostToolUse", event("PostToolUse-Bash", session))
    go = tmp_path / "go"
    write_config({"PostToolUse": [_gated(go, "WAITING")]})
    await conn.fire("PostToolUse", event("PostToolUse-Bash", session))
    go.touch()
    with trio.fail_after(20):
        while not any(
            r["state"] == "finished" and not r["delivered"] for r in await conn.listing(session)
        ):
            await trio.sleep(0.02)
    await wait_until(lambda: read_pids(tmp_path / "pids"))
    return str(first["processId"])


async def _after_restart(conn: Wire, session: str, delivered_id: str, cancel_reason: str) -> None:
    results = await conn.check(session)
    by_text = {tuple(r["messages"]): r for r in results}
    assert delivered_id not in {r["processId"] for r in results}
    assert set(by_text) == {("WAITING",), ()}
    stuck = by_text[()]
    assert stuck["state"] == "cancelled" and cancel_reason in stuck["error"]
    assert await conn.check(session) == []


async def test_graceful_restart_keeps_undelivered_results_and_reports_cancelled_runs(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    first = await daemon_factory(state_dir=str(state))

    def write_config(hooks: dict[str, Any]) -> None:
        configure(first, hooks)

    conn = await wire(first.socket)
    try:
        delivered_id = await _phase_one(conn, write_config, tmp_path, "s-graceful")
        first.daemon.stop_requested.set()
        await wait_until(lambda: not first.socket.exists(), timeout=20)
        # Stopping killed the running hook's process.
        await wait_until(
            lambda: not any(alive(p) for p in read_pids(tmp_path / "pids")), timeout=10
        )

        second = await daemon_factory(state_dir=str(state))
        conn2 = await wire(second.socket)
        await _after_restart(conn2, "s-graceful", delivered_id, "hookd stopped while it ran")
        second.daemon.stop_requested.set()
        await wait_until(lambda: not second.socket.exists(), timeout=20)

        third = await daemon_factory(state_dir=str(state))
        conn3 = await wire(third.socket)
        assert await conn3.check("s-graceful") == []
        assert third.daemon.async_runner.listing(None) == []
    finally:
        kill_quietly(read_pids(tmp_path / "pids"))


async def _start_subprocess_daemon(root: Path, state: Path) -> trio.Process:
    home = root / "home"
    home.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    env.pop("HOOKD_SOCKET", None)
    proc = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "hookd",
            "serve",
            "--socket",
            str(root / "hookd.sock"),
            "--state-dir",
            str(state),
            "--user-file",
            str(root / "hooks.json"),
            "--policy-file",
            str(root / "policy.json"),
            "--no-watch",
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    with trio.fail_after(30):
        while True:
            if proc.returncode is not None:
                raise AssertionError(f"hookd exited with {proc.returncode}")
            try:
                probe = await trio.open_unix_socket(str(root / "hookd.sock"))
            except OSError:
                await trio.sleep(0.05)
                continue
            await probe.aclose()
            return proc


async def test_sigkill_restart_loses_nothing_and_repeats_nothing(wire: Any, tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    short = Path(f"/tmp/hk-async-{os.getpid()}")  # Unix socket paths must stay short
    short.mkdir(exist_ok=True)
    state = root / "state"
    procs: list[trio.Process] = []

    async def reload_via_sighup(proc: trio.Process, conn: Wire) -> None:
        """SIGHUP, then wait until status shows the new generation (the reload happened)."""
        before = (await conn.status())["generation"]
        proc.send_signal(signal.SIGHUP)
        await wait_until_async(lambda: _generation_after(conn, before))

    try:
        proc = await _start_subprocess_daemon(short, state)
        procs.append(proc)
        config = short / "hooks.json"

        conn = await wire(short / "hookd.sock")
        pending_reload: list[dict[str, Any]] = []

        def write_config(hooks: dict[str, Any]) -> None:
            config.write_text(json.dumps({"hooks": hooks}))
            pending_reload.append(hooks)

        # The subprocess reloads on SIGHUP; wrap the phase so each write is applied.
        class Reloading:
            def __init__(self, inner: Wire) -> None:
                self.inner = inner

            async def fire(self, *args: Any) -> Any:
                if pending_reload:
                    pending_reload.clear()
                    await reload_via_sighup(proc, self.inner)
                return await self.inner.fire(*args)

            def __getattr__(self, name: str) -> Any:
                return getattr(self.inner, name)

        delivered_id = await _phase_one(Reloading(conn), write_config, tmp_path, "s-kill")
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        await conn.aclose()

        proc2 = await _start_subprocess_daemon(short, state)
        procs.append(proc2)
        conn2 = await wire(short / "hookd.sock")
        await _after_restart(conn2, "s-kill", delivered_id, "hookd exited before it finished")
        # The restarted daemon found the orphaned run by its HOOKD_RUN_ID and killed it.
        orphans = read_pids(tmp_path / "pids")
        assert orphans
        # SIGKILLed, but an orphan dies when it is next scheduled: wait for that.
        await wait_until(lambda: not [pid for pid in orphans if alive(pid)], timeout=10)
        proc2.send_signal(signal.SIGKILL)
        await proc2.wait()
        await conn2.aclose()

        proc3 = await _start_subprocess_daemon(short, state)
        procs.append(proc3)
        conn3 = await wire(short / "hookd.sock")
        assert await conn3.check("s-kill") == []
        await conn3.aclose()
    finally:
        for p in procs:
            if p.returncode is None:
                p.send_signal(signal.SIGKILL)
                await p.wait()
        # Belt and braces, should an assertion above have failed.
        kill_quietly(read_pids(tmp_path / "pids"))
        for name in ("hookd.sock", "hooks.json"):
            try:
                (short / name).unlink()
            except OSError:
                pass


async def _generation_after(conn: Wire, before: int) -> bool:
    generation: int = (await conn.status())["generation"]
    return generation > before


async def test_an_undelivered_result_survives_two_restarts(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """Each start replays the journal and rewrites it with what still matters, so a
    result nobody took must be in the rewritten journal too: a third daemon still has
    it (a surviving mutant wrote the rewrite empty, which a single restart cannot
    notice — the second daemon had the result in memory)."""
    state = tmp_path / "state"
    first = await daemon_factory(state_dir=str(state))
    configure(first, {"PostToolUse": [_fast("KEPT")]})
    conn = await wire(first.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-twice"))
    await wait_until(lambda: first.daemon.async_runner.stats()["undelivered"] == 1)
    first.daemon.stop_requested.set()
    await wait_until(lambda: not first.socket.exists(), timeout=20)
    second = await daemon_factory(state_dir=str(state))
    assert second.daemon.async_runner.stats()["undelivered"] == 1
    second.daemon.stop_requested.set()
    await wait_until(lambda: not second.socket.exists(), timeout=20)
    third = await daemon_factory(state_dir=str(state))
    conn3 = await wire(third.socket)
    [kept] = await conn3.check("s-twice")
    assert kept["messages"][0] == "KEPT"


async def test_a_result_dropped_by_retention_stays_dropped_after_a_restart(
    daemon_factory: Any, wire: Any, tmp_path: Path
) -> None:
    """Retention's drops are journaled: the next daemon (with roomier limits) must not
    bring the dropped result back (a surviving mutant skipped the journal record)."""
    state = tmp_path / "state"
    first = await daemon_factory(state_dir=str(state), async_retention_per_session=1)
    runner = first.daemon.async_runner
    gates = [tmp_path / "go0", tmp_path / "go1"]
    configure(first, {"PostToolUse": [_gated(gates[0], "OLDER"), _gated(gates[1], "NEWER")]})
    conn = await wire(first.socket)
    await conn.fire("PostToolUse", event("PostToolUse-Bash", "s-dropped"))
    for finished, go in enumerate(gates, 1):  # OLDER finishes first, so it is dropped
        go.touch()
        await wait_until(lambda: runner.counters["finished"] == finished)  # noqa: B023
    assert runner.counters["expired"] == 1
    first.daemon.stop_requested.set()
    await wait_until(lambda: not first.socket.exists(), timeout=20)
    second = await daemon_factory(state_dir=str(state))
    conn2 = await wire(second.socket)
    assert [r["messages"] for r in await conn2.check("s-dropped")] == [["NEWER"]]

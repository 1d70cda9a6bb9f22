"""One session's hooks cannot switch off another session's guard (issue 28, item 4).

The attack, reproduced: a fork bomb in session A exhausts the processes the
daemon may have; session B's guard "could not start" again and again.  With
one breaker per hook shared by every session, five such failures paused B's
guard for everyone, and the next events ran no hook: a fail-open guard stopped
guarding after the bomb was gone, a fail-closed one let calls through.

The limit is a pids cgroup around the daemon (``pids.max``) — what systemd's
``TasksMax=`` puts around ``hookd.service`` — rather than RLIMIT_NPROC under
another uid: root ignores RLIMIT_NPROC, and another uid cannot reach this
machine's interpreter (under ``/root``, mode 0700).  Fork and clone fail with
EAGAIN exactly as at RLIMIT_NPROC.  The daemon runs as a subprocess in its own
cgroup; the clients are this test, outside it.  The bomb is bounded by the
limit and lets go when the test says so; every process in the cgroup is killed
at the end and the cgroup removed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.daemon.audit import AuditRun, read_records
from hookd_client.client import Client, DaemonUnavailable
from reliability.helpers import DATA, ROOT

PIDS_MAX = 48
"""The daemon's cgroup limit (tasks: its threads, its hooks, the bomb)."""

CGROUP_ROOT = Path("/sys/fs/cgroup/pids")
"""cgroup v1's pids controller; under cgroup v2 the same files sit in the unified tree."""

GUARD = "grep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; } || exit 0"


def _pids_cgroup() -> Path | None:
    """A new pids cgroup of this test's own, or None where the machine offers none."""
    for parent in (CGROUP_ROOT, Path("/sys/fs/cgroup")):
        if not (parent / "cgroup.procs").exists() or not os.access(parent, os.W_OK):
            continue
        path = Path(tempfile.mkdtemp(prefix="hookd-test-", dir=parent))
        if (path / "pids.max").exists():
            return path
        path.rmdir()
    return None


class Contained:
    """A daemon in a pids cgroup, and the files around it."""

    def __init__(self, cgroup: Path, root: Path) -> None:
        self.cgroup = cgroup
        self.root = root
        self.socket = root / "hookd.sock"
        self.full = root / "full"
        self.release = root / "release"
        self.project = root / "project"

    async def start_daemon(self, nursery: trio.Nursery) -> trio.Process:
        procs = str(self.cgroup / "cgroup.procs")

        def enter_cgroup() -> None:  # in the child, before exec
            with open(procs, "w") as fh:
                fh.write("0")

        program = "import sys; from hookd.cli.hookd_main import main; sys.exit(main())"
        argv = [sys.executable, "-c", program, "serve", "--socket", str(self.socket)]
        argv += ["--state-dir", str(self.root / "state"), "--no-watch", "--log-level", "warning"]
        argv += ["--breaker-threshold", "5", "--breaker-cooldown", "3600"]
        env = {
            **os.environ,
            "HOME": str(self.root / "home"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
        }
        env.pop("HOOKD_SOCKET", None)
        log = os.open(self.root / "daemon.log", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)

        async def run(task_status: trio.TaskStatus[trio.Process]) -> None:
            try:
                await trio.run_process(
                    argv,
                    check=False,
                    preexec_fn=enter_cgroup,
                    env=env,
                    stderr=log,
                    task_status=task_status,
                )
            finally:
                os.close(log)

        process: trio.Process = await nursery.start(run)
        # Ready once it answers (a client does not retry a socket nobody serves yet).
        with trio.fail_after(60):
            while True:
                try:
                    with Client(self.socket, retries=0) as client:
                        client.status()
                    return process
                except DaemonUnavailable:
                    assert process.returncode is None, (self.root / "daemon.log").read_text()
                    await trio.sleep(0.02)

    def tasks(self) -> int:
        return int((self.cgroup / "pids.current").read_text())

    def kill_everything(self) -> None:
        """Every process in the cgroup is this test's: kill them, then remove the cgroup."""
        procs = self.cgroup / "cgroup.procs"
        for _ in range(1000):
            pids = [int(p) for p in procs.read_text().split()]
            if not pids:
                self.cgroup.rmdir()
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(-1, os.WNOHANG)  # the daemon is our child
            except ChildProcessError:
                pass
        raise AssertionError(f"processes survive in {self.cgroup}: {procs.read_text()}")


@asynccontextmanager
async def contained(on_failure: str) -> AsyncIterator[Contained]:
    cgroup = _pids_cgroup()
    if cgroup is None:
        pytest.skip("no writable pids cgroup controller on this machine")
    (cgroup / "pids.max").write_text(str(PIDS_MAX))
    root = Path(tempfile.mkdtemp(prefix="hookd-pids-", dir="/tmp"))
    world = Contained(cgroup, root)
    for sub in ("home/.config/hookd", "state", "project"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    guard: dict[str, Any] = {"type": "command", "command": GUARD}
    if on_failure == "block":
        guard["onFailure"] = "block"
    bomb = f"{sys.executable} {DATA / 'fork_bomb.py'} {world.full} {world.release}"
    hooks = {
        "PreToolUse": [
            {"matcher": "Bomb", "hooks": [{"type": "command", "command": bomb, "timeout": 300}]},
            {"matcher": "Bash", "hooks": [guard]},
        ]
    }
    (root / "home/.config/hookd/hooks.json").write_text(json.dumps({"hooks": hooks}))
    try:
        yield world
    finally:
        world.kill_everything()
        shutil.rmtree(root, ignore_errors=True)


async def _wait_for(path: Path) -> None:
    with trio.fail_after(120):  # a guard, not a measure
        while not path.exists():
            await trio.sleep(0.02)


def _event(session: str, tool: str, command: str, cwd: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": cwd,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"command": command},
        "tool_use_id": "toolu_1",
    }


@pytest.mark.parametrize("on_failure", ["continue", "block"])
async def test_a_fork_bomb_in_one_session_does_not_switch_off_anothers_guard(
    on_failure: str,
) -> None:
    async with contained(on_failure) as world, trio.open_nursery() as nursery:
        daemon = await world.start_daemon(nursery)
        cwd = str(world.project)
        client = Client(world.socket, timeout=120, fire_timeout=300, retries=200, max_backoff=0.2)

        async def fire(session: str, tool: str, command: str) -> Any:
            event = _event(session, tool, command, cwd)
            reply = await trio.to_thread.run_sync(client.fire, "PreToolUse", event)
            return reply.result

        # Before: B's guard guards.
        assert (await fire("B", "Bash", "rm -rf /")).decision == "deny"
        assert (await fire("B", "Bash", "ls")).decision is None

        # Session A's hook exhausts the daemon's processes and holds them.
        bombing = trio.Event()

        async def bomb() -> None:
            with Client(world.socket, fire_timeout=300) as a:
                await trio.to_thread.run_sync(a.fire, "PreToolUse", _event("A", "Bomb", "", cwd))
            bombing.set()

        nursery.start_soon(bomb)
        await _wait_for(world.full)
        assert world.tasks() >= PIDS_MAX - 1

        # Meanwhile B's guard cannot start: the daemon says why, and a fail-closed
        # guard blocks every call — not five and then none.
        during = [await fire("B", "Bash", "rm -rf /") for _ in range(8)]
        if on_failure == "block":
            assert [r.decision for r in during] == ["deny"] * 8, during
            assert all('onFailure is "block"' in r.blocking_messages[0] for r in during)
        outcomes = [[run.outcome for run in r.hooks] for r in during]
        expected = "blocking" if on_failure == "block" else "non_blocking_error"
        assert outcomes == [[expected]] * 8, during  # tried every time, never paused
        for run in (r.hooks[0] for r in during):
            assert run.daemon_fault and not run.paused, run
            assert run.error is not None and "could not start" in run.error, run
            assert "out of processes" in run.error

        world.release.touch()
        with trio.fail_after(120):
            await bombing.wait()

        # After: B's guard runs again at once — it was never paused.
        result = await fire("B", "Bash", "rm -rf /")
        assert result.decision == "deny", result
        [run] = result.hooks
        assert run.pid is not None and run.outcome == "blocking" and not run.error, run
        assert (await fire("B", "Bash", "ls")).decision is None
        status = await trio.to_thread.run_sync(client.status)
        assert [b for b in status["breakers"] if b["paused"]] == []
        assert status["counters"]["daemon_faults"] >= 8
        records = read_records(world.root / "state" / "audit").records
        faults = [r for r in records if isinstance(r, AuditRun) and r.daemon_fault]
        assert len(faults) >= 8 and all(r.session_id == "B" for r in faults)
        client.close()
        daemon.send_signal(signal.SIGTERM)

"""Under ``hookd serve`` a hook has a process group of its own in the daemon's session.

A new session per hook is a new scheduling group wherever the kernel groups sessions
(``sched_autogroup``), and on busy cores its first child waits ~3× longer for a CPU
(docs/performance.md, "Parallel spawns").  ``hookd serve`` registers every child it
starts, so it does not need the session to tell them from the orphans it adopts
(:mod:`hookd.subreaper`); a daemon with a controlling terminal still gives each hook
a session, so that no hook can read that terminal.  Each case runs a real
``hookd serve`` with a real command hook that writes down what the kernel says of it;
the last one is an escape that the shared session makes possible to try — a hook's
descendant joining the daemon's own process group, with its marker and pipes gone.
"""

from __future__ import annotations

import json
import os
import pty
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from hookd import proctree
from hookd_client.client import Client
from reliability.helpers import bench_module, event

fuzz = bench_module("fuzz")

# The hook's child joins the daemon's process group, drops the run marker, closes its
# pipes and becomes an orphan (its parent exits at once); the hook then outlives its
# timeout.  Only the subreaper's adoption can find the child.
ESCAPE = r"""
import os, sys, time
daemon_group = os.getpgid(os.getppid())
if os.fork() == 0:
    if os.fork() == 0:
        os.setpgid(0, daemon_group)
        for fd in (0, 1, 2):
            os.close(fd)
        with open(sys.argv[1], "w") as note:
            note.write(str(os.getpid()))
        os.execve("/bin/sleep", ["sleep", "1000"], {})
    os._exit(0)
time.sleep(1000)
"""


def _hooks(command: str, timeout: int = 30) -> dict[str, Any]:
    hook = {"type": "command", "command": command, "timeout": timeout}
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}


def _python_hook(callable_: str) -> dict[str, Any]:
    hook = {"type": "python", "callable": callable_}
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}


def _fire(sock: Path) -> Any:
    with Client(sock) as client:
        return client.fire("PreToolUse", event(session_id="sessions"))


def _where(stat: str) -> dict[str, int]:
    """pid, process group and session from a ``/proc/<pid>/stat`` line."""
    fields = stat.rsplit(")", 1)[1].split()
    return {"pid": int(stat.split()[0]), "pgid": int(fields[2]), "sid": int(fields[3])}


async def _where_hooks_ran(
    tmp_path: Path, commands: list[str], preexec_fn: Callable[[], None] | None = None
) -> tuple[list[dict[str, int]], int]:
    """Where each command hook ran (each prints its own ``/proc/self/stat``), and the
    daemon's session."""
    hooks = [{"type": "command", "command": command} for command in commands]
    config = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}
    with fuzz.daemon_process(config, preexec_fn=preexec_fn) as daemon:
        with trio.fail_after(60):
            reply = await trio.to_thread.run_sync(_fire, daemon.socket)
        assert [run.outcome for run in reply.result.hooks] == ["success"] * len(hooks), reply
        return [_where(run.stdout) for run in reply.result.hooks], os.getsid(daemon.pid)


async def test_a_hook_has_its_own_group_in_the_daemons_session(tmp_path: Path) -> None:
    [seen], daemon_sid = await _where_hooks_ran(tmp_path, ["cat /proc/self/stat"])
    assert seen["pgid"] == seen["pid"], seen  # killpg still reaches the hook and its children
    assert seen["sid"] == daemon_sid != seen["pid"], seen


async def test_a_python_hook_that_may_run_warm_has_a_session_warm_or_cold(
    tmp_path: Path,
) -> None:
    """A warm spare waits in a scheduling group of its own (in the daemon's it runs
    slower), and the same hook must find the same session warm or cold: so a Python
    hook hookd may run warm has a session of its own, as before, either way."""
    script = tmp_path / "stat.py"
    script.write_text("print(open('/proc/self/stat').read(), end='')\n")
    hooks = [{"type": "command", "command": f"{sys.executable} {script}"}]
    config = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}}
    with fuzz.daemon_process(config) as daemon:
        launches = set()
        for _ in range(10):
            with trio.fail_after(60):
                reply = await trio.to_thread.run_sync(_fire, daemon.socket)
            (run,) = reply.result.hooks
            seen = _where(run.stdout)
            assert seen["sid"] == seen["pgid"] == seen["pid"] != os.getsid(daemon.pid), seen
            launches.add("warm" if run.launch == "warm" else "cold")
            if launches == {"warm", "cold"}:
                break  # the first run is cold; the next waits for the spare it started
        assert launches == {"warm", "cold"}, launches


async def test_a_python_worker_has_its_own_group_in_the_daemons_session(tmp_path: Path) -> None:
    found = tmp_path / "where.json"
    module = tmp_path / "where_worker.py"
    module.write_text(
        "import json, os\n"
        "def hook(event):\n"
        f"    with open({str(found)!r}, 'w') as out:\n"
        "        json.dump({'pid': os.getpid(), 'pgid': os.getpgid(0), 'sid': os.getsid(0)}, out)\n"
    )
    with fuzz.daemon_process(_python_hook(f"{module}:hook")) as daemon:
        with trio.fail_after(60):
            reply = await trio.to_thread.run_sync(_fire, daemon.socket)
        assert [run.outcome for run in reply.result.hooks] == ["success"], reply.result
        seen, daemon_sid = json.loads(found.read_text()), os.getsid(daemon.pid)
    assert seen["pgid"] == seen["pid"], seen
    assert seen["sid"] == daemon_sid != seen["pid"], seen


async def test_with_a_controlling_terminal_each_hook_has_a_session(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    name = os.ttyname(terminal)

    def take_the_terminal() -> None:  # in the daemon before exec: a session with a terminal
        os.setsid()
        os.close(os.open(name, os.O_RDWR))  # a session leader's first tty becomes its own

    try:
        [seen], daemon_sid = await _where_hooks_ran(
            tmp_path, ["cat /proc/self/stat"], take_the_terminal
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert seen["sid"] == seen["pgid"] == seen["pid"] != daemon_sid, seen


async def test_an_orphan_that_joins_the_daemons_group_dies_at_the_timeout(
    tmp_path: Path,
) -> None:
    script = tmp_path / "escape.py"
    script.write_text(ESCAPE)
    note = tmp_path / "escapee"
    # Through the shell (``exec``): a Python hook hookd may run warm has a session of its own.
    command = f"exec {sys.executable} {script} {note}"
    with fuzz.daemon_process(_hooks(command, timeout=3)) as daemon:
        with trio.fail_after(60):
            reply = await trio.to_thread.run_sync(_fire, daemon.socket)
        (run,) = reply.result.hooks
        assert run.outcome == "cancelled" and run.timed_out, run
        escapee = int(note.read_text())
        proc = proctree.info(escapee)
        deadline = time.monotonic() + 30  # the kill is done before the reply; reaping may lag
        while proc is not None and proc.state != "Z" and time.monotonic() < deadline:
            await trio.sleep(0.05)
            proc = proctree.info(escapee)
        assert proc is None or proc.state == "Z", f"escaped: {proc}"

"""A hook cannot trace the daemon it runs under (issue 28, item 12).

Hooks run as the daemon's user, and the kernel lets a process ``ptrace`` (or
read ``/proc/<pid>/mem`` of) another of its uid — unless the target is not
dumpable.  The probe here is a real command hook of a real ``hookd serve``:
it tries both against its daemon and writes down what the kernel said.

Root passes every ptrace check by its capability, whatever the target; so
when the suite runs as root, the daemon is started without ``CAP_SYS_PTRACE``
in its bounding set (hook and daemon then have root's uid and nothing more).
A second uid would do as well, but the interpreter here may live where another
uid cannot run it (``/root``).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client.client import Client
from reliability.helpers import bench_module, event

fuzz = bench_module("fuzz")

PR_CAPBSET_DROP = 24
CAP_SYS_PTRACE = 19

PROBE = r"""
import ctypes, errno, json, os, sys

def daemon_pid():
    pid = os.getppid()
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
        if b"hookd" in argv and b"serve" in argv:
            return pid
        with open(f"/proc/{pid}/stat", "rb") as fh:
            pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
    raise SystemExit("no hookd among my ancestors")

pid = daemon_pid()
found = {"pid": pid, "uid": os.getuid()}
try:
    with open(f"/proc/{pid}/mem", "rb") as fh:
        found["mem"] = "opened"
except OSError as exc:
    found["mem"] = errno.errorcode.get(exc.errno, str(exc.errno))
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
    found["ptrace"] = "attached"  # released when this process exits
else:
    found["ptrace"] = errno.errorcode.get(ctypes.get_errno(), "?")
with open(sys.argv[1], "w") as fh:
    json.dump(found, fh)
"""


def _without_ptrace_capability() -> None:
    """In the daemon's child before exec: as root, give up CAP_SYS_PTRACE for good."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP")


def _fire(sock: Path) -> Any:
    with Client(sock) as client:
        return client.fire("PreToolUse", event(session_id="probe"))


async def test_a_hook_cannot_trace_or_read_the_daemon(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    found = tmp_path / "found.json"
    hooks = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": f"{sys.executable} {probe} {found}"}],
                }
            ]
        }
    }
    preexec = _without_ptrace_capability if os.geteuid() == 0 else None
    with fuzz.daemon_process(hooks, preexec_fn=preexec) as daemon:
        with trio.fail_after(60):
            reply = await trio.to_thread.run_sync(_fire, daemon.socket)
        assert [run.outcome for run in reply.result.hooks] == ["success"], reply.result
        seen = json.loads(found.read_text())
        assert seen["pid"] == daemon.pid and seen["uid"] == os.geteuid()
        assert seen["mem"] == "EACCES" or seen["mem"] == "EPERM", seen
        assert seen["ptrace"] == "EPERM", seen
        # What still reads: the daemon's status over the socket (its own /proc
        # included) and /proc/<daemon>/status (RSS) from outside.
        status = await trio.to_thread.run_sync(lambda: Client(daemon.socket).status())
        assert status["pid"] == daemon.pid
        assert status["process"]["dumpable"] is False
        assert status["process"]["fds"] > 0 and status["process"]["rss_kb"] > 0
        assert daemon.rss_kb() > 0
        assert daemon.proc.poll() is None


def test_the_module_says_what_it_did() -> None:
    """``dumpable`` reads the flag back: the test process itself stays dumpable."""
    from hookd.daemon import own_process

    assert own_process.dumpable() is True


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can drop a bounding capability")
def test_the_probe_sees_through_a_dumpable_process(tmp_path: Path) -> None:
    """The probe's own check: against a dumpable process of its uid it attaches (so
    the test above fails for the right reason when the daemon is dumpable)."""
    import subprocess

    target = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        preexec_fn=_without_ptrace_capability,
    )
    try:
        probe = tmp_path / "probe.py"
        probe.write_text(
            PROBE.replace(
                "def daemon_pid():", f"def daemon_pid():\n    return {target.pid}\ndef _unused():"
            )
        )
        found = tmp_path / "found.json"
        subprocess.run(
            [sys.executable, str(probe), str(found)],
            check=True,
            preexec_fn=_without_ptrace_capability,
            timeout=60,
        )
        seen = json.loads(found.read_text())
        assert seen["mem"] == "opened" and seen["ptrace"] == "attached", seen
    finally:
        target.kill()
        target.wait()

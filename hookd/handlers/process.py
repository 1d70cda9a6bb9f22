"""Spawn one hook process and guarantee that nothing of it outlives its deadline.

Claude Code signals only the direct child on timeout, so grandchildren
survive (its issues #24206, #86578).  hookd uses three nets, each catching
what the previous one misses:

1. every hook starts in a **new session and process group** (``setsid``), so
   ``killpg`` reaches the hook and everything it forks (double-forks too);
2. every hook's environment carries a unique ``HOOKD_RUN_ID``; at kill time
   ``/proc/*/environ`` is scanned for it, which finds descendants that called
   ``setsid`` themselves and left the group (the technique of Jenkins'
   ProcessTreeKiller).  Only a process that also scrubs its environment
   escapes this, and the docs say so;
3. kills go TERM → short grace → KILL, and the daemon reaps the child.

Output is read with a byte cap while the pipe keeps draining: a hook that
writes 100 MB neither blocks on a full pipe nor grows the daemon's memory.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
import trio

__all__ = ["ProcessResult", "kill_tree", "run_process_capped"]

log = structlog.get_logger("hookd.process")

DEFAULT_OUTPUT_CAP = 1024 * 1024
_CHUNK = 65536


@dataclass(slots=True)
class ProcessResult:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    truncated: bool
    timed_out: bool
    pid: int | None
    spawn_error: str | None = None
    killed: int = 0
    """How many processes the kill found still alive (0 when it exited on its own)."""


class _Capture:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        room = self.cap - self.size
        if room <= 0:
            self.truncated = True
            return
        if len(chunk) > room:
            chunk = chunk[:room]
            self.truncated = True
        self.parts.append(chunk)
        self.size += len(chunk)

    def value(self) -> bytes:
        return b"".join(self.parts)


async def _drain(stream: trio.abc.ReceiveStream | None, capture: _Capture) -> None:
    if stream is None:
        return
    async with stream:
        while True:
            try:
                chunk = await stream.receive_some(_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not chunk:
                return
            capture.add(bytes(chunk))


async def _feed(stream: trio.abc.SendStream | None, data: bytes) -> None:
    if stream is None:
        return
    async with stream:
        try:
            if data:
                await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the hook closed stdin early: that is its right


async def run_process_capped(
    argv: Sequence[str],
    *,
    stdin: bytes,
    cwd: str | None,
    env: Mapping[str, str],
    timeout: float,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    kill_grace: float = 1.0,
    pipe_grace: float = 1.0,
    on_spawn: Callable[[int], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion or ``timeout``; on timeout or cancellation kill its tree.

    ``pipe_grace``: once the hook itself has exited, how long to keep reading
    from pipes that a background grandchild may still hold open.  Claude Code
    waits for those until the timeout; hookd stops reading after the grace
    (a documented difference), so ``cmd &`` in a hook cannot stall an event.
    """
    run_id = uuid.uuid4().hex
    full_env = dict(env)
    full_env["HOOKD_RUN_ID"] = run_id
    workdir = cwd if cwd and os.path.isdir(cwd) else None
    try:
        proc = await trio.lowlevel.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=full_env,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(None, b"", b"", False, False, None, spawn_error=str(exc))
    if on_spawn is not None:
        on_spawn(proc.pid)

    out, err = _Capture(output_cap), _Capture(output_cap)
    timed_out = False
    killed = 0
    try:
        with trio.move_on_after(timeout) as deadline:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_feed, proc.stdin, stdin)
                readers = trio.CancelScope()

                async def read_all() -> None:
                    with readers:
                        async with trio.open_nursery() as inner:
                            inner.start_soon(_drain, proc.stdout, out)
                            inner.start_soon(_drain, proc.stderr, err)

                nursery.start_soon(read_all)
                await proc.wait()
                readers.deadline = min(readers.deadline, trio.current_time() + pipe_grace)
        timed_out = deadline.cancelled_caught
    finally:
        if proc.returncode is None or timed_out:
            with trio.CancelScope(shield=True):
                killed = await kill_tree(proc, run_id, kill_grace)
    return ProcessResult(
        returncode=proc.returncode if not timed_out else None,
        stdout=out.value(),
        stderr=err.value(),
        truncated=out.truncated or err.truncated,
        timed_out=timed_out,
        pid=proc.pid,
        killed=killed,
    )


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError as exc:
        log.warning("killpg refused", pgid=pgid, error=str(exc))
        return False


def marked_processes(run_id: str) -> list[int]:
    """PIDs whose environment carries ``HOOKD_RUN_ID=<run_id>`` (our descendants)."""
    marker = f"HOOKD_RUN_ID={run_id}".encode()
    found: list[int] = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == me:
            continue
        try:
            data = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if marker + b"\0" in data or data.endswith(marker):
            found.append(pid)
    return found


def _kill_pids(pids: Sequence[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError as exc:
            if exc.errno not in (errno.ESRCH, errno.EPERM):
                log.warning("kill failed", pid=pid, error=str(exc))


async def kill_tree(proc: trio.Process, run_id: str, grace: float) -> int:
    """TERM the group and every marked process, wait ``grace``, then KILL what is left.

    Returns how many processes were alive when the kill began.  Always reaps
    the direct child before returning.
    """
    pgid = proc.pid
    stragglers = marked_processes(run_id)
    alive = len(stragglers)
    _signal_group(pgid, signal.SIGTERM)
    _kill_pids(stragglers, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)
    with trio.move_on_after(grace):
        await proc.wait()
        # Give the rest of the group the same grace to finish dying.
        end = time.monotonic() + grace
        while time.monotonic() < end and marked_processes(run_id):
            await trio.sleep(0.02)
    _signal_group(pgid, signal.SIGKILL)
    _kill_pids(marked_processes(run_id), signal.SIGKILL)
    await proc.wait()
    return alive

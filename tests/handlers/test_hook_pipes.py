"""A command hook's start and pipes (hookd/handlers/spawn.py, hookd/handlers/process.py).

- a hook whose exec fails is reported exactly as ``subprocess.Popen`` reports it (the
  start calls ``fork_exec`` without ``Popen``, and its errors must read the same: the
  direct-exec fallback and the hook's failure message depend on them), and no
  descriptor is left open;
- a large event that the hook did not read, on a stdin that a background process of the
  hook still holds, does not hold the run past the pipe grace once the hook exited (it
  used to wait for the timeout, as the pipes' readers no longer do).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import trio

from hookd import proctree
from hookd.handlers.process import run_process_capped
from hookd.handlers.spawn import spawn
from support.processes import alive

WAIT = 30.0
"""The run's timeout: reached only when the run waits for the background process."""


def _open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


def _popen_error(argv: list[str], cwd: str | None, env: dict[str, str]) -> OSError:
    with pytest.raises(OSError) as caught:
        subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True)
    return caught.value


@pytest.mark.parametrize(
    ("argv", "cwd"),
    [
        (["no-such-program-hookd"], None),
        (["/no/such/dir/prog"], None),
        (["/etc/hostname"], None),  # not executable
        (["/bin/sh", "-c", "true"], "/no/such/working/dir"),
    ],
    ids=["not-on-path", "no-such-file", "not-executable", "bad-cwd"],
)
def test_a_failed_start_reads_as_popen_reports_it(argv: list[str], cwd: str | None) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    expected = _popen_error(argv, cwd, env)
    before = _open_fds()
    with pytest.raises(OSError) as caught:
        spawn(argv, cwd=cwd, env=env)
    got = caught.value
    assert (type(got), got.errno, got.strerror, got.filename, str(got)) == (
        type(expected),
        expected.errno,
        expected.strerror,
        expected.filename,
        str(expected),
    )
    assert _open_fds() <= before


async def test_a_hook_exit_code_and_environment_come_through_the_start(tmp_path: Path) -> None:
    """The lean start gives the program its argv, environment, working directory and
    stdio, looked up on the hook's own PATH, and its exit status, as ``Popen`` did."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    program = bindir / "hookd-probe"
    program.write_text('#!/bin/sh\nprintf "%s|%s|%s|" "$1" "$PROBE" "$(pwd)"; cat; exit 7\n')
    program.chmod(0o755)
    result = await run_process_capped(
        ["hookd-probe", "arg one"],
        stdin=b"the event",
        cwd=str(tmp_path),
        env={"PATH": f"{bindir}:/usr/bin:/bin", "PROBE": "é"},
        timeout=WAIT,
        output_cap=1 << 20,
        kill_grace=1.0,
        pipe_grace=1.0,
    )
    assert result.spawn_error is None
    assert result.returncode == 7
    assert result.stdout == f"arg one|é|{tmp_path}|the event".encode()


async def test_the_program_is_looked_up_on_each_starts_own_path_and_disk(tmp_path: Path) -> None:
    """The list of files ``exec`` tries is kept per program name and PATH, never what is
    on disk: the same name on another PATH is another program, a program that appears
    after a failed start is found by the next one, and with no PATH the default path
    is searched, as ``Popen`` does."""
    first, second = tmp_path / "first", tmp_path / "second"
    for directory, word in ((first, "one"), (second, "two")):
        directory.mkdir()
        script = directory / "hookd-which"
        script.write_text(f"#!/bin/sh\necho {word}\n")
        script.chmod(0o755)

    async def output(path: str) -> str:
        result = await run_process_capped(
            ["hookd-which"], stdin=b"", cwd=None, env={"PATH": path}, timeout=WAIT,
            output_cap=1 << 16, kill_grace=1.0, pipe_grace=1.0,
        )  # fmt: skip
        assert result.returncode == 0, result
        return result.stdout.decode().strip()

    assert await output(f"{first}:/bin") == "one"
    assert await output(f"{second}:/bin") == "two"
    late = tmp_path / "late"
    late.mkdir()
    with pytest.raises(FileNotFoundError):
        spawn(["hookd-which"], cwd=None, env={"PATH": str(late)})
    (late / "hookd-which").symlink_to(second / "hookd-which")
    assert await output(str(late)) == "two"
    with pytest.raises(FileNotFoundError):
        spawn(["hookd-which"], cwd=None, env={})  # os.defpath: /bin:/usr/bin


async def test_an_unread_stdin_held_by_a_background_process_ends_with_the_grace(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "bg.pid"
    # fd 3 is the hook's stdin: an asynchronous list's own stdin would be /dev/null.
    command = f"exec 3<&0; sleep 120 <&3 >/dev/null 2>&1 & echo $! > {pid_file}; exit 0"
    try:
        with trio.fail_after(WAIT * 2):
            result = await run_process_capped(
                ["/bin/sh", "-c", command],
                stdin=b"x" * (1 << 20),  # far more than a pipe holds
                cwd=str(tmp_path),
                env={"PATH": "/usr/bin:/bin"},
                timeout=WAIT,
                output_cap=1 << 20,
                kill_grace=1.0,
                pipe_grace=0.2,
            )
        background = int(pid_file.read_text())
        assert alive(background), "the run waited for the background process to end"
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), 9)
    assert not result.timed_out
    assert result.returncode == 0


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
async def test_what_a_hook_wrote_before_it_exited_is_read_when_the_loop_comes_late(
    monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    """A starved loop: the hook has written and exited before its run is supervised at
    all, and no pipe grace is left. Its output is in the pipes and is read all the same,
    on a pidfd (its last read after the deadline) and polled without one (the readers
    start only after their grace ran out: they used to be cancelled before a read)."""
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open")  # a kernel without: the exit polled
    proc = spawn(["/bin/sh", "-c", "printf out; printf err >&2; exit 3"], cwd=None, env={})
    assert (proc.pidfd is not None) == pidfd
    with trio.fail_after(WAIT):
        while (info := proctree.info(proc.pid)) is not None and info.state != "Z":
            await trio.sleep(0.01)  # until it has exited, its output in the pipes
    result = await run_process_capped(
        ["/bin/sh"],
        stdin=b"",
        cwd=None,
        env={},
        timeout=WAIT,
        output_cap=1 << 20,
        kill_grace=1.0,
        pipe_grace=0.0,
        started=proc,
    )
    assert (result.returncode, result.stdout, result.stderr) == (3, b"out", b"err")

"""The floor as a program of its own: bare ``posix_spawn``s of ``/bin/sh -c CMD`` on request.

Run by bench/parallel_spawns.py beside the node and Rust baselines, with the same protocol:
for each line ``CMD1<TAB>CMD2…`` on stdin, start every command at once (``posix_spawn``, stdin,
stdout and stderr pipes, ``setsid``), write the event to each, read both outputs to EOF, reap
all, and answer ``ok <exit codes>``.  Plain Python around the spawns and nothing else — the
same work as the in-process ``native`` case, but in a process that sleeps between requests as
an agent does, rather than in the busy timing loop (the scheduler treats the two differently
once the cores are contended).

    python3 bench/spawn_posix.py STDIN_FILE [--no-setsid]

``--no-setsid``: the children stay in this process's session, as node's and Rust's do.  Where
the kernel groups each session for scheduling (``sched_autogroup_enabled``, the default on
most distributions), a new session is a new scheduling group, and on busy cores its child waits
for a CPU several times longer (docs/performance.md, "Parallel spawns"); hookd needs the new
session (docs/reliability.md), so this row shows what it costs.
"""

from __future__ import annotations

import os
import sys


def run(commands: list[str], payload: bytes, setsid: bool = True) -> list[int]:
    """Each command as ``/bin/sh -c CMD``, all at once: their exit codes."""
    return run_argvs([["/bin/sh", "-c", command] for command in commands], payload, setsid=setsid)


def run_argvs(
    argvs: list[list[str]], payload: bytes, *, setsid: bool = True, own_group: bool = False
) -> list[int]:
    """Each argv started at once (``setsid``: in a new session; else ``own_group``: in a
    process group of its own, as hookd starts hooks in its session; else neither), the
    event written to each, both outputs read to EOF, all reaped: their exit codes."""
    session = {"setsid": True} if setsid else {"setpgroup": 0} if own_group else {}
    started = []
    for argv in argvs:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.posix_spawn(
            argv[0], argv, os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2), (os.POSIX_SPAWN_CLOSE, in_w),
                (os.POSIX_SPAWN_CLOSE, out_r), (os.POSIX_SPAWN_CLOSE, err_r),
            ],
            **session,
        )  # fmt: skip
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        started.append((pid, in_w, out_r, err_r))
    for _, in_w, _, _ in started:
        try:
            os.write(in_w, payload)
        except BrokenPipeError:
            pass
        os.close(in_w)
    codes = []
    for pid, _, out_r, err_r in started:
        for fd in (out_r, err_r):
            while os.read(fd, 65536):
                pass
            os.close(fd)
        codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    return codes


def main() -> int:
    with open(sys.argv[1], "rb") as fh:
        payload = fh.read()
    setsid = "--no-setsid" not in sys.argv[2:]
    for line in sys.stdin.buffer:
        codes = run(line.rstrip(b"\n").decode().split("\t"), payload, setsid)
        sys.stdout.write("ok " + " ".join(map(str, codes)) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

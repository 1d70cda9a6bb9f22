"""Hooks that each need exactly one of hookd's kill nets (hookd/handlers/process.py).

Usage: ``python3 -I -S killnets.py MODE DIR``.  Every process writes its pid to
``DIR/<role>.pid`` once it is in place, and a process with a TERM handler writes
``DIR/<role>.term`` when TERM arrives, then exits.  The hook itself then sleeps
until its timeout.

* ``group``: a child in the hook's process group that ignores TERM and runs with
  an empty environment (no ``HOOKD_RUN_ID``): only the group's KILL reaches it.
* ``setsid``: a double-forked grandchild that left the group with ``setsid`` and
  handles TERM: only the marker scan reaches it, and it must get TERM first.
* ``stopped``: the hook stops itself (SIGSTOP) with a TERM handler installed:
  TERM stays pending until SIGCONT resumes it.
"""

import os
import signal
import sys
import time

MODE, DIR = sys.argv[1], sys.argv[2]


def _write(name: str, text: str) -> None:
    path = os.path.join(DIR, name)
    with open(path + ".tmp", "w") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)


def _on_term(role: str) -> None:
    def handler(signum: int, frame: object) -> None:
        _write(f"{role}.term", "TERM")
        os._exit(0)

    signal.signal(signal.SIGTERM, handler)


def _quiet() -> None:
    """Let go of the hook's pipes: only the kill may end this process."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


def group() -> None:
    child = os.fork()
    if child == 0:
        _quiet()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # survives exec
        code = (
            f"import os,time; open({DIR!r}+'/child.pid','w').write(str(os.getpid())); "
            "time.sleep(600)"
        )
        os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", code], {})
    while not os.path.exists(os.path.join(DIR, "child.pid")):
        time.sleep(0.005)


def setsid() -> None:
    first = os.fork()
    if first == 0:
        os.setsid()
        if os.fork() == 0:
            _quiet()
            _on_term("grandchild")
            _write("grandchild.pid", str(os.getpid()))
            time.sleep(600)
            os._exit(0)
        os._exit(0)
    os.waitpid(first, 0)
    while not os.path.exists(os.path.join(DIR, "grandchild.pid")):
        time.sleep(0.005)


def stopped() -> None:
    _on_term("hook")
    _write("hook.pid", str(os.getpid()))
    os.kill(os.getpid(), signal.SIGSTOP)


{"group": group, "setsid": setsid, "stopped": stopped}[MODE]()
_write("hook.ready", str(os.getpid()))
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the hook itself waits for the KILL
time.sleep(600)

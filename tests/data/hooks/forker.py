"""A hook that leaves stubborn descendants behind, to prove the timeout kills them all.

Usage: ``python3 -I -S forker.py PIDFILE``.  It starts

* a child that ignores SIGTERM and sleeps (same process group),
* a double-forked grandchild that calls ``setsid()`` (leaving the hook's group
  and session) and ignores SIGTERM,

writes one pid per line to PIDFILE (the hook's own first), keeps stdout and
stderr open in every descendant, and sleeps far past any test timeout.
"""

import os
import signal
import sys
import time


def linger() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(100)


def main() -> None:
    pidfile = sys.argv[1]
    pids = [os.getpid()]
    child = os.fork()
    if child == 0:
        linger()
    pids.append(child)
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:
        os.setsid()
        second = os.fork()
        if second == 0:
            os.close(read_end)
            os.close(write_end)
            linger()
        os.write(write_end, f"{second}\n".encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(first, 0)
    with os.fdopen(read_end) as fh:
        pids.append(int(fh.read().strip()))
    with open(pidfile + ".tmp", "w") as fh:
        fh.write("\n".join(str(p) for p in pids) + "\n")
    os.replace(pidfile + ".tmp", pidfile)
    print("started", flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(1000)


main()

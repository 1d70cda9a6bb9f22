"""A fork bomb, as a hook: fork until the user is out of processes, hold them, let go.

``fork_bomb.py FULL RELEASE``: forks children that wait to be killed, and
keeps trying whenever a fork fails (EAGAIN at RLIMIT_NPROC), so every slot
that frees up is taken again.  At the first failed fork it writes the
number of children it holds to FULL (the test's signal that the user's
processes are exhausted).  When RELEASE exists it kills its children and
exits.  Bounded only by the rlimit of the uid it runs as.
"""

import os
import signal
import sys
import time

full, release = sys.argv[1], sys.argv[2]
children: list[int] = []
announced = False
while not os.path.exists(release):
    try:
        pid = os.fork()
    except OSError:
        if not announced:
            with open(full, "w") as fh:
                fh.write(str(len(children)))
            announced = True
        time.sleep(0.02)  # the bomb's own pace, not a test's wait
        continue
    if pid == 0:
        while True:
            signal.pause()
    children.append(pid)
for pid in children:
    os.kill(pid, signal.SIGKILL)
for pid in children:
    os.waitpid(pid, 0)

"""Double-forks a grandchild that calls setsid (leaves the hook's process group), then hangs.

The grandchild keeps the environment, so the HOOKD_RUN_ID scan finds it.
"""

import os
import time

if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        time.sleep(600)
    os._exit(0)
time.sleep(600)

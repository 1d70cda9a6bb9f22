"""Ignores SIGTERM and keeps running: only the KILL after the grace ends it."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ignoring TERM", flush=True)
time.sleep(600)

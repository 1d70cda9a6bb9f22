"""Writes 100 MB to stdout, then exits 0."""

import sys

chunk = b"x" * (1024 * 1024)
for _ in range(100):
    sys.stdout.buffer.write(chunk)
sys.stdout.buffer.flush()

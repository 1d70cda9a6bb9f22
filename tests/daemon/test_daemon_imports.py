"""The daemon carries no test machinery: ``trio.testing`` imports pytest (~10 MB of
RSS, ~65 ms of start-up) — a daemon that imported it would pay that for life
(bench row 9), and where pytest is installed it would be loaded into every
user's daemon."""

from __future__ import annotations

import subprocess
import sys


def test_the_daemon_imports_neither_pytest_nor_trio_testing() -> None:
    code = (
        "import sys, hookd.cli.hookd_main, hookd.handlers.warm_python; "
        "print(sorted(m for m in ('pytest', '_pytest', 'trio.testing') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

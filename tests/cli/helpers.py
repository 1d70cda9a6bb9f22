"""Run the real `hookctl` / `hookd` as a user would: a fresh process, its exit code, output."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hookd_client.client import Client, DaemonUnavailable

ROOT = Path(__file__).resolve().parents[2]
CC_FIXTURES = ROOT / "tests" / "data" / "cc-fixtures"


def cli_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
        "HOOKCTL_LOG_LEVEL": "error",
    }
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    return env


def hookctl(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``hookctl ARGS`` in a child process (never raises on a non-zero exit)."""
    return subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookctl", *args],
        env=cli_env(env),
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def serving_client(sock: Path, daemon: subprocess.Popen[Any], **options: Any) -> Client:
    """A client connected to ``daemon`` once it serves ``sock``.

    A daemon just started takes a moment to bind, and a client does not retry a
    missing socket (nobody serves it: the caller's failure policy answers at
    once), so the wait for the daemon is here, bounded, and fails if it died."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return Client(sock, retries=0, **options).connect()
        except DaemonUnavailable:
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


@contextmanager
def serving(
    socket: Path, *flags: str, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A real ``hookd serve --socket SOCKET FLAGS`` with this test's environment (HOME,
    XDG directories), ready once it answers ``status``; stopped (and waited for) after."""
    daemon = subprocess.Popen(
        [sys.executable, "-m", "hookd", "serve", "--socket", str(socket), *flags],
        env=cli_env(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with serving_client(socket, daemon) as client:
            client.status()
        yield daemon
    finally:
        daemon.terminate()
        try:
            daemon.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.communicate()

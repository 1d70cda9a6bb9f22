"""Start the real hookd daemon as a subprocess for end-to-end tests.

``hookd serve --socket S --http-port P`` with the ``HOME`` it is given: the
one the Claude Code run uses too, so ``hookctl claude install --user`` and the
daemon share the user config and the http token file, private to the test.
Ready means: the socket accepts connections and ``GET /health`` answers.

``environment``: ``minimal`` (the default) starts the daemon as a service
manager does — ``HOME``, ``PATH=/usr/bin:/bin``, ``LANG`` and the XDG
directories, nothing of the user's shell — so that a hook which only works
with the *agent's* environment (its PATH, its variables) proves hookd gives it
that one; ``inherited`` gives it the test's own ``PATH``.
"""

from __future__ import annotations

import functools
import os
import random
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import trio

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
NOT_RUNNING = 3
"""hookctl's exit code when the daemon is not running (docs/cli.md): what ``claude install``
says when it wired Claude Code before the daemon started (its hooks fail open until then)."""


@dataclass
class RunningDaemon:
    home: Path
    config_home: Path
    socket: Path
    port: int
    log: Path

    def env(self) -> dict[str, str]:
        """Environment for hookctl so it finds this daemon's token, config and state (trust)."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_STATE_HOME": str(self.home / ".state"),
            "HOOKD_SOCKET": str(self.socket),
        }

    def token(self) -> str:
        return (self.config_home / "hookd" / "http-token").read_text().strip()


def free_port() -> int:
    """A port that was free a moment ago (the daemon binds it right after), chosen below
    the kernel's ephemeral range: a port from that range (``bind`` to 0) can be taken in
    between by any outgoing connection on the machine — the suite's other workers make
    thousands — and the daemon then fails with "the port is in use"."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    while True:
        port = random.randrange(10000, max(low, 10001))
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use: another
            return port


async def _ready(d: RunningDaemon, proc: trio.Process) -> None:
    while True:
        if proc.returncode is not None:
            raise RuntimeError(f"hookd exited with {proc.returncode}: {d.log.read_text()[-2000:]}")
        try:
            unix = await trio.open_unix_socket(str(d.socket))
            await unix.aclose()
            tcp = await trio.open_tcp_stream("127.0.0.1", d.port)
            async with tcp:
                await tcp.send_all(b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n")
                if b"200" in await tcp.receive_some(1024):
                    return
        except OSError:
            pass
        await trio.sleep(0.05)


def daemon_paths(base: Path, home: Path) -> RunningDaemon:
    """Where a daemon for ``home`` will listen; known before it starts (for install)."""
    return RunningDaemon(
        home=home,
        config_home=home / ".config",
        socket=base / "hookd.sock",
        port=free_port(),
        log=base / "hookd.log",
    )


DaemonEnvironment = Literal["minimal", "inherited"]


@asynccontextmanager
async def hookd_daemon(
    d: RunningDaemon, environment: DaemonEnvironment = "minimal"
) -> AsyncIterator[RunningDaemon]:
    (d.config_home / "hookd").mkdir(parents=True, exist_ok=True)
    env = {
        **d.env(),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    env.pop("HOOKD_SOCKET")
    if environment == "minimal":
        env["PATH"] = "/usr/bin:/bin"
    args = [
        str(VENV_BIN / "hookd"),
        "serve",
        "--socket",
        str(d.socket),
        "--http-port",
        str(d.port),
        "--log-format",
        "json",
        "--policy-file",
        str(d.socket.parent / "no-policy.json"),
    ]
    async with trio.open_nursery() as nursery:
        with d.log.open("wb") as log:
            run = functools.partial(
                trio.run_process, args, env=env, stdout=log, stderr=log, check=False
            )
            proc: trio.Process = await nursery.start(run)
            try:
                with trio.fail_after(30):
                    await _ready(d, proc)
                yield d
            finally:
                proc.terminate()
                with trio.move_on_after(15):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()

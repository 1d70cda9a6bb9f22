"""``hookctl agents install AGENT --user``, as the real-CLI harnesses wire an agent to a daemon.

Every harness (tests/agents/*_harness.py) runs its scenario twice — the hooks
native, then through hookd — and the second run starts with this: the user's
``hookctl`` installing the agent at user scope, pointed at the test daemon's
socket, with the compiled relay when the test has one.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import trio

from e2e.daemon import VENV_BIN, RunningDaemon, daemon_paths


@contextmanager
def short_daemon_paths(prefix: str, home: Path) -> Iterator[RunningDaemon]:
    """Where the through-hookd run's daemon listens, for ``home``: a directory of its own
    under ``/tmp``, not under the test's root — a Unix socket's path must stay short —
    removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        yield daemon_paths(base, home)
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def install_agent(
    agent: str,
    daemon: RunningDaemon,
    relay: Path | None,
    extra_env: Mapping[str, str] | None = None,
) -> str:
    """Install ``agent`` for ``daemon``'s HOME; what install printed.  ``relay`` None: the
    Python relay.  Fails the test, with install's own words, when install fails."""
    install = await trio.run_process(
        [
            str(VENV_BIN / "hookctl"),
            "agents",
            "install",
            agent,
            "--user",
            "--socket",
            str(daemon.socket),
            *(["--relay", str(relay)] if relay is not None else ["--python-relay"]),
        ],
        env={**daemon.env(), "HOME": str(daemon.home), **(extra_env or {})},
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr.decode() + install.stdout.decode()
    return install.stdout.decode()

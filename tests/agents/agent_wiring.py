"""``hookctl agents install AGENT --user``, as the real-CLI harnesses wire an agent to a daemon.

Every real-CLI test (tests/agents/*_harness.py, test_gemini.py, test_qwen.py,
test_opencode.py) runs its scenario twice — the hooks native, then through hookd —
and the second run is :func:`through_hookd`: hookd's config written, the user's
``hookctl`` installing the agent at user scope, pointed at the test daemon's
socket, with the relay the test asks for, then the daemon started around the
agent's run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import trio

from e2e.daemon import VENV_BIN, RunningDaemon, daemon_paths, hookd_daemon

InstallRelay = Path | None | Literal["default"]
"""The relay install wires: a compiled one at that path, None the Python relay,
``"default"`` the installer's own choice (the compiled one where it is built)."""


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
    relay: InstallRelay,
    extra_env: Mapping[str, str] | None = None,
) -> str:
    """Install ``agent`` for ``daemon``'s HOME; what install printed.  ``relay``: see
    :data:`InstallRelay`.  Fails the test, with install's own words, when install fails."""
    if relay == "default":
        chosen: list[str] = []
    else:
        chosen = ["--relay", str(relay)] if relay is not None else ["--python-relay"]
    install = await trio.run_process(
        [
            str(VENV_BIN / "hookctl"),
            "agents",
            "install",
            agent,
            "--user",
            "--socket",
            str(daemon.socket),
            *chosen,
        ],
        env={**daemon.env(), "HOME": str(daemon.home), **(extra_env or {})},
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert install.returncode == 0, install.stderr.decode() + install.stdout.decode()
    return install.stdout.decode()


@dataclass
class Wired:
    """What the through-hookd side keeps besides the agent's run: install's output, and
    the daemon's log once it has stopped (empty when it never ran)."""

    install_output: str
    daemon_log: str = ""


@asynccontextmanager
async def through_hookd(
    agent: str,
    daemon: RunningDaemon,
    relay: InstallRelay,
    *,
    hooks: Mapping[str, Any] | None = None,
    extra_env: Mapping[str, str] | None = None,
    up: bool = True,
) -> AsyncIterator[Wired]:
    """The through-hookd side of a scenario around the agent's run (the body):
    ``hooks``, when given, written as hookd's user config; ``agent`` installed for
    ``daemon`` (:func:`install_agent`, which moves the agent's own hooks into that
    config); then the daemon started for the body — or not, with ``up`` False (a run
    that finds hookd down) — and its log kept once it has stopped."""
    if hooks is not None:
        config = daemon.config_home / "hookd" / "hooks.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"hooks": hooks}))
    wired = Wired(install_output=await install_agent(agent, daemon, relay, extra_env))
    if not up:
        yield wired
        return
    async with hookd_daemon(daemon):
        yield wired
    wired.daemon_log = daemon.log.read_text(errors="replace")

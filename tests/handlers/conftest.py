"""Fixtures for handler tests: a real engine with real handlers, a scripted HTTP server.

Hooks run through :meth:`Engine.fire` on a :class:`HookConfig` built by the
real loader from files in ``tests/data/handlers/configs`` (placeholders such
as ``@SERVER@`` are filled in per test), so interpretation and aggregation are
exercised end to end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from handlers.rig import Rig
from handlers.scripted_server import ScriptedServer, scripted_server
from hookd.daemon.options import command_runner, engine_settings, handler_options
from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import Engine
from hookd.handlers.registry import open_handlers


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with scripted_server() as state:
        yield state


@pytest.fixture
async def rig(tmp_path: Path, server: ScriptedServer) -> AsyncIterator[Rig]:
    project = tmp_path / "project"
    project.mkdir()
    settings = DaemonSettings(
        messages_api_base_url=server.url,
        python_workers=2,
        python_warm_workers=1,
        kill_grace=0.2,
    )
    # Command hooks keep the daemon's own grace periods; only python workers are hurried.
    commands = command_runner(DaemonSettings())
    async with open_handlers(handler_options(settings), commands) as handlers:
        engine = Engine(
            handlers.table, engine_settings(settings, spill_dir=str(tmp_path / "spill"))
        )
        yield Rig(engine, handlers, server, project, tmp_path)

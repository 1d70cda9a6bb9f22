"""Each part's options, built from :class:`~hookd.daemon.settings.DaemonSettings`.

Every default hookd has lives in ``DaemonSettings`` (and so has a
``hookd.toml`` key and a ``hookd serve`` flag).  The option objects of the
parts below the daemon — the command runner, the engine, the other handlers —
have no defaults of their own: they are built here, so a value such as
``kill_grace`` is stated once and reaches every part that kills a process.
The one-shot ``hookctl fire --local`` and the tests build theirs the same way,
from ``DaemonSettings()`` or a copy with the fields they change.

This module is the daemon package's (it reads ``DaemonSettings``); the parts
it builds for never import the daemon, so the package graph stays a DAG.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import EngineSettings
from hookd.handlers.command import CommandRunner
from hookd.handlers.registry import HandlerOptions
from hookd.handlers.warm_python import WarmPool

__all__ = ["command_runner", "engine_settings", "handler_options"]


def command_runner(
    settings: DaemonSettings, *, input_file_dir: str | None = None, warm: bool = False
) -> CommandRunner:
    """The command hook runner.  ``input_file_dir``: where hook input files are written
    (None: the system's temporary directory, or one in memory:
    hookd/handlers/input_dir.py).  ``warm``: keep warm Python spares — the daemon does;
    a one-shot process such as ``hookctl fire --local`` has no later event to keep one
    for, and whoever keeps them must close them (``open_handlers`` does)."""
    return CommandRunner(
        output_cap=settings.output_cap,
        kill_grace=settings.kill_grace,
        pipe_grace=settings.pipe_grace,
        direct=settings.command_without_shell,
        input_file_dir=input_file_dir,
        warm=(
            WarmPool(limit=settings.warm_python_spares, idle=settings.warm_python_idle)
            if warm and settings.warm_python and settings.warm_python_spares > 0
            else None
        ),
    )


def engine_settings(
    settings: DaemonSettings,
    *,
    state: Path | None = None,
    spill_dir: str | None = None,
    env_file_dir: str | None = None,
) -> EngineSettings:
    """The engine's options.  Spilled outputs and ``CLAUDE_ENV_FILE`` files go under
    ``state`` (default: the user's state directory, ``settings.state_path()``) unless
    named — never in a shared directory such as ``/tmp``, where another user could
    create ``hookd-env`` first and so own the directories hooks write into."""
    state = state if state is not None else settings.state_path()
    return EngineSettings(
        stop_block_cap=settings.stop_block_cap,
        spill_dir=spill_dir or str(state / "spill"),
        env_file_dir=env_file_dir or str(state / "env"),
    )


def handler_options(
    settings: DaemonSettings, *, python_executable: str = sys.executable
) -> HandlerOptions:
    """The options of the http, prompt, agent and python handlers.  ``python_executable``
    is the interpreter python workers run (this one, unless a test needs another)."""
    return HandlerOptions(
        messages_api_base_url=settings.messages_api_base_url,
        default_model=settings.default_model,
        max_tokens=settings.prompt_max_tokens,
        agent_max_turns=settings.agent_max_turns,
        http_body_cap=settings.http_hook_body_cap,
        http_max_connections=settings.http_hook_max_connections,
        python_workers=settings.python_workers,
        python_workers_per_session=settings.python_workers_per_session,
        python_warm_workers=settings.python_warm_workers,
        python_executable=python_executable,
        kill_grace=settings.kill_grace,
        output_cap=settings.output_cap,
    )

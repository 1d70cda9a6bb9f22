"""The handler table: every handler kind tied to its runner, in one place, with its resources.

The engine is constructed with this table (handler Struct type → runner) and
never changes it.  :func:`handler_table` is the one place a kind is tied to
its runner.  Most runners share two long-lived resources: one
``httpx.AsyncClient`` (keep-alive connections for http hooks and the Messages
API; made at its first use, :mod:`hookd.handlers.http_client`) and one pool
of python worker processes.  Both must belong to a trio nursery, so they are
created by :func:`open_handlers`, an async context manager the daemon enters
inside its own nursery (and the one-shot CLI around a single ``fire``)::

    async with open_handlers(handler_options(settings), command_runner(settings)) as handlers:
        engine = Engine(handlers.table, engine_settings(settings))  # runs every kind of hook

(the options come from ``hookd.daemon.options``, which builds them from the
daemon's settings, where every default lives).

Leaving the block stops the workers (killing any still busy) and closes the
client.  ``callback`` hooks need the daemon's sessions to find the connection
that registered them, so the daemon passes a :class:`CallbackRunner`; the
one-shot CLI has no clients and passes none (a ``callback`` hook then fails
as "not available").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import trio

from hookd.config.schema import (
    AgentHandler,
    CallbackHandler,
    CommandHandler,
    HttpHandler,
    PromptHandler,
    PythonHandler,
)
from hookd.handlers.agent import AgentRunner
from hookd.handlers.base import HandlerFn
from hookd.handlers.callback import CallbackRunner
from hookd.handlers.command import CommandRunner
from hookd.handlers.http import HttpRunner
from hookd.handlers.http_client import SharedHttpClient
from hookd.handlers.messages_api import MessagesClient, MessagesConfig
from hookd.handlers.prompt import PromptRunner
from hookd.handlers.python import PythonRunner, PythonWorkerPool
from hookd.handlers.warm_python import WarmPool

__all__ = ["HandlerOptions", "HandlerTable", "Handlers", "handler_table", "open_handlers"]

HandlerTable = dict[type[Any], HandlerFn]
"""Handler Struct type (``CommandHandler`` …) → the runner that runs it."""


@dataclass(frozen=True)
class HandlerOptions:
    """Every knob of the non-command handlers.  No defaults here: they live in the
    daemon's settings, and ``hookd.daemon.options.handler_options`` builds this."""

    messages_api_base_url: str | None
    """Messages API base; ``None``: the agent's ``ANTHROPIC_BASE_URL``, else Anthropic's."""
    default_model: str
    """Prompt and agent hooks without ``model``."""
    max_tokens: int
    agent_max_turns: int
    http_body_cap: int
    """Bytes of an http hook's response body that are read; the rest is dropped."""
    http_max_connections: int
    python_workers: int
    """How many python hook calls can run at once (one worker process each)."""
    python_workers_per_session: int
    """How many of them one session may hold (see ``PythonWorkerPool``)."""
    python_warm_workers: int
    """Idle workers kept ready once the first python hook has run (0 for a one-shot CLI run)."""
    python_executable: str
    kill_grace: float
    """TERM → KILL grace when a python worker is killed."""
    output_cap: int
    """Bytes of a python hook's return value kept (the daemon's ``output_cap``)."""


@dataclass
class Handlers:
    """The live handler set: what :func:`open_handlers` yields."""

    options: HandlerOptions
    http_client: SharedHttpClient
    pool: PythonWorkerPool
    command: CommandRunner
    http: HttpRunner
    prompt: PromptRunner
    agent: AgentRunner
    python: PythonRunner
    callback: CallbackRunner | None
    table: HandlerTable = field(init=False)
    """What the engine is constructed with."""

    def __post_init__(self) -> None:
        self.table = handler_table(self.command, self)


def handler_table(command: CommandRunner, handlers: Handlers | None = None) -> HandlerTable:
    """Every handler kind → its runner: the one place they are tied together.

    Without ``handlers`` (an engine that runs only command hooks, as tests do)
    the other kinds are absent and fail as "not available in this hookd".
    """
    table: HandlerTable = {CommandHandler: command.run}
    if handlers is not None:
        table[HttpHandler] = handlers.http.run
        table[PromptHandler] = handlers.prompt.run
        table[AgentHandler] = handlers.agent.run
        table[PythonHandler] = handlers.python.run
        if handlers.callback is not None:
            table[CallbackHandler] = handlers.callback.run
    return table


@asynccontextmanager
async def open_handlers(
    options: HandlerOptions,
    command: CommandRunner,
    callback: CallbackRunner | None = None,
) -> AsyncIterator[Handlers]:
    """Create the shared client and worker pool and every runner; clean up on exit."""
    client = SharedHttpClient(options.http_max_connections)
    async with trio.open_nursery() as nursery:
        pool = PythonWorkerPool(
            nursery,
            size=options.python_workers,
            per_session=options.python_workers_per_session,
            warm=options.python_warm_workers,
            executable=options.python_executable,
            kill_grace=options.kill_grace,
        )
        try:
            messages = MessagesClient(
                client,
                MessagesConfig(
                    base_url=options.messages_api_base_url, max_tokens=options.max_tokens
                ),
            )
            handlers = Handlers(
                options=options,
                http_client=client,
                pool=pool,
                command=command,
                http=HttpRunner(client, options.http_body_cap),
                prompt=PromptRunner(messages, options.default_model),
                agent=AgentRunner(messages, options.default_model, options.agent_max_turns),
                python=PythonRunner(pool, options.output_cap),
                callback=callback,
            )
            if command.warm is not None:
                nursery.start_soon(_retire_idle_spares, command.warm)
                nursery.start_soon(command.warm.refill_when_idle)
            yield handlers
        finally:
            if command.warm is not None:
                command.warm.close()
            await pool.aclose()
            with trio.CancelScope(shield=True):
                await client.aclose()
            nursery.cancel_scope.cancel()


async def _retire_idle_spares(warm: WarmPool) -> None:
    """Warm Python spares unused for their idle time exit; retired ones are reaped."""
    while True:
        await trio.sleep(min(warm.idle, 30.0))
        warm.retire_idle()

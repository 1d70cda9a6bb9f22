"""The handler table: every handler kind tied to its runner in one place, the engine built on it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from engine.vectors import command_engine
from hookd.config.assemble import load_config
from hookd.config.schema import (
    AgentHandler,
    CallbackHandler,
    CommandHandler,
    HttpHandler,
    PromptHandler,
    PythonHandler,
)
from hookd.daemon.options import command_runner, engine_settings
from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import Engine
from hookd.handlers.callback import CallbackPeer, CallbackRunner
from hookd.handlers.registry import HandlerTable, handler_table
from hookd_client.events import decode_event
from support.events import fixture_event

from .rig import Rig


class _NoPeers:
    def callback_peer(self, session_id: str, callback_id: str) -> CallbackPeer | None:
        return None


async def test_the_table_ties_every_kind_to_its_runner(rig: Rig) -> None:
    handlers = rig.handlers
    assert set(handlers.table) == {
        CommandHandler,
        HttpHandler,
        PromptHandler,
        AgentHandler,
        PythonHandler,
    }  # no callback runner given (a one-shot CLI has no clients)
    with_callbacks = replace(handlers, callback=CallbackRunner(_NoPeers()))
    assert with_callbacks.table[CallbackHandler] == with_callbacks.callback.run  # type: ignore[union-attr]


async def test_a_kind_missing_from_the_table_fails_as_not_available(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/hook"}]}]}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": hooks}))
    config = load_config(None, str(tmp_path), [str(settings)])
    raw = fixture_event(cwd=str(tmp_path))
    result = await command_engine(spill_dir=str(tmp_path)).fire(config, decode_event(raw))
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "not available in this hookd" in run.error


async def test_a_callback_whose_client_is_gone_fails_without_calling_anyone(tmp_path: Path) -> None:
    hooks = {"PreToolUse": [{"hooks": [{"type": "callback", "callback_id": "gone"}]}]}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": hooks}))
    config = load_config(None, str(tmp_path), [str(settings)])
    defaults = DaemonSettings()
    table: HandlerTable = handler_table(command_runner(defaults))
    table[CallbackHandler] = CallbackRunner(_NoPeers()).run
    raw = fixture_event(cwd=str(tmp_path))
    engine = Engine(table, engine_settings(defaults, spill_dir=str(tmp_path)))
    result = await engine.fire(config, decode_event(raw))
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "the client that registered it is gone" in run.error

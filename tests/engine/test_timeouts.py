"""Which timeout applies (hookd/config/timeouts.py): every row of the rule, and that the
engine hands a background hook an invocation whose timeout is already the right one, so no
one downstream (the async supervisor) has to change it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookd.config.assemble import load_config
from hookd.config.model import HookSpec, Scope
from hookd.config.schema import AgentHandler, CommandHandler, CommandSetting, PromptHandler
from hookd.config.timeouts import (
    command_setting_timeout,
    hook_timeout,
    output_async_timeout,
)
from hookd.engine.engine import Engine
from hookd.handlers.base import Invocation
from hookd_client.events import decode_event

from .vectors import command_engine, fixture_input


def spec(handler: Any, event: str = "PreToolUse", group_timeout: float | None = None) -> HookSpec:
    return HookSpec(
        event=event,
        matcher=None,
        handler=handler,
        scope=Scope.USER,
        source="test",
        group_index=0,
        hook_index=0,
        group_timeout=group_timeout,
    )


COMMAND = CommandHandler(command="true")


@pytest.mark.parametrize(
    ("handler", "event", "expected"),
    [
        (COMMAND, "PreToolUse", 600.0),
        (COMMAND, "UserPromptSubmit", 30.0),
        (COMMAND, "PreModelSwitch", 30.0),
        (COMMAND, "PostModelSwitch", 30.0),
        (COMMAND, "MessageDisplay", 10.0),
        (PromptHandler(prompt="p"), "PreToolUse", 30.0),
        (AgentHandler(prompt="p"), "PreToolUse", 60.0),
        (CommandHandler(command="true", timeout=7), "UserPromptSubmit", 7.0),
    ],
)
def test_foreground_defaults(handler: Any, event: str, expected: float) -> None:
    """§1.4: the hook's own timeout, else its handler type's and event's default."""
    assert hook_timeout(spec(handler, event), event) == expected


def test_group_timeout_applies_to_hooks_that_set_none() -> None:
    assert hook_timeout(spec(COMMAND, group_timeout=12), "PreToolUse") == 12.0
    own = CommandHandler(command="true", timeout=3)
    assert hook_timeout(spec(own, group_timeout=12), "PreToolUse") == 3.0


def test_session_end_budget_caps_foreground_hooks() -> None:
    assert hook_timeout(spec(COMMAND, "SessionEnd"), "SessionEnd", budget_left=1.2) == 1.2
    assert hook_timeout(spec(COMMAND, "SessionEnd"), "SessionEnd", budget_left=-3) == 0.001


def test_background_hooks_keep_their_own_timeout_or_600s() -> None:
    """§8: neither the event's default nor the SessionEnd budget bounds a config async hook."""
    background = CommandHandler(command="true", async_=True)
    assert hook_timeout(spec(background, "UserPromptSubmit"), "UserPromptSubmit") == 30.0
    assert (
        hook_timeout(spec(background, "UserPromptSubmit"), "UserPromptSubmit", background=True)
        == 600.0
    )
    assert (
        hook_timeout(spec(background, "SessionEnd"), "SessionEnd", background=True, budget_left=1)
        == 600.0
    )
    own = CommandHandler(command="true", async_=True, timeout=9)
    assert hook_timeout(spec(own), "PreToolUse", background=True) == 9.0


@pytest.mark.parametrize(
    ("ack", "expected"),
    [
        ({"async": True}, 15.0),
        ({"async": True, "asyncTimeout": 2500}, 2.5),
        ({"async": True, "asyncTimeout": 0}, 15.0),
        ({"async": True, "asyncTimeout": -5}, 15.0),
        ({"async": True, "asyncTimeout": True}, 15.0),
        ({"async": True, "asyncTimeout": "100"}, 15.0),
    ],
)
def test_output_async_timeout(ack: dict[str, Any], expected: float) -> None:
    assert output_async_timeout(ack) == expected


def test_status_commands() -> None:
    assert command_setting_timeout(CommandSetting(command="x")) == 5.0
    assert command_setting_timeout(CommandSetting(command="x", timeout=2)) == 2.0


class RecordingSink:
    """An async sink that takes every hook and keeps the invocation it was handed."""

    def __init__(self) -> None:
        self.taken: list[Invocation] = []

    def start(self, spec: HookSpec, invocation: Invocation, engine: Engine) -> str | None:
        self.taken.append(invocation)
        return None


@pytest.mark.parametrize(
    ("event", "fixture"),
    [("UserPromptSubmit", "UserPromptSubmit"), ("SessionEnd", "SessionEnd-other")],
)
async def test_engine_builds_background_invocations_with_their_timeout(
    tmp_path: Path, event: str, fixture: str
) -> None:
    hooks = {event: [{"hooks": [{"type": "command", "command": "true", "async": True}]}]}
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": hooks}))
    config = load_config(None, str(tmp_path), [str(settings)])
    raw = fixture_input(fixture)
    raw["cwd"] = str(tmp_path)
    sink = RecordingSink()
    engine = command_engine()
    result = await engine.fire(config, decode_event(raw, event), async_sink=sink)
    assert [run.is_async for run in result.hooks] == [True]
    (invocation,) = sink.taken
    assert invocation.timeout == 600.0

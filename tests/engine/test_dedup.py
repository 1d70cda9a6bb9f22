"""Claude Code's identity key for deduplication (reference §6), field by field.

Identical handlers from different settings files run once; a plugin's or a
skill's copy is kept apart; every field of the key (``shell``, ``command``,
``args``, ``if``; ``url``; ``server``/``tool``/``input``; ``prompt`` and the
kind; ``callable``) tells two handlers apart; async command hooks and client
callbacks are never deduplicated.
"""

from __future__ import annotations

from typing import Any

import pytest

from hookd.config.matching import dedup_key
from hookd.config.model import HookSpec, Scope
from hookd.config.schema import (
    AgentHandler,
    CallbackHandler,
    CommandHandler,
    Handler,
    HttpHandler,
    McpToolHandler,
    PromptHandler,
    PythonHandler,
)


def spec(handler: Handler, scope: Scope = Scope.USER, **origin: Any) -> HookSpec:
    return HookSpec(
        event="PreToolUse",
        matcher=None,
        handler=handler,
        scope=scope,
        source=f"/{scope.name.lower()}/settings.json",
        group_index=0,
        hook_index=0,
        **origin,
    )


def key(handler: Handler, **origin: Any) -> Any:
    return dedup_key(spec(handler, **origin))


CMD = CommandHandler(command="check.sh")


def test_the_same_handler_in_two_settings_files_has_one_key() -> None:
    assert dedup_key(spec(CMD, Scope.USER)) == dedup_key(spec(CMD, Scope.PROJECT)) is not None


def test_a_plugins_or_a_skills_copy_is_kept_apart() -> None:
    settings = key(CMD)
    plugin = key(CMD, scope=Scope.PLUGIN, plugin_root="/plugins/a")
    other_plugin = key(CMD, scope=Scope.PLUGIN, plugin_root="/plugins/b")
    skill = key(CMD, scope=Scope.SKILL, skill_root="/skills/a")
    assert len({settings, plugin, other_plugin, skill}) == 4
    assert plugin == key(CMD, scope=Scope.PLUGIN, plugin_root="/plugins/a")
    assert skill == key(CMD, scope=Scope.SKILL, skill_root="/skills/a")


@pytest.mark.parametrize(
    "other",
    [
        CommandHandler(command="check.sh "),  # the text must be identical
        CommandHandler(command="check.sh", args=["--strict"]),
        CommandHandler(command="check.sh", shell="bash"),
        CommandHandler(command="check.sh", if_="Bash(git *)"),
    ],
    ids=["command", "args", "shell", "if"],
)
def test_every_command_field_of_the_key_tells_handlers_apart(other: CommandHandler) -> None:
    assert key(other) != key(CMD)
    assert key(other) == key(other)


def test_timeouts_and_status_messages_are_not_part_of_the_key() -> None:
    assert key(CommandHandler(command="check.sh", timeout=5, statusMessage="x")) == key(CMD)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        (HttpHandler(url="http://a/x"), HttpHandler(url="http://a/y")),
        (HttpHandler(url="http://a/x"), HttpHandler(url="http://a/x", if_="Bash")),
        (McpToolHandler(server="s", tool="t"), McpToolHandler(server="s2", tool="t")),
        (McpToolHandler(server="s", tool="t"), McpToolHandler(server="s", tool="t2")),
        (
            McpToolHandler(server="s", tool="t", input={"a": 1}),
            McpToolHandler(server="s", tool="t", input={"a": 2}),
        ),
        (PromptHandler(prompt="p"), PromptHandler(prompt="q")),
        (PromptHandler(prompt="p"), AgentHandler(prompt="p")),  # the kind is part of it
        (PromptHandler(prompt="p"), PromptHandler(prompt="p", if_="Bash")),
        (PythonHandler(callable="m:f"), PythonHandler(callable="m:g")),
        (CommandHandler(command="p"), PromptHandler(prompt="p")),
    ],
)
def test_other_kinds_are_told_apart_by_their_own_fields(one: Handler, two: Handler) -> None:
    assert key(one) is not None and key(two) is not None
    assert key(one) != key(two)
    assert key(one) == key(one)


@pytest.mark.parametrize(
    "handler",
    [
        CommandHandler(command="check.sh", async_=True),
        CommandHandler(command="check.sh", asyncRewake=True),
        CallbackHandler(callback_id="cb-1"),
    ],
    ids=["async", "asyncRewake", "callback"],
)
def test_async_command_hooks_and_callbacks_are_never_deduplicated(handler: Handler) -> None:
    assert key(handler) is None

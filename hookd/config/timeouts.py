"""Which timeout applies: the whole rule, in one place.

A hook's timeout is decided once, when the engine builds its
:class:`~hookd.handlers.base.Invocation`, and never changed afterwards:

==========================================  ============================================
the run                                     its timeout (seconds)
==========================================  ============================================
a hook that runs in the foreground          its own ``timeout``, else its group's
                                            (a hookd extension), else the default of
                                            its handler type and event (reference §1.4)
… on ``SessionEnd``                         the above, but no longer than what is left
                                            of the event's shared budget (§1.4)
a config ``async``/``asyncRewake`` hook     its own (or its group's) ``timeout``, else
                                            600 s — the event's default and the
                                            SessionEnd budget do not apply (§8)
output-level async (``{"async": true}``)    ``asyncTimeout`` (ms) from the ack, else 15 s
``statusLine`` / ``fileSuggestion``         the setting's ``timeout``, else 5 s
==========================================  ============================================

The SessionEnd budget itself is a property of the configuration
(:func:`session_end_budget`), worked out when a generation is built.

This module belongs to the configuration package because every input of the
rule is configuration; the engine and the async runner only ask it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hookd.config.model import SESSION_END_BUDGET, HookSpec, Scope
from hookd.config.schema import AgentHandler, CommandSetting, Handler, PromptHandler

__all__ = [
    "CONFIG_ASYNC_TIMEOUT",
    "OUTPUT_ASYNC_TIMEOUT",
    "SESSION_END_BUDGET",
    "STATUS_COMMAND_TIMEOUT",
    "command_setting_timeout",
    "default_timeout",
    "hook_timeout",
    "output_async_timeout",
    "session_end_budget",
]

SESSION_END_BUDGET_CAP = 60.0
"""The most a hook's ``timeout`` can raise the SessionEnd budget to (§1.4)."""
CONFIG_ASYNC_TIMEOUT = 600.0
"""Seconds a config ``async``/``asyncRewake`` hook may run when it sets no ``timeout``."""
OUTPUT_ASYNC_TIMEOUT = 15.0
"""Seconds an output-level async hook may run after its ack when it gives no ``asyncTimeout``."""
STATUS_COMMAND_TIMEOUT = 5.0
"""Seconds a ``statusLine`` or ``fileSuggestion`` command may take when it sets none."""


def default_timeout(handler: Handler, event: str) -> float:
    """Reference §1.4: per handler type, with the per-event overrides."""
    if isinstance(handler, PromptHandler):
        return 30.0
    if isinstance(handler, AgentHandler):
        return 60.0
    if event in ("UserPromptSubmit", "PreModelSwitch", "PostModelSwitch"):
        return 30.0
    if event == "MessageDisplay":
        return 10.0
    return 600.0


def hook_timeout(
    spec: HookSpec, event: str, *, background: bool = False, budget_left: float | None = None
) -> float:
    """The timeout of one run of ``spec`` on ``event`` (the table above).

    ``background``: a config async hook handed to the async runner.
    ``budget_left``: what remains of the SessionEnd budget, when the event has one.
    """
    if background:
        return spec.timeout or CONFIG_ASYNC_TIMEOUT
    timeout = spec.timeout or default_timeout(spec.handler, event)
    if budget_left is not None:
        timeout = max(0.001, min(timeout, budget_left))
    return timeout


def session_end_budget(specs: Iterable[HookSpec]) -> float:
    """The SessionEnd budget of a configuration (§1.4): 1.5 s, raised to the largest
    ``timeout`` of its SessionEnd hooks up to 60 s; a plugin's timeouts do not raise it."""
    budget = SESSION_END_BUDGET
    for spec in specs:
        if spec.event == "SessionEnd" and spec.scope is not Scope.PLUGIN:
            if spec.timeout is not None:
                budget = max(budget, min(spec.timeout, SESSION_END_BUDGET_CAP))
    return budget


def output_async_timeout(ack: Mapping[str, Any]) -> float:
    """An output-level async hook's time after its ack: ``asyncTimeout`` ms, else 15 s (§8)."""
    raw = ack.get("asyncTimeout")
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
        return raw / 1000.0
    return OUTPUT_ASYNC_TIMEOUT


def command_setting_timeout(setting: CommandSetting) -> float:
    """A ``statusLine`` / ``fileSuggestion`` command's timeout."""
    return setting.timeout or STATUS_COMMAND_TIMEOUT

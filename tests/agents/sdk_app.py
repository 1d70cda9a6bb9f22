"""An Agent SDK app, as a user writes one: ``python -m agents.sdk_app SPEC.json``.

Run by tests/agents/test_agent_sdk.py in its own process (the SDK's ``query()``
on asyncio, the CLI it spawns, the callbacks) once per side:

* ``native``: the scenario's hooks as the SDK's own Python callbacks
  (``HookMatcher(matcher, [callback], timeout)``);
* ``hookd``: ``hooks=hookd_hooks(...)`` and ``settings=hookd_settings(...)`` —
  the one line this helper promises; the decisions then come from the user's
  hookd config.

It prints one JSON object: every message ``query()`` yielded (dataclasses as
dicts, with the SDK's ``type``), for the test to compare.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    ResultMessage,
    query,
)
from claude_agent_sdk.types import HookCallback, HookEvent

from agents.sdk_scenarios import SCENARIOS, SETTINGS_ONLY, SLEEP, command_hooks, decide
from hookd_client.agent_sdk import CALLBACK_EVENTS, hookd_hooks, hookd_settings


def _callback(hook: str) -> HookCallback:
    async def callback(
        input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        if hook == "sleep":
            await asyncio.sleep(SLEEP)  # the SDK cancels it at the matcher's timeout
        answer: Any = decide(hook, dict(input_data))
        return dict(answer)  # type: ignore[return-value]

    return callback


def native_hooks(scenario: str, relay: list[str]) -> dict[HookEvent, list[HookMatcher]]:
    hooks: dict[HookEvent, list[HookMatcher]] = {}
    for event, groups in SCENARIOS[scenario]["hooks"].items():
        if event in SETTINGS_ONLY or event in relay:
            continue  # no callback exists (or a command hook is wanted): native_settings()
        hooks[event] = [  # type: ignore[index]
            HookMatcher(matcher=matcher, hooks=[_callback(hook)], timeout=timeout)
            for matcher, hook, timeout in groups
        ]
    return hooks


def native_settings(scenario: str, relay: list[str]) -> str | None:
    """SessionStart/SessionEnd hooks (and the ``relay`` events), natively: command hooks in
    the SDK's ``settings=``."""
    events = (*SETTINGS_ONLY, *relay)
    hooks = command_hooks(scenario, sys.executable, events, for_hookd=False)
    return json.dumps({"hooks": hooks}) if hooks else None


def _message(message: Any) -> dict[str, Any]:
    is_instance = dataclasses.is_dataclass(message) and not isinstance(message, type)
    data: dict[str, Any] = dataclasses.asdict(message) if is_instance else dict(message)
    if isinstance(message, ResultMessage):
        data["type"] = "result"
    else:
        data.setdefault("type", type(message).__name__)
    return data


async def main(spec: dict[str, Any]) -> None:
    env: dict[str, str] = spec["env"]
    options = ClaudeAgentOptions(
        permission_mode="bypassPermissions",
        cwd=spec["project"],
        model="claude-sonnet-4-5",
        setting_sources=[],
        env=env,
        cli_path=spec["cli"],
    )
    messages: list[dict[str, Any]] = []
    relay: list[str] = spec.get("relay", [])
    if spec["mode"] == "native":
        options.hooks = native_hooks(spec["scenario"], relay)
        options.settings = native_settings(spec["scenario"], relay)
        async for message in query(prompt=spec["prompt"], options=options):
            messages.append(_message(message))
    else:
        callbacks = [e for e in CALLBACK_EVENTS if e not in relay]
        async with hookd_hooks(spec["socket"], env=env, events=callbacks) as hooks:
            options.hooks = hooks
            options.settings = hookd_settings(spec["socket"], relay=relay)  # type: ignore[arg-type]
            async for message in query(prompt=spec["prompt"], options=options):
                messages.append(_message(message))
    print(json.dumps({"messages": messages}, default=str))


if __name__ == "__main__":
    asyncio.run(main(json.loads(Path(sys.argv[1]).read_text())))

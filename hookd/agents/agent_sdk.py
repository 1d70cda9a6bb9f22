"""The Claude Agent SDK for Python: Claude Code's dialect, wired in the app's code.

The SDK drives Claude Code's own CLI (it bundles 2.1.330), so its hook inputs
and the answers it obeys are Claude Code's: decoding and encoding are
:class:`~hookd.agents.claude.ClaudeAdapter`'s identity.  What differs is the
door and the event set:

* the door is the app's process, not a hook file: ``ClaudeAgentOptions(hooks=
  hookd_hooks(), settings=hookd_settings())`` (:mod:`hookd_client.agent_sdk`)
  forwards every Python-callback event over the socket and relays SessionStart
  and SessionEnd, which have no callback, through the CLI's settings layer.
  So there is no file to install into: ``hook_files`` is empty and ``hookctl
  agents install`` says so, and ``wire`` explains what to write instead;
* the events are the SDK's callback events plus those two.  The CLI fires
  others (PreCompact's siblings, CwdChanged, …) only to command hooks in its
  settings files, which the app may load with ``setting_sources``; hookd does
  not see those unless the user wires them there.

It exists so that a fire can say ``agent: "claude-agent-sdk"`` (sessions show
it) and so the capability report and ``hookctl agents list`` know the SDK.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import msgspec

from hookd.agents.base import EventSpec, Installation, NativeHooks, Scope
from hookd.agents.claude import ClaudeAdapter

__all__ = ["SDK_EVENTS", "AgentSdkAdapter"]

SDK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SubagentStart",
    "PermissionRequest",
    "SessionStart",
    "SessionEnd",
)
"""``hookd_client.agent_sdk.CALLBACK_EVENTS`` and ``SETTINGS_EVENTS`` (hookd cannot import
that module: it imports the SDK); tests/agents/test_agent_sdk_adapter.py holds them equal."""

_BLOCK_FRAMING = (
    "through hookd_hooks() the CLI frames a block as a callback's, not a command hook's:"
)
CALLBACK_FRAMING = {
    "Stop": f"{_BLOCK_FRAMING} the reason reaches the model twice (an extra `Callback hook"
    ' blocking error` reminder); hookd_settings(relay=["Stop"]) gives the command hook\'s',
    "SubagentStop": f"{_BLOCK_FRAMING} the reason reaches the model twice;"
    ' hookd_settings(relay=["SubagentStop"]) gives the command hook\'s',
    "PostToolUse": f'{_BLOCK_FRAMING} the hook is named `command: "callback"`;'
    ' hookd_settings(relay=["PostToolUse"]) names the command',
}
"""The deliberate difference of the callback door, per event (explain, doctor, matrix):
the CLI itself frames a callback's block so, whatever the callback answers."""

WIRING = (
    "an Agent SDK app sends its events to hookd from its own code: "
    "ClaudeAgentOptions(hooks=hookd_hooks(), settings=hookd_settings()) "
    "with `from hookd_client.agent_sdk import hookd_hooks, hookd_settings` (docs/client.md)"
)


class AgentSdkAdapter(ClaudeAdapter):
    name: ClassVar[str] = "claude-agent-sdk"
    title: ClassVar[str] = "Claude Agent SDK for Python"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "0.2.187"
    events = tuple(
        msgspec.structs.replace(s, differs=CALLBACK_FRAMING.get(s.native, ""))
        for s in ClaudeAdapter.events
        if s.native in SDK_EVENTS
    )

    def detect(self) -> Installation:
        """The SDK in hookd's own Python environment (an app may have its own)."""
        try:
            version = importlib.metadata.version("claude-agent-sdk")
        except importlib.metadata.PackageNotFoundError:
            return Installation(installed=False)
        return Installation(installed=True, version=version)

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        return []

    def read_hooks(self, path: Path) -> NativeHooks:
        return NativeHooks()

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        raise ValueError(WIRING)

    def is_wired(self, text: str) -> bool:
        return False

    def trust_steps(self, scope: Scope) -> list[str]:
        # Not a trust gate: the one step that makes the SDK's hooks run through hookd,
        # shown by `hookctl agents status` where other agents list their approvals.
        return [WIRING]

"""Claude Code: the canonical agent, so its adapter is the identity.

hookd's config, event names, inputs and output rules *are* Claude Code's, so
decoding keeps the input as it came and encoding is
:func:`hookd.engine.claude_output.render_claude` — the bytes every Claude
Code door (relay, http endpoint, ``fire --format claude``) already prints.
It exists so that ``hookd-relay --agent claude EVENT`` and a session's agent
name mean the same thing for every agent, and so that the capability report
and the install driver need no special case.

The install side reads and writes Claude Code's settings files
(``~/.claude/settings.json``, ``.claude/settings.json``) in the shape every
Claude-shaped agent shares (:mod:`hookd.agents.claude_shape`); the richer
``hookctl claude install`` (http hooks, per-event timeouts, ``.hookd-moved``
records) stays in :mod:`hookd.installers.claude_settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from hookd.agents.base import (
    Adapter,
    AgentEvent,
    AgentReply,
    Capabilities,
    EventSpec,
    Installation,
    NativeHooks,
    Scope,
)
from hookd.agents.claude_shape import read_claude_shaped, wire_claude_shaped, wired_claude_shaped
from hookd.agents.detect import detect_binary
from hookd.engine.claude_output import render_claude
from hookd_client.events import EVENT_NAMES, EventInputError
from hookd_client.results import FireResult

__all__ = ["ClaudeAdapter"]

_ALL = Capabilities(
    block=True,
    rewrite_input=True,
    add_context=True,
    ask=True,
    continue_stop=True,
    system_message=True,
    matchers=True,
    parallel=True,
)


class ClaudeAdapter(Adapter):
    name: ClassVar[str] = "claude"
    title: ClassVar[str] = "Claude Code"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "2.1.330"
    speaks_claude_code: ClassVar[bool] = True
    events = tuple(EventSpec(native=e, canonical=e, caps=_ALL) for e in EVENT_NAMES)

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"{native_event} input: not a JSON object")
        return self.agent_event(native_event, spec, raw)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        tool = event.input.get("tool_name")
        out = render_claude(result, tool if isinstance(tool, str) else None)
        return AgentReply(stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code)

    def detect(self) -> Installation:
        return detect_binary("claude")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        if scope == "user":
            return [home / ".claude" / "settings.json"]
        if project is None:
            return []
        return [project / ".claude" / "settings.json", project / ".claude" / "settings.local.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        return read_claude_shaped(path, self.events)

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        return wire_claude_shaped(text, self.events, command, what="Claude Code settings")

    def is_wired(self, text: str) -> bool:
        return wired_claude_shaped(text, self.events)

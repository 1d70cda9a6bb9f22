"""Agents that speak Claude Code's hook dialect outright: its file shape, stdin and answers.

Qwen Code, Factory Droid and goose read Claude Code's ``hooks`` shape
(:mod:`hookd.agents.claude_shape`), send its snake_case stdin and obey its
output JSON and exit codes; what differs is where the file lives, which
events exist, and the tool names.  :class:`ClaudeDialectAdapter` is that
agent once — decode maps the tool name (the native one kept under
``native_tool_name``), encode is Claude Code's own rendering after
:func:`hookd.agents.capabilities.degrade` — and each agent's module says only
what is its own.

Because the dialect is the same, the user's hooks *move* into hookd's config
on install (unlike Cursor's or Windsurf's, which speak another protocol):
they run under hookd exactly as they ran under the agent, matchers
translated to Claude Code's tool names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from hookd.agents.base import (
    Adapter,
    AgentEvent,
    AgentReply,
    EventSpec,
    Installation,
    NativeHooks,
)
from hookd.agents.capabilities import degrade
from hookd.agents.claude_shape import (
    nest_hooks,
    read_claude_shaped,
    unnest_hooks,
    wire_claude_shaped,
    wired_claude_shaped,
)
from hookd.agents.detect import detect_binary
from hookd.engine.claude_output import render_claude
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["ClaudeDialectAdapter"]

_PLAIN = re.compile(r"^[A-Za-z0-9_]+$")

WIRED_TIMEOUT = 600.0
"""Seconds the wired entry gives hookd (goose's default is 30 s: a slow hook would be cut)."""


class ClaudeDialectAdapter(Adapter):
    binary: ClassVar[str]
    """The agent's executable on ``PATH`` (``detect``)."""
    input_renames: ClassVar[dict[str, str]] = {}
    """The agent's stdin key → Claude Code's (goose: ``working_dir`` → ``cwd``)."""
    top_level_files: ClassVar[frozenset[str]] = frozenset()
    """Names of the agent's hook files that are the ``hooks`` object itself, the events
    their top-level keys (Factory Droid's ``hooks.json``): read and written so."""

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"{self.title} {native_event} input: not a JSON object")
        data = dict(raw)
        for native_key, key in self.input_renames.items():
            if native_key in data and key not in data:
                data[key] = data[native_key]
        data["hook_event_name"] = spec.canonical
        tool = data.get("tool_name")
        if tool is not None and not isinstance(tool, str):
            raise EventInputError(f"{self.title} {native_event} input: tool_name must be a string")
        if isinstance(tool, str):
            self.map_tool(data, tool)
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        safe = degrade(result, event.spec)
        # What the agent shows names the tool its own way (`PreToolUse:Execute`), as natively.
        tool = event.input.get("native_tool_name", event.input.get("tool_name"))
        out = render_claude(safe, tool if isinstance(tool, str) else None)
        return AgentReply(stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code)

    def detect(self) -> Installation:
        return detect_binary(self.binary)

    def read_hooks(self, path: Path) -> NativeHooks:
        found = read_claude_shaped(
            path,
            self.events,
            timeout_unit=self.timeout_unit,
            top_level=path.name in self.top_level_files,
        )
        for event, groups in found.hooks.items():
            for i, group in enumerate(groups):
                matcher = group.get("matcher")
                if isinstance(matcher, str):
                    where = f"{path}: hooks.{event}[{i}].matcher"
                    group["matcher"] = self.matcher_to_hookd(matcher, where, found.warnings)
        return found

    def matcher_to_hookd(self, matcher: str, where: str, warnings: list[str]) -> str:
        """A matcher on this agent's tool names → one on Claude Code's.

        These agents read matchers as Claude Code does (a list of plain names is exact,
        anything else a regex), so a list maps name by name (``run_shell_command|edit`` →
        ``Bash|Edit``).  A regex stays as written, with a warning when it mentions a
        native name hookd sees under another: rewrite it in hookd's config."""
        names = matcher.split("|")
        if all(_PLAIN.match(n) for n in names):
            return "|".join(dict.fromkeys(self.canonical_tool(n) for n in names))
        mentioned = [n for n, c in self.tools.items() if n != c and n in matcher]
        if mentioned:
            warnings.append(
                f"{where}: the regex {matcher!r} names {', '.join(mentioned)}, which hookd "
                f"matches as {', '.join(self.tools[n] for n in mentioned)}: rewrite it there"
            )
        return matcher

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        # The agent must not give up before hookd: each hook's own timeout is hookd's to keep.
        limit = WIRED_TIMEOUT / self.timeout_unit
        return wire_claude_shaped(
            text,
            self.events,
            command,
            timeout=lambda _spec: int(limit) if limit.is_integer() else limit,
            what=f"{self.title} hooks",
        )

    def wire_file(self, path: Path, text: str | None, command: Callable[[EventSpec], str]) -> str:
        if path.name not in self.top_level_files:
            return self.wire(text, command)
        return unnest_hooks(self.wire(nest_hooks(text, str(path)), command))

    def is_wired(self, text: str) -> bool:
        if wired_claude_shaped(text, self.events):
            return True
        if not self.top_level_files:
            return False
        try:
            nested = nest_hooks(text, "hook file")
        except ValueError:
            return False
        return nested is not None and wired_claude_shaped(nested, self.events)

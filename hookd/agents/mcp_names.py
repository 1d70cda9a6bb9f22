"""One MCP tool, every agent's name for it: mapped to Claude Code's name both ways.

Claude Code names a tool of MCP server ``srv`` ``mcp__srv__echo``, and its docs
tell users to write matchers that way (``mcp__srv__echo``, ``mcp__srv__.*``).
The other agents name the same tool their own way, to the model and to their
hooks — seen with each real CLI and this repository's fake MCP server
(``tests/agents/fake_mcp.py``):

=================  ======================  ==========================================
agent              its name for the tool   what says which server it is
=================  ======================  ==========================================
Claude Code, SDK   ``mcp__srv__echo``      the name (Claude Code's own)
Codex 0.169.0      ``mcp__srv__echo``      the name (Codex took Claude Code's)
Copilot 1.0.102    ``srv-echo``            nothing: the name, split at a ``-``
                   ``srv/echo``            (``permissionRequest``) split at the ``/``
Gemini 0.61.0      ``mcp_srv_echo``        ``mcp_context.server_name``/``tool_name``
opencode 1.18.33   ``srv_echo``            the plugin's ``mcp_servers`` (its config)
Kilo CLI 7.7.9     ``srv_echo``            the same (opencode's fork)
Kiro (docs)        ``@srv/echo``           the name, split at the ``/``
goose (docs)       ``srv__echo``           the name, split at the ``__``
Cline CLI 3.0.65   ``srv__echo``           the name, split at the ``__``
Cursor (docs)      ``echo``                nothing: the server is not named at all
=================  ======================  ==========================================

A guard written for ``mcp__srv__echo`` that never fires for Copilot's
``srv-echo`` is the worst failure a hook runtime can have: the tool runs
unguarded and nothing says so.  So every adapter names an MCP tool to hookd
in Claude Code's words (the hook's ``tool_name`` is ``mcp__srv__echo``, the
agent's name stays under ``native_tool_name``), and where the agent's name
can be read more than one way — Copilot's ``my-srv-get-file`` is server
``my`` or ``my-srv`` or ``my-srv-get`` — hookd does not guess silently:
:attr:`McpTool.candidates` holds every reading (and the agent's own name),
the engine tests a matcher against each of them (``tool_name_candidates`` in
the hook's input), so a guard may fire for a look-alike tool but never
misses its own; ``hookctl doctor``/``explain`` and the daemon's load warnings
say so (:func:`hookd.agents.capabilities.report`).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "CANDIDATES_FIELD",
    "CLAUDE_MCP",
    "McpNaming",
    "McpTool",
    "claude_name",
    "parse_claude",
]

CLAUDE_PREFIX = "mcp__"
CANDIDATES_FIELD = "tool_name_candidates"
"""The hook input's field (hookd's own) listing every name a matcher is tested against
besides ``tool_name``'s (an MCP tool the agent names otherwise)."""


def claude_name(server: str, tool: str) -> str:
    return f"{CLAUDE_PREFIX}{server}__{tool}"


def parse_claude(name: str) -> tuple[str, str] | None:
    """``mcp__srv__echo`` → ``("srv", "echo")``; None for a name that is no MCP tool's."""
    if not name.startswith(CLAUDE_PREFIX):
        return None
    server, sep, tool = name[len(CLAUDE_PREFIX) :].partition("__")
    if not (sep and server and tool):
        return None
    return server, tool


class McpTool(msgspec.Struct, frozen=True, kw_only=True):
    """One MCP tool as hookd names it."""

    name: str
    """Claude Code's name (``mcp__srv__echo``): the hook's ``tool_name``."""
    candidates: tuple[str, ...] = ()
    """Every name a matcher is tested against: each reading of the agent's name (``name``
    first), then the agent's own name — so a matcher a user wrote in the agent's words,
    moved into hookd's config by ``install``, keeps matching under that agent."""

    def apply(self, data: dict[str, Any], native: str) -> None:
        """Name the tool in a decoded input: ``tool_name``, ``native_tool_name`` and the
        candidates."""
        data["tool_name"] = self.name
        if native != self.name:
            data["native_tool_name"] = native
        if self.candidates:
            data[CANDIDATES_FIELD] = list(self.candidates)


class McpNaming(msgspec.Struct, frozen=True, kw_only=True):
    """How one agent names an MCP server's tool to its hooks: ``<prefix><server><sep><tool>``."""

    prefix: str = CLAUDE_PREFIX
    sep: str = "__"
    named: bool = True
    """False: the agent's hooks are not told the server (Cursor): no matcher naming one
    can be honoured, which doctor and explain say."""
    exact: bool = True
    """True: every name the agent gives reads one way (Claude Code's own; or the agent
    names the server in a field of its own, as Gemini does)."""
    prefer: Literal["first", "last"] = "first"
    """Which split is the hook's ``tool_name`` when a name reads several ways (the others
    are candidates): Copilot's ``-`` is likelier inside a server's name (``brave-search``)
    than inside a tool's, so its last ``-`` wins."""
    how: str = "Claude Code's own name"
    """How the agent names the tool, for people (docs, explain, doctor)."""

    @property
    def is_claude(self) -> bool:
        return self.named and self.prefix == CLAUDE_PREFIX and self.sep == "__"

    def native(self, server: str, tool: str) -> str | None:
        """The agent's name for Claude Code's ``mcp__<server>__<tool>`` (None: not named)."""
        if not self.named:
            return None
        return f"{self.prefix}{server}{self.sep}{tool}"

    def splits(self, native: str) -> list[tuple[str, str]]:
        """Every (server, tool) the agent's name ``native`` can mean, in preference order."""
        if not self.named or not native.startswith(self.prefix):
            return []
        rest = native[len(self.prefix) :]
        found: list[tuple[str, str]] = []
        at = rest.find(self.sep)
        while at != -1:
            server, tool = rest[:at], rest[at + len(self.sep) :]
            if server and tool:
                found.append((server, tool))
            at = rest.find(self.sep, at + 1)
        return found[::-1] if self.prefer == "last" else found

    def tool(self, native: str) -> McpTool | None:
        """Claude Code's name for the agent's MCP tool ``native`` (None: not an MCP name)."""
        if self.is_claude or parse_claude(native) is not None:
            return None  # already Claude Code's name (explain takes either)
        splits = self.splits(native)
        if not splits:
            return None
        names = [claude_name(server, tool) for server, tool in splits]
        return McpTool(name=names[0], candidates=(*names, native))

    def describe(self) -> str:
        if not self.named:
            return self.how
        example = self.native("srv", "echo")
        return f"{self.how} (`mcp__srv__echo` is `{example}`)"


CLAUDE_MCP = McpNaming()
"""Claude Code's naming, taken over by Codex, Windsurf, Qwen Code and Factory."""

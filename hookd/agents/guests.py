"""Agents that run Claude Code's hook files themselves: who is calling at Claude Code's door.

GitHub Copilot CLI (≥ 1.0.12) reads a project's ``.claude/settings.json`` and
``.claude/settings.local.json`` and runs their hooks — the entries ``hookctl claude
install --project`` wrote — with *its own* payload (seen at 1.0.102: Copilot's
Claude-shaped input, an ISO ``timestamp``, no ``transcript_path``), and answers
in Copilot's dialect.  With ``hookctl agents install copilot`` as well, one
Copilot tool call reaches hookd twice: once at Copilot's own door, once at
Claude Code's.  Run both, and the user's hooks run twice for one call (a
counter hook counts two, a context arrives twice); answer the second as Claude
Code, and Copilot reads Claude Code's words.

So Claude Code's doors (the relay without ``--agent``, the http endpoint) ask
:func:`guest_at_claude_door` for every input: when it is another agent's (each
adapter recognises its own, :meth:`~hookd.agents.base.Adapter.claims_claude_input`),
the event is that agent's — and when that agent's own wiring also sends this
event to hookd (:meth:`~hookd.agents.base.Adapter.own_door_wired`), the
delivery through Claude Code's wiring answers "no opinion" without running
anything: the agent's own door runs the hooks, once, in its dialect.  Otherwise
the event runs *as that agent's* (its adapter decodes it: tool names mapped,
its capabilities applied).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hookd.agents.base import Adapter
from hookd.agents.registry import ADAPTERS

__all__ = ["guest_at_claude_door"]


def guest_at_claude_door(raw: Mapping[str, Any]) -> Adapter | None:
    """The agent whose own input ``raw`` is, though it came through Claude Code's wiring
    (None: Claude Code's, the door's own)."""
    for adapter in ADAPTERS:
        if not adapter.speaks_claude_code and adapter.claims_claude_input(raw):
            return adapter
    return None

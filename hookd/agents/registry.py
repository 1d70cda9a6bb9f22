"""The one table from an agent's name to its adapter.

``hookd-relay --agent NAME``, a ``fire``'s ``agent`` field, ``hookctl agents
… NAME`` and the capability report all look agents up here, so an adapter
exists for hookd exactly when it is listed in :data:`ADAPTERS`.  Adapters are
stateless, so one instance each serves every event.

Why an explicit list rather than discovery: the set of doors into the daemon
is part of its security surface (each decodes untrusted input), so adding one
is a visible one-line change here — import the adapter class, add an instance.
"""

from __future__ import annotations

from hookd.agents.agent_sdk import AgentSdkAdapter
from hookd.agents.base import Adapter
from hookd.agents.claude import ClaudeAdapter
from hookd.agents.cline import ClineAdapter
from hookd.agents.codex import CodexAdapter
from hookd.agents.copilot import CopilotAdapter
from hookd.agents.cursor import CursorAdapter
from hookd.agents.factory import FactoryAdapter
from hookd.agents.gemini import GeminiAdapter
from hookd.agents.goose import GooseAdapter
from hookd.agents.kilo import KiloAdapter
from hookd.agents.kiro import KiroAdapter
from hookd.agents.opencode import OpencodeAdapter
from hookd.agents.qwen import QwenAdapter
from hookd.agents.windsurf import WindsurfAdapter

__all__ = ["ADAPTERS", "DEFAULT_AGENT", "UnknownAgent", "adapter_for", "names"]

DEFAULT_AGENT = "claude"
"""A request that names no agent comes from Claude Code (every door before agents existed)."""

ADAPTERS: tuple[Adapter, ...] = (
    ClaudeAdapter(),
    CodexAdapter(),
    GeminiAdapter(),
    CopilotAdapter(),
    AgentSdkAdapter(),
    OpencodeAdapter(),
    KiloAdapter(),
    # Built from their documentation (verified = False), fixtures written from it:
    CursorAdapter(),
    WindsurfAdapter(),
    QwenAdapter(),
    FactoryAdapter(),
    GooseAdapter(),
    KiroAdapter(),
    ClineAdapter(),
)
"""Every agent hookd serves, Claude Code first (``hookctl agents list`` keeps this order)."""

_BY_NAME: dict[str, Adapter] = {a.name: a for a in ADAPTERS}
assert len(_BY_NAME) == len(ADAPTERS), "two adapters share a name"


class UnknownAgent(LookupError):
    """An agent name no adapter answers to; the message lists the known ones."""


def names() -> list[str]:
    return list(_BY_NAME)


def adapter_for(name: str | None) -> Adapter:
    """The adapter for ``name`` (None or empty: Claude Code); raises :class:`UnknownAgent`."""
    key = name or DEFAULT_AGENT
    adapter = _BY_NAME.get(key)
    if adapter is None:
        raise UnknownAgent(f"unknown agent {key!r} (known: {', '.join(names())})")
    return adapter

"""The one table from an agent's name to its adapter.

Every door that names an agent — ``hookd-relay --agent NAME``, the daemon's
route, ``hookctl agents install NAME``, ``hookctl explain --agent NAME`` —
looks it up here, so adding an agent is one module and one line below.

Adapters are imported on first use: ``hookctl agents list`` needs them all,
a relayed event needs one.
"""

from __future__ import annotations

import functools
import importlib

from hookd.agents.base import Adapter

__all__ = ["UnknownAgent", "adapters", "get", "names"]

_ADAPTERS: dict[str, str] = {}
"""Agent name → ``module:Class`` of its adapter, in the order ``hookctl agents list`` shows."""


class UnknownAgent(LookupError):
    """A name no adapter has (the message lists the names there are)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown agent"


def names() -> list[str]:
    return list(_ADAPTERS)


@functools.cache
def get(name: str) -> Adapter:
    """The adapter for ``name`` (one stateless instance per agent)."""
    target = _ADAPTERS.get(name)
    if target is None:
        raise UnknownAgent(f"no agent {name!r}; hookd knows: {', '.join(_ADAPTERS) or 'none'}")
    module, cls = target.split(":")
    adapter: Adapter = getattr(importlib.import_module(module), cls)()
    return adapter


def adapters() -> list[Adapter]:
    return [get(name) for name in _ADAPTERS]

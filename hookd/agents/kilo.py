"""Kilo Code CLI (``@kilocode/cli``): opencode's fork, so opencode's plugin door; run here at 7.7.9.

Kilo's CLI is opencode rebranded (its binary carries opencode's plugin service: the same
``tool.execute.before``/``after`` and ``chat.message`` triggers, the same plugin loading
from a config folder's ``plugins/``), with its own folders — ``~/.config/kilo/`` and a
project's ``.kilo/`` — its own ``kilo.json`` and ``KILO_*`` variables.  hookd's opencode
plugin, unchanged, is its door: ``install`` writes it as ``.kilo/plugins/hookd.js``
with ``hookd-relay --agent kilo <hook>``; the plugin's input is opencode's exactly
(recorded with the real CLI: ``tests/data/agents/kilo-7.7.9/``).

Pinned at **7.7.9**, not the 7.8.1 that ``npm install @kilocode/cli@7.8.1`` names: 7.8.1's
Linux binary (``@kilocode/cli-linux-x64@7.8.1``) is not on the registry (its platform
packages stop at 7.7.9), and the 7.8.1 wrapper's postinstall fails ("Failed to setup
kilo binary").  The tests install the 7.7.9 binary package itself (an optional
dependency in ``tests/e2e/package.json``: Linux x64 only).

Kilo's own tools beyond opencode's (``background_process``, ``cron_list``, …) have a
``_`` in their names; the plugin's MCP server list keeps them from reading as MCP tools.
"""

from __future__ import annotations

from typing import ClassVar

from hookd.agents.opencode import OpencodeAdapter

__all__ = ["KiloAdapter"]


class KiloAdapter(OpencodeAdapter):
    name: ClassVar[str] = "kilo"
    title: ClassVar[str] = "Kilo Code CLI"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "7.7.9"
    binary: ClassVar[str] = "kilo"
    user_folder: ClassVar[str] = "kilo"
    project_folder: ClassVar[str] = ".kilo"

"""Factory Droid (``droid``): built from its documentation, not run here.

Droid's hooks are Claude Code's (docs.factory.ai, "Hooks reference"): the
same events, stdin and output schema, timeouts in seconds, in
``~/.factory/hooks.json`` and ``<project>/.factory/hooks.json`` (or a ``hooks``
key in ``settings.json`` beside them, which ``install`` leaves alone and
reports).  Command hooks only.  Its tools have their own names — ``Execute``
is the shell, ``Create`` writes a new file, ``FetchUrl`` fetches — mapped so
a matcher ``Bash`` means the shell; ``ApplyPatch`` keeps its name (a patch is
not an Edit: it has no ``file_path``).  Droid adds ``FACTORY_PROJECT_DIR`` to
the hook's environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from hookd.agents.base import Capabilities, EventSpec, Scope
from hookd.agents.cc_dialect import ClaudeDialectAdapter

__all__ = ["FactoryAdapter"]

_OBSERVE = Capabilities(system_message=True)

EVENTS = (
    EventSpec(native="PreToolUse", canonical="PreToolUse",
              caps=Capabilities(block=True, rewrite_input=True, add_context=True, ask=True,
                                system_message=True)),
    EventSpec(native="PostToolUse", canonical="PostToolUse",
              caps=Capabilities(block=True, add_context=True, system_message=True)),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, add_context=True, system_message=True)),
    EventSpec(native="Stop", canonical="Stop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="SubagentStop", canonical="SubagentStop",
              caps=Capabilities(block=True, continue_stop=True, system_message=True)),
    EventSpec(native="PreCompact", canonical="PreCompact", caps=_OBSERVE),
    EventSpec(native="SessionStart", canonical="SessionStart",
              caps=Capabilities(add_context=True, system_message=True)),
    EventSpec(native="SessionEnd", canonical="SessionEnd", caps=_OBSERVE),
    EventSpec(native="Notification", canonical="Notification", caps=_OBSERVE),
)  # fmt: skip


class FactoryAdapter(ClaudeDialectAdapter):
    name: ClassVar[str] = "factory"
    title: ClassVar[str] = "Factory Droid"
    verified: ClassVar[bool] = False
    binary: ClassVar[str] = "droid"
    events = EVENTS
    tools: ClassVar[dict[str, str]] = {
        "Execute": "Bash",
        "Create": "Write",
        "FetchUrl": "WebFetch",
    }

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        if base is None:
            return []
        return [base / ".factory" / "hooks.json", base / ".factory" / "settings.json"]

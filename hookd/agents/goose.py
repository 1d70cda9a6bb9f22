"""goose (Block / AAIF): built from its documentation and source, not run here.

goose runs hooks from Open Plugins: ``hooks/hooks.json`` inside a plugin
directory (``~/.agents/plugins/<plugin>/``, or ``<project>/.agents/plugins/<plugin>/``),
in Claude Code's shape, each command through ``sh -c`` with a 30-second
default.  ``install`` therefore writes a plugin of its own, ``hookd``, and
touches no other plugin (their hooks keep running in goose; nothing of them
is moved).

goose's stdin differs in two keys — ``event`` for ``hook_event_name`` and
``working_dir`` for ``cwd`` — which decode renames (the originals kept).  It
accepts Claude Code's ``decision: "block"`` and exit 2, but **discards stdout
on most events**, so no event is declared able to add context: a hook's
context is reported lost rather than silently dropped.  Its extra events
(``PreToolUseResult``, ``BeforeShellExecution`` …) overlap PreToolUse/PostToolUse
and are not wired (a guard would run twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from hookd.agents.base import Capabilities, EventSpec, Scope
from hookd.agents.cc_dialect import ClaudeDialectAdapter
from hookd.agents.mcp_names import McpNaming

__all__ = ["GooseAdapter"]

_OBSERVE = Capabilities()

EVENTS = (
    EventSpec(native="PreToolUse", canonical="PreToolUse", caps=Capabilities(block=True),
              note="block only (exit 2 / decision: block); stdout is discarded"),
    EventSpec(native="PostToolUse", canonical="PostToolUse", caps=_OBSERVE),
    EventSpec(native="PostToolUseFailure", canonical="PostToolUseFailure", caps=_OBSERVE),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(block=True)),
    EventSpec(native="SessionStart", canonical="SessionStart", caps=_OBSERVE),
    EventSpec(native="SessionEnd", canonical="SessionEnd", caps=_OBSERVE),
    EventSpec(native="Stop", canonical="Stop", caps=_OBSERVE,
              note="observe only: a block does not continue the session"),
)  # fmt: skip

PLUGIN = "hookd"


class GooseAdapter(ClaudeDialectAdapter):
    name: ClassVar[str] = "goose"
    title: ClassVar[str] = "goose"
    verified: ClassVar[bool] = False
    binary: ClassVar[str] = "goose"
    events = EVENTS
    input_renames: ClassVar[dict[str, str]] = {"event": "hook_event_name", "working_dir": "cwd"}
    mcp: ClassVar[McpNaming] = McpNaming(
        prefix="",
        sep="__",
        exact=False,
        how="goose names an extension's tool `<extension>__<tool>` (its source)",
    )
    tools: ClassVar[dict[str, str]] = {
        "developer__shell": "Bash",
        "shell": "Bash",
        "bash": "Bash",
        "developer__text_editor": "Edit",
        "text_editor": "Edit",
        "write_file": "Write",
    }

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        if base is None:
            return []
        return [base / ".agents" / "plugins" / PLUGIN / "hooks" / "hooks.json"]

    def trust_steps(self, scope: Scope) -> list[str]:
        return [f"enable the {PLUGIN!r} plugin in goose if plugins are not enabled by default, "
                "then start a new goose session"]  # fmt: skip

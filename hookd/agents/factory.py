"""Factory Droid (``droid``): run here at 0.225.2 (tests/agents/test_factory.py).

Droid's hooks are Claude Code's: the same events, stdin and output schema,
timeouts in seconds, in ``~/.factory/hooks.json`` and
``<project>/.factory/hooks.json`` — a file that is the ``hooks`` object itself,
its events the top-level keys (a ``{"hooks": …}`` wrapper there is ignored) —
and in the ``hooks`` key of ``settings.json`` beside it.  Droid merges the two
per event, ``hooks.json``'s groups *replacing* ``settings.json``'s, so install
wires both (and moves both files' hooks).  Command hooks only.  Where the real
CLI differs from Claude Code (seen at 0.225.2): UserPromptSubmit blocks on exit 2
or ``continue: false`` only (``decision: "block"`` is ignored), and fires only in
a JSON-RPC session (the TUI, ``--input-format stream-jsonrpc``), never for
``droid exec PROMPT``; an exit-2 deny reaches the model as ``Error: <stderr>``;
MCP tools are ``<server>___<tool>``.  Its tools have their own names — ``Execute``
is the shell, ``Create`` writes a new file, ``FetchUrl`` fetches — mapped so
a matcher ``Bash`` means the shell; ``ApplyPatch`` keeps its name (a patch is
not an Edit: it has no ``file_path``).  Droid adds ``FACTORY_PROJECT_DIR`` to
the hook's environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from hookd.agents.base import AgentEvent, AgentReply, Capabilities, EventSpec, Scope
from hookd.agents.cc_dialect import ClaudeDialectAdapter
from hookd.agents.mcp_names import McpNaming
from hookd_client.results import FireResult, HookRun

__all__ = ["FactoryAdapter"]

_OBSERVE = Capabilities(system_message=True)

EVENTS = (
    EventSpec(native="PreToolUse", canonical="PreToolUse",
              caps=Capabilities(block=True, rewrite_input=True, add_context=True, ask=True,
                                system_message=True)),
    EventSpec(native="PostToolUse", canonical="PostToolUse",
              caps=Capabilities(block=True, add_context=True, system_message=True)),
    EventSpec(native="UserPromptSubmit", canonical="UserPromptSubmit",
              caps=Capabilities(block=True, add_context=True, system_message=True),
              note="fires only in a JSON-RPC session (the TUI), not for `droid exec PROMPT`;"
                   " a block is answered as exit 2, the reason on stderr",
              differs="a hook's `decision: \"block\"` blocks the prompt, where Droid ignores"
                      " it and sends the prompt (it blocks on exit 2 or `continue: false` only)"),
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
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "0.225.2"
    binary: ClassVar[str] = "droid"
    events = EVENTS
    top_level_files: ClassVar[frozenset[str]] = frozenset({"hooks.json"})
    mcp: ClassVar[McpNaming] = McpNaming(
        prefix="",
        sep="___",
        exact=False,
        how="Droid names a server's tool `<server>___<tool>` (three underscores)",
    )
    tools: ClassVar[dict[str, str]] = {
        "Execute": "Bash",
        "Create": "Write",
        "FetchUrl": "WebFetch",
    }

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        """Claude Code's answer, with two things said the way Droid obeys them.

        A UserPromptSubmit block is exit 2 and the reason on stderr: Droid blocks a
        prompt on exit 2 or ``continue: false`` only and ignores ``decision: "block"``
        (seen at 0.225.2), so Claude Code's JSON answer would let the prompt through.
        A PreToolUse deny's reason is the one a native Droid hook's would be: an
        exit-2 hook's stderr verbatim (Droid shows the model ``Error: <stderr>``) where
        hookd's engine wrote Claude Code's ``[<cmd>]: <stderr>``."""
        canonical = event.spec.canonical
        if canonical == "UserPromptSubmit" and result.decision == "block":
            reason = _native_reason(result) or "User prompt submission blocked by hook"
            return AgentReply(stderr=reason, exit_code=2)
        if canonical == "PreToolUse" and result.decision == "deny":
            result = msgspec.structs.replace(result, reason=_native_reason(result))
        return super().encode(result, event)

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        base = home if scope == "user" else project
        if base is None:
            return []
        return [base / ".factory" / "hooks.json", base / ".factory" / "settings.json"]

    def install_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        """Both files: Droid merges them per event, ``hooks.json``'s groups *replacing*
        ``settings.json``'s for the same event (seen at 0.225.2), so wiring only the first
        would silence the user's hooks in ``settings.json`` — they move into hookd too."""
        return self.hook_files(scope, home, project)


def _native_reason(result: FireResult) -> str | None:
    """The reason Droid itself would give for this block: the first hook (in
    configuration order) that denied in JSON, else the first that exited 2 — Droid reads
    one hook's answer, not all (its ``find``s, seen at 0.225.2)."""
    runs = [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]
    answered = [r for r in runs if r.output is not None]
    exit_two = [r for r in runs if r.output is None and r.exit_code == 2]
    if answered:
        return _json_reason(answered[0]) or result.reason
    if exit_two:
        return exit_two[0].stderr or result.reason
    return result.reason


def _json_reason(run: HookRun) -> str | None:
    if run.output is None:
        return None
    specific = run.output.hookSpecificOutput
    said = getattr(specific, "permissionDecisionReason", None) or run.output.reason
    return said if isinstance(said, str) and said else None

"""OpenAI Codex CLI (``@openai/codex``, run for real at 0.169.0): Claude Code's dialect, nearly.

What Codex does, as seen running it (``../shared/reference/agents.md`` §1)
and as its binary's own hook-output checks say:

* Events carry Claude Code's names and snake_case fields, plus ``turn_id``
  and ``model`` (kept for hooks that want them); no ``prompt_id``.  The
  shell tool reaches hooks already named ``Bash`` with ``tool_input.command``
  (the model's ``exec_command``); patches are ``apply_patch`` with
  ``{"command": patch}`` — kept under that name, because a patch is not an
  Edit (it has no ``file_path``) and a hook reading Edit's fields would
  misread it.  ``tool_response`` is a string, not Claude Code's object.
* It reads Claude Code's output: exit 2 + stderr, ``permissionDecision:
  "deny"`` and the legacy ``decision: "block"`` all block; ``updatedInput``
  with ``permissionDecision: "allow"`` rewrites a Bash call.  But its checks
  *reject* on PreToolUse: ``ask``, ``allow`` without ``updatedInput``,
  ``continue: false``, ``stopReason``, ``suppressOutput``, a deny without a
  reason; on PostToolUse and PermissionRequest the ``updated…`` fields.  So
  :meth:`CodexAdapter.encode` renders Claude Code's output and then removes
  or restates exactly those (``ask`` was already a deny, see
  :mod:`hookd.agents.capabilities`).  Two of them hookd answers deliberately
  otherwise than Codex would act, failing safe: ``continue: false`` (Codex
  ignores it) denies the call, and an ``updatedInput`` without a
  ``permissionDecision`` (Codex ignores the rewrite and runs the call as
  written) denies it too — an allow would also skip Codex's approval.
* A Stop block continues the turn with the reason as a user message (exit 2
  needs stderr: Codex calls an empty one an error, so a reason is always
  given).  PostToolUse ``decision: "block"`` replaces what the model sees of
  the tool's output.  ``additionalContext`` arrives as a developer message.
* Timeouts are seconds; Codex clamps SessionEnd hooks to 3 s.  Hooks of one
  event run in parallel; matchers are regexes on the mapped name.
* Trust: ``codex exec`` skips hooks it has not trusted — silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import structlog

from hookd.agents.base import (
    Adapter,
    AgentEvent,
    AgentReply,
    Capabilities,
    EventSpec,
    Finding,
    Installation,
    NativeHooks,
    Scope,
)
from hookd.agents.claude_shape import read_claude_shaped, wire_claude_shaped, wired_claude_shaped
from hookd.agents.codex_lint import lint_codex
from hookd.agents.detect import detect_binary
from hookd.engine.claude_output import render_claude
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["CodexAdapter"]

log = structlog.get_logger("hookd.agents.codex")

_NONE = Capabilities(system_message=True)
_CONTEXT = Capabilities(add_context=True, system_message=True)
_ONE_MESSAGE = (
    "two hooks' contexts arrive as one developer message, joined by a newline (natively one"
    " per hook: hookd's one wired entry answers once)"
)
_STOP = Capabilities(block=True, continue_stop=True, system_message=True)

DEFAULT_BLOCK_REASON = "Blocked by a hook (hookd)"
"""Codex rejects a deny without a reason and an exit 2 without stderr; hookd never sends one."""

WIRED_TIMEOUT = 600
"""Seconds the wired entry gives hookd (hookd enforces each hook's own timeout)."""

NATIVE_ONLY_EVENTS = frozenset({"Interrupt"})
"""Codex events with no Claude Code counterpart, so no hookd event: ``Interrupt`` fires when
a turn is interrupted (Ctrl-C, SIGINT to ``codex exec``; seen at 0.169.0, before
SessionEnd) and its only answer is ``systemMessage``.  A user's hooks on it stay in
Codex's file, where Codex keeps running them: moved into hookd's config they would never
run (hookd has no such event), and ``install`` would have silenced them."""


class CodexAdapter(Adapter):
    name: ClassVar[str] = "codex"
    title: ClassVar[str] = "OpenAI Codex CLI"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "0.169.0"
    events = (
        EventSpec(
            native="SessionStart", canonical="SessionStart", caps=_CONTEXT, note=_ONE_MESSAGE
        ),
        EventSpec(
            native="UserPromptSubmit",
            canonical="UserPromptSubmit",
            caps=Capabilities(block=True, add_context=True, system_message=True),
            note=f"a block ends the turn before any model request (exec exits 0); {_ONE_MESSAGE}",
        ),
        EventSpec(
            native="PreToolUse",
            canonical="PreToolUse",
            caps=Capabilities(block=True, rewrite_input=True, system_message=True),
            note="no ask (becomes a deny); updatedInput must keep a string `command`",
            differs="`continue: false` and an `updatedInput` without `permissionDecision`"
            " deny the call, where Codex ignores both and runs it as the model wrote it"
            " (an allow would also skip Codex's approval)",
        ),
        EventSpec(
            native="PermissionRequest",
            canonical="PermissionRequest",
            caps=Capabilities(block=True, system_message=True),
            note="fires only when Codex would ask (not with approval_policy never)",
        ),
        EventSpec(
            native="PostToolUse",
            canonical="PostToolUse",
            caps=Capabilities(block=True, add_context=True, system_message=True),
            note="tool_response is a string; a block replaces the output the model sees;"
            f" {_ONE_MESSAGE}",
        ),
        EventSpec(native="PreCompact", canonical="PreCompact", caps=_NONE),
        EventSpec(native="PostCompact", canonical="PostCompact", caps=_NONE),
        EventSpec(native="SubagentStart", canonical="SubagentStart", caps=_CONTEXT),
        EventSpec(native="SubagentStop", canonical="SubagentStop", caps=_STOP),
        EventSpec(
            native="Stop",
            canonical="Stop",
            caps=_STOP,
            note="a block continues the turn with the reason as a user message",
        ),
        EventSpec(
            native="SessionEnd",
            canonical="SessionEnd",
            caps=_NONE,
            note="Codex clamps SessionEnd hooks to 3 s",
        ),
    )
    tools: ClassVar[dict[str, str]] = {
        "exec_command": "Bash",
        "shell_command": "Bash",
        "shell": "Bash",
        "local_shell": "Bash",
    }
    """Codex names its shell calls ``Bash`` for hooks already; older names are mapped too."""

    # --- runtime ------------------------------------------------------------------

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"{self.title} {native_event} input: not a JSON object")
        data = dict(raw)
        named = data.get("hook_event_name", native_event)
        if named != native_event:
            raise EventInputError(
                f"{self.title} {native_event} input: `$.hook_event_name` is {named!r}"
            )
        data["hook_event_name"] = spec.canonical
        tool = data.get("tool_name")
        if isinstance(tool, str):
            self.map_tool(data, tool)
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        tool = event.input.get("tool_name")
        out = render_claude(_native_reasons(result), tool if isinstance(tool, str) else None)
        if out.exit_code == 2:
            return AgentReply(
                stdout=out.stdout,
                stderr=out.stderr if out.stderr.strip() else DEFAULT_BLOCK_REASON + "\n",
                exit_code=2,
            )
        if not out.stdout.startswith("{"):
            return AgentReply(stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code)
        data = json.loads(out.stdout)
        _fit(event.event, data, event.input.get("tool_input"))
        stdout = json.dumps(data) + "\n" if data else ""
        return AgentReply(stdout=stdout, stderr=out.stderr, exit_code=out.exit_code)

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        return detect_binary("codex")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        """``$CODEX_HOME/hooks.json`` (``~/.codex``) or ``<project>/.codex/hooks.json``.

        Hooks inline in ``config.toml`` (``[[hooks.PreToolUse]]``) also run; hookd
        writes ``hooks.json`` and ``hookctl doctor`` points at inline ones.
        """
        if scope == "user":
            return [home / ".codex" / "hooks.json"]
        return [] if project is None else [project / ".codex" / "hooks.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        # Matchers stay as written: Codex matches them against ``Bash``, so a
        # matcher naming ``exec_command`` never matched natively; mapping it
        # would make it start matching through hookd.
        found = read_claude_shaped(path, self.events)
        for event in NATIVE_ONLY_EVENTS & found.hooks.keys():
            del found.hooks[event]
            found.warnings = [w for w in found.warnings if f"hooks.{event}:" not in w]
            found.warnings.append(
                f"{path}: hooks.{event}: no Claude Code event runs these; they stay in"
                " Codex's file and Codex keeps running them itself"
            )
        for event, groups in found.hooks.items():
            for i, group in enumerate(groups):
                matcher = group.get("matcher")
                if isinstance(matcher, str) and matcher in self.tools:
                    found.warnings.append(
                        f"{path}: hooks.{event}[{i}].matcher {matcher!r} never matches under"
                        " Codex (it names the shell `Bash` for hooks); kept as written"
                    )
        return found

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        wired = wire_claude_shaped(
            text,
            self.events,
            command,
            timeout=lambda spec: None if spec.canonical == "SessionEnd" else WIRED_TIMEOUT,
            what="Codex hooks.json",
        )
        old = json.loads(text).get("hooks") if text and text.strip() else None
        kept = {
            event: old[event]
            for event in sorted(NATIVE_ONLY_EVENTS)
            if isinstance(old, dict) and isinstance(old.get(event), list) and old[event]
        }
        if not kept:
            return wired
        data = json.loads(wired)
        data["hooks"].update(kept)
        return json.dumps(data, indent=2) + "\n"

    def is_wired(self, text: str) -> bool:
        return wired_claude_shaped(text, self.events)

    def lint(self, path: Path, text: str) -> list[Finding]:
        """Codex's trust and inline hooks, from its config.toml (:mod:`hookd.agents.codex_lint`)."""
        try:
            has_hooks = bool(read_claude_shaped(path, self.events).hooks) or self.is_wired(text)
        except ValueError:
            has_hooks = True  # doctor reports the parse error itself
        return lint_codex(path, has_hooks, Path.home())

    def trust_steps(self, scope: Scope) -> list[str]:
        steps = [
            "Codex runs only hooks it trusts, and skips the others silently: start `codex`"
            " once and approve hookd's hooks (trust is stored in config.toml as"
            " [hooks.state] trusted_hash), or run `codex exec --dangerously-bypass-hook-trust`.",
        ]
        if scope == "project":
            steps.append(
                "Project hooks also need the project trusted: `codex --trust`, or"
                ' [projects."<path>"] trust_level = "trusted" in config.toml.'
            )
        return steps


def _native_reasons(result: FireResult) -> FireResult:
    """Block reasons as Codex words them: an exit-2 hook's reason is its stderr alone.

    hookd's aggregation writes Claude Code's ``[<command>]: <stderr>`` for an exit-2
    block (what Claude Code shows its model); Codex shows the model
    ``Command blocked by PreToolUse hook: <stderr>``, so the bracketed command
    would be text the model never sees natively.
    """
    runs = [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]
    if not runs or result.decision not in ("deny", "block"):
        return result
    messages = []
    changed = False
    for run in runs:
        message = run.block_message or ""
        stderr = run.stderr.strip()
        if run.exit_code == 2 and message.endswith(f"]: {stderr or 'No stderr output'}"):
            message, changed = stderr, True
        messages.append(message)
    if not changed:
        return result
    reason = messages[0] if result.event == "PreToolUse" else "\n".join(m for m in messages if m)
    return msgspec.structs.replace(result, reason=reason or None, blocking_messages=messages)


def _fit(event: str, data: dict[str, Any], tool_input: object = None) -> None:
    """Claude Code's output for ``event`` made acceptable to Codex's checks (in place);
    ``tool_input``: the call's input as the model wrote it."""
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if event == "PreToolUse":
        _fit_pre_tool_use(data, specific, tool_input)
    elif event in ("PostToolUse", "PermissionRequest"):
        _drop_updates(event, data, specific)
    if data.get("decision") == "block" and not data.get("reason"):
        data["reason"] = DEFAULT_BLOCK_REASON
    data.pop("hookSpecificOutput", None)
    if set(specific) - {"hookEventName"}:
        data["hookSpecificOutput"] = {"hookEventName": event, **specific}


REWRITE_WITHOUT_DECISION = (
    "hookd: a hook rewrote this call's input without a permission decision; Codex applies"
    " a rewrite only with an allow, which would also skip Codex's own approval — denied"
    " rather than run the call unsanitised or unapproved (answer permissionDecision: allow"
    " with the rewrite to run it)"
)
"""The reason of hookd's deliberate difference: natively Codex ignores such a rewrite and
runs the call as the model wrote it (seen at 0.169.0) — a guard that silently does not
guard; Claude Code applies the rewrite and keeps its permission flow, which Codex cannot."""


def _fit_pre_tool_use(
    data: dict[str, Any], specific: dict[str, Any], tool_input: object = None
) -> None:
    """PreToolUse: no continue/stopReason/suppressOutput, no bare allow, a deny has a reason,
    a rewrite without a decision denied (:data:`REWRITE_WITHOUT_DECISION`)."""
    stop = data.pop("continue", None) is False
    stop_reason = data.pop("stopReason", None)
    data.pop("suppressOutput", None)
    decision = specific.get("permissionDecision")
    if stop and decision != "deny":
        # continue:false is "stop everything"; Codex refuses it here, so the
        # call is denied instead (never run after a hook said stop).
        specific["permissionDecision"] = decision = "deny"
        specific["permissionDecisionReason"] = stop_reason or DEFAULT_BLOCK_REASON
        log.warning("continue:false on PreToolUse sent to Codex as a deny")
    if decision == "allow" and "updatedInput" not in specific:
        specific.pop("permissionDecision")
        specific.pop("permissionDecisionReason", None)
    if decision == "deny" and not specific.get("permissionDecisionReason"):
        specific["permissionDecisionReason"] = DEFAULT_BLOCK_REASON
    if "updatedInput" in specific and decision is None:
        if specific["updatedInput"] == tool_input:
            specific.pop("updatedInput")  # nothing rewritten: Codex ignores it, hookd too
        else:
            specific["permissionDecision"] = "deny"
            specific["permissionDecisionReason"] = REWRITE_WITHOUT_DECISION
            specific.pop("updatedInput")
            log.warning("updatedInput without permissionDecision sent to Codex as a deny")


PERMISSION_REWRITE = (
    "hookd: a hook rewrote this call's input in its PermissionRequest answer, which Codex"
    " cannot apply; denied rather than run the call unsanitised"
)
"""Codex rejects ``updatedInput`` in a PermissionRequest answer; dropping it and keeping
the allow would run the call as the model wrote it, skipping the hook's sanitising (the
rule of :func:`hookd.agents.capabilities.degrade`, and Copilot's adapter's)."""


def _drop_updates(event: str, data: dict[str, Any], specific: dict[str, Any]) -> None:
    """PostToolUse/PermissionRequest: the ``updated…`` fields Codex rejects, logged."""
    for key in ("updatedMCPToolOutput", "updatedToolOutput", "updatedPermissions"):
        if specific.pop(key, None) is not None:
            log.warning("Codex cannot apply a hook's output field", field=key, hook_event=event)
    data.pop("suppressOutput", None)
    verdict = specific.get("decision")
    if event != "PermissionRequest":
        return
    if isinstance(verdict, dict):
        if verdict.get("behavior") == "allow" and verdict.get("updatedInput") is not None:
            # An allow that rewrote the call: Codex would run it as the model wrote it.
            verdict.clear()
            verdict.update(behavior="deny", message=PERMISSION_REWRITE)
            log.warning("PermissionRequest allow with updatedInput sent to Codex as a deny")
        for key in ("updatedInput", "updatedPermissions"):
            if verdict.pop(key, None) is not None:
                log.warning("Codex cannot apply a PermissionRequest field", field=key)
    data.pop("continue", None)
    data.pop("stopReason", None)

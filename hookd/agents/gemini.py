"""Google Gemini CLI (``@google/gemini-cli``, run for real at 0.61.0): its hook dialect.

Gemini CLI took Claude Code's hook *shape* (``settings.json`` ``hooks`` →
matcher groups → ``{"type": "command", …}``, snake_case stdin, exit 2 blocks)
and changed nearly everything inside it.  What this module translates, and
why each rule is the way it is (observed in ``../shared/reference/agents.md``
and in the 0.61.0 bundle's hook runner, which wins over its docs):

* **Events.**  ``BeforeTool``/``AfterTool`` are PreToolUse/PostToolUse,
  ``BeforeAgent`` is UserPromptSubmit, ``AfterAgent`` is Stop (Gemini has no
  subagents), ``PreCompress`` is PreCompact; SessionStart, SessionEnd and
  Notification keep their names (the table of ``gemini hooks migrate``).
  ``BeforeModel``, ``AfterModel`` and ``BeforeToolSelection`` have no Claude
  Code counterpart (and AfterModel fires once per streamed chunk): hookd does
  not take them over — a user's hooks on them stay in Gemini's own file, and
  :meth:`GeminiAdapter.read_hooks` says so.
* **Tools.**  ``run_shell_command`` is ``Bash``, ``replace`` is ``Edit`` and
  so on (:data:`TOOLS`), so one matcher ``Bash`` means the shell for every
  agent; the hook still finds Gemini's name under ``native_tool_name``.  MCP
  tools (``mcp_<server>_<tool>``) are Claude Code's ``mcp__<server>__<tool>``,
  split where the input's ``mcp_context`` says (:mod:`hookd.agents.mcp_names`);
  a matcher on Gemini's own ``mcp_…`` name still matches them (a candidate).
* **Answers.**  Gemini reads a top-level ``decision`` (``deny``/``block``/
  ``ask``/``allow``) and ``reason`` — Claude Code's
  ``hookSpecificOutput.permissionDecision`` is *ignored* (the tool runs), so
  hookd's verdicts are always rewritten into Gemini's words.  A rewrite is
  ``hookSpecificOutput.tool_input``, which Gemini *merges* into the model's
  arguments; context is ``hookSpecificOutput.additionalContext``, which only
  SessionStart, BeforeAgent and AfterTool read.
* **Reasons.**  A native exit-2 hook's reason is its stderr, trimmed (Gemini
  then tells the model ``Tool execution blocked: <reason>``); hookd's engine
  keeps Claude Code's ``[<cmd>]: <stderr>`` label for the same block, so the
  reason is rebuilt from the blocking runs to read as the native one.
* **Timeouts** are milliseconds (:attr:`GeminiAdapter.timeout_unit`).
* **Trust.**  Gemini runs no hooks at all in a folder it does not trust (a
  headless run exits 55), and a project's own ``.gemini/settings.json`` hooks
  only with ``GEMINI_CLI_TRUST_WORKSPACE=true``: :meth:`trust_steps`.

Only the JSON parsing here is lenient the way Gemini is (``//`` and ``/* */``
comments in settings files); writing a file drops them, which ``wire``'s
caller shows in its diff.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
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
    UnknownAgentEvent,
)
from hookd.agents.mcp_names import McpNaming, McpTool, claude_name
from hookd.config.matching import tool_aliases
from hookd.json_object import parse_object
from hookd_client.events import EventInputError
from hookd_client.results import FireResult, HookRun

__all__ = [
    "HOOKD_TIMEOUT_MS",
    "MODEL_EVENTS",
    "TOOLS",
    "GeminiAdapter",
    "SettingsError",
]

log = structlog.get_logger("hookd.agents.gemini")

TOOLS: Mapping[str, str] = {
    "run_shell_command": "Bash",
    "replace": "Edit",
    "write_file": "Write",
    "read_file": "Read",
    "glob": "Glob",
    "grep_search": "Grep",
    "list_directory": "LS",
    "web_fetch": "WebFetch",
    "google_web_search": "WebSearch",
    "write_todos": "TodoWrite",
    "ask_user": "AskUserQuestion",
    "enter_plan_mode": "EnterPlanMode",
    "exit_plan_mode": "ExitPlanMode",
    "invoke_agent": "Agent",
}
"""Gemini CLI 0.61's built-in tool names (its ``*_TOOL_NAME`` constants) → Claude Code's.
``read_many_files``, ``save_memory``, ``activate_skill`` and the tracker tools have no
Claude Code counterpart and keep their names."""

MODEL_EVENTS = frozenset({"BeforeModel", "AfterModel", "BeforeToolSelection"})
"""Gemini-only events hookd does not take over (no Claude Code event to run them as)."""

HOOKD_TIMEOUT_MS = 600_000
"""The timeout of the one hookd entry per event: Claude Code's default command
timeout (600 s), so that hookd's own per-hook timeouts decide, not Gemini's
60 s default, which would cut the relay off mid-event."""

_NOTE_MERGE = (
    "a rewrite is merged into the model's arguments (keys a hook leaves out stay), "
    "and Gemini tells the model which keys a hook changed"
)

_TOOL_EVENTS = frozenset({"BeforeTool", "AfterTool"})
HOOKS_CONFIG_FIELDS = frozenset({"enabled", "disabled", "notifications"})
"""Keys Gemini skips inside ``hooks`` (an old place for ``hooksConfig``'s fields)."""


def _spec(
    native: str, canonical: str, note: str = "", differs: str = "", **caps: bool
) -> EventSpec:
    # Gemini applies matchers itself only on tool events, but hookd's one entry per
    # event has no matcher: matching is hookd's either way, so matchers=True is what
    # the *agent* could do natively (doctor reads it); parallel: observed (agents.md).
    return EventSpec(
        native=native,
        canonical=canonical,
        caps=Capabilities(**caps),
        note=note,
        differs=differs,
    )


_EXIT_CODES = (
    "Claude Code's exit codes decide: only exit 2 blocks (Gemini blocks on any exit code but"
    " 0 and 1) and a failed hook is a non-blocking error shown as Gemini's `Warning: …`"
)
_PLAIN_STDOUT = "a hook's plain stdout is context (Claude Code's rule; Gemini shows it to the user)"


_EVENTS: tuple[EventSpec, ...] = (
    _spec(
        "BeforeTool",
        "PreToolUse",
        "deny/block and ask are a top-level `decision`; permissionDecision is ignored by "
        f"Gemini; {_NOTE_MERGE}; no additionalContext; an allow does not skip Gemini's own "
        "confirmation; an ask in a headless run (`-p`) ends the run without running the tool "
        "(Gemini cannot ask there, natively too)",
        _EXIT_CODES,
        block=True,
        rewrite_input=True,
        ask=True,
        system_message=True,
    ),
    _spec(
        "AfterTool",
        "PostToolUse",
        "a block replaces the tool's result the model reads with the reason "
        "(`Tool result blocked: <reason>`); context is appended to the tool result",
        block=True,
        add_context=True,
        system_message=True,
    ),
    _spec(
        "BeforeAgent",
        "UserPromptSubmit",
        "a block drops the prompt (no model request); context is a `<hook_context>` part "
        "of the user's message",
        f"{_PLAIN_STDOUT}; {_EXIT_CODES}",
        block=True,
        add_context=True,
        system_message=True,
    ),
    _spec(
        "AfterAgent",
        "Stop",
        "also fires where Claude Code fires SubagentStop (Gemini has no subagents); a block "
        "sends the reason to the model as a new user prompt",
        block=True,
        continue_stop=True,
        system_message=True,
    ),
    _spec(
        "SessionStart",
        "SessionStart",
        "context is prepended to the first prompt (headless) or the first turn",
        _PLAIN_STDOUT,
        add_context=True,
        system_message=True,
    ),
    _spec(
        "SessionEnd",
        "SessionEnd",
        'Gemini does not wait for it; `reason: "exit"` arrives as `other`',
        system_message=True,
    ),
    _spec(
        "PreCompress",
        "PreCompact",
        "advisory: fired without waiting, cannot block; fires before every model turn",
        system_message=True,
    ),
    _spec(
        "Notification",
        "Notification",
        "only tool-permission prompts (`ToolPermission` arrives as `permission_prompt`)",
        system_message=True,
    ),
)

_CANONICAL_VALUES: dict[str, dict[str, dict[str, str]]] = {
    # event → field → Gemini's value → Claude Code's; the native value is kept as native_<field>.
    "SessionEnd": {"reason": {"exit": "other"}},
    "Notification": {"notification_type": {"ToolPermission": "permission_prompt"}},
}


MCP_NAMING = McpNaming(
    prefix="mcp_",
    sep="_",
    exact=True,
    how="Gemini names it `mcp_<server>_<tool>` and its hook input's `mcp_context` names the"
    " server and the tool",
)
"""Gemini CLI's name for MCP server ``srv``'s tool ``echo`` is ``mcp_srv_echo``; its
``BeforeTool``/``AfterTool`` input carries ``mcp_context: {server_name, tool_name, …}``
(seen at 0.61.0), which says exactly where to split."""


class SettingsError(ValueError):
    """A Gemini settings file that cannot be read as JSON (with comments): file, line, column."""


class GeminiAdapter(Adapter):
    """Gemini CLI's hook dialect (see the module docstring for every rule and why)."""

    name: ClassVar[str] = "gemini"
    title: ClassVar[str] = "Google Gemini CLI"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "0.61.0"
    events = _EVENTS
    tools = TOOLS
    mcp: ClassVar[McpNaming] = MCP_NAMING
    timeout_unit: ClassVar[float] = 0.001

    # --- runtime ------------------------------------------------------------------

    def mcp_tool(self, native: str, data: Mapping[str, Any] | None = None) -> McpTool | None:
        """``mcp_srv_echo`` → ``mcp__srv__echo``, split where Gemini's own ``mcp_context``
        says (its ``server_name`` and ``tool_name``: exact); without one, every reading."""
        context = data.get("mcp_context") if data is not None else None
        if isinstance(context, dict):
            server, tool = context.get("server_name"), context.get("tool_name")
            if isinstance(server, str) and isinstance(tool, str) and server and tool:
                name = claude_name(server, tool)
                return McpTool(name=name, candidates=(name, native))
        if native in self.tools:
            return None
        return self.mcp.tool(native)

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        said = raw.get("hook_event_name", native_event)
        if said != native_event:
            raise EventInputError(
                f"Gemini CLI input: `$.hook_event_name` is {said!r}, "
                f"but the hook was installed for {native_event!r}"
            )
        data = dict(raw)
        data["hook_event_name"] = spec.canonical
        if native_event in _TOOL_EVENTS:
            tool = data.get("tool_name")
            if not isinstance(tool, str) or not tool:
                raise EventInputError(
                    f"Gemini CLI {native_event} input: `$.tool_name` is missing or not a string"
                )
            self.map_tool(data, tool)
        for field, values in _CANONICAL_VALUES.get(spec.canonical, {}).items():
            value = data.get(field)
            if isinstance(value, str) and value in values:
                data[field] = values[value]
                data[f"native_{field}"] = value
        if native_event == "AfterAgent" and "last_assistant_message" not in data:
            response = data.get("prompt_response")
            if isinstance(response, str):
                data["last_assistant_message"] = response
        return self.agent_event(native_event, spec, data)

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        caps = event.spec.caps
        out: dict[str, Any] = {}
        if not result.continue_:
            out["continue"] = False
            if result.stop_reason is not None:
                out["stopReason"] = result.stop_reason
        specific: dict[str, Any] = {}
        asked: list[str] = []
        if result.blocked and caps.block:
            out["decision"] = "deny"
            out["reason"] = _gemini_reason(result)
        elif result.decision == "ask" and caps.ask:
            # Gemini's confirmation dialog shows the hook's systemMessage, not its reason:
            # the reason goes there too, as Claude Code shows it when it asks.
            out["decision"] = "ask"
            if result.reason:
                out["reason"] = result.reason
                asked = [result.reason]
        elif result.updated_input is not None and caps.rewrite_input:
            specific["tool_input"] = result.updated_input
        if caps.add_context:
            contexts = [*result.plain_context, *result.additional_context, *result.async_results]
            if contexts:
                specific["additionalContext"] = "\n".join(contexts)
        messages = [*asked, *result.system_messages, *_warnings(result)]
        if messages and caps.system_message:
            out["systemMessage"] = "\n".join(messages)
        if result.specific:
            # Claude Code's other fields (updatedToolOutput, sessionTitle, watchPaths, …) have
            # no Gemini counterpart: said in the daemon's log rather than dropped unseen.
            log.warning(
                "gemini cannot apply",
                native_event=event.native_event,
                fields=sorted(result.specific),
            )
        if specific:
            out["hookSpecificOutput"] = {"hookEventName": event.native_event, **specific}
        if not out:
            return AgentReply()
        return AgentReply(stdout=msgspec.json.encode(out).decode() + "\n")

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        binary = shutil.which("gemini")
        if binary is None:
            return Installation(installed=False)
        return Installation(installed=True, binary=binary, version=_version(binary))

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        if scope == "user":
            return [home / ".gemini" / "settings.json"]
        if project is None:
            raise ValueError("Gemini CLI's project hooks need a project directory")
        return [project / ".gemini" / "settings.json"]

    def read_hooks(self, path: Path) -> NativeHooks:
        settings = _parse(path.read_text(encoding="utf-8"), str(path))
        found = NativeHooks()
        config = settings.get("hooksConfig")
        disabled: set[str] = set()
        if isinstance(config, dict):
            if config.get("enabled") is False:
                found.warnings.append(
                    "hooksConfig.enabled is false: Gemini CLI runs no hooks from any "
                    "file, hookd's included, until it is true"
                )
            names = config.get("disabled")
            if isinstance(names, list):
                disabled = {n for n in names if isinstance(n, str)}
        hooks = settings.get("hooks")
        if hooks is None:
            return found
        if not isinstance(hooks, dict):
            raise SettingsError(f"{path}: `hooks` is not an object")
        for native, groups in hooks.items():
            self._read_event(native, groups, disabled, found)
        return found

    def _read_event(self, native: str, groups: Any, disabled: set[str], found: NativeHooks) -> None:
        where = f"hooks.{native}"
        if native in HOOKS_CONFIG_FIELDS:
            return
        if native in MODEL_EVENTS:
            if _user_groups(groups):
                found.warnings.append(
                    f"{where}: no Claude Code event runs these; they stay in Gemini's file "
                    "and Gemini CLI keeps running them itself"
                )
            return
        try:
            spec = self.event_spec(native)
        except UnknownAgentEvent:
            found.warnings.append(
                f"{where}: not a Gemini CLI 0.61 event (Gemini skips it); left out"
            )
            return
        if not isinstance(groups, list):
            found.warnings.append(f"{where}: not a list (Gemini skips it); left out")
            return
        for index, group in enumerate(groups):
            moved = self._read_group(f"{where}[{index}]", native, group, disabled, found)
            if moved is not None:
                found.hooks.setdefault(spec.canonical, []).append(moved)

    def _read_group(
        self, where: str, native: str, group: Any, disabled: set[str], found: NativeHooks
    ) -> dict[str, Any] | None:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            found.warnings.append(f"{where}: not a matcher group with a `hooks` list; left out")
            return None
        handlers: list[dict[str, Any]] = []
        for index, hook in enumerate(group["hooks"]):
            if _is_hookd_handler(hook):
                continue
            handler = self._read_handler(f"{where}.hooks[{index}]", hook, disabled, found)
            if handler is not None:
                handlers.append(handler)
        if not handlers:
            return None
        moved: dict[str, Any] = {}
        matcher = group.get("matcher")
        if native in _TOOL_EVENTS and isinstance(matcher, str):
            canonical, warning = canonical_matcher(matcher)
            if warning:
                found.warnings.append(f"{where}.matcher: {warning}")
            if canonical is not None:
                moved["matcher"] = canonical
        elif isinstance(matcher, str) and matcher.strip() not in ("", "*"):
            # Lifecycle matchers are exact strings in Gemini and in hookd alike, on the
            # value decode renames (SessionEnd's "exit" is "other" to hookd's hooks).
            value = matcher.strip()
            for values in _CANONICAL_VALUES.get(self.event_spec(native).canonical, {}).values():
                value = values.get(value, value)
            moved["matcher"] = value
        if group.get("sequential") is True:
            moved["sequential"] = True
            found.warnings.append(
                f"{where}.sequential: Gemini runs every matching hook of the event in order "
                "once one group says so; hookd runs this group's hooks in order and the other "
                "groups beside them"
            )
        moved["hooks"] = handlers
        return moved

    def _read_handler(
        self, where: str, hook: Any, disabled: set[str], found: NativeHooks
    ) -> dict[str, Any] | None:
        if not isinstance(hook, dict) or hook.get("type") != "command":
            found.warnings.append(f"{where}: only command hooks move to hookd; left out")
            return None
        command = hook.get("command")
        if not isinstance(command, str) or not command:
            found.warnings.append(f"{where}: no command (Gemini skips it); left out")
            return None
        name = hook.get("name")
        if (name if isinstance(name, str) and name else command) in disabled:
            found.warnings.append(
                f"{where}: disabled in hooksConfig.disabled; not carried over (the backup keeps it)"
            )
            return None
        command = _with_env(where, command, hook.get("env"), found)
        handler: dict[str, Any] = {"type": "command", "command": command}
        timeout = _seconds(hook.get("timeout"), self.timeout_unit)
        if timeout is not None:
            handler["timeout"] = timeout
        if isinstance(name, str) and name:
            handler["name"] = name
        found.warnings.extend(_command_warnings(where, command))
        return handler

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        settings = _parse(text, "settings.json") if text and text.strip() else {}
        old = settings.get("hooks")
        hooks: dict[str, Any] = {}
        if isinstance(old, dict):
            hooks.update((k, v) for k, v in old.items() if k in HOOKS_CONFIG_FIELDS)
            for native in sorted(MODEL_EVENTS & old.keys()):
                if _user_groups(old[native]):
                    hooks[native] = [
                        g for g in old[native] if not (isinstance(g, dict) and _all_hookd(g))
                    ]
        for spec in self.events:
            handler = {
                "type": "command",
                "name": "hookd",
                "command": command(spec),
                "timeout": HOOKD_TIMEOUT_MS,
            }
            hooks[spec.native] = [{"hooks": [handler]}]
        settings["hooks"] = hooks
        return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"

    def is_wired(self, text: str) -> bool:
        try:
            settings = _parse(text, "settings.json")
        except SettingsError:
            return False
        hooks = settings.get("hooks")
        if not isinstance(hooks, dict):
            return False
        return any(
            isinstance(g, dict) and _all_hookd(g)
            for native, groups in hooks.items()
            if native not in MODEL_EVENTS and isinstance(groups, list)
            for g in groups
        )

    def trust_steps(self, scope: Scope) -> list[str]:
        steps = [
            "Gemini CLI runs hooks only in a folder it trusts: answer its trust prompt the "
            "first time you start `gemini` there (kept in ~/.gemini/trustedFolders.json); "
            "headless runs (`gemini -p`) in an untrusted folder exit 55 unless given "
            "`--skip-trust`",
        ]
        if scope == "project":
            steps.append(
                "a project's own .gemini/settings.json hooks load only once the workspace is "
                "trusted (GEMINI_CLI_TRUST_WORKSPACE=true for headless runs); Gemini then "
                "fingerprints them in ~/.gemini/trusted_hooks.json and warns when they change"
            )
        return steps

    def lint(self, path: Path, text: str) -> list[Finding]:
        """What Gemini CLI would skip without a word: a file it cannot parse, hooks
        switched off, hooks disabled by name, events it does not know (Claude Code's
        names among them), timeouts written in seconds, matchers naming Claude Code's
        tools, and a project file's hooks behind the workspace trust gate."""
        where = str(path)
        try:
            settings = _parse(text, where)
        except SettingsError as exc:
            return [Finding(severity="error", message=f"{exc}: Gemini CLI ignores it", path=where)]
        found: list[Finding] = []
        config = settings.get("hooksConfig")
        if isinstance(config, dict):
            found.extend(_lint_config(where, config))
        hooks = settings.get("hooks")
        if isinstance(hooks, dict):
            for native, groups in hooks.items():
                found.extend(self._lint_event(where, native, groups))
            if hooks and path.parent.name == ".gemini" and path.parent.parent != Path.home():
                found.append(
                    Finding(
                        severity="info",
                        message="a project's hooks run only in a trusted workspace "
                        "(GEMINI_CLI_TRUST_WORKSPACE=true headless)",
                        path=where,
                        where="hooks",
                    )
                )
        return found

    def _lint_event(self, where: str, native: str, groups: Any) -> list[Finding]:
        if native in MODEL_EVENTS or native in HOOKS_CONFIG_FIELDS:
            return []
        try:
            self.event_spec(native)
        except UnknownAgentEvent:
            gemini = next((s.native for s in self.events if s.canonical == native), None)
            hint = f" (Gemini calls it {gemini})" if gemini else ""
            message = f"{native!r} is not a Gemini CLI event{hint}: its hooks never run"
            return [Finding(severity="error", message=message, path=where, where=f"hooks.{native}")]
        found: list[Finding] = []
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            at = f"hooks.{native}[{g}]"
            matcher = group.get("matcher")
            if native in _TOOL_EVENTS and isinstance(matcher, str):
                found.extend(_lint_matcher(where, at, matcher))
            for h, hook in enumerate(group.get("hooks") or []):
                timeout = hook.get("timeout") if isinstance(hook, dict) else None
                if isinstance(timeout, int | float) and 0 < timeout < 1000:
                    found.append(
                        Finding(
                            severity="warning",
                            message=f"timeout {timeout} is in milliseconds for Gemini CLI "
                            f"({timeout / 1000:g} s): seconds were probably meant",
                            path=where,
                            where=f"{at}.hooks[{h}].timeout",
                        )
                    )
        return found


def _lint_config(where: str, config: dict[str, Any]) -> list[Finding]:
    found = []
    if config.get("enabled") is False:
        found.append(
            Finding(
                severity="error",
                message="hooksConfig.enabled is false: Gemini CLI runs no hooks at all",
                path=where,
                where="hooksConfig.enabled",
            )
        )
    names = config.get("disabled")
    if isinstance(names, list) and names:
        found.append(
            Finding(
                severity="info",
                message=f"hooks disabled by name: {', '.join(map(str, names))}",
                path=where,
                where="hooksConfig.disabled",
            )
        )
    return found


def _lint_matcher(where: str, at: str, matcher: str) -> list[Finding]:
    text = matcher.strip()
    if text in ("", "*"):
        return []
    try:
        pattern = re.compile(text)
    except re.error:
        return []
    if any(pattern.search(n) for n in TOOLS):
        return []
    claude = sorted(c for c in set(TOOLS.values()) if pattern.search(c))
    if not claude:
        return []
    natives = "|".join(n for n in TOOLS if TOOLS[n] in claude)
    return [
        Finding(
            severity="warning",
            message=f"matcher {matcher!r} names Claude Code's tools; Gemini CLI calls them "
            f"{natives!r}, so it matches none of its built-in tools",
            path=where,
            where=f"{at}.matcher",
        )
    ]


# --- encode helpers ---------------------------------------------------------------------


def _blocking_runs(result: FireResult) -> list[HookRun]:
    return [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]


def _gemini_reason(result: FireResult) -> str:
    """The block's reason as a native Gemini hook's would read.

    A JSON reason is verbatim in both; an exit-2 block is the hook's stderr,
    trimmed (Gemini: ``stdout.trim() || stderr.trim()``), where hookd's engine
    wrote Claude Code's ``[<cmd>]: <stderr>``.  Several hooks: one reason a
    line, in configuration order, as Gemini's own aggregation joins them — an
    allowing hook's reason among them."""
    runs = _blocking_runs(result)
    messages = result.blocking_messages
    if not runs or len(runs) != len(messages):
        return "\n".join(m for m in messages if m) or result.reason or "Blocked by hook"
    own = dict(zip((id(r) for r in runs), messages, strict=True))
    reasons = []
    for run in result.hooks:
        if run.is_async:
            continue
        message = own.get(id(run))
        if message is None:
            # Gemini joins every hook's reason, an allowing hook's too (seen at 0.61.0:
            # "Tool execution blocked: ALLOW-REASON\nDENY-REASON").
            reasons.append(_answer_reason(run))
        elif run.exit_code == 2 and run.output is None:
            reasons.append(run.stderr.strip() or message)
        else:
            reasons.append(message)
    return "\n".join(r for r in reasons if r) or result.reason or "Blocked by hook"


def _answer_reason(run: HookRun) -> str:
    """The reason a hook that did not block gave with its answer (an allow's), if any."""
    if run.output is None:
        return ""
    specific = run.output.hookSpecificOutput
    said = getattr(specific, "permissionDecisionReason", None) or run.output.reason
    return said if isinstance(said, str) else ""


def _warnings(result: FireResult) -> list[str]:
    """Gemini shows a failed hook (exit 1 or another non-blocking code) to the user as
    ``Warning: <output>``; hookd's own failures (timeouts, spawn errors) stay in its log."""
    warnings = []
    for run in result.hooks:
        if run.outcome != "non_blocking_error" or run.timed_out or not run.exit_code:
            continue
        text = run.stdout.strip() or run.stderr.strip()
        if text:
            warnings.append(f"Warning: {text}")
    return warnings


# --- install helpers -----------------------------------------------------------------


def _version(binary: str) -> str | None:
    """The version from the npm package the binary belongs to (no node start-up), else
    ``gemini --version``."""
    for parent in Path(os.path.realpath(binary)).parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                break
            if isinstance(data, dict) and data.get("name") == "@google/gemini-cli":
                version = data.get("version")
                return version if isinstance(version, str) else None
            break
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = done.stdout.strip().splitlines()
    return line[-1] if done.returncode == 0 and line else None


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _strip_comments(text: str) -> str:
    """``//`` and ``/* */`` comments blanked (newlines kept, so line numbers stay), strings
    untouched: what Gemini's settings loader (strip-json-comments) accepts."""

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith('"'):
            return token
        return re.sub(r"[^\n]", " ", token)

    return _COMMENT.sub(blank, text)


def _parse(text: str | None, where: str) -> dict[str, Any]:
    """Gemini's settings: JSON once its comments are blanked (lines and columns kept), read
    by the one reader of JSON objects, its error raised as a :class:`SettingsError`."""
    try:
        return parse_object(where, None if text is None else _strip_comments(text))
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def _is_hookd_handler(hook: Any) -> bool:
    """A handler ``wire`` wrote: a command running hookd's relay for an agent."""
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    text = str(hook.get("command", ""))
    relay = "hookd-relay" in text or "hookd_client" in text or "import relay" in text
    return relay and "--agent" in text


def _all_hookd(group: dict[str, Any]) -> bool:
    hooks = group.get("hooks")
    return isinstance(hooks, list) and bool(hooks) and all(_is_hookd_handler(h) for h in hooks)


def _user_groups(groups: Any) -> bool:
    """Does an event's list hold any group that is not hookd's own?"""
    return isinstance(groups, list) and any(
        not (isinstance(g, dict) and _all_hookd(g)) for g in groups
    )


def _with_env(where: str, command: str, env: Any, found: NativeHooks) -> str:
    """Gemini gives a hook its config's ``env``; hookd's command hooks take none, so the
    moved command line exports the same variables (quoted: values stay literal)."""
    if not isinstance(env, dict) or not env:
        return command
    names = [k for k in env if isinstance(k, str) and _ENV_NAME.match(k)]
    exports = "".join(f"export {k}={shlex.quote(str(env[k]))}; " for k in names)
    found.warnings.append(f"{where}.env: set by the command line under hookd ({exports})")
    if len(names) != len(env):
        found.warnings.append(f"{where}.env: names that are no shell variable left out")
    return exports + command


def _seconds(timeout: Any, unit: float) -> float | None:
    """A Gemini timeout in seconds; none given is Gemini's default (60000 ms), not Claude
    Code's 600 s; a value that is no positive number: None (hookd's default applies)."""
    if timeout is None:
        return 60.0
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        return float(timeout * unit)
    return None


def _command_warnings(where: str, command: str) -> list[str]:
    if "$GEMINI_PLANS_DIR" in command or "$GEMINI_SESSION_ID" in command:
        return [
            f"{where}: Gemini substitutes $GEMINI_PLANS_DIR/$GEMINI_SESSION_ID into the "
            "command itself; under hookd the shell expands them from the hook's environment, "
            "which Gemini also sets"
        ]
    return []


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHOLE_MATCH = frozenset({"*", ".*", ".+", "^.*$"})
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_|, -]+$")
"""What hookd's matcher language reads as exact names, not a regex (config/matching.py)."""


def canonical_matcher(matcher: str) -> tuple[str | None, str | None]:
    """A Gemini tool matcher → hookd's (Claude Code's), and a warning when it changed meaning.

    Gemini tests a matcher as an unanchored regex against *its* tool names;
    hookd tests one against the canonical names (``Bash``), and a matcher of
    plain name characters is an exact name list there.  So the matcher is
    evaluated against every Gemini tool name hookd maps: a matcher naming only
    such tools becomes the list of their Claude Code names; anything else
    becomes a regex that keeps matching the unmapped (MCP, Gemini-only) tool
    names as before and the mapped tools by their new names.  ``None``: every
    tool (no matcher).
    """
    matcher = matcher.strip()  # Gemini trims it too
    if matcher in ("", *_WHOLE_MATCH):
        return None, None
    try:
        pattern = re.compile(matcher)
    except re.error:
        # Gemini compares a matcher that is no regex as an exact name.
        return TOOLS.get(matcher, re.escape(matcher)), None
    names = matcher.split("|")
    if all(n in TOOLS for n in names):
        return "|".join(dict.fromkeys(TOOLS[n] for n in names)), None
    mapped = sorted({canonical for native, canonical in TOOLS.items() if pattern.search(native)})
    # hookd also tests a tool's legacy names (Agent's "Task"): none may match by accident.
    canonical = sorted({name for c in TOOLS.values() for name in tool_aliases(c)})
    if not mapped and not any(pattern.search(c) for c in canonical):
        # Only unmapped names can match, as before; hookd reads a matcher of plain name
        # characters as an exact name, so a group keeps it a regex search.
        return (f"(?:{matcher})" if _PLAIN_NAME.match(matcher) else matcher), None
    if any(pattern.search(c) for c in canonical):
        # It would also match a Claude Code name Gemini never calls a tool by: excluded.
        others = f"^(?!(?:{'|'.join(canonical)})$).*?(?:{matcher})"
    else:
        others = f"(?:{matcher})"
    rewritten = f"^(?:{'|'.join(mapped)})$|{others}" if mapped else others
    return rewritten, (
        f"{matcher!r} (a regex on Gemini's tool names) becomes {rewritten!r}: "
        "the same tools, the mapped ones under their Claude Code names"
    )

"""GitHub Copilot CLI (``@github/copilot``, run for real at 1.0.102): both of its hook dialects.

Copilot reads hooks from ``<repo>/.github/hooks/*.json``, ``$COPILOT_HOME/hooks/*.json``
(``~/.copilot``) and ``hooks`` in ``$COPILOT_HOME/settings.json``, in two shapes,
chosen per event key:

* **native** (``{"version": 1, "hooks": {"preToolUse": [{"type": "command",
  "bash": …, "timeoutSec": …}]}}``): camelCase event names, camelCase stdin
  with *no event name* in it (so the wired command names the event:
  ``hookd-relay --agent copilot preToolUse``), an epoch-ms ``timestamp``, the
  model's own tool names (``bash``, ``view``, ``apply_patch``) and no matchers;
* **Claude-shaped** (``{"hooks": {"PreToolUse": [{"matcher": …, "hooks": […]}]}}``):
  snake_case stdin with ``hook_event_name``, an ISO ``timestamp`` and tool
  names Copilot maps itself (``bash`` → ``Bash``, ``view`` → ``Read``,
  ``create`` → ``Write``, ``edit`` → ``Edit``, ``rg``/``grep`` → ``Grep``,
  ``glob`` → ``Glob``; ``apply_patch`` → ``Edit`` with the bare patch string as
  its ``tool_input``).

Both decode to the *same* canonical event, so a hook cannot tell which shape
the user wired: camelCase keys become Copilot's own snake_case spelling of them
(``initialPrompt`` → ``initial_prompt``, ``toolResult.textResultForLlm`` →
``tool_result.text_result_for_llm``, exactly what the Claude-shaped stdin
says), ``toolArgs`` is ``tool_input``, the tool's text result is also
``tool_response`` (a string, as Codex gives it), and an ``apply_patch`` call
is ``apply_patch`` with ``{"command": patch}`` under either shape — a patch is
not an Edit (it has no ``file_path``), the same choice as
:mod:`hookd.agents.codex`.  Tool *arguments* keep Copilot's names (``path``,
``file_text``, ``old_str``), as Copilot's own Claude-shaped stdin keeps them.

What Copilot obeys, as seen running it (observations in the tests'
``test_copilot.py`` and ``../shared/reference/agents.md`` §4):

* It reads the *native* output fields under either config shape
  (``permissionDecision``/``permissionDecisionReason``, ``modifiedArgs``,
  ``additionalContext``, ``decision: "block"`` + ``reason``,
  ``modifiedResult``; PermissionRequest's ``behavior``/``message``), while
  ``hookSpecificOutput`` is read only under the Claude shape and only on
  PreToolUse.  So :meth:`CopilotAdapter.encode` answers in the native fields
  for both: one answer, right for both doors.
* Exit codes: a PreToolUse hook that exits non-zero *denies* the call
  ("hook errored"); exit 2 blocks nothing else (its stderr is shown as a
  warning).  hookd therefore always exits 0 and says everything in JSON.
* ``additionalContext`` reaches the model on sessionStart (a user message
  before the prompt; lost under the Claude shape), userPromptSubmitted (a
  ``<system_reminder>`` after the prompt), preToolUse (a user message after
  the tool result) and postToolUse (appended to the tool result).  Two hooks'
  contexts are joined with a blank line — except on userPromptSubmitted, where
  Copilot keeps only the last hook's: hookd deliberately keeps every hook's
  there (a context is never dropped in silence).  Plain stdout is ignored
  natively; hookd follows Claude Code's rules, where a UserPromptSubmit or
  SessionStart hook's plain stdout *is* context, and carries it as
  ``additionalContext`` — a deliberate difference, in docs/agents.md and in
  the event's note (explain, doctor).
* A userPromptSubmitted block ends ``copilot -p`` with exit 1 before any model
  request; an agentStop block continues the turn with the reason as a new user
  message (the next stop has ``stop_hook_active: true``); a postToolUse block
  replaces what the model sees with ``Tool result blocked: <reason>``.
* ``ask`` asks in the interactive CLI; with no one to ask (``-p``) Copilot
  denies: "Denied by preToolUse hook (unable to ask user for confirmation)".
* Hooks of one event run one after another and a deny stops the rest; the
  timeout is ``timeoutSec`` (``timeout`` under the Claude shape), in seconds;
  a hook that times out is killed and the tool runs (fails open).
* ``systemMessage`` is shown nowhere.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

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
from hookd.agents.claude_shape import is_hookd_command, read_claude_shaped
from hookd.agents.detect import detect_binary
from hookd.agents.mcp_names import McpNaming, McpTool
from hookd.engine.claude_output import carries_late_context
from hookd.json_object import parse_object
from hookd_client.events import EventInputError
from hookd_client.results import FireResult

__all__ = ["DEFAULT_BLOCK_REASON", "TOOLS", "WIRED_TIMEOUT", "CopilotAdapter", "copilot_home"]

log = structlog.get_logger("hookd.agents.copilot")

DEFAULT_BLOCK_REASON = "Blocked by a hook (hookd)"
"""Copilot rejects a subagentStop block without a reason; hookd always gives one."""

WIRED_TIMEOUT = 600
"""``timeoutSec`` of the wired entries: hookd enforces each hook's own timeout, so
Copilot must not cut the relay first (its own default would)."""

TOOLS: dict[str, str] = {
    "bash": "Bash",
    "view": "Read",
    "create": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "rg": "Grep",
    "glob": "Glob",
}
"""Copilot's tool names → Claude Code's, as Copilot's Claude-shaped stdin names them
(each seen with a real run: ``create``/``edit``/``grep`` are the tools Copilot gives
Claude models, ``rg``/``apply_patch`` the ones it gives GPT models).  ``apply_patch``
keeps its name (see the module docstring)."""

PATCH_TOOL = "apply_patch"

MCP_NAMING = McpNaming(
    prefix="",
    sep="-",
    exact=False,
    prefer="last",
    how="Copilot joins server and tool with `-`, so a `-` inside either reads several ways",
)
"""Copilot names MCP server ``srv``'s tool ``echo`` ``srv-echo`` to its hooks, in both
shapes (seen at 1.0.102); a server or tool name with a ``-`` in it makes the split
ambiguous, and hookd then tests a matcher against every reading."""

PERMISSION_MCP_NAMING = McpNaming(
    prefix="", sep="/", how="Copilot's permissionRequest names it `srv/echo`"
)
"""On ``permissionRequest`` Copilot names the same tool ``srv/echo`` (seen at 1.0.102)."""

_SHAPED_NATIVE: dict[str, str] = {
    canonical: native
    for native, canonical in TOOLS.items()
    if list(TOOLS.values()).count(canonical) == 1
}
"""Claude Code's name → Copilot's, where Copilot's Claude-shaped stdin (which has only
the mapped name) still says which tool ran: ``Grep`` is ``grep`` or ``rg`` by model."""


def _caps(**kw: bool) -> Capabilities:
    return Capabilities(matchers=False, parallel=False, **kw)


def _claude_caps(**kw: bool) -> Capabilities:
    return Capabilities(matchers=True, parallel=False, **kw)


_NATIVE: tuple[EventSpec, ...] = (
    EventSpec(
        native="sessionStart",
        canonical="SessionStart",
        caps=_caps(add_context=True),
        note="context arrives as a user message before the prompt; source `new` is `startup`",
    ),
    EventSpec(
        native="userPromptSubmitted",
        canonical="UserPromptSubmit",
        caps=_caps(block=True, add_context=True),
        note="a block ends the run before any model request (`copilot -p` exits 1)",
        differs="a hook's plain stdout is context (Claude Code's rule; Copilot ignores it),"
        " and every hook's context reaches the model (Copilot keeps only the last one's)",
    ),
    EventSpec(
        native="preToolUse",
        canonical="PreToolUse",
        caps=_caps(block=True, rewrite_input=True, add_context=True, ask=True),
        note="an ask with no one to ask (`copilot -p`) is denied by Copilot",
        differs="Claude Code's exit codes decide: a hook that exits 1 is a non-blocking"
        " error (Copilot denies the call: `hook errored`), an exit-2 block tells the model"
        " the hook's stderr (Copilot: `hook exited with code 2`); hooks of one event run in"
        " parallel (Copilot: one after another, a deny stopping the rest)",
    ),
    EventSpec(
        native="postToolUse",
        canonical="PostToolUse",
        caps=_caps(block=True, add_context=True),
        note="a block replaces the tool's output with `Tool result blocked: <reason>`",
    ),
    EventSpec(
        native="postToolUseFailure",
        canonical="PostToolUseFailure",
        caps=_caps(add_context=True),
    ),
    EventSpec(
        native="agentStop",
        canonical="Stop",
        caps=_caps(block=True, continue_stop=True),
        note="a block continues the turn with the reason as a user message",
    ),
    EventSpec(
        native="subagentStart",
        canonical="SubagentStart",
        caps=_caps(add_context=True),
        note="context is prepended to the subagent's prompt",
    ),
    EventSpec(
        native="subagentStop",
        canonical="SubagentStop",
        caps=_caps(block=True, continue_stop=True),
    ),
    EventSpec(
        native="preCompact",
        canonical="PreCompact",
        caps=_caps(),
        note="Copilot cannot block a compaction",
    ),
    EventSpec(native="sessionEnd", canonical="SessionEnd", caps=_caps()),
    EventSpec(
        native="permissionRequest",
        canonical="PermissionRequest",
        caps=_caps(block=True),
        note="fires before Copilot's permission rules, even with every tool allowed; a deny"
        " tells the model `Permission denied by a PermissionRequest hook: <message>`",
    ),
)
"""Copilot's own events that have a Claude Code counterpart.  Not taken over (a
user's hooks on them stay in Copilot's file): ``userPromptTransformed``,
``preMcpToolCall``, ``errorOccurred`` and ``notification`` (no Claude Code event)."""


def _fields(caps: Capabilities) -> dict[str, bool]:
    return {
        name: getattr(caps, name)
        for name in ("block", "rewrite_input", "add_context", "ask", "continue_stop")
    }


def _claude_shaped(spec: EventSpec) -> EventSpec:
    """The Claude-shaped door's spec for one native event: matchers honoured by Copilot,
    and SessionStart context lost (Copilot reads it from neither output shape there)."""
    fields = _fields(spec.caps)
    note = spec.note
    if spec.canonical == "SessionStart":
        fields["add_context"] = False
        note = "Copilot drops SessionStart context from a Claude-shaped hook file"
    return EventSpec(
        native=spec.canonical,
        canonical=spec.canonical,
        caps=_claude_caps(**fields),
        note=note,
        differs=spec.differs,
    )


_CLAUDE_SHAPED = tuple(_claude_shaped(spec) for spec in _NATIVE)
_NATIVE_KEYS = frozenset(s.native for s in _NATIVE)
_NATIVE_NAME = {s.canonical: s.native for s in _NATIVE}
_CLAUDE_KEYS = frozenset(s.native for s in _CLAUDE_SHAPED)

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake(key: str) -> str:
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), key)


def copilot_home(home: Path) -> Path:
    """``$COPILOT_HOME`` when set (Copilot's own rule), else ``<home>/.copilot``."""
    env = os.environ.get("COPILOT_HOME")
    return Path(env) if env else home / ".copilot"


class CopilotAdapter(Adapter):
    name: ClassVar[str] = "copilot"
    title: ClassVar[str] = "GitHub Copilot CLI"
    verified: ClassVar[bool] = True
    tested_version: ClassVar[str | None] = "1.0.102"
    events: ClassVar[Sequence[EventSpec]] = (*_NATIVE, *_CLAUDE_SHAPED)
    """The native (camelCase) doors first — the ones ``wire`` writes — then the
    Claude-shaped (PascalCase) ones, for hook files a user wrote in that shape."""
    tools: ClassVar[Mapping[str, str]] = TOOLS
    mcp: ClassVar[McpNaming] = MCP_NAMING
    timeout_unit: ClassVar[float] = 1.0

    # --- runtime ------------------------------------------------------------------

    def mcp_tool(self, native: str, data: Mapping[str, Any] | None = None) -> McpTool | None:
        """``srv-echo`` (pre/post tool use, both shapes) or ``srv/echo`` (permissionRequest)
        → ``mcp__srv__echo``; Copilot's own tools have neither character."""
        del data
        if native in self.tools or native == PATCH_TOOL:
            return None
        if "/" in native:
            return PERMISSION_MCP_NAMING.tool(native)
        return self.mcp.tool(native)

    def hook_workdir(self, event: AgentEvent, env: Mapping[str, str] | None) -> str | None:
        """Copilot runs every hook in the project's root (``COPILOT_PROJECT_DIR``, the
        repository), not in the session's ``cwd`` its input names (seen at 1.0.102,
        started in ``proj/sub``: the hook's ``pwd`` is ``proj``): a hook with relative
        paths must find them through hookd too.  The relay Copilot runs has
        ``COPILOT_PROJECT_DIR``; an http hook has no process, so the root is the
        repository holding the input's ``cwd`` (where Copilot would have run it)."""
        found = (env or {}).get("COPILOT_PROJECT_DIR", "")
        if found.startswith("/") and os.path.isdir(found):
            return found
        cwd = event.input.get("cwd")
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            return None
        for directory in (Path(cwd), *Path(cwd).parents):
            if (directory / ".git").exists():
                return str(directory)
        return None

    def claims_claude_input(self, raw: Mapping[str, Any]) -> bool:
        """Copilot's input, sent through Claude Code's own wiring (Copilot ≥ 1.0.12 runs a
        project's ``.claude/settings.json`` hooks): Claude-shaped with an ISO ``timestamp``
        and no ``transcript_path`` — Claude Code sends every event a ``transcript_path``
        and never a ``timestamp`` — or camelCase (``sessionId``), as Copilot sends
        PermissionRequest even there (seen at 1.0.102 and 2.1.330)."""
        if "transcript_path" in raw:
            return False
        return isinstance(raw.get("timestamp"), str) or "sessionId" in raw

    def own_door_wired(
        self, canonical: str, env: Mapping[str, str] | None, project: str | None
    ) -> bool:
        """Copilot's own files (``$COPILOT_HOME/hooks/*.json``, its ``settings.json``, the
        project's ``.github/hooks/*.json``) send ``canonical`` to hookd's Copilot door."""
        native = _NATIVE_NAME.get(canonical)
        if native is None:
            return False
        env = env or {}
        home = Path(env.get("HOME") or Path.home())
        base = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else home / ".copilot"
        files = [*sorted((base / "hooks").glob("*.json")), base / "settings.json"]
        where = env.get("COPILOT_PROJECT_DIR") or project
        if where:
            files.extend(sorted((Path(where) / ".github" / "hooks").glob("*.json")))
        return any(_sends(_read(path), native, canonical) for path in files)

    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        spec = self.event_spec(native_event)
        if not isinstance(raw, dict):
            raise EventInputError(f"{self.title} {native_event} input: not a JSON object")
        if spec.native != spec.canonical:
            data = self._from_native(native_event, raw)
        elif "hook_event_name" in raw:
            data = self._from_claude_shape(native_event, raw)
        else:
            # Copilot sends some events camelCase even to a Claude-shaped hook
            # (PermissionRequest, seen at 1.0.102): read them as what they are.
            data = self._from_native(_NATIVE_NAME[spec.canonical], raw)
        data["hook_event_name"] = spec.canonical
        return self.agent_event(native_event, spec, data)

    def _from_native(self, native_event: str, raw: dict[str, Any]) -> dict[str, Any]:
        named = raw.get("hookName", native_event)
        if named != native_event:
            raise EventInputError(f"{self.title} {native_event} input: `$.hookName` is {named!r}")
        if "hook_event_name" in raw:
            raise EventInputError(
                f"{self.title} {native_event} input: has `$.hook_event_name`"
                f" ({raw['hook_event_name']!r}): a Claude-shaped input sent to the native door"
            )
        data: dict[str, Any] = {}
        for key, value in raw.items():
            if key in ("toolArgs", "toolInput"):
                data["tool_input"] = value
            elif key == "toolResult" and isinstance(value, dict):
                data["tool_result"] = {_snake(k): v for k, v in value.items()}
            elif key == "hookName":
                continue
            else:
                data[_snake(key)] = value
        if data.get("source") == "new":
            data["source"] = "startup"
            data["native_source"] = "new"
        tool = data.get("tool_name")
        if isinstance(tool, str):
            if tool == PATCH_TOOL:
                data["tool_input"] = self._patch_input(native_event, data.get("tool_input"))
            else:
                self.map_tool(data, tool)
        self._tool_response(data)
        return data

    def _from_claude_shape(self, native_event: str, raw: dict[str, Any]) -> dict[str, Any]:
        named = raw.get("hook_event_name")
        if named != native_event:
            raise EventInputError(
                f"{self.title} {native_event} input: `$.hook_event_name` is {named!r}"
            )
        data = dict(raw)
        if data.get("source") == "new":
            data["source"] = "startup"
            data["native_source"] = "new"
        if data.get("tool_name") == "Edit" and isinstance(data.get("tool_input"), str):
            # Copilot's own mapping of apply_patch: Edit with the bare patch.
            data["tool_name"] = PATCH_TOOL
            data["tool_input"] = {"command": data["tool_input"]}
        elif data.get("tool_name") in _SHAPED_NATIVE:
            data["native_tool_name"] = _SHAPED_NATIVE[data["tool_name"]]
        elif isinstance(data.get("tool_name"), str):
            # An MCP tool: Copilot's Claude shape keeps its own name (`srv-echo`).
            self.map_tool(data, data["tool_name"])
        self._tool_response(data)
        return data

    def _patch_input(self, native_event: str, value: object) -> dict[str, Any]:
        if isinstance(value, str):
            return {"command": value}
        if isinstance(value, dict):
            return value
        raise EventInputError(
            f"{self.title} {native_event} input: `$.toolArgs` of apply_patch is neither a patch"
            " string nor an object"
        )

    @staticmethod
    def _tool_response(data: dict[str, Any]) -> None:
        result = data.get("tool_result")
        if isinstance(result, dict) and "tool_response" not in data:
            text = result.get("text_result_for_llm")
            if isinstance(text, str):
                data["tool_response"] = text

    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        """hookd's answer in Copilot's native output fields (read under both file shapes),
        always with exit 0: a non-zero exit on preToolUse would deny the call as "hook
        errored", and exit 2 blocks nothing else."""
        name = event.event
        if name == "PreToolUse":
            out = _pre_tool_answer(result, event)
        elif name in ("UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop"):
            out = _block_answer(result, name)
        elif name == "PermissionRequest":
            out = _permission_answer(result)
        else:
            out = {}
            if not result.continue_:
                log.warning(
                    "Copilot cannot stop on this event: continue:false dropped", hook_event=name
                )
        contexts = [*result.plain_context, *result.additional_context]
        if carries_late_context(name):
            contexts.extend(result.async_results)
        if contexts and event.spec.caps.add_context:
            # Copilot joins its hooks' contexts with a blank line (seen at 1.0.102 on
            # preToolUse and postToolUse); on userPromptSubmitted it keeps only the last
            # hook's, where hookd deliberately keeps every one (docs/agents.md).
            out["additionalContext"] = "\n\n".join(contexts)
        return AgentReply(stdout=json.dumps(out) + "\n" if out else "")

    # --- install --------------------------------------------------------------------

    def detect(self) -> Installation:
        return detect_binary("copilot")

    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        """The hooks directory's file install wires first — one already wired, else the
        first with hooks of the user's (so install moves them), else a new ``hooks.json``
        — then the directory's other ``*.json`` files and, for the user scope,
        ``settings.json``: Copilot runs the hooks of every one of them."""
        if scope == "user":
            base = copilot_home(home)
            return [*self._dir_files(base / "hooks"), base / "settings.json"]
        if project is None:
            return []
        return self._dir_files(project / ".github" / "hooks")

    def _dir_files(self, directory: Path) -> list[Path]:
        found = sorted(directory.glob("*.json")) if directory.is_dir() else []
        texts = {p: _read(p) for p in found}
        first = next((p for p in found if self.is_wired(texts[p])), None)
        if first is None:
            first = next((p for p in found if _has_hooks(texts[p])), directory / "hooks.json")
        return [first, *(p for p in found if p != first)]

    foreign_hook_types: ClassVar[dict[str, str]] = {
        "prompt": "Copilot submits its `prompt` text as if the user typed it (sessionStart,"
        " new interactive sessions only; its docs), where hookd's prompt hook asks a model"
        " to judge the event",
    }

    def read_hooks(self, path: Path) -> NativeHooks:
        """The hooks install moves out of ``path``: the Claude-shaped groups (written in
        Claude Code's format, so hookd runs them as that format promises; matchers naming
        Copilot's tools mapped).  Native camelCase entries stay where they are — their
        output is Copilot's own dialect (top-level ``additionalContext``,
        ``modifiedArgs``, …), which Claude Code's semantics would read differently — so
        ``wire`` keeps them after hookd's entry and Copilot goes on running them."""
        text = path.read_text(encoding="utf-8") if path.exists() else None
        hooks = parse_object(str(path), text).get("hooks")
        out = NativeHooks()
        if not isinstance(hooks, dict):
            return out
        if any(key in _CLAUDE_KEYS for key in hooks):
            shaped = read_claude_shaped(path, _CLAUDE_SHAPED, tools=TOOLS)
            # What it left out of Claude Code's events (an entry that is no hook group) is
            # said; its words on Copilot's native events are this loop's to say, below.
            groups_of = tuple(f"{path}: hooks.{event}[" for event in _CLAUDE_KEYS)
            out.warnings.extend(w for w in shaped.warnings if w.startswith(groups_of))
            for event, groups in shaped.hooks.items():
                if event in _CLAUDE_KEYS:
                    for group in groups:
                        self._claude_mcp_matcher(group, f"{path}: hooks.{event}", out)
                    out.hooks.setdefault(event, []).extend(groups)
        for event, entries in hooks.items():
            where = f"{path}: hooks.{event}"
            if event in _CLAUDE_KEYS:
                continue
            if event not in _NATIVE_KEYS:
                out.warnings.append(
                    f"{where}: hookd does not take over this event; Copilot keeps running it"
                )
                continue
            own = (
                [e for e in entries if not _is_hookd_native(e)] if isinstance(entries, list) else []
            )
            if own:
                out.warnings.append(
                    f"{where}: {len(own)} hook(s) in Copilot's native format stay in this file"
                    " (their output is Copilot's dialect, not Claude Code's); Copilot runs them"
                    " after hookd's entry.  To run them through hookd, write their output in"
                    " Claude Code's format and move them to hookd's config"
                )
        return out

    def _claude_mcp_matcher(self, group: dict[str, Any], where: str, out: NativeHooks) -> None:
        """A moved matcher naming MCP tools Copilot's way (``srv-echo``) in Claude Code's
        words (``mcp__srv__echo``), so the guard holds for every agent hookd serves; a name
        that reads several ways stays as written (it keeps matching under Copilot, where
        the name is one of the tool's candidates) and the user is told."""
        matcher = group.get("matcher")
        if not isinstance(matcher, str) or not matcher.strip():
            return
        parts = [part.strip() for part in matcher.split("|")]
        if not all(re.fullmatch(r"[A-Za-z0-9_-]+", part) for part in parts):
            return
        names = []
        for part in parts:
            mcp = self.mcp_tool(part)
            readings = [c for c in mcp.candidates if c != part] if mcp else []
            if mcp is not None and len(readings) == 1:
                names.append(mcp.name)
            elif mcp is not None:
                names.append(part)
                out.warnings.append(
                    f"{where}: matcher {part!r} names an MCP tool that reads several ways"
                    f" ({', '.join(readings)}): kept as written, so it guards the tool under"
                    " Copilot only; write the Claude Code name you mean to guard it everywhere"
                )
            else:
                names.append(part)
        if names != parts:
            group["matcher"] = "|".join(names)
            out.warnings.append(
                f"{where}: matcher {matcher!r} is {group['matcher']!r} in Claude Code's words"
                " (Copilot's names of MCP tools mapped), so it guards every agent"
            )

    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        """One native hookd entry first on every native event (the native door: it alone
        delivers SessionStart context), followed by the user's own native entries
        (:meth:`read_hooks` leaves them); Claude-shaped groups are taken out (moved).
        Events hookd does not take over keep their hooks."""
        data = parse_object("Copilot hook file", text)
        if "version" not in data and set(data) <= {"hooks"}:
            data = {"version": 1, **data}
        found = data.get("hooks")
        old: dict[str, Any] = found if isinstance(found, dict) else {}
        hooks: dict[str, Any] = {}
        for spec in _NATIVE:
            kept = old.get(spec.native)
            kept = kept if isinstance(kept, list) else []
            hooks[spec.native] = [
                {"type": "command", "bash": command(spec), "timeoutSec": WIRED_TIMEOUT},
                *(e for e in kept if not (isinstance(e, dict) and _is_hookd_native(e))),
            ]
        for event, entries in old.items():
            if event not in hooks and event not in _CLAUDE_KEYS:
                hooks[event] = entries
        data["hooks"] = hooks
        return json.dumps(data, indent=2) + "\n"

    def is_wired(self, text: str | None) -> bool:
        """Every native event reaches hookd first, and no Claude-shaped hook is left."""
        try:
            data = parse_object("Copilot hook file", text)
        except ValueError:
            return False
        hooks = data.get("hooks")
        if not isinstance(hooks, dict):
            return False
        for spec in _NATIVE:
            entries = hooks.get(spec.native)
            if not isinstance(entries, list) or not entries:
                return False
            if not (isinstance(entries[0], dict) and _is_hookd_native(entries[0])):
                return False
        return not any(event in _CLAUDE_KEYS for event in hooks)

    def trust_steps(self, scope: Scope) -> list[str]:
        if scope == "user":
            return []
        return [
            "Copilot loads a repository's .github/hooks only in a folder it trusts: approve"
            " the folder when `copilot` asks, or run it with `--allow-all`"
            " (COPILOT_ALLOW_ALL=true) — without that the hooks are skipped silently.",
        ]

    def lint(self, path: Path, text: str) -> list[Finding]:
        try:
            data = parse_object(str(path), text)
        except ValueError as exc:
            return [Finding(severity="error", message=str(exc), path=str(path))]
        found: list[Finding] = []
        if data.get("disableAllHooks") is True:
            found.append(
                Finding(
                    severity="error",
                    message="disableAllHooks is true: Copilot runs no hook from this file",
                    path=str(path),
                    where="disableAllHooks",
                )
            )
        hooks = data.get("hooks")
        for event, entries in hooks.items() if isinstance(hooks, dict) else []:
            for i, entry in enumerate(entries if isinstance(entries, list) else []):
                if isinstance(entry, dict) and "timeout" in entry and "bash" in entry:
                    found.append(
                        Finding(
                            severity="warning",
                            message="a native Copilot hook's timeout is `timeoutSec`;"
                            " `timeout` is ignored",
                            path=str(path),
                            where=f"hooks.{event}[{i}].timeout",
                        )
                    )
        return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _sends(text: str | None, native: str, canonical: str) -> bool:
    """Does a Copilot hook file's text send ``native`` (or its Claude-shaped ``canonical``)
    to hookd's Copilot door (an entry running ``hookd-relay … --agent copilot``)?"""
    try:
        hooks = parse_object("", text).get("hooks")
    except ValueError:
        return False
    if not isinstance(hooks, dict):
        return False
    for key in (native, canonical):
        entries = hooks.get(key)
        if isinstance(entries, list) and "--agent copilot" in json.dumps(entries):
            return True
    return False


def _has_hooks(text: str | None) -> bool:
    try:
        hooks = parse_object("", text).get("hooks")
    except ValueError:
        return True  # a file that does not parse is the user's: install must say so, not skip it
    return isinstance(hooks, dict) and any(hooks.values())


def _is_hookd_native(entry: object) -> bool:
    """A native entry ``hookctl agents install`` wrote (its ``bash`` runs hookd-relay)."""
    if not isinstance(entry, dict):
        return False
    return is_hookd_command({"type": "command", "command": entry.get("bash", entry.get("command"))})


def _reason(result: FireResult) -> str:
    """The block's reason, an exit-2 hook's in its own words (its stderr).

    hookd's aggregation labels an exit-2 block Claude Code's way, ``[<command>]:
    <stderr>`` (what Claude Code shows its model); Copilot shows the model
    ``Denied by preToolUse hook: <reason>``, so the bracketed command line would be
    text no native hook's answer ever puts there.
    """
    runs = [r for r in result.hooks if r.outcome == "blocking" and not r.is_async]
    messages, own_words = [], False
    for run in runs:
        message = run.block_message or ""
        stderr = run.stderr.strip()
        if run.exit_code == 2 and stderr and message.endswith(f"]: {stderr}"):
            message, own_words = stderr, True
        messages.append(message)
    if own_words:
        return "\n".join(m for m in messages if m)
    if result.reason:
        return result.reason
    return "\n".join(m for m in result.blocking_messages if m)


def _pre_tool_answer(result: FireResult, event: AgentEvent) -> dict[str, Any]:
    """PreToolUse: ``permissionDecision`` (+ reason) and ``modifiedArgs``.  ``continue:
    false`` ("stop everything") has no answer here, so the call is denied — never run
    after a hook said stop."""
    out: dict[str, Any] = {}
    decision, reason = result.decision, _reason(result)
    if not result.continue_ and decision != "deny":
        decision, reason = "deny", result.stop_reason or reason
        log.warning("continue:false on preToolUse sent to Copilot as a deny")
    if decision in ("deny", "ask", "allow"):
        out["permissionDecision"] = decision
        if decision == "deny" or reason:
            out["permissionDecisionReason"] = reason or DEFAULT_BLOCK_REASON
    if result.updated_input is not None and decision != "deny":
        out["modifiedArgs"] = _native_args(result.updated_input, event)
    return out


def _block_answer(result: FireResult, name: str) -> dict[str, Any]:
    """The prompt, a tool's result, a stop: ``decision: "block"`` with a reason (Copilot
    rejects a subagentStop block without one); ``continue: false`` blocks too, except on
    Stop, where stopping is what happens anyway.  PostToolUse's ``updatedToolOutput`` is
    Copilot's ``modifiedResult``."""
    out: dict[str, Any] = {}
    stop = not result.continue_
    if result.decision == "block" or (stop and name != "Stop"):
        reason = _reason(result)
        why = reason if result.decision == "block" else result.stop_reason or reason
        out["decision"] = "block"
        out["reason"] = why or DEFAULT_BLOCK_REASON
        if result.decision != "block":
            log.warning("continue:false sent to Copilot as a block", hook_event=name)
    if name == "PostToolUse" and "updatedToolOutput" in result.specific:
        out["modifiedResult"] = _tool_result(result.specific["updatedToolOutput"])
    return out


def _permission_answer(result: FireResult) -> dict[str, Any]:
    """Claude Code's PermissionRequest ``decision`` in Copilot's top-level words
    (``behavior``, ``message``).  Copilot applies no rewritten input there, so an allow
    that rewrote the call becomes a deny (never run the call unsanitised), and
    ``continue: false`` denies."""
    decision = result.specific.get("decision")
    decision = decision if isinstance(decision, dict) else {}
    behavior, message = decision.get("behavior"), decision.get("message")
    if behavior == "allow" and decision.get("updatedInput") is not None:
        behavior = "deny"
        message = (
            "hookd: a hook rewrote this call's input in its PermissionRequest answer,"
            " which Copilot cannot apply; denied rather than run the call unsanitised"
        )
        log.warning("PermissionRequest updatedInput sent to Copilot as a deny")
    if not result.continue_ and behavior != "deny":
        behavior, message = "deny", result.stop_reason or message
    if behavior not in ("allow", "deny"):
        return {}
    out: dict[str, Any] = {"behavior": behavior}
    if behavior == "deny" or message:
        out["message"] = message or DEFAULT_BLOCK_REASON
    return out


def _native_args(updated: dict[str, Any], event: AgentEvent) -> object:
    """``updatedInput`` as Copilot's ``modifiedArgs``: an apply_patch call takes the bare patch."""
    if event.input.get("tool_name") == PATCH_TOOL and set(updated) == {"command"}:
        patch = updated["command"]
        if isinstance(patch, str):
            return patch
    return updated


def _tool_result(value: object) -> dict[str, Any]:
    """Claude Code's ``updatedToolOutput`` as Copilot's ``modifiedResult``."""
    text = value if isinstance(value, str) else json.dumps(value)
    return {"resultType": "success", "textResultForLlm": text}

"""What an agent adapter is: one coding agent's hook dialect, translated at its door.

hookd runs every hook with Claude Code's semantics, on Claude Code's event
names and input fields (the *canonical* event).  Other agents fire the same
kind of events under other names, with other fields, other tool names, other
timeout units, and obey other output shapes.  An :class:`Adapter` is the whole
of one agent's difference, in one module (``hookd/agents/<agent>.py``):

* **in**: the agent's native event and stdin → :class:`AgentEvent` (canonical
  name and input; the agent's own extra fields kept for hooks that want them,
  the native tool name under ``native_tool_name``), so one matcher ``Bash``
  means "the shell" for every agent;
* **out**: hookd's aggregated :class:`~hookd_client.results.FireResult` →
  :class:`AgentReply`, exactly what that agent obeys (stdout, stderr, exit
  code) — after :func:`hookd.agents.capabilities.degrade` has made the result
  safe for what the agent can do (a rewrite it cannot apply becomes a block
  with a reason, never an unsanitised call);
* **install**: where the agent keeps its hook files, how its own hooks read in
  hookd's (Claude Code's) config shape, and how to wire one hookd entry per
  event into the file (``hookctl agents install``), plus the trust steps the
  user must take.

Why one class per agent rather than a table of renames: the differences are
not only names (Gemini denies with a top-level ``decision``, Copilot's native
format has no event name in its input, Codex rejects ``ask``); each agent's
module reads as that agent's documentation in code, and its tests run the
real agent.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import msgspec

from hookd.agents.mcp_names import CLAUDE_MCP, McpNaming, McpTool, parse_claude
from hookd_client.results import FireResult

__all__ = [
    "Adapter",
    "AgentEvent",
    "AgentReply",
    "Capabilities",
    "EventSpec",
    "Finding",
    "Installation",
    "NativeHooks",
    "Scope",
    "UnknownAgentEvent",
]

Scope = Literal["user", "project"]


class UnknownAgentEvent(ValueError):
    """An event name the agent's adapter does not know (a newer agent, or a typo in a wiring)."""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent does with a hook's answer on one event.

    Declared per event by each adapter from what the real agent was seen to do
    (``../shared/reference/agents.md``) or, for agents not run here, from its
    documentation.  :mod:`hookd.agents.capabilities` decides, for every hook ×
    agent, what happens to an answer the agent cannot carry out.
    """

    block: bool = False
    """A block/deny stops the action (the tool call, the prompt, the stop)."""
    rewrite_input: bool = False
    """``updatedInput`` is applied to the tool call."""
    add_context: bool = False
    """``additionalContext`` reaches the model."""
    ask: bool = False
    """``permissionDecision: "ask"`` asks the user."""
    continue_stop: bool = False
    """A block on a stop event makes the agent go on working."""
    system_message: bool = False
    """``systemMessage`` is shown to the user."""
    matchers: bool = True
    """The agent applies a group's matcher itself (else hookd filters in the daemon)."""
    parallel: bool = True
    """The agent runs the hooks of one event in parallel (else one after another)."""


class EventSpec(msgspec.Struct, frozen=True, kw_only=True):
    native: str
    """The agent's own event name (``BeforeTool``, ``preToolUse``)."""
    canonical: str
    """Claude Code's name for it (``PreToolUse``): the event hookd's config is written for."""
    caps: Capabilities
    note: str = ""
    """What differs from Claude Code on this event, in a sentence (docs, explain)."""
    differs: str = ""
    """Where hookd deliberately answers otherwise than the agent itself would act on
    this event, and why (failing safe): a warning in ``doctor`` for every hook on the
    event, a line of its own in ``explain``, a column of docs/agents.md's matrix."""


class AgentEvent(msgspec.Struct, kw_only=True):
    """One native event, translated: what the pipeline runs and the adapter answers."""

    agent: str
    native_event: str
    event: str
    """The canonical (Claude Code) event name."""
    input: dict[str, Any]
    """Claude Code's field names (``session_id``, ``tool_name``, ``tool_input``, …),
    the agent's extra fields kept as they came, ``native_tool_name`` when the tool
    name was mapped."""
    spec: EventSpec


class AgentReply(msgspec.Struct, kw_only=True):
    """Exactly what the agent reads from a command hook."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


class Installation(msgspec.Struct, kw_only=True):
    """Is the agent on this machine, and which version (``hookctl agents list``)."""

    installed: bool
    binary: str | None = None
    version: str | None = None


class NativeHooks(msgspec.Struct, kw_only=True):
    """The user's own hooks read from one of the agent's files, in hookd's config shape.

    ``hooks`` is Claude Code's ``{"PreToolUse": [{"matcher": …, "hooks": [...]}]}``
    (canonical event names, tool names in matchers mapped, timeouts in seconds);
    ``warnings`` says what could not be carried over exactly and why.
    """

    hooks: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    warnings: list[str] = msgspec.field(default_factory=list)


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One silent failure mode found in an agent's hook file (``hookctl doctor``).

    "Silent" is the point: each finding is something the agent itself would not
    report — a disabled hooks feature, a hook it skips for want of trust, a
    timeout in the wrong unit, a matcher that never matches its tool names, a
    parse error that makes it drop the whole file.
    """

    severity: Literal["error", "warning", "info"]
    """error: hooks in this file will not run (or not as written); warning: some may
    not; info: worth knowing, nothing is lost."""
    message: str
    path: str = ""
    """The file (empty: the agent as a whole, e.g. a setting elsewhere)."""
    where: str = ""
    """Where in the file, as a JSON path (``hooks.BeforeTool[0].matcher``) or ``line N``."""


class Adapter(abc.ABC):
    """One agent's hook dialect.  Subclasses are stateless; one instance serves every event."""

    name: ClassVar[str]
    """The door's name: ``hookd-relay --agent <name>``, ``hookctl agents install <name>``."""
    title: ClassVar[str]
    """The agent's own name, for people (``OpenAI Codex CLI``)."""
    verified: ClassVar[bool]
    """True: run for real in hookd's tests (pinned version in ``tested_version``);
    False: built from the agent's documentation, with fixtures written from it (marked so)."""
    tested_version: ClassVar[str | None] = None
    events: ClassVar[Sequence[EventSpec]]
    tools: ClassVar[Mapping[str, str]] = {}
    """Native tool name → Claude Code's (``run_shell_command`` → ``Bash``)."""
    mcp: ClassVar[McpNaming] = CLAUDE_MCP
    """How the agent names an MCP server's tool to its hooks (:mod:`hookd.agents.mcp_names`)."""
    timeout_unit: ClassVar[float] = 1.0
    """Seconds per unit of the agent's hook timeout field (Gemini: 0.001)."""
    foreign_hook_types: ClassVar[dict[str, str]] = {}
    """Hook types hookd's config has under the same name but another meaning in this
    agent (type → what the agent does with it): ``install`` would move such a hook and
    change what it does, so ``doctor`` warns (Copilot's ``prompt``)."""
    speaks_claude_code: ClassVar[bool] = False
    """Its hook inputs and the output it obeys are Claude Code's own, byte for byte
    (Claude Code; the Agent SDK, whose CLI is Claude Code): the daemon then takes its
    events through Claude Code's route — late async context on the events whose output
    carries it, the agent's own Stop-loop cap — with only the agent's name recorded."""

    # --- runtime ------------------------------------------------------------------

    def event_spec(self, native: str) -> EventSpec:
        for spec in self.events:
            if spec.native == native:
                return spec
        raise UnknownAgentEvent(f"{self.title} has no hook event {native!r}")

    def canonical_tool(self, native: str) -> str:
        """Claude Code's name for the agent's tool ``native`` (an MCP tool's best reading)."""
        mapped = self.tools.get(native)
        if mapped is not None:
            return mapped
        mcp = self.mcp_tool(native)
        return mcp.name if mcp is not None else native

    def mcp_tool(self, native: str, data: Mapping[str, Any] | None = None) -> McpTool | None:
        """Claude Code's name for ``native`` when it is the agent's name of an MCP tool.

        ``data``: the decoded input, for an agent that names the server in a field of
        its own (Gemini's ``mcp_context``); default: the name read by :attr:`mcp`."""
        del data
        if native in self.tools:
            return None
        return self.mcp.tool(native)

    def tool_candidates(self, native: str) -> tuple[str, ...]:
        """Every name a matcher is tested against for the agent's own (non-MCP) tool
        ``native`` when one name is not enough (Cline's ``editor`` both edits and creates
        files: ``Edit`` and ``Write``); empty: its mapped name alone (the default)."""
        del native
        return ()

    def map_tool(self, data: dict[str, Any], tool: str) -> None:
        """Name the input's tool ``tool`` as Claude Code does; the native name stays under
        ``native_tool_name`` (for hooks that want it) when the two differ, and an MCP tool
        whose name reads several ways lists them all (:mod:`hookd.agents.mcp_names`)."""
        mcp = self.mcp_tool(tool, data)
        if mcp is not None:
            mcp.apply(data, tool)
            return
        canonical = self.tools.get(tool, tool)
        if canonical != tool:
            data["tool_name"] = canonical
            data["native_tool_name"] = tool

    def agent_event(self, native_event: str, spec: EventSpec, data: dict[str, Any]) -> AgentEvent:
        """The decoded event: ``data`` (canonical fields) on ``spec``'s canonical event.

        A stop always says whether it is a stop hook's continuation, as Claude Code's does
        (``stop_hook_active``: a hook that reads it to avoid looping must find it); an agent
        that has no such notion never continues for a hook, so it is ``False`` there."""
        if spec.canonical in ("Stop", "SubagentStop"):
            data.setdefault("stop_hook_active", False)
        return AgentEvent(
            agent=self.name, native_event=native_event, event=spec.canonical, input=data, spec=spec
        )

    def hook_workdir(self, event: AgentEvent, env: Mapping[str, str] | None) -> str | None:
        """Where the agent runs this event's hooks, when not in the input's ``cwd`` (None:
        the ``cwd``, Claude Code's rule).  ``env``: the environment the agent gave the
        relay (its hook process), whose ``PWD`` is where the agent ran it."""
        del event, env
        return None

    def claims_claude_input(self, raw: Mapping[str, Any]) -> bool:
        """Is ``raw``, which reached hookd through *Claude Code's* wiring, this agent's own
        input?  An agent that runs Claude Code's hook files itself (Copilot reads a
        project's ``.claude/settings.json``) sends its own payload there; the door then
        answers for this agent (:mod:`hookd.agents.guests`).  Default: never."""
        del raw
        return False

    def own_door_wired(
        self, canonical: str, env: Mapping[str, str] | None, project: str | None
    ) -> bool:
        """Does this agent's own wiring (``hookctl agents install``) send ``canonical``
        (Claude Code's event name) to hookd, for an agent running with ``env`` in
        ``project``?  Then a delivery of the same event through Claude Code's wiring
        must not run the hooks a second time."""
        del canonical, env, project
        return False

    def native_tools(self, canonical: str) -> list[str]:
        """Every native name that maps to ``canonical`` (for doctor and explain): an MCP
        tool's as the agent names it (``mcp__srv__echo`` → Copilot's ``srv-echo``)."""
        found = [n for n, c in self.tools.items() if c == canonical]
        mcp = parse_claude(canonical)
        if mcp is not None and not self.mcp.is_claude:
            native = self.mcp.native(*mcp)
            if native is not None:
                found.append(native)
        return found

    @abc.abstractmethod
    def decode(self, native_event: str, raw: dict[str, Any]) -> AgentEvent:
        """The agent's stdin for ``native_event`` → the canonical event.

        Raises :class:`UnknownAgentEvent` or
        :class:`hookd_client.events.EventInputError` (with the field) on bad input.
        """

    @abc.abstractmethod
    def encode(self, result: FireResult, event: AgentEvent) -> AgentReply:
        """hookd's answer → what the agent obeys (already degraded to its capabilities)."""

    # --- install --------------------------------------------------------------------

    @abc.abstractmethod
    def detect(self) -> Installation:
        """Is the agent installed (on ``PATH``), and its version."""

    @abc.abstractmethod
    def hook_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        """Where the agent reads hooks for ``scope`` (install writes the first)."""

    @abc.abstractmethod
    def read_hooks(self, path: Path) -> NativeHooks:
        """The user's hooks in ``path`` (not hookd's own entries), in hookd's config shape."""

    @abc.abstractmethod
    def wire(self, text: str | None, command: Callable[[EventSpec], str]) -> str:
        """``text`` of a hook file (None: no file yet) with every hook replaced by one hookd
        entry per event (no matcher: hookd matches), each running ``command(spec)`` — the
        installer's shell command line, ``<relay> --agent <name> <native event>`` with
        ``--fail-closed`` where a hook asks for it.

        Pure and idempotent: wiring a wired text gives the same text.  Settings that are
        not hooks are kept as they were.
        """

    @abc.abstractmethod
    def is_wired(self, text: str) -> bool:
        """Does this file's text already send the agent's events to hookd?"""

    install_mode: ClassVar[int] = 0o600
    """Mode of a file ``install`` creates (Cline's per-event hooks are programs: 0o700)."""

    def install_files(self, scope: Scope, home: Path, project: Path | None) -> list[Path]:
        """The files ``install`` writes, each through :meth:`wire_file`.

        Default: the first of :meth:`hook_files`.  An agent that reads one file per
        event (Cline) lists them all."""
        return self.hook_files(scope, home, project)[:1]

    def wire_file(self, path: Path, text: str | None, command: Callable[[EventSpec], str]) -> str:
        """:meth:`wire` for one of :meth:`install_files` (default: the same for every file)."""
        del path
        return self.wire(text, command)

    def trust_steps(self, scope: Scope) -> list[str]:
        """What the user must approve for the wired hooks to run (the agent's trust gate)."""
        return []

    def lint(self, path: Path, text: str) -> list[Finding]:
        """This agent's own silent failure modes in one of its hook files (``hookctl doctor``).

        Optional: the driver (:mod:`hookd.installers.agent_install`) already reports what
        it can see for every agent through the contract — a file ``read_hooks`` cannot
        parse, a timeout that is under a second once converted from the agent's unit,
        a matcher naming a Claude Code tool the agent calls something else.  An
        adapter adds what only it knows: a setting that turns hooks off
        (Gemini's ``hooksConfig.enabled: false``), a trust gate the file's hooks
        will not pass, a field the agent silently ignores.
        """
        del path, text
        return []

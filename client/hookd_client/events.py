"""Claude Code's 33 hook events as msgspec Structs, with their exact wire names.

Both the daemon and every client speak these, so they live in the client package.

Why Structs *and* the raw mapping: decoding into the event's Struct validates the
fields hookd reads (a ``tool_name`` that is a number is rejected at the edge, with
the JSON path of the bad field), while the engine keeps the original mapping and
hands *that* to hooks.  Unknown events and unknown fields therefore reach hooks
untouched: Claude Code adds fields every few releases and hookd must not eat them.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from hookd_client.paths import PATH_MAX, check_path

__all__ = [
    "EVENTS",
    "EVENT_NAMES",
    "BaseHookInput",
    "DecodedEvent",
    "EventInputError",
    "decode_event",
    "event_payload",
    "matcher_query",
]


class Effort(msgspec.Struct, kw_only=True):
    level: str


class McpServer(msgspec.Struct, kw_only=True):
    name: str
    source: str | None = None


class BaseHookInput(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Fields common to every event (reference §3).

    ``matcher_field`` names the input field an event's matcher is tested
    against; ``None`` means the event has no matcher support and a matcher on it
    is ignored (it always fires).
    """

    matcher_field: ClassVar[str | None] = None

    session_id: str
    cwd: Annotated[str, msgspec.Meta(max_length=PATH_MAX)]
    hook_event_name: str
    transcript_path: str = ""
    permission_mode: str | None = None
    prompt_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    effort: Effort | None = None
    scratchpad_dir: str | None = None

    def __post_init__(self) -> None:
        # The cwd names the session's project (a config registry key, files read):
        # a NUL byte in it must be this event's error, not the daemon's.
        check_path("cwd", self.cwd)


class _ToolEvent(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "tool_name"
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    mcp_server: McpServer | None = None


class PreToolUse(_ToolEvent, kw_only=True):
    tool_use_id: str | None = None


class PostToolUse(_ToolEvent, kw_only=True):
    tool_response: Any = None
    tool_use_id: str | None = None
    duration_ms: float | None = None


class PostToolUseFailure(_ToolEvent, kw_only=True):
    tool_use_id: str | None = None
    error: str = ""
    is_interrupt: bool | None = None
    duration_ms: float | None = None


class PermissionRequest(_ToolEvent, kw_only=True):
    permission_suggestions: list[dict[str, Any]] | None = None


class PermissionDenied(_ToolEvent, kw_only=True):
    tool_use_id: str | None = None
    reason: str = ""


class ToolCall(msgspec.Struct, kw_only=True):
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None
    tool_response: Any = None


class PostToolBatch(BaseHookInput, kw_only=True):
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)


class Notification(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "notification_type"
    message: str = ""
    title: str | None = None
    notification_type: str = ""


class UserPromptSubmit(BaseHookInput, kw_only=True):
    prompt: str = ""
    source: str | None = None
    session_title: str | None = None


class UserPromptExpansion(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "command_name"
    expansion_type: str = ""
    command_name: str = ""
    command_args: str = ""
    command_source: str | None = None
    prompt: str = ""


class SessionStart(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "source"
    source: str = "startup"
    model: str | None = None
    session_title: str | None = None
    seconds_since_last_response: float | None = None
    context_tokens: int | None = None
    prompt_cache_likely_expired: bool | None = None
    estimated_cache_write_usd: float | None = None


class SessionEnd(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "reason"
    reason: str = "other"


class _StopLike(BaseHookInput, kw_only=True):
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    background_tasks: list[dict[str, Any]] | None = None
    session_crons: list[dict[str, Any]] | None = None


class Stop(_StopLike, kw_only=True):
    pass


class SubagentStop(_StopLike, kw_only=True):
    matcher_field: ClassVar[str | None] = "agent_type"
    agent_transcript_path: str | None = None


class StopFailure(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "error"
    error: str = "unknown"
    error_details: str | None = None
    last_assistant_message: str | None = None


class SubagentStart(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "agent_type"


class PreCompact(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "trigger"
    trigger: str = "manual"
    custom_instructions: str | None = None


class PostCompact(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "trigger"
    trigger: str = "manual"
    compact_summary: str | None = None


class _ModelSwitch(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "to_model"
    from_model: str | None = None
    to_model: str = ""
    requested_model: str | None = None
    source: str | None = None
    context_tokens: int | None = None
    prompt_cache_warm: bool | None = None
    cache_ttl: str | None = None
    estimated_cache_write_usd: float | None = None
    pricing: str | None = None


class PreModelSwitch(_ModelSwitch, kw_only=True):
    pass


class PostModelSwitch(_ModelSwitch, kw_only=True):
    pass


class Setup(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "trigger"
    trigger: str = "init"


class TeammateIdle(BaseHookInput, kw_only=True):
    teammate_name: str | None = None
    team_name: str | None = None


class _TaskEvent(BaseHookInput, kw_only=True):
    task_id: str = ""
    task_subject: str = ""
    task_description: str | None = None
    teammate_name: str | None = None
    team_name: str | None = None


class TaskCreated(_TaskEvent, kw_only=True):
    pass


class TaskCompleted(_TaskEvent, kw_only=True):
    pass


class Elicitation(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "mcp_server_name"
    mcp_server_name: str = ""
    message: str = ""
    mode: str | None = None
    url: str | None = None
    elicitation_id: str | None = None
    requested_schema: dict[str, Any] | None = None


class ElicitationResult(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "mcp_server_name"
    mcp_server_name: str = ""
    elicitation_id: str | None = None
    mode: str | None = None
    action: str = ""
    content: dict[str, Any] | None = None


class ConfigChange(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "source"
    source: str = ""
    file_path: str | None = None


class WorktreeCreate(BaseHookInput, kw_only=True):
    name: str = ""


class WorktreeRemove(BaseHookInput, kw_only=True):
    worktree_path: str = ""


class InstructionsLoaded(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "load_reason"
    file_path: str = ""
    memory_type: str = ""
    load_reason: str = ""
    globs: list[str] | None = None
    trigger_file_path: str | None = None
    parent_file_path: str | None = None


class CwdChanged(BaseHookInput, kw_only=True):
    old_cwd: str = ""
    new_cwd: str = ""


class FileChanged(BaseHookInput, kw_only=True):
    # The matcher is tested against the basename of file_path (see matcher_query).
    matcher_field: ClassVar[str | None] = "file_path"
    file_path: str = ""
    event: str = "change"


class DirectoryAdded(BaseHookInput, kw_only=True):
    matcher_field: ClassVar[str | None] = "source"
    directory: str = ""
    source: str = ""


class MessageDisplay(BaseHookInput, kw_only=True):
    turn_id: str | None = None
    message_id: str | None = None
    index: int | None = None
    final: bool | None = None
    delta: str = ""


EVENTS: dict[str, type[BaseHookInput]] = {
    cls.__name__: cls
    for cls in (
        PreToolUse,
        PostToolUse,
        PostToolUseFailure,
        PostToolBatch,
        Notification,
        UserPromptSubmit,
        UserPromptExpansion,
        SessionStart,
        SessionEnd,
        Stop,
        StopFailure,
        SubagentStart,
        SubagentStop,
        PreCompact,
        PostCompact,
        PreModelSwitch,
        PostModelSwitch,
        PermissionRequest,
        PermissionDenied,
        Setup,
        TeammateIdle,
        TaskCreated,
        TaskCompleted,
        Elicitation,
        ElicitationResult,
        ConfigChange,
        WorktreeCreate,
        WorktreeRemove,
        InstructionsLoaded,
        CwdChanged,
        FileChanged,
        DirectoryAdded,
        MessageDisplay,
    )
}
"""Every event of ``HOOK_EVENTS`` in Claude Code 2.1.330, in declaration order."""

EVENT_NAMES: tuple[str, ...] = tuple(EVENTS)

TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
"""Events whose handlers may carry an ``if`` permission-rule filter."""


class EventInputError(ValueError):
    """An event input that cannot be used; the message names the bad field."""


class DecodedEvent(msgspec.Struct, kw_only=True):
    """One event as the engine sees it.

    ``raw`` is the input exactly as the agent sent it (hooks receive this);
    ``typed`` is the validated view hookd reads fields from.  For an event
    name hookd does not know, ``typed`` is a plain :class:`BaseHookInput`.
    """

    name: str
    raw: dict[str, Any]
    typed: BaseHookInput
    workdir: str | None = None
    """Where the hooks run when it is not the input's ``cwd`` (None: ``cwd``, Claude Code's
    rule): an agent that runs its hooks elsewhere — Copilot, in the project's root — gets
    the same through hookd, while the hook still reads the session's ``cwd``."""

    @property
    def known(self) -> bool:
        return self.name in EVENTS


def decode_event(raw: dict[str, Any], event_name: str | None = None) -> DecodedEvent:
    """Validate ``raw`` as the input of ``event_name`` (default: its ``hook_event_name``).

    Raises :class:`EventInputError` naming the JSON path of the first bad field.
    """
    if event_name is None:
        name = raw.get("hook_event_name")
        if not isinstance(name, str) or not name:
            raise EventInputError("event input: `$.hook_event_name` is missing or not a string")
        event_name = name
    elif raw.get("hook_event_name", event_name) != event_name:
        raise EventInputError(
            f"event input: `$.hook_event_name` is {raw.get('hook_event_name')!r}, "
            f"but the event fired is {event_name!r}"
        )
    if "hook_event_name" not in raw:
        raw = {**raw, "hook_event_name": event_name}
    cls = EVENTS.get(event_name, BaseHookInput)
    try:
        typed = msgspec.convert(raw, cls, strict=True)
    except msgspec.ValidationError as exc:
        raise EventInputError(f"{event_name} input: {exc}") from None
    return DecodedEvent(name=event_name, raw=raw, typed=typed)


def matcher_query(event: DecodedEvent) -> str | None:
    """The string an event's matchers are tested against, or None when matchers don't apply."""
    field = type(event.typed).matcher_field
    if field is None:
        return None
    value = getattr(event.typed, field, None)
    if value is None:
        return ""
    text = str(value)
    if event.name == "FileChanged":
        return text.rsplit("/", 1)[-1]
    return text


def event_payload(
    event: str | BaseHookInput, payload: dict[str, Any] | BaseHookInput | None = None
) -> tuple[str, dict[str, Any]]:
    """``(event name, input mapping)`` from what a caller handed ``fire``.

    Either a name and a mapping (what Claude Code sends, passed on untouched),
    or a typed event — ``fire(PreToolUse(session_id=…, cwd=…, tool_name="Bash",
    …))`` — whose class names the event.  A typed input is encoded as Claude
    Code would send it: its fields, ``hook_event_name`` and ``transcript_path``
    always present.
    """
    if isinstance(event, BaseHookInput):
        if payload is not None:
            raise TypeError("fire(typed_event) takes no separate payload")
        payload, event = event, type(event).__name__
    if payload is None:
        raise TypeError(f"fire({event!r}) needs the event's input")
    if isinstance(payload, BaseHookInput):
        data: dict[str, Any] = msgspec.to_builtins(payload)
        data.setdefault("transcript_path", payload.transcript_path)
        return event, data
    return event, payload

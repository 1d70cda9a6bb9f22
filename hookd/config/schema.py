"""The settings-file schema: event → matcher groups → handlers (reference §1).

Decoding *is* validation: msgspec names the JSON path of a bad field, and the
loader prefixes it with the file and the group's place.  Handler kinds are a
tagged union on ``type``, so adding a kind is adding a Struct here and a module
under ``hookd/handlers``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "AgentHandler",
    "CallbackHandler",
    "CommandHandler",
    "CommandSetting",
    "Handler",
    "HttpHandler",
    "MatcherGroup",
    "McpToolHandler",
    "PromptHandler",
    "PythonHandler",
    "SettingsFile",
    "handler_label",
]

Seconds = Annotated[float, msgspec.Meta(gt=0)]


class _HandlerBase(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="type"):
    if_: str | None = msgspec.field(default=None, name="if")
    timeout: Seconds | None = None
    statusMessage: str | None = None
    once: bool = False
    onFailure: Literal["continue", "block"] = "continue"
    name: str | None = None
    """hookd extension (and the seeds' TOML ``name``): a label for status and logs."""


class CommandHandler(_HandlerBase, kw_only=True, tag="command"):
    command: str
    args: list[str] | None = None
    shell: Literal["bash", "powershell"] | None = None
    async_: bool = msgspec.field(default=False, name="async")
    asyncRewake: bool = False
    pass_context: bool = True
    """Seeds' TOML: write the event JSON to stdin (default) or give an empty stdin."""
    parse_result: bool = True
    """Seeds' TOML: read stdout as hook output (default) or judge by exit code only."""


class HttpHandler(_HandlerBase, kw_only=True, tag="http"):
    url: str
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    allowedEnvVars: list[str] = msgspec.field(default_factory=list)
    method: Literal["POST", "PUT"] = "POST"
    """hookd extension for the seeds' webhook (Claude Code always POSTs)."""


class McpToolHandler(_HandlerBase, kw_only=True, tag="mcp_tool"):
    server: str
    tool: str
    input: dict[str, Any] = msgspec.field(default_factory=dict)


class PromptHandler(_HandlerBase, kw_only=True, tag="prompt"):
    prompt: str
    model: str | None = None
    continueOnBlock: bool = False


class AgentHandler(_HandlerBase, kw_only=True, tag="agent"):
    prompt: str
    model: str | None = None


class PythonHandler(_HandlerBase, kw_only=True, tag="python"):
    """hookd's in-daemon hook: ``package.module:function`` or ``/path/file.py:function``."""

    callable: str
    function: Literal["hook", "stop"] = "hook"
    """``"stop"``: a Stop/SubagentStop function hook, given the transcript (seed 004)."""
    inDaemon: bool = False
    """Run an ``async def`` file policy inside the daemon under trio cancellation
    (:mod:`hookd.handlers.python_inline`); anything else still runs in a worker."""


class CallbackHandler(_HandlerBase, kw_only=True, tag="callback"):
    """A function living in a connected client (registered as a session hook)."""

    callback_id: str


Handler = (
    CommandHandler
    | HttpHandler
    | McpToolHandler
    | PromptHandler
    | AgentHandler
    | PythonHandler
    | CallbackHandler
)


class MatcherGroup(msgspec.Struct, kw_only=True, omit_defaults=True):
    matcher: str | None = None
    hooks: list[Handler]
    timeout: Seconds | None = None
    """Applies to the group's hooks that set no timeout of their own (seed 001)."""
    sequential: bool = False
    """hookd extension: run the group's hooks in order, chaining rewritten input."""


class CommandSetting(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``statusLine`` / ``fileSuggestion``: a command run with JSON on stdin (5 s)."""

    type: Literal["command"] = "command"
    command: str
    padding: int | None = None
    timeout: Seconds | None = None


class SettingsFile(msgspec.Struct, kw_only=True):
    """The keys of a settings file that concern hooks; every other key is ignored.

    ``hooks`` is decoded loosely here and group by group in the loader, so that
    one bad group is reported and skipped without losing the rest of the file.
    """

    hooks: dict[str, Any] = msgspec.field(default_factory=dict)
    disableAllHooks: bool | None = None
    allowManagedHooksOnly: bool | None = None
    allowedHttpHookUrls: list[str] | None = None
    httpHookAllowedEnvVars: list[str] | None = None
    statusLine: CommandSetting | None = None
    fileSuggestion: CommandSetting | None = None


def handler_label(handler: Handler, limit: int = 80) -> str:
    """A short, secret-free description of a handler for status tables and logs."""
    if handler.name:
        return handler.name
    match handler:
        case CommandHandler():
            text = handler.command
            if handler.args is not None:
                text = " ".join([handler.command, *handler.args])
        case HttpHandler():
            text = handler.url
        case McpToolHandler():
            text = f"{handler.server}/{handler.tool}"
        case PromptHandler() | AgentHandler():
            text = handler.prompt
        case PythonHandler():
            text = handler.callable
        case CallbackHandler():
            text = f"callback:{handler.callback_id}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

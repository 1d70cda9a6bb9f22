"""hookd's wire protocol: length-prefixed MessagePack frames carrying tagged Structs.

A frame is a 4-byte big-endian unsigned length followed by that many bytes of
MessagePack.  Each body is one message: a map whose ``"kind"`` key names the
message type (msgspec's tagged unions).  The first exchange on a connection is
``hello`` → ``welcome``; after that the client sends requests, each with an
``id`` it chooses, and the server answers each with a reply carrying the same
``id`` — in any order, so one connection can have many requests in flight.
The server may also send requests *to* the client (``callback``) on
connections that registered callback hooks.  See ``docs/protocol.md``.
"""

from __future__ import annotations

import struct
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from hookd_client.paths import PATH_MAX, check_path
from hookd_client.results import FireResult

__all__ = [
    "MAX_FRAME",
    "PROTOCOL_VERSION",
    "ClientMessage",
    "FrameError",
    "InvalidMessage",
    "ServerMessage",
    "UnknownKind",
    "decode_client",
    "decode_server",
    "encode",
    "frame",
    "reply_data",
]

PROTOCOL_VERSION = 1
MAX_FRAME = 16 * 1024 * 1024
"""Largest frame body either side accepts by default (16 MiB); the daemon's is configurable."""

HEADER = struct.Struct(">I")


class FrameError(ValueError):
    """A frame that cannot be read; the message says which and why.

    Raised as such when the framing itself is lost (a length over the limit,
    a stream that ends mid-frame): nothing after it can be read.  ``code`` is
    the ``error`` code the daemon answers with.
    """

    code = "bad_frame"


class InvalidMessage(FrameError):
    """A well-framed body that is not a valid message: not MessagePack (msgspec's
    ``DecodeError``), or not one of the message Structs (its ``ValidationError``).
    The connection goes on."""

    code = "bad_request"


class UnknownKind(InvalidMessage):
    """A body whose ``kind`` names no message this side knows (a newer peer)."""

    code = "unknown_kind"


class _Msg(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="kind"):
    pass


PathField = Annotated[str, msgspec.Meta(max_length=PATH_MAX)]
"""A path a request names.  The length is checked by msgspec while decoding;
NUL bytes and relative paths by the message's ``__post_init__``
(:func:`hookd_client.paths.check_path`), so a bad one is a ``bad_request``
naming the field before any handler sees it."""


# --- client → server ------------------------------------------------------------


class Hello(_Msg, tag="hello"):
    version: int = PROTOCOL_VERSION
    client: str = ""
    """A name for logs and status, e.g. ``hookd-relay`` or ``my-agent/1.2``."""
    pid: int | None = None
    """The agent process this connection speaks for (default: the peer pid)."""
    env: dict[str, str] | None = None
    """The agent's environment, once per connection: every event fired on this
    connection gives it to its hooks (a ``fire``'s own ``env`` replaces it).
    Sent here rather than with each event because an environment is a few KB
    and an agent fires hundreds of events; the clients send ``os.environ``."""


class Fire(_Msg, tag="fire"):
    id: int
    event: str
    input: dict[str, Any]
    env: dict[str, str] | None = None
    """The agent's environment for this event's hooks (default: the connection's
    ``hello.env``, else the daemon's)."""
    context: Literal["interactive", "batch"] = "interactive"
    format: Literal["result", "claude"] = "result"
    """``claude`` also renders the result as one Claude Code command hook's output."""
    progress: bool = False
    """Send ``progress`` messages as hooks start and finish."""
    agent_pid: int | None = None
    agent: str = ""
    """Which agent fires (``codex``, ``gemini``, …; empty: Claude Code).  ``event`` and
    ``input`` are then that agent's own (``BeforeTool``, its field names): the daemon
    translates them with the agent's adapter, runs the hooks on the canonical event,
    and ``claude`` (with ``format: "claude"``) is the agent's own hook output."""
    once: bool = False
    """A one-shot fire (``hookctl fire`` with a session id of its own): a session the
    daemon did not know before this event is forgotten after it, so testing leaves no
    session in ``status`` and the next fire with the same id is judged by its own
    directory.  A session the daemon knew stays."""


class Status(_Msg, tag="status"):
    id: int


class Reload(_Msg, tag="reload"):
    id: int


class Validate(_Msg, tag="validate"):
    id: int
    files: list[PathField]

    def __post_init__(self) -> None:
        for i, path in enumerate(self.files):
            check_path(f"files[{i}]", path)


class Hooks(_Msg, tag="hooks"):
    id: int
    cwd: PathField
    """The project directory (absolute)."""
    session_id: str | None = None

    def __post_init__(self) -> None:
        check_path("cwd", self.cwd, absolute=True)


class Sessions(_Msg, tag="sessions"):
    id: int


class Tail(_Msg, tag="tail"):
    id: int
    follow: bool = False
    last: int = 20


class RegisterSessionHooks(_Msg, tag="register_session_hooks"):
    """Add hooks for one session: settings-shaped ``hooks`` (event → groups).

    Handlers of ``type: "callback"`` call back into *this* connection.  ``source``
    names the registration (e.g. a skill's path) so it can be cleared alone.
    """

    id: int
    session_id: str
    hooks: dict[str, Any]
    source: str = "session"
    scope: Literal["session", "skill"] = "session"
    project: PathField | None = None
    """The session's project directory (absolute), when the session is new to the daemon."""

    def __post_init__(self) -> None:
        check_path("project", self.project, absolute=True)
        check_path("source", self.source)


class ClearSessionHooks(_Msg, tag="clear_session_hooks"):
    id: int
    session_id: str
    source: str | None = None


class CallbackResult(_Msg, tag="callback_result"):
    """The client's answer to a ``callback`` request (same ``id``)."""

    id: int
    output: dict[str, Any] | None = None
    error: str | None = None


class CheckAsync(_Msg, tag="check_async"):
    """Collect finished async hook results for a session; each is returned once."""

    id: int
    session_id: str


class AsyncList(_Msg, tag="async_list"):
    id: int
    session_id: str | None = None


class SubscribeAsync(_Msg, tag="subscribe_async"):
    """Ask for ``async_result`` pushes on this connection (asyncRewake wake-ups).

    Only a connection that subscribed is pushed to, so a one-request-at-a-time
    client never reads an unsolicited frame.  ``session_id`` None: every
    session of this connection's agent process.  The reply's data is
    ``{"subscribed": true}``; pushes carry ``id`` 0.
    """

    id: int
    session_id: str | None = None


class Shutdown(_Msg, tag="shutdown"):
    id: int


class Relay(_Msg, tag="relay"):
    """hookd-relay's request: the hook input exactly as Claude Code wrote it on stdin.

    Kept minimal (raw JSON bytes, flat maps of strings) so that the relay can
    encode it, and decode :class:`RelayReply`, without importing msgspec.
    """

    id: int
    event: str
    input: bytes
    env: dict[str, str] | None = None
    pid: int | None = None
    """The agent's pid (the relay's parent, i.e. Claude Code)."""
    agent: str = ""
    """``hookd-relay --agent AGENT``: the agent whose hook this is (empty: Claude Code).
    ``event`` is then the agent's own event name and ``input`` its own stdin; the
    reply is what that agent obeys."""


class ResetBreakers(_Msg, tag="reset_breakers"):
    """Close circuit breakers: every one, or those whose key or hook name contains ``hook``.

    Reply data: ``{"reset": [key, ...]}`` (the breakers that were open or counting).
    """

    id: int
    hook: str | None = None


class StatusLine(_Msg, tag="status_line"):
    """Run the configured ``statusLine`` (or ``fileSuggestion``) command for a session.

    ``input`` is what Claude Code gives the command (session_id, cwd, model,
    workspace, …; ``{"query": …}`` for fileSuggestion).  The reply's data is
    ``{"line": str | None}`` or ``{"paths": [str]}``.
    """

    id: int
    cwd: PathField
    """The session's working directory (absolute)."""
    input: dict[str, Any]
    which: Literal["statusLine", "fileSuggestion"] = "statusLine"
    env: dict[str, str] | None = None

    def __post_init__(self) -> None:
        check_path("cwd", self.cwd, absolute=True)


class Cancel(_Msg, tag="cancel"):
    """Cancel an in-flight request of this connection (e.g. a running Fire)."""

    id: int
    target: int


ClientMessage = (
    Hello
    | Fire
    | Status
    | Reload
    | Validate
    | Hooks
    | Sessions
    | Tail
    | RegisterSessionHooks
    | ClearSessionHooks
    | CallbackResult
    | CheckAsync
    | AsyncList
    | SubscribeAsync
    | Shutdown
    | Relay
    | StatusLine
    | Cancel
    | ResetBreakers
)


# --- server → client ------------------------------------------------------------


class Welcome(_Msg, tag="welcome"):
    version: int
    server: str
    pid: int
    max_frame: int


class ClaudeHookOutput(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What one Claude Code command hook prints: the bytes the relay writes."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


class HeldBack(msgspec.Struct, kw_only=True):
    """Hooks matching the event that the trust gate held back (the project is not trusted)."""

    hooks: int
    project: str
    reason: str
    """Why the project is not trusted, and what to run (``hookctl trust DIR``)."""


class FireReply(_Msg, tag="fire_reply"):
    id: int
    result: FireResult
    claude: ClaudeHookOutput | None = None
    held_back: HeldBack | None = None
    """Set when the trust gate held back hooks that match the event: an "allowed" then
    says nothing of the project's own hooks, and the caller should say so."""
    kept_project: str | None = None
    """The event's session was known to the daemon, started in another project than this
    input's directory (``CLAUDE_PROJECT_DIR`` or ``cwd``): a session keeps its project, so
    the hooks judged were that project's, not this directory's."""


class RelayReply(_Msg, tag="relay_reply"):
    """Exactly what the relay prints and exits with: ``hookctl fire --format claude``'s bytes."""

    id: int
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0


class Progress(_Msg, tag="progress"):
    id: int
    phase: Literal["started", "finished"]
    hook: str
    source: str
    outcome: str | None = None


class Callback(_Msg, tag="callback"):
    """The daemon asks the client to run one of its callback hooks."""

    id: int
    callback_id: str
    input: dict[str, Any]
    tool_use_id: str | None = None
    timeout: float = 60.0


class CallbackCancel(_Msg, tag="callback_cancel"):
    id: int


class AsyncResult(_Msg, tag="async_result"):
    """Pushed to a subscribed client when an async hook's result must wake the agent now.

    Sent for ``asyncRewake`` hooks that exit 2 (``rewake``); ``messages`` is
    what the agent is shown (Claude Code: a system reminder).  A pushed result
    counts as delivered: ``check_async`` and the next fire do not repeat it.
    """

    session_id: str
    process_id: str
    hook: str
    event: str
    hook_kind: str
    """async, asyncRewake or output (the first stdout line was an async ack)."""
    id: int = 0
    exit_code: int | None = None
    state: str = "finished"
    messages: list[str] = msgspec.field(default_factory=list)
    rewake: bool = False


class Reply(_Msg, tag="reply"):
    """Any request's final answer as a client decodes it: ``data`` is plain data.

    On the wire every reply below is ``{kind: "reply", id, data}``; the request
    says which one it is.  The daemon sends the typed Struct of each request
    kind (``ReloadReply`` …); a client decodes this generic one and reads
    ``data`` as the request's payload type with :func:`reply_data`.
    """

    id: int
    data: Any = None


# --- typed replies: one Struct per request kind, and the payload each carries -------


class _Data(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A reply's payload.  Only ``ListedHook.why`` has a default (omitted when the hook
    runs); every other field is always sent, as docs/protocol.md lists it."""


class Reloaded(_Data):
    """``reload``: whether anything effective changed, the generation now live, config errors."""

    changed: bool
    generation: int
    errors: list[str]


class ValidatedFile(_Data):
    """``validate``: one file's verdict."""

    file: str
    exists: bool
    hooks: int
    errors: list[str]
    warnings: list[str]


class ListedHook(_Data):
    """``hooks``: one configured hook and whether it runs (``why`` not, when it does not)."""

    event: str
    matcher: str | None
    type: str
    hook: str
    scope: str
    source: str
    timeout: float | None
    runs: bool
    why: str | None = None
    on_failure: Literal["continue", "block"] = "continue"
    """The hook's ``onFailure``: a door that cannot reach the daemon (the Agent SDK
    helper, :mod:`hookd_client.agent_sdk`) blocks the event when a hook that runs
    says ``block``, as the relay's ``--fail-closed`` does.  Omitted when ``continue``."""


class HookListing(_Data):
    project: str
    generation: int
    hooks: list[ListedHook]


class Registered(_Data):
    registered: int


class Removed(_Data):
    removed: int


class Subscribed(_Data):
    subscribed: bool


class Stopping(_Data):
    stopping: bool
    pid: int


class StatusLineText(_Data):
    """``status_line`` for ``statusLine``: the line to show (None: keep the old one)."""

    line: str | None


class FileSuggestions(_Data):
    """``status_line`` for ``fileSuggestion``: the suggested paths."""

    paths: list[str]


class BreakersReset(_Data):
    reset: list[str]


class TailEnd(_Data):
    end: bool


class ReloadReply(_Msg, tag="reply"):
    id: int
    data: Reloaded


class ValidateReply(_Msg, tag="reply"):
    id: int
    data: list[ValidatedFile]


class HooksReply(_Msg, tag="reply"):
    id: int
    data: HookListing


class RegisterReply(_Msg, tag="reply"):
    id: int
    data: Registered


class ClearReply(_Msg, tag="reply"):
    id: int
    data: Removed


class SubscribeReply(_Msg, tag="reply"):
    id: int
    data: Subscribed


class ShutdownReply(_Msg, tag="reply"):
    id: int
    data: Stopping


class StatusLineReply(_Msg, tag="reply"):
    id: int
    data: StatusLineText | FileSuggestions


class ResetBreakersReply(_Msg, tag="reply"):
    id: int
    data: BreakersReset


class TailEndReply(_Msg, tag="reply"):
    """Sent after the ``tail_item``s of a ``tail`` without ``follow``."""

    id: int
    data: TailEnd


class StatusReply(_Msg, tag="reply"):
    """``status``: the daemon's picture of itself (``hookd.daemon.status.DaemonStatus``)."""

    id: int
    data: msgspec.Struct


class SessionsReply(_Msg, tag="reply"):
    """``sessions``: one ``SessionInfo`` per known session."""

    id: int
    data: list[msgspec.Struct]


class AsyncResultsReply(_Msg, tag="reply"):
    """``check_async`` and ``async_list``: async hook entries (docs/async.md)."""

    id: int
    data: list[dict[str, Any]]


_Payload = TypeVar("_Payload")


def reply_data(reply: Reply, kind: type[_Payload]) -> _Payload:
    """A generic :class:`Reply`'s ``data`` read as the request's payload type.

    Raises :class:`InvalidMessage` when the daemon answered something else.
    """
    try:
        return msgspec.convert(reply.data, kind)
    except msgspec.ValidationError as exc:
        raise InvalidMessage(f"reply {reply.id}: {exc}") from None


class TailItem(_Msg, tag="tail_item"):
    id: int
    record: dict[str, Any]


class Error(_Msg, tag="error"):
    code: str
    """``bad_frame``, ``too_large``, ``unknown_kind``, ``bad_request``, ``version``,
    ``bad_input``, ``shutting_down``, ``internal``, ``refused``."""
    message: str
    id: int | None = None
    """The request this answers, when the frame could be read that far."""


ServerMessage = (
    Welcome
    | FireReply
    | RelayReply
    | Progress
    | Callback
    | CallbackCancel
    | AsyncResult
    | Reply
    | TailItem
    | Error
)

_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)
_encoder = msgspec.msgpack.Encoder()


def encode(message: msgspec.Struct) -> bytes:
    """One whole frame: header plus body."""
    body = _encoder.encode(message)
    return HEADER.pack(len(body)) + body


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def _tags(union: Any) -> frozenset[str]:
    return frozenset(t.__struct_config__.tag for t in union.__args__)


_CLIENT_KINDS = _tags(ClientMessage)
_SERVER_KINDS = _tags(ServerMessage)


def _decode(decoder: msgspec.msgpack.Decoder[Any], kinds: frozenset[str], body: bytes) -> Any:
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        kind = _kind_of(body)
        if isinstance(kind, str) and kind not in kinds:
            raise UnknownKind(f"invalid message: unknown kind {kind!r}: {exc}") from None
        raise InvalidMessage(f"invalid message: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidMessage(f"frame is not valid MessagePack: {exc}") from None
    except UnicodeDecodeError as exc:
        # msgspec raises this (not DecodeError) for a str that is not UTF-8.
        raise InvalidMessage(f"frame has a string that is not UTF-8: {exc}") from None
    except RecursionError:
        raise InvalidMessage("frame is nested too deeply") from None


def _kind_of(body: bytes) -> Any:
    """The ``kind`` of a body that failed validation (it did decode as MessagePack)."""
    try:
        value = msgspec.msgpack.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return value.get("kind") if isinstance(value, dict) else None


def decode_client(body: bytes) -> ClientMessage:
    result: ClientMessage = _decode(_client_decoder, _CLIENT_KINDS, body)
    return result


def decode_server(body: bytes) -> ServerMessage:
    result: ServerMessage = _decode(_server_decoder, _SERVER_KINDS, body)
    return result


def request_id_of(body: bytes) -> int | None:
    """Best effort: the ``id`` of a frame that failed to decode, so the error can name it."""
    try:
        value = msgspec.msgpack.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            return rid
    return None

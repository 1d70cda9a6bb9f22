"""A scripted stand-in for the Anthropic Messages API, served on 127.0.0.1.

The real Claude Code CLI talks to it through ``ANTHROPIC_BASE_URL``.  Each
``POST /v1/messages`` gets the next assistant turn of the script, streamed as
server-sent events exactly as the real API does (message_start,
content_block_start/delta/stop, message_delta, message_stop); every request
body is recorded so a test can check what the model *would have seen*: tool
results, hook system messages, prompts.

Why a scripted server rather than recorded responses: the tests compare two
runs (hooks native vs. through hookd) and need both to receive identical model
turns, so the turns come from a script, not from the requests.  When the
script runs out the server answers with a short final text, so a run that
takes more turns than expected (a Stop hook continuing the loop) still ends.

Requests that are not the main conversation's — a prompt hook's question, a
sub-agent's conversation — would otherwise take the script's next turn and
make the main conversation's turns depend on the interleaving.  A
:class:`Side` answers them instead: a request whose *first* or *last* user
message holds its ``marker`` gets the side's next turn (its last one repeated)
and is recorded in the side's own ``requests``, not in the main list.

Only trio and h11 are used, the same stack as hookd's HTTP endpoint, so the
server runs inside the test's own trio loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from support.fake_http import send, send_events, serve_loopback

__all__ = ["FakeMessagesApi", "Side", "Turn", "serve_fake_api"]

FALLBACK_TEXT = "FAKE-API-SCRIPT-EXHAUSTED"


@dataclass
class Turn:
    """One assistant message: ``content`` blocks as the API returns them.

    Blocks are ``{"type": "text", "text": ...}`` or
    ``{"type": "tool_use", "name": ..., "input": {...}}`` (ids are assigned).
    """

    content: list[dict[str, Any]]

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.content) else "end_turn"


def _user_text(message: Any) -> str:
    """The text blocks of one user message (tool results excluded), joined."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


@dataclass
class Side:
    """A conversation beside the main one, recognised by ``marker`` in its first or last
    user message: a prompt hook's question (last), a sub-agent's task (first).

    ``verdicts``: match only requests that ask for structured output (Claude Code
    asks a prompt hook's question with an ``output_config.format`` JSON schema), so
    the main conversation's "Stop hook feedback" — which quotes the hook's prompt,
    marker included, as the hook's name — stays in the main script.
    """

    marker: str
    turns: list[Turn]
    verdicts: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)

    def matches(self, body: dict[str, Any]) -> bool:
        if bool((body.get("output_config") or {}).get("format")) != self.verdicts:
            return False
        users = [
            m for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"
        ]
        return bool(users) and any(self.marker in _user_text(m) for m in (users[0], users[-1]))

    def next_turn(self) -> Turn:
        index = min(len(self.requests), len(self.turns)) - 1
        return self.turns[index]


@dataclass
class FakeMessagesApi:
    turns: list[Turn]
    sides: list[Side] = field(default_factory=list)
    """Answer the requests they match, outside the main script (checked in order)."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every main-conversation /v1/messages request body, in arrival order."""
    paths: list[str] = field(default_factory=list)
    port: int = 0
    _next: int = 0

    def next_turn(self) -> tuple[int, Turn]:
        index = self._next
        self._next += 1
        if index < len(self.turns):
            return index, self.turns[index]
        return index, Turn([{"type": "text", "text": FALLBACK_TEXT}])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _events(index: int, turn: Turn, model: str) -> Iterator[bytes]:
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_fake_{index}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    for i, block in enumerate(turn.content):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            start = {
                "type": "tool_use",
                "id": block.get("id") or f"toolu_fake_{index}_{i}",
                "name": block["name"],
                "input": {},
            }
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield _sse(
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": start},
        )
        yield _sse(
            "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        )
        yield _sse("content_block_stop", {"type": "content_block_stop", "index": i})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": turn.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _message(index: int, turn: Turn, model: str) -> dict[str, Any]:
    """The non-streaming form of a turn (used if a request asks for ``stream: false``)."""
    content = []
    for i, block in enumerate(turn.content):
        if block["type"] == "tool_use":
            block = {"id": block.get("id") or f"toolu_fake_{index}_{i}", **block}
        content.append(block)
    return {
        "id": f"msg_fake_{index}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": turn.stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


async def _respond(
    api: FakeMessagesApi,
    stream: trio.SocketStream,
    conn: h11.Connection,
    request: h11.Request,
    body: bytes,
) -> None:
    path = request.target.decode()
    api.paths.append(f"{request.method.decode()} {path}")
    if request.method != b"POST" or not path.startswith("/v1/messages"):
        payload = json.dumps({"type": "error", "error": {"type": "not_found_error"}}).encode()
        headers = [("content-type", "application/json"), ("content-length", str(len(payload)))]
        await send(stream, conn, h11.Response(status_code=404, headers=headers))
        await send(stream, conn, h11.Data(data=payload))
        await send(stream, conn, h11.EndOfMessage())
        return
    data = json.loads(body)
    side = next((side for side in api.sides if side.matches(data)), None)
    if side is not None:
        side.requests.append(data)
        index, turn = 1000 + len(side.requests), side.next_turn()
    else:
        api.requests.append(data)
        index, turn = api.next_turn()
    model = str(data.get("model") or "claude-fake")
    if not data.get("stream"):
        payload = json.dumps(_message(index, turn, model)).encode()
        headers = [("content-type", "application/json"), ("content-length", str(len(payload)))]
        await send(stream, conn, h11.Response(status_code=200, headers=headers))
        await send(stream, conn, h11.Data(data=payload))
        await send(stream, conn, h11.EndOfMessage())
        return
    await send_events(stream, conn, _events(index, turn, model))


async def serve_fake_api(
    api: FakeMessagesApi, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Listen on an ephemeral loopback port; ``task_status.started(port)`` once bound."""
    await serve_loopback(api, _respond, task_status=task_status)

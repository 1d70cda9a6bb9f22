"""A scripted stand-in for OpenAI's Responses API, served on 127.0.0.1.

Codex CLI (``wire_api = "responses"``) and Copilot CLI in BYOK mode
(``COPILOT_PROVIDER_WIRE_API=responses``) both talk to it.  Each
``POST …/responses`` that offers tools gets the next turn of the script,
streamed as server-sent events the way the real API does
(``response.created`` → ``response.output_item.added`` →
``response.output_text.delta`` → ``response.output_item.done`` →
``response.completed``); every request body is recorded so a test can compare
what the model *would have seen* in two runs (hooks native vs. through hookd):
tool outputs, developer messages carrying ``additionalContext``, hook prompts.

Why a script and not "answer whatever the request implies": both runs of a
comparison must receive identical model turns, so the turns come from a list.
A :class:`Shell` turn is written once for every agent: the server picks the
shell tool the request offers (Codex's ``exec_command`` takes ``cmd``,
Copilot's ``bash`` takes ``command``; ``shell_command``/``shell`` are
fallbacks), so one script drives both CLIs.  Requests without tools (a side
call such as a title) and requests past the end of the script get a short
final text, so a run that takes more turns than expected (a Stop hook
continuing the loop) still ends.

Only trio and h11, the stack of hookd's HTTP endpoint and of
``tests/e2e/fake_api.py``, so the server runs in the test's own trio loop.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from support.fake_http import send_events, send_json, serve_loopback

__all__ = [
    "FALLBACK_TEXT",
    "FakeResponsesApi",
    "Patch",
    "Shell",
    "Text",
    "ToolCall",
    "serve_fake_responses",
]

FALLBACK_TEXT = "FAKE-RESPONSES-SCRIPT-EXHAUSTED"

SHELL_TOOLS: tuple[tuple[str, str], ...] = (
    ("exec_command", "cmd"),
    ("bash", "command"),
    ("shell_command", "command"),
)
"""Shell tools in order of preference, with the argument that carries the command line."""


@dataclass(frozen=True)
class Text:
    """A final assistant message: the turn ends."""

    text: str


@dataclass(frozen=True)
class Shell:
    """One call of the request's shell tool with ``command``."""

    command: str


@dataclass(frozen=True)
class Patch:
    """A freeform ``apply_patch`` custom tool call (Codex offers it with catalog models)."""

    patch: str


@dataclass(frozen=True)
class ToolCall:
    """One call of the offered tool whose name matches ``pattern`` (a regex searched in
    each offered name; exactly one must match) with ``arguments``: an MCP tool, which
    every agent offers the model under its own name (``srv-echo``, ``mcp__srv__echo``)."""

    pattern: str
    arguments: dict[str, Any]


Turn = Text | Shell | Patch | ToolCall


def _offered(tools: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """Every function a request offers as (namespace, name): Codex offers an MCP server's
    tools inside a ``namespace`` tool (``mcp__srv`` holding ``echo``)."""
    names: list[tuple[str | None, str]] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names.extend(
                (str(tool.get("name")), str(inner["name"]))
                for inner in tool.get("tools") or []
                if isinstance(inner, dict) and isinstance(inner.get("name"), str)
            )
        elif isinstance(tool.get("name"), str):
            names.append((None, tool["name"]))
    return names


def _named_call(tools: list[dict[str, Any]], turn: ToolCall) -> tuple[str | None, str]:
    offered = _offered(tools)
    found = [(ns, name) for ns, name in offered if re.search(turn.pattern, name)]
    if len(found) != 1:
        raise ValueError(f"{len(found)} offered tools match {turn.pattern!r} (tools: {offered})")
    return found[0]


def _shell_call(tools: list[dict[str, Any]], command: str) -> tuple[str, dict[str, Any]]:
    """The shell tool this request offers and its arguments for ``command``."""
    offered = {str(t.get("name")) for t in tools if isinstance(t, dict)}
    for name, argument in SHELL_TOOLS:
        if name in offered:
            return name, {argument: command}
    if "shell" in offered:
        return "shell", {"command": ["bash", "-lc", command]}
    raise ValueError(f"the request offers no shell tool (tools: {sorted(offered)})")


@dataclass
class FakeResponsesApi:
    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every scripted request body (those offering tools), in arrival order."""
    side_requests: list[dict[str, Any]] = field(default_factory=list)
    """Requests without tools (answered with the fallback text, not counted in the script)."""
    paths: list[str] = field(default_factory=list)
    port: int = 0
    _next: int = 0

    @property
    def base_url(self) -> str:
        """What the agent's config takes as its provider base URL (``…/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def next_turn(self) -> Turn:
        index = self._next
        self._next += 1
        return self.turns[index] if index < len(self.turns) else Text(FALLBACK_TEXT)

    # --- what the model saw, for comparing runs ------------------------------------

    def tool_outputs(self, request: int = -1) -> list[str]:
        """Every tool output (``function_call_output``/``custom_tool_call_output``) in a request."""
        if not self.requests:
            return []
        found = []
        for item in self.requests[request].get("input", []):
            if isinstance(item, dict) and item.get("type") in (
                "function_call_output",
                "custom_tool_call_output",
            ):
                output = item.get("output")
                found.append(output if isinstance(output, str) else json.dumps(output))
        return found

    def messages(self, role: str, request: int = -1) -> list[str]:
        """The text of every ``role`` message (``user``, ``developer``) in a request."""
        if not self.requests:
            return []
        found = []
        for item in self.requests[request].get("input", []):
            if not isinstance(item, dict) or item.get("role") != role:
                continue
            content = item.get("content")
            if isinstance(content, str):
                found.append(content)
            elif isinstance(content, list):
                found.append(
                    "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
                )
        return found


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def _item(index: int, turn: Turn, tools: list[dict[str, Any]]) -> dict[str, Any]:
    if isinstance(turn, Text):
        return {
            "type": "message",
            "id": f"msg_fake_{index}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        }
    if isinstance(turn, Patch):
        return {
            "type": "custom_tool_call",
            "id": f"ctc_fake_{index}",
            "call_id": f"call_fake_{index}",
            "name": "apply_patch",
            "input": turn.patch,
            "status": "completed",
        }
    namespace = None
    if isinstance(turn, ToolCall):
        (namespace, name), arguments = _named_call(tools, turn), turn.arguments
    else:
        name, arguments = _shell_call(tools, turn.command)
    item = {
        "type": "function_call",
        "id": f"fc_fake_{index}",
        "call_id": f"call_fake_{index}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def _response(index: int, model: str, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"resp_fake_{index}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
    }
    if status == "completed":
        body["usage"] = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
    return body


def _events(index: int, item: dict[str, Any], model: str) -> Iterator[bytes]:
    yield _sse({"type": "response.created", "response": _response(index, model, "in_progress", [])})
    started = dict(item, status="in_progress")
    if item["type"] == "message":
        started["content"] = []
    elif item["type"] == "function_call":
        started["arguments"] = ""
    yield _sse({"type": "response.output_item.added", "output_index": 0, "item": started})
    if item["type"] == "message":
        yield _sse(
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": item["content"][0]["text"],
            }
        )
    yield _sse({"type": "response.output_item.done", "output_index": 0, "item": item})
    yield _sse(
        {"type": "response.completed", "response": _response(index, model, "completed", [item])}
    )


async def _respond(
    api: FakeResponsesApi,
    stream: trio.SocketStream,
    conn: h11.Connection,
    request: h11.Request,
    body: bytes,
) -> None:
    path = request.target.decode().split("?", 1)[0]
    api.paths.append(f"{request.method.decode()} {path}")
    if request.method != b"POST" or not path.endswith("/responses"):
        await send_json(stream, conn, 404, {"error": {"message": f"no route {path}"}})
        return
    data = json.loads(body)
    tools = data.get("tools") or []
    if tools:
        api.requests.append(data)
        turn = api.next_turn()
        index = len(api.requests) - 1
    else:
        api.side_requests.append(data)
        turn = Text(FALLBACK_TEXT)
        index = 1000 + len(api.side_requests)
    model = str(data.get("model") or "gpt-fake")
    try:
        item = _item(index, turn, tools)
    except ValueError as exc:
        await send_json(stream, conn, 400, {"error": {"message": str(exc)}})
        return
    if data.get("stream") is False:
        await send_json(stream, conn, 200, _response(index, model, "completed", [item]))
        return
    await send_events(stream, conn, _events(index, item, model))


async def serve_fake_responses(
    api: FakeResponsesApi, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Listen on an ephemeral loopback port; ``task_status.started(port)`` once bound."""
    await serve_loopback(api, _respond, task_status=task_status)

"""A scripted stand-in for the Gemini API (``generativelanguage``), served on 127.0.0.1.

Gemini CLI takes ``GOOGLE_GEMINI_BASE_URL`` (http is allowed for loopback)
and calls ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` for
the conversation, ``:generateContent`` for its side questions and
``:countTokens``.  Each conversation request (one that offers tools) gets the
next turn of the script, streamed as one ``data:`` server-sent event the way
the real API streams a short answer; every such request body is recorded so a
test can compare what the model *would have seen* in two runs (hooks native
vs. through hookd): the tool results (``functionResponse``), the user's
message parts (where ``<hook_context>`` lands), the prompts a Stop-like hook
sent back.

Side questions are answered by the JSON schema they carry, because Gemini CLI
asks for structured JSON and retries with back-off on anything else (a plain
text answer to the model router's classifier made a run take 110 s,
``../shared/reference/agents.md``): the router gets a complexity score, the
next-speaker check gets "user" (the turn ends as scripted), anything else an
empty object.

Why a script and not "answer whatever the request implies": both runs of a
comparison must receive identical model turns.  Requests past the end of the
script get :data:`FALLBACK_TEXT`, so a run that takes more turns than
expected (a Stop hook continuing the loop) still ends.

Only trio and h11 (like ``fake_responses.py``), so it runs in the test's own loop.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import h11
import trio

from support.fake_http import send, send_json, serve_loopback

__all__ = ["FALLBACK_TEXT", "FakeGeminiApi", "Shell", "Text", "ToolCall", "serve_fake_gemini"]

FALLBACK_TEXT = "FAKE-GEMINI-SCRIPT-EXHAUSTED"


@dataclass(frozen=True)
class Text:
    """A final model message: the turn ends."""

    text: str


@dataclass(frozen=True)
class Shell:
    """One ``run_shell_command`` call with ``command``."""

    command: str


@dataclass(frozen=True)
class ToolCall:
    """One call of the declared function whose name matches ``pattern`` (a regex; exactly
    one must match) with ``arguments``: an MCP tool under Gemini's name for it."""

    pattern: str
    arguments: dict[str, Any]


Turn = Text | Shell | ToolCall


@dataclass
class FakeGeminiApi:
    turns: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every conversation request body (those offering tools), in arrival order."""
    side_requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    port: int = 0
    _next: int = 0

    @property
    def base_url(self) -> str:
        """``GOOGLE_GEMINI_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    def next_turn(self) -> Turn:
        index = self._next
        self._next += 1
        return self.turns[index] if index < len(self.turns) else Text(FALLBACK_TEXT)

    # --- what the model saw, for comparing runs ------------------------------------

    def parts(self, request: int = -1) -> list[dict[str, Any]]:
        """Every part of every content of one request, with its role (``_role``)."""
        if not self.requests:
            return []
        found = []
        for content in self.requests[request].get("contents", []):
            for part in content.get("parts", []):
                if isinstance(part, dict):
                    found.append({"_role": content.get("role"), **part})
        return found

    def tool_results(self, request: int = -1) -> list[Any]:
        """The ``functionResponse.response`` of every tool result in a request."""
        return [
            p["functionResponse"].get("response")
            for p in self.parts(request)
            if isinstance(p.get("functionResponse"), dict)
        ]

    def tool_calls(self, request: int = -1) -> list[dict[str, Any]]:
        """The model's ``functionCall`` parts as the CLI sent them back (name, args)."""
        return [
            p["functionCall"]
            for p in self.parts(request)
            if isinstance(p.get("functionCall"), dict)
        ]

    def user_texts(self, request: int = -1) -> list[str]:
        """The text of every user part in a request (prompts, ``<hook_context>``, retries)."""
        return [
            str(p["text"])
            for p in self.parts(request)
            if p["_role"] == "user" and isinstance(p.get("text"), str)
        ]


def _side_answer(body: dict[str, Any]) -> dict[str, Any]:
    config = body.get("generationConfig") or body.get("config") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    properties = schema.get("properties") or {} if isinstance(schema, dict) else {}
    if "complexity_score" in properties:
        return {"complexity_reasoning": "scripted", "complexity_score": 10}
    if "next_speaker" in properties:
        return {"reasoning": "scripted", "next_speaker": "user"}
    return {}


def _candidate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "fake",
    }


def _offered(body: dict[str, Any]) -> list[str]:
    """Every function the request declares (Gemini's own tools and MCP tools alike)."""
    return [
        str(declaration.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for declaration in tool.get("functionDeclarations") or []
        if isinstance(declaration, dict)
    ]


def _turn_parts(turn: Turn, body: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(turn, Text):
        return [{"text": turn.text}]
    if isinstance(turn, ToolCall):
        offered = _offered(body)
        found = [name for name in offered if re.search(turn.pattern, name)]
        if len(found) != 1:
            raise ValueError(f"{len(found)} declared tools match {turn.pattern!r}: {offered}")
        return [{"functionCall": {"name": found[0], "args": turn.arguments}}]
    return [{"functionCall": {"name": "run_shell_command", "args": {"command": turn.command}}}]


async def _respond(
    api: FakeGeminiApi,
    stream: trio.SocketStream,
    conn: h11.Connection,
    request: h11.Request,
    body: bytes,
) -> None:
    path = request.target.decode().split("?", 1)[0]
    api.paths.append(f"{request.method.decode()} {path}")
    method = path.rsplit(":", 1)[-1] if ":" in path else ""
    if request.method != b"POST" or method not in (
        "streamGenerateContent",
        "generateContent",
        "countTokens",
    ):
        await send_json(stream, conn, 404, {"error": {"code": 404, "message": f"no {path}"}})
        return
    data = json.loads(body) if body else {}
    if method == "countTokens":
        await send_json(stream, conn, 200, {"totalTokens": 10})
        return
    if data.get("tools"):
        api.requests.append(data)
        answer = _candidate(_turn_parts(api.next_turn(), data))
    else:
        api.side_requests.append(data)
        answer = _candidate([{"text": json.dumps(_side_answer(data))}])
    if method == "generateContent":
        await send_json(stream, conn, 200, answer)
        return
    headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
    await send(stream, conn, h11.Response(status_code=200, headers=headers))
    await send(stream, conn, h11.Data(data=f"data: {json.dumps(answer)}\r\n\r\n".encode()))
    await send(stream, conn, h11.EndOfMessage())


async def serve_fake_gemini(
    api: FakeGeminiApi, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Listen on an ephemeral loopback port; ``task_status.started(port)`` once bound."""
    await serve_loopback(api, _respond, task_status=task_status)

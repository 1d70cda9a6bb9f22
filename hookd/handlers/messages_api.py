"""A minimal Anthropic Messages API client for prompt and agent hooks.

Only what the two hook kinds need: ``POST {base}/v1/messages`` with
``x-api-key`` and ``anthropic-version``, non-streaming, on the daemon's shared
``httpx.AsyncClient``.  Where the endpoint and the key come from, in order:

* base URL: :attr:`MessagesConfig.base_url`, else the agent's
  ``ANTHROPIC_BASE_URL``, else hookd's own, else ``https://api.anthropic.com``
  (so a hook reached through Claude Code talks to the same endpoint as the
  agent — which is also how the tests point it at a local fake);
* API key: ``ANTHROPIC_API_KEY`` (:data:`API_KEY_ENV`), from the agent's
  environment first, then hookd's.

The key is a secret: it never reaches a log line or an error message.
Deadlines are the caller's cancel scope, not an httpx timeout, so one budget
covers every turn of an agent hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from hookd.handlers.http_client import SharedHttpClient

__all__ = ["MessagesApiError", "MessagesClient", "MessagesConfig"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_ENV = "ANTHROPIC_API_KEY"
"""The environment variable that holds the Messages API key (as for Claude Code)."""
ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the API version this client speaks."""


class MessagesApiError(Exception):
    """The request could not be made or the endpoint did not answer with a message."""


@dataclass(frozen=True, slots=True)
class MessagesConfig:
    """Built from the daemon's settings (``messages_api_base_url``, ``prompt_max_tokens``)."""

    base_url: str | None
    max_tokens: int


class MessagesClient:
    """One shared client; every call names its model, messages and tools."""

    def __init__(self, http: SharedHttpClient, config: MessagesConfig) -> None:
        self.http = http
        self.config = config

    def endpoint(self, env: Mapping[str, str]) -> str:
        base = (
            self.config.base_url
            or env.get("ANTHROPIC_BASE_URL")
            or os.environ.get("ANTHROPIC_BASE_URL")
            or DEFAULT_BASE_URL
        )
        return base.rstrip("/") + "/v1/messages"

    def api_key(self, env: Mapping[str, str]) -> str:
        name = API_KEY_ENV
        key = env.get(name) or os.environ.get(name)
        if not key:
            raise MessagesApiError(f"no API key: ${name} is not set")
        return key

    async def create(
        self,
        *,
        env: Mapping[str, str],
        model: str,
        messages: list[dict[str, Any]],
        system: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """One non-streaming ``messages.create``; returns the decoded message object."""
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": self.config.max_tokens,
            "messages": messages,
        }
        if system is not None:
            body["system"] = system
        if tools:
            body["tools"] = tools
        headers = {
            "x-api-key": self.api_key(env),
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
        }
        url = self.endpoint(env)
        client = self.http.get()
        import httpx  # imported by get(): only a daemon that asks a model loads it

        try:
            response = await client.post(
                url, content=msgspec.json.encode(body), headers=headers, timeout=None
            )
        except httpx.HTTPError as exc:
            raise MessagesApiError(f"Messages API request failed: {type(exc).__name__}") from exc
        if response.status_code != 200:
            snippet = response.text.strip()[:300]
            raise MessagesApiError(
                f"Messages API returned status {response.status_code}: {snippet}"
            )
        try:
            message = msgspec.json.decode(response.content)
        except (msgspec.DecodeError, UnicodeError, RecursionError) as exc:
            raise MessagesApiError("Messages API answered with a body that is not JSON") from exc
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise MessagesApiError("Messages API answer has no `content` list")
        return message


def text_of(message: Mapping[str, Any]) -> str:
    """The concatenated text blocks of an assistant message."""
    parts = [
        block.get("text", "")
        for block in message.get("content", [])
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "".join(p for p in parts if isinstance(p, str))

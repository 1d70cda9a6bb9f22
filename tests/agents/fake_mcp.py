"""A minimal MCP server on stdio: one server, one tool, for driving agents' MCP calls offline.

Agents start it as a local (stdio) MCP server (``python3 fake_mcp.py``): newline-delimited
JSON-RPC 2.0, the methods every client calls — ``initialize``, ``tools/list``,
``tools/call``, ``ping`` — and nothing else (anything else is a "method not found" error,
which clients tolerate for optional methods such as ``resources/list``).  Its one tool,
``echo``, answers ``echo:<text>`` and, when ``$MCP_LOG`` is set, appends ``echo <text>`` to
that file, so a test sees whether the call ran (a guard that denied it leaves no line).

Standard library only: the agent runs it with whatever ``python3`` is on ``PATH``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "what to echo"}},
        "required": ["text"],
    },
}


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "srv", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        log = os.environ.get("MCP_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"echo {text}\n")
        return {"content": [{"type": "text", "text": f"echo:{text}"}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification (notifications/initialized, …): no answer
        method = str(message.get("method", ""))
        result = _answer(method, message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

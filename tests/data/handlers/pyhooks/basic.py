"""Python hooks for tests/handlers/test_python.py: each shows one behaviour."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from hookd_client.events import DecodedEvent
from hookd_client.output import HookOutput


def deny_bash(event: DecodedEvent) -> dict[str, Any]:
    command = event.raw["tool_input"]["command"]
    return {
        "hookSpecificOutput": {
            "hookEventName": event.name,
            "permissionDecision": "deny",
            "permissionDecisionReason": f"PY-DENY {event.typed.tool_name}: {command}",  # type: ignore[attr-defined]
        }
    }


def returns_output(event: DecodedEvent) -> HookOutput:
    return HookOutput(systemMessage=f"PY-STRUCT {event.name}")


def returns_none(event: DecodedEvent) -> None:
    return None


def returns_text(event: DecodedEvent) -> str:
    return "PY-PLAIN-CONTEXT"


def returns_json_text(event: DecodedEvent) -> str:
    return '{"systemMessage": "PY-JSON-TEXT"}'


async def async_context(event: DecodedEvent) -> dict[str, Any]:
    await asyncio.sleep(0.01)
    return {
        "hookSpecificOutput": {"hookEventName": event.name, "additionalContext": "PY-ASYNC-CTX"}
    }


def raises(event: DecodedEvent) -> None:
    raise ValueError("PY-HOOK-BROKE")


def returns_bad(event: DecodedEvent) -> int:
    return 42


def returns_unencodable(event: DecodedEvent) -> dict[str, Any]:
    return {"systemMessage": object()}


def hangs(event: DecodedEvent) -> None:
    time.sleep(120)


async def async_hangs(event: DecodedEvent) -> None:
    await asyncio.sleep(120)


def spins(event: DecodedEvent) -> None:
    while True:
        pass


def prints(event: DecodedEvent) -> dict[str, Any]:
    print("PY-NOISE on stdout must not break the protocol")
    return {"systemMessage": "PY-AFTER-PRINT"}


def worker_pid(event: DecodedEvent) -> dict[str, Any]:
    return {"systemMessage": str(os.getpid())}


def exits(event: DecodedEvent) -> None:
    os._exit(3)

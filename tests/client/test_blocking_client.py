"""The blocking client's additions: failure policy and session hooks without callbacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client.client import Client, DaemonUnavailable


def test_no_daemon_raises_or_applies_the_failure_policy(
    make_event: Any, unused_socket: Path
) -> None:
    event = make_event("PreToolUse-Bash")
    client = Client(unused_socket, retries=0)
    with pytest.raises(DaemonUnavailable):
        client.fire("PreToolUse", event)
    opened = client.fire("PreToolUse", event, on_unavailable="open")
    closed = client.fire(
        "UserPromptSubmit", make_event("UserPromptSubmit"), on_unavailable="closed"
    )
    assert opened.result.decision is None and opened.result.system_messages
    assert closed.result.decision == "block"


def test_callables_are_refused(unused_socket: Path) -> None:
    client = Client(unused_socket, retries=0)
    with pytest.raises(TypeError, match="cannot serve Python callbacks"):
        client.register_session_hooks("s", {"PreToolUse": [{"hooks": [lambda _p, _t: None]}]})


async def test_registers_and_clears_command_hooks(daemon_factory: Any, make_event: Any) -> None:
    handle = await daemon_factory()
    event = make_event("PreToolUse-Bash")
    hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": "echo no >&2; exit 2"}]}]}

    def run() -> tuple[int, str | None, int, str | None, list[Any]]:
        with Client(handle.socket) as client:
            registered = client.register_session_hooks(event["session_id"], hooks)
            blocked = client.fire("PreToolUse", event).result.decision
            removed = client.clear_session_hooks(event["session_id"])
            after = client.fire("PreToolUse", event).result.decision
            return registered, blocked, removed, after, client.check_for_new_responses("x")

    assert await trio.to_thread.run_sync(run) == (1, "deny", 1, None, [])

"""The blocking client's additions: failure policy and session hooks without callbacks."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client import protocol
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


def test_with_block_fails_open_when_the_daemon_is_down(
    make_event: Any, unused_socket: Path
) -> None:
    """Entering the block connects nothing: the fire's own policy decides."""
    with Client(unused_socket, retries=0) as client:
        reply = client.fire("PreToolUse", make_event("PreToolUse-Bash"), on_unavailable="open")
    assert reply.result.decision is None
    assert reply.result.system_messages[0].startswith("hookd unavailable:")


@pytest.fixture
def silent_daemon(unused_socket: Path) -> Iterator[tuple[Path, threading.Event]]:
    """A real socket whose peer accepts, answers the handshake, then never replies."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(unused_socket))
    listener.listen()
    done = threading.Event()
    seen = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)  # hello
            conn.sendall(
                protocol.encode(protocol.Welcome(version=1, server="x", pid=1, max_frame=1 << 20))
            )
            conn.recv(65536)  # the fire, never answered
            seen.set()
            done.wait()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield unused_socket, seen
    done.set()
    thread.join()
    listener.close()


def test_a_daemon_that_never_answers_cannot_block_forever(
    make_event: Any, silent_daemon: tuple[Path, threading.Event]
) -> None:
    path, seen = silent_daemon
    with Client(path, retries=0, fire_timeout=0.5) as client:
        reply = client.fire("PreToolUse", make_event("PreToolUse-Bash"), on_unavailable="closed")
        assert seen.is_set()
    assert reply.result.decision == "deny"
    assert "no reply within 0.5 s" in (reply.result.reason or "")


def test_a_socket_nobody_accepts_on_times_out_the_handshake(unused_socket: Path) -> None:
    """Listening but never accepting (a wedged daemon): the connect succeeds, the hello
    is buffered by the kernel, and only the handshake deadline ends the wait."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(unused_socket))
    listener.listen()
    try:
        with pytest.raises(DaemonUnavailable, match=r"no handshake within 0\.3 s"):
            Client(unused_socket, retries=0, timeout=0.3).connect()
    finally:
        listener.close()


def test_default_timeouts_are_finite() -> None:
    client = Client("/nonexistent")
    assert client.timeout is not None and client.fire_timeout is not None
    assert client.fire_timeout > 600  # past Claude Code's longest default hook timeout


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


async def test_fire_takes_a_typed_event(daemon_factory: Any, tmp_path: Path) -> None:
    """`fire(PreToolUse(...))`: the class names the event; hooks read the input a Claude
    Code hook reads (the common fields always there)."""
    from hookd_client.events import PreToolUse

    handle = await daemon_factory()
    seen = tmp_path / "seen.json"
    hook = {"type": "command", "command": f"cat > {seen}; echo no >&2; exit 2"}
    typed = PreToolUse(
        session_id="typed-1",
        cwd=str(tmp_path),
        hook_event_name="PreToolUse",
        tool_name="Bash",
        tool_input={"command": "rm -rf /"},
    )

    def run() -> str | None:
        with Client(handle.socket) as client:
            client.register_session_hooks("typed-1", {"PreToolUse": [{"hooks": [hook]}]})
            return client.fire(typed).result.decision

    assert await trio.to_thread.run_sync(run) == "deny"
    sent = json.loads(seen.read_text())
    assert sent["tool_input"] == {"command": "rm -rf /"}
    assert sent["transcript_path"] == "" and sent["hook_event_name"] == "PreToolUse"
    with pytest.raises(TypeError, match="needs the event's input"):
        Client(handle.socket).fire("PreToolUse")

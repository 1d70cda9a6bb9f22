"""Malformed event inputs get a specific error at every door, never ``internal`` (issue 28, 13).

The socket's ``fire`` carries the input already decoded (MessagePack); the
``relay`` request carries the hook's raw stdin, which the daemon parses itself —
so invalid UTF-8 and JSON nested 100,000 deep reach a JSON parser there, and
used to escape as ``internal``.  A relative or NUL-containing ``cwd`` must be
refused the same way at every door (``hookd_client/paths.py``): the relay door
accepted a relative one.  And the handshake has one deadline as a whole: a
``hello`` trickled a byte at a time used to be held to the 30 s frame deadline,
not the 10 s hello deadline.
"""

from __future__ import annotations

import json
import select
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.doors import http_endpoint
from hookd_client import protocol
from hookd_client.client import Client, DaemonError
from reliability.helpers import event
from reliability.test_limits import _connect, _read_frame, in_thread
from support.http_door import exchange

DEPTH = 100_000

RELAY_INPUTS = {
    "invalid UTF-8": (b'{"session_id": "s", "cwd": "/tmp", "x": "\xff\xfe"}', "UTF-8"),
    "deep nesting": (b'{"a": ' + b"[" * DEPTH + b"]" * DEPTH + b"}", "nested"),
    "huge number": (b'{"session_id": "s", "cwd": "/tmp", "n": 1e999}', "out of range"),
    "not an object": (b"[1, 2]", "not an object"),
    "wrong type": (json.dumps({**event(), "session_id": 7}).encode(), "session_id"),
    "relative cwd": (json.dumps(event(cwd="relative/dir")).encode(), "absolute"),
    "NUL in cwd": (json.dumps(event(cwd="/tmp/a\0b")).encode(), "NUL"),
    "NUL in transcript_path": (
        json.dumps(event(transcript_path="/tmp/t\0.jsonl")).encode(),
        "transcript_path",
    ),
}


def _relay(sock: Path, data: bytes, env: dict[str, str] | None = None) -> Any:
    with Client(sock) as client:
        return client.request(protocol.Relay(id=1, event="PreToolUse", input=data, env=env))


def _fire(sock: Path, payload: dict[str, Any]) -> Any:
    with Client(sock) as client:
        return client.fire("PreToolUse", payload)


@pytest.mark.parametrize("case", list(RELAY_INPUTS))
async def test_a_malformed_relay_input_is_bad_input(daemon_factory: Any, case: str) -> None:
    handle = await daemon_factory()
    data, says = RELAY_INPUTS[case]
    # The relay's own environment names the project: the event's cwd is checked anyway.
    env = {"CLAUDE_PROJECT_DIR": str(handle.project())}
    with pytest.raises(DaemonError) as info:
        await in_thread(_relay, handle.socket, data, env)
    assert info.value.code == "bad_input", info.value
    assert says in str(info.value), info.value
    # Still serving, on the same door.
    reply = await in_thread(_relay, handle.socket, json.dumps(event()).encode(), env)
    assert isinstance(reply, protocol.RelayReply) and reply.exit_code == 0


@pytest.mark.parametrize("cwd", ["relative/dir", "."])
async def test_a_relative_cwd_is_bad_input_at_the_socket_door(
    daemon_factory: Any, cwd: str
) -> None:
    handle = await daemon_factory()
    with pytest.raises(DaemonError) as info:
        await in_thread(_fire, handle.socket, event(cwd=cwd))
    assert info.value.code == "bad_input" and "`cwd` must be an absolute path" in str(info.value)


async def test_a_relative_project_dir_is_bad_input(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    with pytest.raises(DaemonError) as info:
        await in_thread(
            _relay,
            handle.socket,
            json.dumps(event()).encode(),
            {"CLAUDE_PROJECT_DIR": "some/project"},
        )
    assert info.value.code == "bad_input" and "project directory" in str(info.value)
    assert "absolute" in str(info.value)
    st = await in_thread(lambda: Client(handle.socket).status())
    assert "some/project" not in st["projects"]


async def test_a_relative_cwd_is_a_400_at_the_http_door(daemon_factory: Any) -> None:
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    token = http_endpoint.load_or_create_token()
    body = json.dumps(event(cwd="relative/dir")).encode()
    request = (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"authorization: Bearer " + token.encode() + b"\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    response = await in_thread(exchange, port, request)
    head, _, text = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), response[:300]
    assert "absolute" in json.loads(text)["error"]


async def test_a_hello_trickled_byte_by_byte_is_closed_at_the_hello_deadline(
    daemon_factory: Any,
) -> None:
    """Each byte arrives well within any per-read limit; the hello as a whole does not.
    The frame deadline is set far beyond the hello's: the close must name the hello's."""
    handle = await daemon_factory(hello_timeout=0.5, frame_timeout=120.0)
    hello = protocol.encode(protocol.Hello(client="x" * 400))

    def run() -> protocol.ServerMessage | None:
        with _connect(handle.socket, hello=False) as conn:
            for byte in hello[:-1]:
                try:
                    conn.sendall(bytes([byte]))
                except OSError:  # closed: the error frame is waiting to be read
                    break
                ready, _, _ = select.select([conn], [], [], 0.05)
                if ready:
                    break
            else:
                return None  # the whole hello but its last byte went in: not closed
            try:
                return _read_frame(conn)
            except (TimeoutError, ConnectionResetError):
                return None

    reply = await in_thread(run)
    assert isinstance(reply, protocol.Error), reply
    assert reply.code == "timeout" and "hello_timeout" in reply.message, reply


async def test_a_hello_arriving_in_pieces_within_the_deadline_is_welcomed(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(hello_timeout=20.0)
    hello = protocol.encode(protocol.Hello(client="pieces"))

    def run() -> protocol.ServerMessage | None:
        with _connect(handle.socket, hello=False) as conn:
            for byte in hello:
                conn.sendall(bytes([byte]))
            return _read_frame(conn)

    assert isinstance(await in_thread(run), protocol.Welcome)


async def test_the_daemon_keeps_serving_after_every_malformed_relay_input(
    daemon_factory: Any,
) -> None:
    """All of them on one connection, then a good event: each answered by its id."""
    handle = await daemon_factory()

    def run() -> list[protocol.ServerMessage | None]:
        answers: list[protocol.ServerMessage | None] = []
        with _connect(handle.socket) as conn:
            for rid, (data, _says) in enumerate(RELAY_INPUTS.values(), 1):
                conn.sendall(
                    protocol.encode(protocol.Relay(id=rid, event="PreToolUse", input=data))
                )
                answers.append(_read_frame(conn))
        return answers

    with trio.fail_after(60):
        answers = await in_thread(run)
    for rid, answer in enumerate(answers, 1):
        assert isinstance(answer, protocol.Error) and answer.id == rid, answer
        assert answer.code == "bad_input", answer


AGENT_INPUTS: list[bytes] = [
    b'{"cwd": "/tmp", "x": "\xff"}',
    b'{"a": ' + b"[" * DEPTH + b"]" * DEPTH + b"}",
    b'{"cwd": "/tmp", "n": 1e999}',
    b"[]",
    b'{"cwd": 5, "session_id": [1], "tool_input": "x", "toolArgs": 5, "tool_name": 5}',
    b'{"cwd": "relative/dir", "session_id": "s", "tool_name": "Bash", "tool_input": {}}',
    b'{"cwd": "/tmp/a\\u0000b", "session_id": "s"}',
]


async def test_every_agents_door_answers_malformed_inputs_by_name(daemon_factory: Any) -> None:
    """Each agent's adapter, each of its events, through ``relay --agent`` and ``fire``
    with ``agent``: a malformed input is ``bad_input`` (or a reply), never ``internal``."""
    from hookd.agents.registry import ADAPTERS

    handle = await daemon_factory()

    def run() -> list[str]:
        internal: list[str] = []
        rid = 0
        with Client(handle.socket) as client:
            for adapter in ADAPTERS:
                for spec in adapter.events:
                    for data in AGENT_INPUTS:
                        messages: list[Any] = []
                        rid += 1
                        messages.append(
                            protocol.Relay(
                                id=rid, event=spec.native, input=data, agent=adapter.name
                            )
                        )
                        try:
                            parsed = json.loads(data)
                        except (ValueError, RecursionError):
                            parsed = None
                        if isinstance(parsed, dict):
                            rid += 1
                            messages.append(
                                protocol.Fire(
                                    id=rid, event=spec.native, input=parsed, agent=adapter.name
                                )
                            )
                        for message in messages:
                            try:
                                client.request(message)
                            except DaemonError as exc:
                                if exc.code != "bad_input":
                                    internal.append(f"{adapter.name} {spec.native}: {exc}")
        return internal

    with trio.fail_after(300):
        assert await in_thread(run) == []

"""One bad request never takes the daemon down (issue 14, items 1 and 8).

Path-like fields are validated at the protocol edge, so a NUL byte, an
over-long path or a relative ``cwd`` is a ``bad_request`` naming the field —
never an ``internal`` error and never a project registered under a path that
cannot be read.  And every long-lived task survives its own exceptions: a
fault injected into reload (the ``inject_faults`` setting, a real trigger
inside the daemon, not a mock) is logged, reported in ``status`` under
``faults``, and the daemon keeps serving and reloading.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from hookd_client import protocol
from hookd_client.client import Client, DaemonError
from reliability.helpers import event
from reliability.test_trust import hookctl
from support.http_door import HEALTH, exchange


def raw(kind: str, **fields: Any) -> dict[str, Any]:
    """A request as a plain map: the client's Structs refuse these paths before sending."""
    return {"kind": kind, "id": 1, **fields}


def _call(sock: Path, message: Any) -> Any:
    with Client(sock) as client:
        return client.call(message)


async def call(sock: Path, message: Any) -> Any:
    return await trio.to_thread.run_sync(_call, sock, message)


async def error_of(sock: Path, message: Any) -> DaemonError:
    with pytest.raises(DaemonError) as info:
        await call(sock, message)
    return info.value


async def fire(sock: Path, payload: dict[str, Any]) -> protocol.FireReply:
    def run() -> protocol.FireReply:
        with Client(sock) as client:
            return client.fire("PreToolUse", payload)

    return await trio.to_thread.run_sync(run)


BAD_PATHS = [
    ("nul", "/tmp/a\0b", "NUL"),
    ("relative", "relative/dir", "absolute"),
    ("too long", "/" + "a" * 5000, "4096"),
]


@pytest.mark.parametrize(("what", "path", "says"), BAD_PATHS, ids=[b[0] for b in BAD_PATHS])
async def test_a_bad_cwd_in_hooks_and_status_line_is_a_bad_request(
    daemon_factory: Any, what: str, path: str, says: str
) -> None:
    handle = await daemon_factory()
    for message in (
        raw("hooks", cwd=path),
        raw("status_line", cwd=path, input={}),
    ):
        err = await error_of(handle.socket, message)
        assert err.code == "bad_request", err
        assert "cwd" in str(err) and says in str(err), err
    # Nothing of it stayed registered: status and reload still answer.
    st = await call(handle.socket, protocol.Status(id=2))
    assert path not in st["projects"]
    assert (await call(handle.socket, protocol.Reload(id=3)))["errors"] == []


async def test_a_nul_cwd_does_not_kill_the_daemon_at_the_next_config_change(
    daemon_factory: Any,
) -> None:
    """The reported crash: hooks(cwd="…\\0…"), then any watched file changes."""
    handle = await daemon_factory()
    await error_of(handle.socket, raw("hooks", cwd="/tmp/x\0y"))
    handle.user_config.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    )
    # The watcher reloads on its own; the new hook shows once it did.
    with trio.fail_after(20):
        while True:
            st = await call(handle.socket, protocol.Status(id=2))
            if any(s.get("hooks") for s in st["sources"]):
                break
            await trio.sleep(0.05)
    assert st["faults"] == []


async def test_event_cwd_with_a_nul_is_bad_input(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    with pytest.raises(DaemonError) as info:
        await fire(handle.socket, event(cwd="/tmp/a\0b"))
    assert info.value.code == "bad_input" and "cwd" in str(info.value)
    st = await call(handle.socket, protocol.Status(id=2))
    assert all("\0" not in p for p in st["projects"])


@pytest.mark.parametrize(
    ("files", "says"),
    [(["/tmp/a\0b.json"], "NUL"), (["/" + "a" * 5000], "4096"), (["/tmp/" + "b" * 300], "long")],
    ids=["nul", "too long", "long component"],
)
async def test_odd_paths_in_validate_are_bad_requests(
    daemon_factory: Any, files: list[str], says: str
) -> None:
    handle = await daemon_factory()
    try:
        data = await call(handle.socket, raw("validate", files=files))
    except DaemonError as exc:
        assert exc.code == "bad_request" and says in str(exc), exc
    else:  # a path the kernel refuses is that file's error, not the daemon's
        assert says in data[0]["errors"][0], data


async def test_register_with_a_nul_project_is_a_bad_request(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    err = await error_of(
        handle.socket,
        raw("register_session_hooks", session_id="s", hooks={}, project="/tmp/\0"),
    )
    assert err.code == "bad_request" and "project" in str(err)


def _raw_exchange(sock: Path, frames: list[bytes]) -> tuple[list[protocol.ServerMessage], bool]:
    """Send raw frames; read replies until the daemon closes (True) or goes quiet (False)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(3)
    conn.connect(str(sock))
    for data in frames:
        conn.sendall(data)
    buf = b""
    replies: list[protocol.ServerMessage] = []
    closed = False
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                closed = True
                break
            buf += chunk
            while len(buf) >= 4:
                (length,) = protocol.HEADER.unpack_from(buf)
                if len(buf) < 4 + length:
                    break
                replies.append(protocol.decode_server(buf[4 : 4 + length]))
                buf = buf[4 + length :]
    except TimeoutError:
        pass
    finally:
        conn.close()
    return replies, closed


async def test_an_undecodable_fire_before_hello_closes_the_connection(daemon_factory: Any) -> None:
    """docs/protocol.md: anything but hello first closes the connection."""
    handle = await daemon_factory()
    bad = protocol.frame(msgspec.msgpack.encode({"kind": "fire", "id": 1, "event": 5}))
    replies, closed = await trio.to_thread.run_sync(_raw_exchange, handle.socket, [bad])
    assert closed, replies
    assert len(replies) == 1 and isinstance(replies[0], protocol.Error)
    assert replies[0].code == "bad_request"


async def test_a_fault_inside_reload_is_reported_and_the_daemon_keeps_serving(
    daemon_factory: Any,
) -> None:
    """Fault injection: the first reload raises (watcher-triggered); the next one works."""
    handle = await daemon_factory(inject_faults={"reload": 1})
    hook = {"type": "command", "command": 'echo \'{"systemMessage":"v1"}\''}
    handle.user_config.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}))
    with trio.fail_after(20):
        while not (await call(handle.socket, protocol.Status(id=1)))["faults"]:
            await trio.sleep(0.05)
    st = await call(handle.socket, protocol.Status(id=1))
    (fault,) = st["faults"]
    assert fault["task"] == "reload" and "injected fault" in fault["error"]
    assert fault["count"] == 1
    # Still serving: an event is answered, and the next change reloads for real.
    # (The watcher may already have reloaded once more for the same save.)
    assert isinstance(await fire(handle.socket, event()), protocol.FireReply)
    handle.user_config.write_text(handle.user_config.read_text().replace("v1", "v2"))
    with trio.fail_after(20):
        while (await fire(handle.socket, event())).result.system_messages != ["v2"]:
            await trio.sleep(0.05)


async def test_a_fault_in_a_housekeeping_task_restarts_it(daemon_factory: Any) -> None:
    """The idle-project sweep raises once; it is restarted and sweeps again."""
    handle = await daemon_factory(inject_faults={"sweep": 1}, project_idle_seconds=0.2)
    project = handle.project("idle")
    await call(handle.socket, protocol.Hooks(id=1, cwd=str(project)))
    with trio.fail_after(30):
        while True:
            st = await call(handle.socket, protocol.Status(id=2))
            if st["faults"] and str(project) not in st["projects"]:
                break
            await trio.sleep(0.1)
    assert st["faults"][0]["task"] == "sweep"


async def test_a_failing_http_listener_is_restarted(daemon_factory: Any) -> None:
    """The http listener's first start raises; it is restarted and answers."""
    handle = await daemon_factory(http_port=0, inject_faults={"http": 1})
    port = handle.daemon.http_port
    assert port is not None
    answer = await trio.to_thread.run_sync(exchange, port, HEALTH, 1, 20)
    assert answer.startswith(b"HTTP/1.1 200 ")
    st = await call(handle.socket, protocol.Status(id=1))
    assert [f["task"] for f in st["faults"]] == ["http"]


async def test_status_text_shows_faults(daemon_factory: Any) -> None:
    handle = await daemon_factory(inject_faults={"reload": 1})
    await call(handle.socket, protocol.Reload(id=1))
    text = (await trio.to_thread.run_sync(lambda: hookctl(handle, "status"))).stdout
    assert "faults (1 task(s) failed and were restarted):" in text
    assert "reload: 1x" in text and "injected fault" in text

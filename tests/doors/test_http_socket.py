"""The http hook API on the daemon's owner-only Unix socket (the Claude Code mod's door).

A real daemon (``daemon_factory``) serves it by default beside its own socket;
requests go over the real socket with httpx.  What is proved: no token is
needed there (the file mode is the authentication) while the TCP endpoint
still wants it; the peer's pid comes from the kernel (the hook sees this
process as ``CLAUDE_PID``); the socket is never connectable by another user,
whatever the umask, and is refused in a place another user controls; bad
requests get a specific 4xx and the connection keeps serving.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from support.daemon import configure
from support.events import fixture_event

DENY = {
    "PreToolUse": [
        {
            "matcher": "Bash",
            "hooks": [{"type": "command", "command": "echo NO-BY-UNIX-SOCKET >&2; exit 2"}],
        }
    ]
}
PID_CONTEXT = {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": 'echo "pid=$CLAUDE_PID"'}]}]
}


def _client(path: Path) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.AsyncHTTPTransport(uds=str(path)), base_url="http://hookd"
    )


async def test_served_by_default_beside_the_daemon_socket_without_a_token(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    path = handle.socket.parent / "http.sock"
    assert handle.daemon.http_socket == path
    assert handle.daemon.http_port is None  # the TCP endpoint stays opt-in
    configure(handle, DENY)
    async with _client(path) as client:
        reply = await client.post("/hooks/PreToolUse", json=fixture_event("PreToolUse-Bash"))
    assert reply.status_code == 200, reply.text
    specific = reply.json()["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "NO-BY-UNIX-SOCKET" in specific["permissionDecisionReason"]


async def test_tcp_endpoint_still_needs_its_token(daemon_factory: Any) -> None:
    handle = await daemon_factory(http_port=0)
    configure(handle, DENY)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{handle.daemon.http_port}") as tcp:
        refused = await tcp.post("/hooks/PreToolUse", json=fixture_event("PreToolUse-Bash"))
    assert refused.status_code == 401
    async with _client(handle.daemon.http_socket) as unix:
        served = await unix.post("/hooks/PreToolUse", json=fixture_event("PreToolUse-Bash"))
    assert served.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


async def test_the_peer_pid_comes_from_the_kernel(daemon_factory: Any) -> None:
    """The hook's ``CLAUDE_PID`` is this process: SO_PEERCRED named the peer."""
    handle = await daemon_factory()
    configure(handle, PID_CONTEXT)
    async with _client(handle.daemon.http_socket) as client:
        reply = await client.post("/hooks/UserPromptSubmit", json=fixture_event("UserPromptSubmit"))
    context = reply.json()["hookSpecificOutput"]["additionalContext"]
    assert context == f"pid={os.getpid()}"


async def test_socket_is_owner_only_whatever_the_umask(daemon_factory: Any) -> None:
    old = os.umask(0)
    try:
        handle = await daemon_factory()
    finally:
        os.umask(old)
    path = handle.daemon.http_socket
    info = path.lstat()
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert info.st_uid == os.getuid()
    handle.cancel()
    with trio.fail_after(10):
        while path.exists():  # removed when the daemon stops
            await trio.sleep(0.02)


async def test_binding_the_socket_leaves_the_hooks_umask_as_it_was(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """The socket is bound under a private umask, put back at once: the hooks the
    daemon starts afterwards create files with the user's umask, not 0600."""
    old = os.umask(0o022)
    try:
        handle = await daemon_factory()
        assert handle.daemon.http_socket is not None
        made = tmp_path / "made-by-a-hook"
        touch = {"hooks": [{"type": "command", "command": f"touch {made}"}]}
        configure(handle, {"UserPromptSubmit": [touch]})
        async with _client(handle.daemon.http_socket) as client:
            reply = await client.post(
                "/hooks/UserPromptSubmit", json=fixture_event("UserPromptSubmit")
            )
        assert reply.status_code == 200, reply.text
        assert stat.S_IMODE(made.stat().st_mode) == 0o644
    finally:
        os.umask(old)


async def test_status_reports_the_socket(daemon_factory: Any) -> None:
    from hookd_client.client import Client

    handle = await daemon_factory()

    def ask() -> dict[str, Any]:
        with Client(str(handle.socket), name="t", retries=0) as client:
            return client.status()

    data = await trio.to_thread.run_sync(ask)
    assert data["http_socket"] == str(handle.socket.parent / "http.sock")


async def test_a_directory_others_may_write_is_refused_and_the_daemon_keeps_serving(
    daemon_factory: Any, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    handle = await daemon_factory(http_socket_path=str(shared / "http.sock"))
    assert handle.daemon.http_socket is None
    assert not (shared / "http.sock").exists()
    faults = {f.task: f.error for f in handle.daemon.faults.all()}
    assert "writable by other users (mode 777)" in faults["http-socket"]
    assert "http_socket_path" in faults["http-socket"]
    # The daemon's own socket still serves.
    sock = await trio.open_unix_socket(str(handle.socket))
    await sock.aclose()


async def test_a_file_in_the_way_is_not_replaced(daemon_factory: Any, tmp_path: Path) -> None:
    place = tmp_path / "http.sock"
    place.write_text("mine")
    handle = await daemon_factory(http_socket_path=str(place))
    assert handle.daemon.http_socket is None
    assert place.read_text() == "mine"
    faults = {f.task: f.error for f in handle.daemon.faults.all()}
    assert "exists and is not a socket" in faults["http-socket"]


async def test_a_stale_socket_is_replaced(daemon_factory: Any, tmp_path: Path) -> None:
    place = tmp_path / "http.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(place))
    stale.close()  # the file stays; nobody listens: what a crash leaves
    handle = await daemon_factory(http_socket_path=str(place))
    assert handle.daemon.http_socket == place
    async with _client(place) as client:
        assert (await client.get("/health")).status_code == 200


async def test_off_when_the_setting_says_so(daemon_factory: Any) -> None:
    handle = await daemon_factory(http_socket=False)
    assert handle.daemon.http_socket is None
    assert not (handle.socket.parent / "http.sock").exists()


async def test_bad_requests_get_clear_errors_and_the_connection_keeps_serving(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    configure(handle, DENY)
    async with _client(handle.daemon.http_socket) as client:
        unknown = await client.post("/hooks/NoSuchEvent", json={})
        assert unknown.status_code == 404
        assert unknown.json() == {"error": "unknown hook event 'NoSuchEvent'"}
        not_json = await client.post("/hooks/PreToolUse", content=b"{oops")
        assert not_json.status_code == 400
        assert not_json.json()["error"].startswith("body is not JSON: ")
        wrong_event = await client.post("/hooks/PostToolUse", json=fixture_event("PreToolUse-Bash"))
        assert wrong_event.status_code == 400
        assert wrong_event.json()["error"] == (
            "body is a 'PreToolUse' input but was posted to /hooks/PostToolUse"
        )
        get = await client.get("/hooks/PreToolUse")
        assert get.status_code == 405
        ok = await client.post("/hooks/PreToolUse", json=fixture_event("PreToolUse-Bash"))
        assert ok.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


_CONNECT_AS_NOBODY = """
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print("refused:", exc.errno); sys.exit(0)
s.sendall(b"GET /health HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n")
reply = b""
while chunk := s.recv(4096):
    reply += chunk
head, _, body = reply.decode().partition("\\r\\n\\r\\n")
print(head.splitlines()[0]); print(body)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
async def test_another_user_cannot_connect_and_is_refused_if_the_mode_is_loosened(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    path = handle.daemon.http_socket

    def as_nobody() -> str:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", _CONNECT_AS_NOBODY, str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    handle.root.chmod(0o755)  # only the socket's own mode stands in the way now
    assert await trio.to_thread.run_sync(as_nobody) == f"refused: {errno.EACCES}"
    path.chmod(0o666)  # someone loosened it: the uid check still refuses
    status, body = (await trio.to_thread.run_sync(as_nobody)).split("\n", 1)
    assert status == "HTTP/1.1 403 Forbidden"
    assert json.loads(body) == {
        "error": f"hookd serves only its own user (uid {os.getuid()}), not uid 65534"
    }

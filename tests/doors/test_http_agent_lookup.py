"""The http door finds the agent's pid lazily and at most once per connection.

TCP has no peer credentials, so finding the process behind a connection is a
search (:mod:`hookd.doors.tcp_peer`).  These tests drive a real in-process
daemon on 127.0.0.1 from real client processes — a keep-alive Python client
and ``curl`` — and read the endpoint's own counters (``http_agent_lookups``,
``http_connections``: what ``hookctl status`` shows), not timings.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.agent_process import own_process
from hookd.doors import http_endpoint
from hookd.doors.tcp_peer import PeerFinder, _proc_net_inode, socket_owner
from support.daemon import DaemonHandle, configure
from support.http_door import attacker, python_for

DATA = Path(__file__).resolve().parents[1] / "data"

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")

KEEP_ALIVE_CLIENT = """
import http.client, sys
conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
headers = {"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"}
for line in sys.stdin:
    event, path = line.split()
    conn.request("POST", "/hooks/" + event, body=open(path, "rb").read(), headers=headers)
    reply = conn.getresponse()
    print(reply.status, reply.read().decode() or "-", flush=True)
"""


def _event(tmp: Path, name: str, fixture: str, session: str, project: Path) -> Path:
    raw = json.loads((DATA / "cc-fixtures" / f"{fixture}.json").read_text())
    raw["session_id"] = session
    raw["cwd"] = str(project)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(raw))
    return path


def _record_pid_hook(record: Path) -> dict[str, Any]:
    command = f"printf '%s\\n' \"$CLAUDE_PID\" >> {record}"
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}


@asynccontextmanager
async def _reaped(proc: trio.Process) -> AsyncIterator[None]:
    try:
        yield
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


class KeepAlive:
    """A client process holding one keep-alive connection, fed one request per line."""

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self.buffer = b""

    async def post(self, event: str, body: Path) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        await self.proc.stdin.send_all(f"{event} {body}\n".encode())
        while b"\n" not in self.buffer:
            chunk = await self.proc.stdout.receive_some(65536)
            assert chunk, "the client process died"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


async def _curl(port: int, token: str, event: str, body: Path, cwd: Path) -> tuple[int, str]:
    """POST once from a fresh ``curl`` process (a new connection); returns (its pid, reply)."""
    argv = ["curl", "-sS", "-H", f"Authorization: Bearer {token}"]
    argv += ["-H", "Content-Type: application/json", "--data-binary", f"@{body}"]
    argv += [f"http://127.0.0.1:{port}/hooks/{event}"]
    proc = await trio.lowlevel.open_process(argv, cwd=cwd, stdout=-1)
    assert proc.stdout is not None
    out = b""
    while chunk := await proc.stdout.receive_some(65536):
        out += chunk
    assert await proc.wait() == 0
    return proc.pid, out.decode()


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
async def test_the_agent_is_looked_up_only_when_needed_and_once_per_connection(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle: DaemonHandle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    assert port
    token = http_endpoint.load_or_create_token()
    project = handle.project()
    record = tmp_path / "claude-pids"
    configure(handle, _record_pid_hook(record))
    counters = handle.daemon.activity.counters
    no_hook = _event(tmp_path, "post", "PostToolUse-Bash", "s-lazy", project)
    with_hook = _event(tmp_path, "pre", "PreToolUse-Bash", "s-lazy", project)

    argv = [sys.executable, "-I", "-S", "-c", KEEP_ALIVE_CLIENT, str(port), token]
    proc = await trio.lowlevel.open_process(argv, stdin=-1, stdout=-1, cwd=project)
    async with _reaped(proc):
        client = KeepAlive(proc)
        # A new session: its project is the agent's working directory, so the
        # agent is looked up — once.
        assert await client.post("PostToolUse", no_hook) == "200 -"
        assert counters["http_agent_lookups"] == 1
        session = handle.daemon.sessions.get("s-lazy")
        assert session is not None and session.agent_pid == proc.pid
        assert session.project == str(project)
        for _ in range(3):
            assert await client.post("PostToolUse", no_hook) == "200 -"
        # A hook runs (it needs the agent's environment): still the first lookup.
        assert await client.post("PreToolUse", with_hook) == "200 -"
        assert counters["http_agent_lookups"] == 1
        assert record.read_text().split() == [str(proc.pid)]
        assert proc.stdin is not None
        await proc.stdin.aclose()

    # A new connection of the known session whose event runs no hook: no lookup.
    connections = counters["http_connections"]
    _, reply = await _curl(port, token, "PostToolUse", no_hook, project)
    assert reply == ""
    assert counters["http_connections"] == connections + 1
    assert counters["http_agent_lookups"] == 1
    # A new connection whose event runs a hook: one lookup, and the right process.
    curl_pid, reply = await _curl(port, token, "PreToolUse", with_hook, project)
    assert reply == ""
    assert counters["http_agent_lookups"] == 2
    assert record.read_text().split() == [str(proc.pid), str(curl_pid)]


async def test_peer_finder_finds_the_owner_and_tries_recent_peers_first() -> None:
    """The inode from sock_diag is the one /proc/net/tcp lists; the owner is found, and a
    second search for the same process lists one process's fds, not the machine's."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        script = (
            "import socket, sys\n"
            f"s = socket.create_connection(('127.0.0.1', {port}))\n"
            "sys.stdin.read()\n"
        )
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-I", "-S", "-c", script], stdin=-1
        )
        async with _reaped(proc):
            conn, _ = await trio.to_thread.run_sync(server.accept)
            local, peer = conn.getsockname(), conn.getpeername()
            owner = socket_owner(peer, local)
            assert owner is not None
            assert owner.inode == _proc_net_inode(peer[1], local[1])
            finder = PeerFinder()
            assert finder.find(peer, local) == proc.pid
            first_scan = finder.processes_scanned
            assert finder.find(peer, local) == proc.pid
            assert finder.processes_scanned == first_scan + 1
            assert finder.lookups == 2
            assert proc.stdin is not None
            await proc.stdin.aclose()
            conn.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="running as a second uid needs root")
async def test_a_token_holder_of_another_uid_does_not_choose_the_hooks_environment(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Issue 28, item 7: a process of another uid that has the token posts an event whose
    hook runs ``cat``; its ``PATH`` leads to its own ``cat``.  The hook gets the daemon's
    environment — the planted ``cat`` never runs as the daemon's user — and the foreign
    process is not taken for the session's agent."""
    handle: DaemonHandle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    assert port
    token = http_endpoint.load_or_create_token()
    project = handle.project()
    record, marker = tmp_path / "paths", tmp_path / "planted-cat-ran"
    command = f"cat >/dev/null; printf '%s\\n' \"$PATH\" >> {record}"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]})
    planted = Path(tempfile.mkdtemp(prefix="hookd-planted-"))
    try:
        planted.chmod(0o755)
        cat = planted / "cat"
        cat.write_text(f'#!/bin/sh\ntouch {marker}\nexec /bin/cat "$@"\n')
        cat.chmod(0o755)
        body = _event(tmp_path, "pre", "PreToolUse-Bash", "s-foreign", project).read_text()
        uid = 62000 + os.getpid() % 1000
        if python_for(uid) is None:
            pytest.skip(f"uid {uid} can run no Python here")
        env = {"PATH": f"{planted}:/usr/bin:/bin"}
        async with attacker(uid, "post", port, token, "PreToolUse", body, env=env) as other:
            assert await other.line() == "answer 200"
            foreign_pid = int((await other.line()).split()[1])
    finally:
        shutil.rmtree(planted)
    assert not marker.exists(), "the other uid's cat ran as the daemon's user"
    assert record.read_text().split("\n")[:-1] == [os.environ["PATH"]]
    session = handle.daemon.sessions.get("s-foreign")
    assert session is not None and session.agent_pid is None, foreign_pid


async def test_an_agent_process_is_read_only_while_it_holds_the_connection(
    tmp_path: Path,
) -> None:
    """Pid reuse: the process found behind a connection is pinned by its ``/proc``
    directory and must still hold the socket there; a process of the daemon's uid that
    does not hold it, or one that has exited, supplies nothing."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        script = f"import socket, sys\ns = socket.create_connection(('127.0.0.1', {port}))\n"
        script += "sys.stdin.read()\n"
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-I", "-S", "-c", script], stdin=-1
        )
        async with _reaped(proc):
            conn, _ = await trio.to_thread.run_sync(server.accept)
            found = PeerFinder().find_peer(conn.getpeername(), conn.getsockname())
            assert found is not None and found[0] == proc.pid
            view = own_process(proc.pid, holding=found[1])
            assert view is not None
            with view:
                assert view.environ() is not None
                assert own_process(os.getpid(), holding=found[1]) is None  # not its socket
                proc.kill()
                await proc.wait()
                assert view.environ() is None  # gone: never another process's by its number
            conn.close()

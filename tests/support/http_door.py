"""Plain-socket exchanges with the daemon's http door, for tests that need the bytes —
and the other users who attack it (issue 28), as real processes of another uid."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

import trio

__all__ = [
    "ATTACKER",
    "HEALTH",
    "Attacker",
    "accept_queue",
    "attacker",
    "exchange",
    "hook_request",
    "python_for",
    "read_response",
    "wait_accepted",
]

HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
"""A health check that asks the server to close after answering."""


def exchange(port: int, request: bytes, pieces: int = 1, timeout: float = 30) -> bytes:
    """Send ``request`` to 127.0.0.1:``port`` (split in ``pieces`` sends) and read until
    the server closes the connection (blocking: call it in a thread)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        step = max(1, len(request) // pieces)
        for i in range(0, len(request), step):
            conn.sendall(request[i : i + step])
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
        return data


def hook_request(
    token: str | None, body: Mapping[str, Any], event: str = "PreToolUse", close: bool = True
) -> bytes:
    """``POST /hooks/<event>`` with ``body`` as JSON, with the token (None: without one)."""
    data = json.dumps(body).encode()
    head = f"POST /hooks/{event} HTTP/1.1\r\nhost: x\r\ncontent-length: {len(data)}\r\n"
    if token is not None:
        head += f"authorization: Bearer {token}\r\n"
    if close:
        head += "connection: close\r\n"
    return head.encode() + b"\r\n" + data


def read_response(conn: socket.socket) -> tuple[int, bytes]:
    """One response (status, body) from a kept-alive connection (blocking); (0, b"") at EOF."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return 0, b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split(b" ", 2)[1]), body


def accept_queue(port: int) -> int | None:
    """Connections waiting in the accept queue of the listener on ``port`` (the LISTEN
    socket's ``rx_queue`` in ``/proc/net/tcp``); None when no such listener."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if fields[3] != "0A" or int(fields[1].rsplit(":", 1)[1], 16) != port:
                    continue
                return int(fields[4].split(":")[1], 16)
    return None


async def wait_accepted(port: int) -> None:
    """Until the daemon has accepted every connection made to ``port`` so far."""
    with trio.fail_after(60):
        while accept_queue(port):
            await trio.sleep(0.01)


# --- another user ----------------------------------------------------------------------

ATTACKER = r"""
import os, select, socket, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
args = sys.argv[3:]
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()

def connect():
    return socket.create_connection(("127.0.0.1", port), timeout=30)

def status_of(conn):
    data = b""
    while b"\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return "eof"
        data += chunk
    return data.split(b" ", 2)[1].decode()

def say(*words):
    print(*words, flush=True)

def watch_closed(conns):
    # Say how many of conns the server has closed, each time that number grows.
    closed, said = set(), -1
    while True:
        readable, _, _ = select.select([c for c in conns if c not in closed], [], [], 0.2)
        for conn in readable:
            try:
                if not conn.recv(65536):
                    closed.add(conn)
            except OSError:
                closed.add(conn)
        if len(closed) != said:
            said = len(closed)
            say("closed", said)
        if len(closed) == len(conns):
            time.sleep(3600)

if mode == "silent":
    conns = [connect() for _ in range(int(args[0]))]
    say("ready")
    watch_closed(conns)
elif mode == "refused":
    bad = b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n"
    bad += b"authorization: Bearer wrong\r\n\r\n{}"
    conns, statuses = [], {}
    for _ in range(int(args[0])):
        conn = connect()
        conn.sendall(bad)
        status = status_of(conn)
        statuses[status] = statuses.get(status, 0) + 1
        conns.append(conn)
    say("ready", sorted(statuses.items()))
    watch_closed(conns)
elif mode == "trickle":
    conns = [connect() for _ in range(int(args[0]))]
    for conn in conns:
        conn.sendall(b"POST /hooks/PreToolUse HTTP/1.1\r\n")
    say("ready")
    while True:
        for conn in conns:
            try:
                conn.sendall(b"x")
            except OSError:
                pass
        time.sleep(0.1)
elif mode == "junk":
    conns = [connect() for _ in range(int(args[0]))]
    junk = b"\r\n" * 2000
    for conn in conns:
        conn.sendall(junk)
    say("ready")
    watch_closed(conns)
elif mode == "flood":
    held, made = [], 0
    while True:
        try:
            held.append(connect())
        except OSError:
            time.sleep(0.01)
            continue
        made += 1
        if len(held) > 300:
            held.pop(0).close()
        if made == 300:
            say("ready")
elif mode == "post":
    token, event, body = args
    request = (
        f"POST /hooks/{event} HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n"
        f"authorization: Bearer {token}\r\nconnection: close\r\n\r\n{body}"
    ).encode()
    conn = connect()
    conn.sendall(request)
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    say("answer", data.split(b" ", 2)[1].decode())
    say("pid", os.getpid())
    sys.stdin.read()
"""
"""What another local user's process does to the http door: ``python -c ATTACKER <mode>
<port> …``; it prints ``ready`` once its connections are made, then holds them until
its stdin closes.  Standard library only: it runs as another uid, ``-I -S``."""


@cache
def python_for(uid: int) -> str | None:
    """A Python interpreter that ``uid`` can run (the test's own may sit in a directory
    only root may enter), or None."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.path.exists(candidate):
            continue
        try:
            proc = subprocess.run(
                [candidate, "-I", "-S", "-c", "import socket, select, threading"],
                user=uid,
                capture_output=True,
                check=False,
                timeout=60,
                cwd="/",
            )
        except PermissionError:  # cannot even be started as uid
            continue
        if proc.returncode == 0:
            return candidate
    return None


class Attacker:
    """A running :data:`ATTACKER` process of another uid; read its lines with :meth:`line`."""

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self._buffer = b""

    async def line(self) -> str:
        assert self.proc.stdout is not None
        with trio.fail_after(120):
            while b"\n" not in self._buffer:
                chunk = await self.proc.stdout.receive_some(65536)
                assert chunk, "the attacker process died"
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    async def until(self, prefix: str) -> str:
        """The first line from now that starts with ``prefix``."""
        while not (line := await self.line()).startswith(prefix):
            pass
        return line


@asynccontextmanager
async def attacker(
    uid: int, mode: str, port: int, *args: str, env: Mapping[str, str] | None = None
) -> AsyncIterator[Attacker]:
    """Run :data:`ATTACKER` as ``uid``; killed (and its connections dropped) on exit."""
    python = python_for(uid)
    assert python is not None, f"no Python that uid {uid} can run"
    proc = await trio.lowlevel.open_process(
        [python, "-I", "-S", "-c", ATTACKER, mode, str(port), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        user=uid,
        cwd="/",
        env=dict(env) if env is not None else {"PATH": "/usr/bin:/bin"},
    )
    try:
        yield Attacker(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()

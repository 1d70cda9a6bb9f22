"""Every client checks the socket and its directories before it sends anything (issue 28, item 11).

The ``/tmp/hookd-<uid>`` fallback is not the only shared place a socket path can
lead: ``$XDG_RUNTIME_DIR`` set to a shared sticky directory, or
``$HOOKD_SOCKET`` in ``/tmp``, let another user's socket receive a relay's tool
input and whole environment (API keys) and ``hookctl``'s hello.  Each case
below is such a path; each front door — the blocking, asyncio and trio
clients, ``hookctl``, both relays — must refuse it, name the path and the
owner, and send nothing (the squatter's backlog stays empty).  A control case
shows the same layout with the caller's own files is used.

The caller is a fresh uid nobody uses (``os.getuid`` answers it in-process or
in the child; the compiled relay really runs as it), the squatter another;
making their files needs chown, so root.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client import aio, relay
from hookd_client.client import Client, DaemonUnavailable, UnsafeSocket
from hookd_client.trio_client import open_client

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="files of two other uids need chown, which needs root"
)

ROOT = Path(__file__).resolve().parents[2]
RELAY_DIR = str(Path(relay.__file__).resolve().parent)
GUARD = 60
"""Seconds before a client that connected after all (today's) is given up on."""


@dataclass
class Shared:
    """A shared sticky directory (``/tmp``-like, root's, 1777) and who is who in it."""

    root: Path
    uid: int
    """The caller."""
    squatter: int
    """Another user."""
    env: dict[str, str] = field(default_factory=dict)
    """``HOOKD_SOCKET`` / ``XDG_RUNTIME_DIR`` that lead the caller to ``socket``."""
    sock_path: Path = Path()
    listener: socket.socket | None = None

    def listen(self, at: Path, owner: int) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(at))
        sock.listen(8)
        sock.setblocking(False)
        os.chmod(at, 0o777)  # the caller could connect: only ownership must stop it
        os.chown(at, owner, -1)
        self.sock_path, self.listener = at, sock

    def nobody_connected(self) -> bool:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return True
        conn.close()
        return False


def _xdg_dir_of_another_user(shared: Shared) -> str:
    """``$XDG_RUNTIME_DIR`` is the shared directory; someone made ``hookd/`` in it first."""
    (shared.root / "hookd").mkdir(mode=0o755)
    os.chown(shared.root / "hookd", shared.squatter, -1)
    shared.listen(shared.root / "hookd" / "hookd.sock", shared.squatter)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return f"{shared.root}/hookd belongs to uid {shared.squatter}, not to you (uid {shared.uid})"


def _socket_of_another_user_in_a_sticky_dir(shared: Shared) -> str:
    """``$XDG_RUNTIME_DIR/hookd`` is itself shared and sticky; the socket is someone else's."""
    (shared.root / "hookd").mkdir()
    os.chmod(shared.root / "hookd", 0o1777)
    shared.listen(shared.root / "hookd" / "hookd.sock", shared.squatter)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return (
        f"{shared.root}/hookd/hookd.sock belongs to uid {shared.squatter}, "
        f"not to you (uid {shared.uid})"
    )


def _hookd_socket_in_tmp(shared: Shared) -> str:
    """``$HOOKD_SOCKET`` names a file directly in the shared directory."""
    shared.listen(shared.root / "hookd.sock", shared.squatter)
    shared.env = {"HOOKD_SOCKET": str(shared.root / "hookd.sock")}
    return f"{shared.root}/hookd.sock belongs to uid {shared.squatter}"


def _own_dir_writable_by_all(shared: Shared) -> str:
    """The caller's own directory and socket, but anyone may replace the socket."""
    (shared.root / "hookd").mkdir()
    os.chmod(shared.root / "hookd", 0o777)
    os.chown(shared.root / "hookd", shared.uid, -1)
    shared.listen(shared.root / "hookd" / "hookd.sock", shared.uid)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return f"{shared.root}/hookd is writable by other users (mode 0777) and not sticky"


def _symlink_of_another_user(shared: Shared) -> str:
    """``hookd/`` is a symlink someone else planted, to a directory that looks right."""
    target = shared.root / "looks-right"
    target.mkdir(mode=0o700)
    os.chown(target, shared.uid, -1)
    shared.listen(target / "hookd.sock", shared.uid)
    (shared.root / "hookd").symlink_to(target)
    os.lchown(shared.root / "hookd", shared.squatter, -1)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return f"{shared.root}/hookd belongs to uid {shared.squatter}, not to you (uid {shared.uid})"


def _parent_of_another_user(shared: Shared) -> str:
    """Private-looking ``hookd/`` of the caller's, inside a directory another user owns
    (who can rename it away and put their own in its place)."""
    theirs = shared.root / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, shared.squatter, -1)
    (theirs / "hookd").mkdir(mode=0o700)
    os.chown(theirs / "hookd", shared.uid, -1)
    shared.listen(theirs / "hookd" / "hookd.sock", shared.uid)
    shared.env = {"XDG_RUNTIME_DIR": str(theirs)}
    return f"{theirs} belongs to uid {shared.squatter}, not to you (uid {shared.uid})"


CASES = [
    pytest.param(_xdg_dir_of_another_user, id="xdg-dir-of-another-user"),
    pytest.param(_socket_of_another_user_in_a_sticky_dir, id="socket-in-sticky-dir"),
    pytest.param(_hookd_socket_in_tmp, id="hookd-socket-in-tmp"),
    pytest.param(_own_dir_writable_by_all, id="own-dir-writable-by-all"),
    pytest.param(_symlink_of_another_user, id="symlink-of-another-user"),
    pytest.param(_parent_of_another_user, id="parent-of-another-user"),
]


def _unused_uid() -> int:
    uid = 63000 + os.getpid() % 2000
    while os.path.lexists(f"/tmp/hookd-{uid}"):
        uid += 2
    return uid


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[Shared]:
    root = Path(tempfile.mkdtemp(prefix="hookd-shared-", dir="/tmp"))
    os.chmod(root, 0o1777)
    uid = _unused_uid()
    made = Shared(root=root, uid=uid, squatter=uid + 1)
    monkeypatch.delenv("HOOKD_SOCKET", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(os, "getuid", lambda: uid)
    yield made
    if made.listener is not None:
        made.listener.close()
    shutil.rmtree(root, ignore_errors=True)


def _prepare(shared: Shared, prepare: Callable[[Shared], str], monkeypatch: Any) -> str:
    why = prepare(shared)
    for key, value in shared.env.items():
        monkeypatch.setenv(key, value)
    return why


def _refused(message: str, shared: Shared, why: str) -> None:
    assert f"{shared.sock_path}" in message or str(shared.root) in message, message
    assert why in message, message
    assert shared.nobody_connected()


@pytest.mark.parametrize("prepare", CASES)
def test_blocking_client_refuses(shared: Shared, prepare: Any, monkeypatch: Any) -> None:
    why = _prepare(shared, prepare, monkeypatch)
    client = Client(name="test", retries=0, timeout=GUARD)
    with pytest.raises(UnsafeSocket) as caught:
        client.connect()
    _refused(str(caught.value), shared, why)
    reply = client.fire("Stop", {"session_id": "s"}, on_unavailable="closed")
    assert reply.result.decision == "block" and why in (reply.result.reason or "")
    assert shared.nobody_connected()


@pytest.mark.parametrize("prepare", CASES)
async def test_trio_client_refuses(shared: Shared, prepare: Any, monkeypatch: Any) -> None:
    why = _prepare(shared, prepare, monkeypatch)
    async with open_client(name="test", retries=0) as client:
        with trio.fail_after(GUARD), pytest.raises(UnsafeSocket) as caught:
            await client.connect()
    _refused(str(caught.value), shared, why)


@pytest.mark.parametrize("prepare", CASES)
async def test_asyncio_client_refuses(shared: Shared, prepare: Any, monkeypatch: Any) -> None:
    why = _prepare(shared, prepare, monkeypatch)

    async def main() -> str:
        async with aio.AsyncClient(name="test", retries=0) as client:
            try:
                await asyncio.wait_for(client.connect(), GUARD)
            except UnsafeSocket as exc:
                return str(exc)
        return "connected"

    _refused(await trio.to_thread.run_sync(asyncio.run, main()), shared, why)


def _as_uid(uid: int, program: str) -> str:
    return f"import os, sys; os.getuid = lambda: {uid}\n{program}"


@pytest.mark.parametrize("prepare", CASES)
def test_hookctl_refuses(shared: Shared, prepare: Any, monkeypatch: Any) -> None:
    why = _prepare(shared, prepare, monkeypatch)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}
    program = _as_uid(shared.uid, "from hookd.cli.hookctl import main; sys.exit(main(['status']))")
    proc = subprocess.run(
        [sys.executable, "-c", program],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD,
    )
    assert proc.returncode == 3, proc.stderr
    _refused(proc.stderr, shared, why)


def _relay_env(shared: Shared) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "API_KEY": "secret", **shared.env}


def _relay_refused(
    proc: subprocess.CompletedProcess[bytes], closed: bool, shared: Shared, why: str
) -> None:
    said = (proc.stderr if closed else proc.stdout).decode()
    assert proc.returncode == (2 if closed else 0), said
    assert "hookd-relay refused to connect to " in said
    _refused(said, shared, why)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
@pytest.mark.parametrize("prepare", CASES)
def test_python_relay_refuses(shared: Shared, prepare: Any, closed: bool, monkeypatch: Any) -> None:
    why = _prepare(shared, prepare, monkeypatch)
    program = _as_uid(
        shared.uid, f"sys.path.append({RELAY_DIR!r}); import relay; sys.exit(relay.main())"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            program,
            "PreToolUse",
            *(["--fail-closed"] if closed else []),
        ],
        input=b'{"tool_input": {"command": "secret"}}',
        env=_relay_env(shared),
        capture_output=True,
        check=False,
        timeout=GUARD,
    )
    _relay_refused(proc, closed, shared, why)


@pytest.fixture
def relay_as_caller(compiled_relay: Path, shared: Shared) -> Iterator[Path]:
    """The compiled relay where the caller's uid can run it (it runs as that uid for real:
    a C program cannot be handed a fake ``getuid``)."""
    where = Path(tempfile.mkdtemp(prefix="hookd-relay-c-"))
    where.chmod(0o755)
    shutil.copy(compiled_relay, where / "hookd-relay-c")
    yield where / "hookd-relay-c"
    shutil.rmtree(where)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
@pytest.mark.parametrize("prepare", CASES)
def test_compiled_relay_refuses(
    shared: Shared, prepare: Any, closed: bool, relay_as_caller: Path, monkeypatch: Any
) -> None:
    why = _prepare(shared, prepare, monkeypatch)
    proc = subprocess.run(
        [str(relay_as_caller), "PreToolUse", *(["--fail-closed"] if closed else [])],
        input=b'{"tool_input": {"command": "secret"}}',
        env=_relay_env(shared),
        capture_output=True,
        check=False,
        timeout=GUARD,
        user=shared.uid,
    )
    _relay_refused(proc, closed, shared, why)


# --- the control: the same places, the caller's own files, are used -------------------------


def _own_private_dir(shared: Shared) -> str:
    (shared.root / "hookd").mkdir(mode=0o700)
    os.chown(shared.root / "hookd", shared.uid, -1)
    shared.listen(shared.root / "hookd" / "hookd.sock", shared.uid)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return ""


def _own_socket_in_sticky_dir(shared: Shared) -> str:
    shared.listen(shared.root / "hookd.sock", shared.uid)
    shared.env = {"HOOKD_SOCKET": str(shared.root / "hookd.sock")}
    return ""


def _own_symlink_to_own_dir(shared: Shared) -> str:
    target = shared.root / "real"
    target.mkdir(mode=0o700)
    os.chown(target, shared.uid, -1)
    shared.listen(target / "hookd.sock", shared.uid)
    (shared.root / "hookd").symlink_to(target)
    os.lchown(shared.root / "hookd", shared.uid, -1)
    shared.env = {"XDG_RUNTIME_DIR": str(shared.root)}
    return ""


@pytest.mark.parametrize(
    "prepare", [_own_private_dir, _own_socket_in_sticky_dir, _own_symlink_to_own_dir]
)
def test_the_callers_own_socket_is_used(
    shared: Shared, prepare: Any, relay_as_caller: Path, monkeypatch: Any
) -> None:
    """Not over-strict: a sticky shared directory is fine for the caller's own entries."""
    _prepare(shared, prepare, monkeypatch)
    with pytest.raises(DaemonUnavailable) as caught:  # the listener never greets
        Client(name="test", retries=0, timeout=0.5).connect()
    assert not isinstance(caught.value, UnsafeSocket)
    assert not shared.nobody_connected()
    proc = subprocess.run(
        [str(relay_as_caller), "PreToolUse", "--connect-timeout", "0.5"],
        input=b"{}",
        env=_relay_env(shared),
        capture_output=True,
        check=False,
        timeout=GUARD,
        user=shared.uid,
    )
    assert b"no welcome within 0.5 s" in proc.stdout, proc.stdout
    assert not shared.nobody_connected()

"""The ``/tmp/hookd-<uid>`` fallback socket cannot be squatted (issue 14, item 2).

With neither ``$HOOKD_SOCKET`` nor ``$XDG_RUNTIME_DIR`` set, every party uses
``/tmp/hookd-<uid>/hookd.sock``, in a directory anyone can create first.  A
"squatter" here is a real listening socket in such a directory; each front
door must refuse to connect (nothing reaches the squatter's backlog) with a
message that says why, and the daemon must refuse to serve from it.

The caller's identity is a fresh uid that nobody uses (``os.getuid``
answers it, in-process or in the child), so the fallback directory is one no
other test or daemon on the machine touches; "another user's directory" is
then simply one this process created.  Cases that need the directory to be
owned by that uid (so that only its mode or its socket is wrong) chown it,
which needs root.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from hookd_client import relay
from hookd_client.client import Client, UnsafeSocket
from hookd_client.trio_client import open_client

ROOT = Path(__file__).resolve().parents[2]
RELAY_DIR = str(Path(relay.__file__).resolve().parent)
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")


class Squat:
    """A fake uid's fallback directory, prepared by someone else, with a listener in it."""

    def __init__(self, uid: int) -> None:
        self.uid = uid
        self.dir = Path(f"/tmp/hookd-{uid}")
        self.socket = self.dir / "hookd.sock"
        self.listener: socket.socket | None = None

    def listen(self, at: Path | None = None) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(at or self.socket))
        sock.listen(8)
        sock.setblocking(False)
        self.listener = sock

    def nobody_connected(self) -> bool:
        """True when no client reached the squatter (its backlog is empty)."""
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return True
        conn.close()
        return False


def _unused_uid() -> int:
    uid = 61000 + os.getpid() % 3000
    while os.path.lexists(f"/tmp/hookd-{uid}"):
        uid += 1
    return uid


@pytest.fixture
def squat(monkeypatch: pytest.MonkeyPatch) -> Iterator[Squat]:
    monkeypatch.delenv("HOOKD_SOCKET", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    squat = Squat(_unused_uid())
    monkeypatch.setattr(os, "getuid", lambda: squat.uid)
    yield squat
    if squat.listener is not None:
        squat.listener.close()
    if squat.dir.is_symlink():
        squat.dir.unlink()
    shutil.rmtree(squat.dir, ignore_errors=True)
    shutil.rmtree(f"{squat.dir}-target", ignore_errors=True)


def _other_users_dir(squat: Squat) -> str:
    squat.dir.mkdir(mode=0o755)
    squat.listen()
    if os.geteuid() != 0:  # made by this process's real uid: another user's
        return f"belongs to uid {os.geteuid()}, not to you (uid {squat.uid})"
    attacker = squat.uid + 1  # root's own files are trusted: the squatter is another user
    os.chown(squat.socket, attacker, -1)
    os.chown(squat.dir, attacker, -1)
    return f"{squat.dir} belongs to uid {attacker}, not to you (uid {squat.uid})"


def _world_writable_dir(squat: Squat) -> str:
    squat.dir.mkdir()
    squat.dir.chmod(0o777)
    squat.listen()
    os.chown(squat.dir, squat.uid, -1)
    os.chown(squat.socket, squat.uid, -1)
    return "is writable by other users (mode 0777) and not sticky"


def _symlinked_dir(squat: Squat) -> str:
    target = Path(f"{squat.dir}-target")
    target.mkdir(mode=0o700)
    squat.listen(target / "hookd.sock")
    os.chown(target, squat.uid, -1)
    squat.dir.symlink_to(target)
    os.lchown(squat.dir, squat.uid + 1, -1)  # planted by another user
    return f"{squat.dir} belongs to uid {squat.uid + 1}, not to you (uid {squat.uid})"


def _other_users_socket(squat: Squat) -> str:
    squat.dir.mkdir(mode=0o700)
    squat.listen()
    os.chown(squat.dir, squat.uid, -1)
    return f"hookd.sock belongs to uid {os.geteuid()}"


CASES = [
    pytest.param(_other_users_dir, id="dir-of-another-user"),
    pytest.param(_world_writable_dir, id="world-writable-dir", marks=needs_root),
    pytest.param(_symlinked_dir, id="symlinked-dir", marks=needs_root),
    pytest.param(_other_users_socket, id="socket-of-another-user", marks=needs_root),
]


def _as_uid(uid: int, program: str) -> str:
    """A ``-c`` program that runs ``program`` as if the caller's uid were ``uid``."""
    return f"import os, sys; os.getuid = lambda: {uid}\n{program}"


@pytest.mark.parametrize("prepare", CASES)
def test_blocking_client_refuses_a_squatted_fallback(squat: Squat, prepare: object) -> None:
    why = prepare(squat)  # type: ignore[operator]
    client = Client(name="test", retries=0, timeout=30.0)  # today's client would hang here
    assert client.path == squat.socket
    with pytest.raises(UnsafeSocket) as caught:
        client.connect()
    assert why in str(caught.value)
    assert str(caught.value).startswith(f"refusing to connect to {squat.socket}: ")
    assert squat.nobody_connected()


@pytest.mark.parametrize("prepare", CASES)
async def test_trio_client_refuses_a_squatted_fallback(squat: Squat, prepare: object) -> None:
    why = prepare(squat)  # type: ignore[operator]
    async with open_client(name="test", retries=0) as client:
        # A guard, not a speed claim: today's client waits for the squatter's welcome forever.
        with trio.fail_after(30), pytest.raises(UnsafeSocket, match="refusing") as caught:
            await client.connect()
    assert why in str(caught.value)
    assert squat.nobody_connected()


@pytest.mark.parametrize("prepare", CASES)
def test_hookctl_refuses_a_squatted_fallback(squat: Squat, prepare: object) -> None:
    why = prepare(squat)  # type: ignore[operator]
    env = {k: v for k, v in os.environ.items() if k not in ("HOOKD_SOCKET", "XDG_RUNTIME_DIR")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "client")])
    program = _as_uid(squat.uid, "from hookd.cli.hookctl import main; sys.exit(main(['status']))")
    proc = subprocess.run(
        [sys.executable, "-c", program],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,  # a guard: today's hookctl waits for the squatter's welcome forever
    )
    assert proc.returncode == 3, proc.stderr
    assert f"hookctl: refusing to connect to {squat.socket}: " in proc.stderr
    assert why in proc.stderr
    assert squat.nobody_connected()


@pytest.mark.parametrize("fail_closed", [False, True])
@pytest.mark.parametrize("prepare", CASES)
def test_relay_refuses_a_squatted_fallback(
    squat: Squat, prepare: object, fail_closed: bool
) -> None:
    """Run as installed (``-I -S``, imported from its directory), fail-open and fail-closed."""
    why = prepare(squat)  # type: ignore[operator]
    program = _as_uid(
        squat.uid, f"sys.path.append({RELAY_DIR!r}); import relay; sys.exit(relay.main())"
    )
    args = ["PreToolUse", "--fail-closed"] if fail_closed else ["PreToolUse"]
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program, *args],
        input=b'{"hook_event_name": "PreToolUse"}',
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        check=False,
        timeout=60,  # a guard: today's relay waits for the squatter's reply forever
    )
    said = (proc.stderr if fail_closed else proc.stdout).decode()
    assert proc.returncode == (2 if fail_closed else 0)
    assert f"hookd-relay refused to connect to {squat.socket}: " in said
    assert why in said
    assert squat.nobody_connected()


@pytest.mark.parametrize("fail_closed", [False, True])
@pytest.mark.parametrize("prepare", CASES)
@pytest.mark.skipif(os.geteuid() != 0, reason="running the relay as another uid needs root")
def test_compiled_relay_refuses_a_squatted_fallback(
    squat: Squat, prepare: object, fail_closed: bool, compiled_relay: Path, tmp_path: Path
) -> None:
    """relay/hookd-relay.c makes the same checks with the same words.  A C program
    cannot be handed a fake ``getuid``, so it runs as the fake uid for real."""
    why = prepare(squat)  # type: ignore[operator]
    shared = Path(tempfile.mkdtemp(prefix="hookd-relay-c-"))  # the uid must reach the binary
    try:
        shared.chmod(0o755)
        binary = shared / "hookd-relay-c"
        shutil.copy(compiled_relay, binary)
        args = ["PreToolUse", "--fail-closed"] if fail_closed else ["PreToolUse"]
        proc = subprocess.run(
            [str(binary), *args],
            input=b'{"hook_event_name": "PreToolUse"}',
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            capture_output=True,
            check=False,
            timeout=60,
            user=squat.uid,
        )
    finally:
        shutil.rmtree(shared)
    said = (proc.stderr if fail_closed else proc.stdout).decode()
    assert proc.returncode == (2 if fail_closed else 0), said
    assert f"hookd-relay refused to connect to {squat.socket}: " in said
    assert why in said
    assert squat.nobody_connected()


async def _serve(
    squat: Squat, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    from hookd.daemon.server import Daemon
    from hookd.daemon.settings import DaemonSettings

    state = Path(f"{squat.dir}-state")
    try:
        daemon = Daemon(DaemonSettings(state_dir=str(state), watch=False, policy_files=[]))
        assert daemon.socket_path == squat.socket
        await daemon.run(task_status=task_status)
    finally:
        shutil.rmtree(state, ignore_errors=True)


@pytest.mark.parametrize(
    "prepare",
    [
        pytest.param(_other_users_dir, id="dir-of-another-user"),
        pytest.param(_symlinked_dir, id="symlinked-dir", marks=needs_root),
        pytest.param(_other_users_socket, id="socket-of-another-user", marks=needs_root),
    ],
)
async def test_daemon_refuses_a_fallback_dir_it_does_not_own(squat: Squat, prepare: object) -> None:
    from hookd.daemon.server import UnsafeSocketPath

    prepare(squat)  # type: ignore[operator]
    with pytest.raises(UnsafeSocketPath, match="refusing to use"):
        await _serve(squat)
    assert squat.nobody_connected()  # not even probed
    assert squat.dir.is_symlink() or squat.socket.is_socket()  # nothing was removed


@needs_root
async def test_daemon_makes_its_own_fallback_dir_private(squat: Squat) -> None:
    """The legitimate case still works: a lax directory of the daemon's own uid is tightened."""
    squat.dir.mkdir()
    squat.dir.chmod(0o777)
    os.chown(squat.dir, squat.uid, -1)
    async with trio.open_nursery() as nursery:
        await nursery.start(_serve, squat)
        assert squat.dir.stat().st_mode & 0o777 == 0o700
        assert squat.socket.is_socket()
        nursery.cancel_scope.cancel()

"""The daemon under real use: many clients, reloads while events flow, bad edits, bad frames."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from hookd.daemon.server import AlreadyRunning, Daemon
from hookd.daemon.settings import DaemonSettings
from hookd_client import protocol
from hookd_client.client import Client, DaemonError
from hookd_client.trio_client import open_client
from support.daemon import configure, configure_text
from support.events import fixture_event as event

DATA = Path(__file__).resolve().parent.parent / "data"
FIXTURES = DATA / "cc-fixtures"
CONFIGS = DATA / "daemon"


def write_hooks(path: Path, config_name: str) -> None:
    path.write_text((CONFIGS / config_name).read_text())


def fire_sync(
    sock: Path, name: str, payload: dict[str, Any], env: dict[str, str] | None = None
) -> protocol.FireReply:
    with Client(sock) as client:
        return client.fire(name, payload, env=env)


async def fire(
    sock: Path, name: str, payload: dict[str, Any], env: dict[str, str] | None = None
) -> protocol.FireReply:
    return await trio.to_thread.run_sync(fire_sync, sock, name, payload, env)


async def status(sock: Path) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        with Client(sock) as client:
            return client.status()

    return await trio.to_thread.run_sync(run)


async def test_fifty_concurrent_sessions_show_in_status(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure_text(handle, (CONFIGS / "context.json").read_text())
    limiter = trio.CapacityLimiter(50)
    replies: dict[str, protocol.FireReply] = {}

    async def one(i: int) -> None:
        payload = event(session_id=f"session-{i:02d}", cwd=str(handle.root / f"p{i % 5}"))
        replies[f"session-{i:02d}"] = await trio.to_thread.run_sync(
            fire_sync, handle.socket, "PreToolUse", payload, limiter=limiter
        )

    async with trio.open_nursery() as nursery:
        for i in range(50):
            nursery.start_soon(one, i)
    assert len(replies) == 50
    for reply in replies.values():
        assert reply.result.additional_context == ["ctx from user hooks"]
    st = await status(handle.socket)
    sessions = {s["session_id"]: s for s in st["sessions"]}
    assert set(sessions) == set(replies)
    for sid, s in sessions.items():
        assert s["events"] == 1
        assert s["last_event"] == "PreToolUse"
        assert s["outcomes"] == {"success": 1}
        assert s["agent_pid"] == os.getpid()  # every thread's peer is this process
        assert s["project"].endswith(f"p{int(sid[-2:]) % 5}")
    assert sorted(st["projects"]) == sorted({s["project"] for s in sessions.values()})


async def test_reload_while_events_flow(daemon_factory: Any) -> None:
    """No event fails during reloads; after the save, the next event sees the new hooks."""
    handle = await daemon_factory()
    configure_text(handle, (CONFIGS / "context.json").read_text())
    failures: list[str] = []
    seen: list[list[str]] = []
    stop = trio.Event()

    async def flow(i: int) -> None:
        while not stop.is_set():
            try:
                reply = await fire(handle.socket, "PreToolUse", event(session_id=f"flow-{i}"))
            except Exception as exc:  # counted, and the assertion below fails
                failures.append(repr(exc))
                continue
            seen.append(reply.result.additional_context)

    async with trio.open_nursery() as nursery:
        for i in range(4):
            nursery.start_soon(flow, i)
        for name in ("context2.json", "context.json", "context2.json"):
            await trio.sleep(0.1)
            tmp = handle.user_config.with_suffix(".tmp")
            tmp.write_text((CONFIGS / name).read_text())
            os.replace(tmp, handle.user_config)  # an editor's atomic-rename save
        # The watcher picks the last save up; wait for it, then the next event must see it.
        with trio.fail_after(10):
            while True:
                reply = await fire(handle.socket, "PreToolUse", event(session_id="after"))
                if reply.result.additional_context == ["ctx two"]:
                    break
                await trio.sleep(0.02)
        stop.set()
    assert failures == []
    assert seen, "events flowed during the reloads"
    assert all(ctx in (["ctx from user hooks"], ["ctx two"]) for ctx in seen)


async def test_broken_edit_keeps_last_good_config_and_is_reported(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    configure_text(handle, (CONFIGS / "context.json").read_text())
    generation = handle.daemon.registry.generation
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command"}]}]})
    reply = await fire(handle.socket, "PreToolUse", event())
    assert reply.result.additional_context == ["ctx from user hooks"]
    assert handle.daemon.registry.generation == generation
    st = await status(handle.socket)
    [source] = [s for s in st["sources"] if s["path"] == str(handle.user_config)]
    assert source["stale"] is True
    assert any(
        "hooks.json" in e and "$.hooks.PreToolUse[0].hooks[0]" in e for e in source["errors"]
    )
    assert st["config_errors"]
    # Syntax errors too: the good version stays, the error names the line.
    configure_text(handle, '{\n  "hooks": {\n    oops\n}')
    st = await status(handle.socket)
    [source] = [s for s in st["sources"] if s["path"] == str(handle.user_config)]
    assert any(":3" in e for e in source["errors"]), source["errors"]
    reply = await fire(handle.socket, "PreToolUse", event())
    assert reply.result.additional_context == ["ctx from user hooks"]
    # Fixing the file makes a new generation with the fix.
    assert configure_text(handle, (CONFIGS / "context2.json").read_text())
    reply = await fire(handle.socket, "PreToolUse", event())
    assert reply.result.additional_context == ["ctx two"]


async def test_project_sources_load_on_first_use_and_watch(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = handle.project("alpha")
    write_hooks(project / ".claude" / "hooks.json", "context2.json")
    reply = await fire(handle.socket, "PreToolUse", event(cwd=str(project)))
    assert reply.result.additional_context == ["ctx two"]
    # A local file created later is seen by the watcher (new file in a watched dir).
    write_hooks(project / ".claude" / "hooks.local.json", "context.json")
    with trio.fail_after(10):
        while True:
            reply = await fire(handle.socket, "PreToolUse", event(cwd=str(project)))
            if len(reply.result.additional_context) == 2:
                break
            await trio.sleep(0.02)
    # Project scope comes before local scope in merge order.
    assert reply.result.additional_context == ["ctx two", "ctx from user hooks"]


async def test_second_daemon_on_same_socket_refuses(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    second = Daemon(DaemonSettings(socket=str(handle.socket), watch=False))
    with pytest.raises(AlreadyRunning, match="already serving"):
        await second.run()
    # The first one still serves.
    assert (await status(handle.socket))["pid"] == os.getpid()


async def test_stale_socket_is_replaced(tmp_path: Path, daemon_factory: Any) -> None:
    handle = await daemon_factory()
    stale = handle.root / "stale.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(stale))
    s.close()  # a socket file nobody listens on, as after a crash
    other = await daemon_factory(socket=str(stale))
    assert (await status(other.socket))["socket"] == str(stale)


async def test_socket_and_directory_are_private(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    assert handle.socket.stat().st_mode & 0o777 == 0o600
    assert handle.socket.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to connect as another user")
async def test_other_users_are_refused(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    # Open the file modes so only the peer-credential check stands in the way.
    handle.socket.parent.chmod(0o755)
    handle.socket.chmod(0o666)
    script = (
        "import os, socket, struct, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
        "data = b''\n"
        "while True:\n"
        "    chunk = s.recv(4096)\n"
        "    if not chunk: break\n"
        "    data += chunk\n"
        "sys.stdout.buffer.write(data)\n"
    )
    proc = await trio.run_process(
        [sys.executable, "-I", "-S", "-c", script, str(handle.socket)], capture_stdout=True
    )
    body = proc.stdout[4:]
    message = protocol.decode_server(body)
    assert isinstance(message, protocol.Error) and message.code == "refused"
    assert handle.daemon.activity.counters["refused"] == 1


def _raw(sock: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(sock))
    s.sendall(protocol.encode(protocol.Hello(client="raw")))
    _read_frame(s)
    return s


def _read_frame(s: socket.socket) -> protocol.ServerMessage:
    header = b""
    while len(header) < 4:
        chunk = s.recv(4 - len(header))
        if not chunk:
            raise ConnectionError("closed")
        header += chunk
    (length,) = struct.unpack(">I", header)
    body = b""
    while len(body) < length:
        body += s.recv(length - len(body))
    return protocol.decode_server(body)


async def test_bad_frames_get_errors_and_others_keep_being_served(daemon_factory: Any) -> None:
    handle = await daemon_factory(max_frame=4096)

    def hostile() -> list[protocol.ServerMessage]:
        answers = []
        s = _raw(handle.socket)
        # Not MessagePack at all.
        s.sendall(protocol.frame(b"\xc1\xc1garbage"))
        answers.append(_read_frame(s))
        # Valid MessagePack, unknown kind, with an id the error can name.
        s.sendall(protocol.frame(msgspec.msgpack.encode({"kind": "explode", "id": 7})))
        answers.append(_read_frame(s))
        # A known kind with a field of the wrong type.
        s.sendall(protocol.frame(msgspec.msgpack.encode({"kind": "status", "id": "x"})))
        answers.append(_read_frame(s))
        # Event input that is not a valid PreToolUse.
        bad = {"kind": "fire", "id": 9, "event": "PreToolUse", "input": {"session_id": 1}}
        s.sendall(protocol.frame(msgspec.msgpack.encode(bad)))
        answers.append(_read_frame(s))
        # An oversized frame loses framing: error, then the connection closes.
        s.sendall(struct.pack(">I", 10_000_000))
        answers.append(_read_frame(s))
        assert s.recv(1) == b""
        s.close()
        return answers

    answers = await trio.to_thread.run_sync(hostile)
    codes = [a.code for a in answers if isinstance(a, protocol.Error)]
    assert codes == ["bad_request", "unknown_kind", "bad_request", "bad_input", "bad_frame"]
    assert isinstance(answers[1], protocol.Error) and answers[1].id == 7
    assert isinstance(answers[3], protocol.Error) and "session_id" in answers[3].message
    assert isinstance(answers[4], protocol.Error) and "exceeds the maximum" in answers[4].message
    reply = await fire(handle.socket, "PreToolUse", event())
    assert reply.result.event == "PreToolUse"


async def test_requests_before_hello_and_wrong_version_are_refused(daemon_factory: Any) -> None:
    handle = await daemon_factory()

    def run() -> tuple[protocol.ServerMessage, protocol.ServerMessage]:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(handle.socket))
        s.sendall(protocol.encode(protocol.Status(id=1)))
        first = _read_frame(s)
        s.close()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(str(handle.socket))
        s.sendall(protocol.encode(protocol.Hello(version=99)))
        second = _read_frame(s)
        s.close()
        return first, second

    first, second = await trio.to_thread.run_sync(run)
    assert isinstance(first, protocol.Error) and "hello" in first.message
    assert isinstance(second, protocol.Error) and second.code == "version"


async def test_a_client_that_never_reads_does_not_stall_others(daemon_factory: Any) -> None:
    handle = await daemon_factory(send_queue=8, send_timeout=1.0)

    def flood() -> None:
        s = _raw(handle.socket)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        # Many big replies that this client never reads.
        for i in range(2000):
            try:
                s.sendall(protocol.encode(protocol.Status(id=i + 1)))
            except OSError:
                break
        s.close()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, flood)
        for _ in range(20):
            reply = await fire(handle.socket, "PreToolUse", event(session_id="polite"))
            assert reply.result.event == "PreToolUse"


async def test_many_requests_in_flight_on_one_connection(daemon_factory: Any) -> None:
    """Replies carry the request id and may come back out of order."""
    handle = await daemon_factory()
    configure_text(handle, (CONFIGS / "sleepy.json").read_text())

    def run() -> dict[int, Any]:
        s = _raw(handle.socket)
        s.sendall(
            b"".join(
                protocol.encode(
                    protocol.Fire(id=i, event="PreToolUse", input=event(session_id=f"s{i}"))
                )
                for i in range(1, 11)
            )
            + protocol.encode(protocol.Status(id=99))
        )
        replies: dict[int, Any] = {}
        order: list[int] = []
        while len(replies) < 11:
            message = _read_frame(s)
            rid = getattr(message, "id", None)
            assert isinstance(rid, int)
            replies[rid] = message
            order.append(rid)
        s.close()
        replies[0] = order
        return replies

    replies = await trio.to_thread.run_sync(run)
    order = replies.pop(0)
    assert order[0] == 99  # the status did not wait behind the sleeping hooks
    for i in range(1, 11):
        assert isinstance(replies[i], protocol.FireReply)
        assert replies[i].result.hooks[0].stdout.strip() == f"s{i}"


async def test_sigterm_lets_in_flight_events_finish(tmp_path: Path) -> None:
    """SIGTERM: stop accepting, finish what is running, exit 0, remove the socket."""
    root = Path(__import__("tempfile").mkdtemp(prefix="hkt", dir="/tmp"))
    hooks = root / "hooks.json"
    write_hooks(hooks, "marked_sleep.json")
    sock = root / "d.sock"
    marker = root / "hook-started"
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(root / "state"),
        "HOME": str(root),
    }
    daemon = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "hookd",
            "serve",
            "--socket",
            str(sock),
            "--user-file",
            str(hooks),
            "--policy-file",
            str(root / "none.json"),
            "--log-format",
            "json",
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(30):
            while not sock.exists():
                await trio.sleep(0.02)
        async with trio.open_nursery() as nursery:
            result: list[protocol.FireReply] = []

            async def slow() -> None:
                # The hook sees the agent's environment (this client's), not the daemon's.
                agent_env = {**os.environ, "HOOKD_TEST_MARKER": str(marker)}
                result.append(
                    await fire(sock, "PreToolUse", event(session_id="slow"), env=agent_env)
                )

            nursery.start_soon(slow)
            with trio.fail_after(30):
                while not marker.exists():  # the hook (touch; sleep 0.5) is running now
                    await trio.sleep(0.01)
            daemon.send_signal(15)
        assert result[0].result.hooks[0].outcome == "success"
        with trio.fail_after(15):
            assert await daemon.wait() == 0
        assert not sock.exists()
    finally:
        if daemon.returncode is None:
            daemon.kill()
        __import__("shutil").rmtree(root, ignore_errors=True)


async def test_hookctl_reports_a_missing_daemon(tmp_path: Path) -> None:
    proc = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(tmp_path / "nope"), "status"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert proc.returncode == 3
    assert b"hookd is not running" in proc.stderr and b"hookd serve" in proc.stderr


async def test_unknown_request_error_is_reported_by_client(daemon_factory: Any) -> None:
    handle = await daemon_factory()

    def run() -> None:
        with Client(handle.socket) as client:
            client.call(protocol.Validate(id=client.next_id(), files=[str(handle.user_config)]))
            with pytest.raises(DaemonError, match="bad_input"):
                client.fire("PreToolUse", {"session_id": "x", "hook_event_name": "PreToolUse"})

    await trio.to_thread.run_sync(run)


async def test_status_does_not_keep_an_idle_project_loaded(daemon_factory: Any) -> None:
    handle = await daemon_factory(project_idle_seconds=0.2)
    project = handle.project("idle")
    await fire(handle.socket, "PreToolUse", event(cwd=str(project)))
    assert str(project) in handle.daemon.registry.projects()
    await trio.sleep(0.3)
    st = await status(handle.socket)  # reads every project's config for the trust report
    assert str(project) in st["projects"]
    dropped = handle.daemon.registry.drop_idle_projects(in_use=())
    assert dropped == [str(project)]


async def test_once_survives_a_reload_that_moves_the_hook(daemon_factory: Any) -> None:
    """`once` remembers the hook itself, not its position in the file."""
    handle = await daemon_factory()
    once = {"type": "command", "command": "echo once", "once": True}
    other = {"type": "command", "command": "echo other"}

    def pre_tool_use(hooks: list[dict[str, Any]]) -> None:
        configure(handle, {"PreToolUse": [{"hooks": hooks}]})

    pre_tool_use([once])
    first = await fire(handle.socket, "PreToolUse", event(session_id="once-s"))
    assert [r.stdout.strip() for r in first.result.hooks] == ["once"]
    pre_tool_use([other, once])  # inserted above: the once hook moved to index 1
    second = await fire(handle.socket, "PreToolUse", event(session_id="once-s"))
    assert [r.stdout.strip() for r in second.result.hooks] == ["other"]


async def test_a_bug_in_the_inline_path_answers_internal_and_keeps_serving(
    daemon_factory: Any,
) -> None:
    """Fault injection: an exception while preparing an event must not escape the reader."""
    handle = await daemon_factory()
    real_prepare = handle.daemon.pipeline.prepare
    calls = 0

    def flaky_prepare(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("injected bug")
        return real_prepare(*args, **kwargs)

    handle.daemon.pipeline.prepare = flaky_prepare

    def run() -> tuple[str, protocol.FireReply]:
        with Client(handle.socket) as client:
            try:
                client.fire("PreToolUse", event())
            except DaemonError as exc:
                code = exc.code
            else:
                code = "no error"
            return code, client.fire("PreToolUse", event())  # same connection, still served

    code, reply = await trio.to_thread.run_sync(run)
    assert code == "internal"
    assert reply.result.event == "PreToolUse"


async def test_a_stopping_daemon_refuses_new_events_and_finishes_running_ones(
    daemon_factory: Any,
) -> None:
    """``shutting_down`` is decided in one place (the event route): while the grace runs, a new
    event on a live connection is refused, and the event already running still gets its answer."""
    handle = await daemon_factory(shutdown_grace=30.0)
    waits = 'touch "$HOOKD_T_STARTED"; while [ ! -e "$HOOKD_T_RELEASE" ]; do sleep 0.01; done'
    hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": waits}]}]}
    configure(handle, hooks)
    started, release = handle.root / "started", handle.root / "release"
    env = {**os.environ, "HOOKD_T_STARTED": str(started), "HOOKD_T_RELEASE": str(release)}
    replies: list[protocol.FireReply] = []
    async with (
        open_client(handle.socket, connect=True) as running,
        open_client(handle.socket, connect=True) as other,
        trio.open_nursery() as nursery,
    ):

        async def slow() -> None:
            replies.append(await running.fire("PreToolUse", event(session_id="stopping"), env=env))

        nursery.start_soon(slow)
        with trio.fail_after(30):
            while not started.exists():  # the hook is running now
                await trio.sleep(0.01)
            handle.daemon.lifecycle.request_stop()
            while not handle.daemon.lifecycle.stopping:
                await trio.sleep(0.01)
        with pytest.raises(DaemonError) as refused:
            await other.fire("PostToolUse", event("PostToolUse-Bash", session_id="late"))
        assert refused.value.code == "shutting_down"
        release.touch()
    (reply,) = replies
    assert [run.outcome for run in reply.result.hooks] == ["success"]

"""hookd-relay run as Claude Code runs it, real daemon: every case against both relays.

``python`` is ``python3 -I -S relay.py EVENT``; ``compiled`` is relay/hookd-relay.c
built for the session (the ``compiled_relay`` fixture).  The two must be
indistinguishable to the agent: same output, exit codes and failure messages.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from hookd_client import protocol, relay, sockpath
from support.daemon import configure, configure_text

DATA = Path(__file__).resolve().parents[1] / "data"
RELAY = Path(relay.__file__).resolve()


def _input(name: str) -> bytes:
    return (DATA / "cc-fixtures" / f"{name}.json").read_bytes()


@pytest.fixture(params=["python", "compiled"])
def relay_cmd(request: pytest.FixtureRequest) -> list[str]:
    """The command that starts one relay, before its arguments."""
    if request.param == "python":
        return [sys.executable, "-I", "-S", str(RELAY)]
    return [str(request.getfixturevalue("compiled_relay"))]


async def _run_relay(
    cmd: list[str], *args: str, stdin: bytes, env: dict[Any, Any] | None = None
) -> subprocess.CompletedProcess[bytes]:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})}
    return await trio.run_process(
        [*cmd, *args],
        stdin=stdin,
        env=base,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )


async def test_relay_prints_what_the_hooks_decided(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    handle = await daemon_factory()
    configure_text(handle, (DATA / "bridge" / "endpoint-hooks.json").read_text())
    proc = await _run_relay(
        relay_cmd, "PreToolUse", "--socket", str(handle.socket), stdin=_input("PreToolUse-Bash")
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "BLOCKED-BY-HOOK" in answer["hookSpecificOutput"]["permissionDecisionReason"]


async def test_relay_finds_the_socket_through_hookd_socket(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    handle = await daemon_factory()
    configure_text(handle, (DATA / "bridge" / "endpoint-hooks.json").read_text())
    proc = await _run_relay(
        relay_cmd,
        "UserPromptSubmit",
        stdin=_input("UserPromptSubmit"),
        env={"HOOKD_SOCKET": str(handle.socket), "CLAUDE_PID": str(os.getpid())},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"PLAIN-UPS-CONTEXT\n"  # plain context stays plain through a command


async def test_daemon_down_fails_open_with_a_visible_message(
    tmp_path: Path, relay_cmd: list[str]
) -> None:
    missing = tmp_path / "nobody.sock"
    proc = await _run_relay(
        relay_cmd, "PreToolUse", "--socket", str(missing), stdin=_input("PreToolUse-Bash")
    )
    assert proc.returncode == 0
    message = json.loads(proc.stdout)["systemMessage"]
    assert message.startswith("hookd is not running:")
    assert str(missing) in message


async def test_daemon_down_with_fail_closed_blocks(tmp_path: Path, relay_cmd: list[str]) -> None:
    proc = await _run_relay(
        relay_cmd,
        "PreToolUse",
        "--socket",
        str(tmp_path / "nobody.sock"),
        "--fail-closed",
        stdin=_input("PreToolUse-Bash"),
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"hookd is not running" in proc.stderr


async def test_daemon_error_reply_fails_open_naming_the_error(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    handle = await daemon_factory()
    proc = await _run_relay(
        relay_cmd, "PreToolUse", "--socket", str(handle.socket), stdin=b"[1, 2]"
    )
    assert proc.returncode == 0
    message = json.loads(proc.stdout)["systemMessage"]
    assert "bad_input" in message


def test_socket_path_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOOKD_SOCKET", "/x/env.sock")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert relay.socket_path("/x/flag.sock") == "/x/flag.sock"
    assert relay.socket_path() == "/x/env.sock"
    monkeypatch.delenv("HOOKD_SOCKET")
    assert relay.socket_path() == f"{tmp_path}/hookd/hookd.sock"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    assert relay.socket_path() == f"/tmp/hookd-{os.getuid()}/hookd.sock"


async def test_daemon_down_fails_open_in_the_agents_own_format(
    tmp_path: Path, relay_cmd: list[str]
) -> None:
    """Codex shows a systemMessage like Claude Code; Copilot shows none (and Kiro would read
    stdout as context), so their fail-open message goes to stderr (exit 0: the call goes
    ahead, stdout empty)."""
    missing = str(tmp_path / "nobody.sock")
    codex = await _run_relay(
        relay_cmd, "--agent", "codex", "PreToolUse", "--socket", missing, stdin=b"{}"
    )
    assert codex.returncode == 0
    assert json.loads(codex.stdout)["systemMessage"].startswith("hookd is not running:")

    async def copilot(event: str, *closed: str) -> tuple[int, Any, bytes]:
        proc = await _run_relay(
            relay_cmd, "--agent", "copilot", event, *closed, "--socket", missing, stdin=b"{}"
        )
        return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr

    # Copilot shows a hook's words to the user only as exit 2's stderr, and only where
    # exit 2 blocks nothing; on preToolUse any non-zero exit denies, so the model is told.
    code, out, err = await copilot("preToolUse")
    assert (code, err) == (0, b"")
    assert out["additionalContext"].startswith("hookd is not running:")
    for event in ("userPromptSubmitted", "agentStop", "sessionStart", "PostToolUse"):
        code, out, err = await copilot(event)
        assert (code, out) == (2, None) and err.startswith(b"hookd is not running:"), event
    code, out, err = await copilot("permissionRequest")  # a non-zero exit would deny
    assert (code, out) == (0, None) and err.startswith(b"hookd is not running:")


async def test_daemon_down_fails_closed_for_cline_in_its_own_json(
    tmp_path: Path, relay_cmd: list[str]
) -> None:
    """Cline reads no exit code: exit 2 would let the tool run.  Its block is
    ``{"cancel": true}`` (which ends the task, as Cline's own cancel does); failing open
    leaves stdout empty, which Cline reads as no opinion."""
    missing = str(tmp_path / "nobody.sock")
    args = ("--agent", "cline", "PreToolUse", "--socket", missing)
    proc = await _run_relay(relay_cmd, *args, "--fail-closed", stdin=b"{}")
    assert (proc.returncode, proc.stderr) == (0, b"")
    out = json.loads(proc.stdout)
    assert out["cancel"] is True and out["errorMessage"].startswith("hookd is not running:")
    proc = await _run_relay(relay_cmd, *args, stdin=b"{}")
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert proc.stderr.startswith(b"hookd is not running:")


async def test_daemon_down_fails_closed_where_copilot_can_block(
    tmp_path: Path, relay_cmd: list[str]
) -> None:
    """Exit 2 would not block Copilot's prompt, tool result or stop: the block is JSON
    (a PreToolUse deny with its reason, which the model reads)."""
    missing = str(tmp_path / "nobody.sock")

    async def closed(event: str) -> tuple[int, Any, bytes]:
        proc = await _run_relay(
            relay_cmd,
            "--agent",
            "copilot",
            event,
            "--fail-closed",
            "--socket",
            missing,
            stdin=b"{}",
        )
        return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr

    for event in ("preToolUse", "PreToolUse"):
        code, out, _ = await closed(event)
        assert code == 0 and out["permissionDecision"] == "deny", event
        assert out["permissionDecisionReason"].startswith("hookd is not running:")
    for event in (
        "userPromptSubmitted",
        "UserPromptSubmit",
        "postToolUse",
        "agentStop",
        "Stop",
        "subagentStop",
    ):
        code, out, _ = await closed(event)
        assert code == 0 and out["decision"] == "block", event
        assert out["reason"].startswith("hookd is not running:")
    for event in ("permissionRequest", "PermissionRequest"):
        code, out, _ = await closed(event)
        assert code == 0 and out["behavior"] == "deny", event
        assert out["message"].startswith("hookd is not running:")
    code, out, err = await closed("sessionStart")  # nothing to block: the visible warning
    assert (code, out) == (2, None) and err.startswith(b"hookd is not running:")


async def test_agent_relay_runs_the_agents_event_through_its_adapter(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    """``--agent codex PreToolUse`` with Codex's real stdin: the hook (matcher ``Bash``) sees
    the canonical input, the reply is what Codex obeys, the session is Codex's."""
    handle = await daemon_factory()
    hook = {
        "type": "command",
        "command": 'cat > /dev/null; printf \'{"decision":"block","reason":"no"}\'',
    }
    handle.user_config.write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    handle.daemon.reload()
    raw = (DATA / "agents" / "codex-0.169.0" / "PreToolUse.json").read_bytes()
    proc = await _run_relay(
        relay_cmd, "--agent", "codex", "PreToolUse", "--socket", str(handle.socket), stdin=raw
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and out["permissionDecisionReason"] == "no"
    sessions = [
        s for s in handle.daemon.sessions.all() if s.session_id == json.loads(raw)["session_id"]
    ]
    assert [s.agent for s in sessions] == ["codex"]


async def test_agent_relay_refuses_an_unknown_agent_and_event_and_fails_open(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    handle = await daemon_factory()
    sock = str(handle.socket)
    raw = (DATA / "agents" / "codex-0.169.0" / "PreToolUse.json").read_bytes()
    nobody = await _run_relay(relay_cmd, "--agent", "nobody", "X", "--socket", sock, stdin=raw)
    # An agent hookd does not know may read any stdout shape: the message goes to stderr.
    assert (nobody.returncode, nobody.stdout) == (0, b"")
    assert b"unknown agent 'nobody'" in nobody.stderr
    wrong = await _run_relay(
        relay_cmd, "--agent", "codex", "BeforeTool", "--socket", sock, "--fail-closed", stdin=raw
    )
    assert wrong.returncode == 2 and b"BeforeTool" in wrong.stderr


@pytest.mark.parametrize("size", [0, 31, 32, 255, 256, 65535, 65536, 300_000])
def test_hand_encoded_relay_frame_is_what_msgspec_decodes(size: int) -> None:
    data = ("é" * (size // 2)).encode()[:size] if size else b""
    env = {"K" * 40: "v" * size, "SHORT": "x", "UNICODE": "ü→✓"}
    frame = relay._frame(
        {"kind": "relay", "id": 1, "event": "PreToolUse", "input": data, "env": env, "pid": 70000}
    )
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    decoded = protocol.decode_client(frame[4:])
    assert decoded == protocol.Relay(id=1, event="PreToolUse", input=data, env=env, pid=70000)


@pytest.mark.parametrize(
    "message",
    [
        protocol.RelayReply(id=1, stdout="o" * 70000, stderr="é", exit_code=2),
        protocol.RelayReply(id=1),
        protocol.Welcome(version=1, server="hookd 0.1", pid=4_000_000_000, max_frame=1 << 24),
        protocol.Error(code="bad_input", message="nope", id=1),
    ],
)
def test_hand_decoder_reads_what_the_daemon_sends(message: msgspec.Struct) -> None:
    body = protocol.encode(message)[4:]
    decoded, end = relay._decode(body, 0)
    assert end == len(body)
    assert decoded == msgspec.to_builtins(msgspec.msgpack.decode(body))


def test_relay_imports_nothing_heavy() -> None:
    """Start-up is the relay's whole cost: no json, msgspec, socket or typing module."""
    import subprocess

    out = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(RELAY), "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert "_socket" in imported
    assert not imported & {"json", "msgspec", "socket", "typing", "hookd_client"}


async def test_stop_loops_through_the_relay_are_capped_by_claude_code_alone(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    """Claude Code overrides the 9th consecutive Stop block itself.  hookd's own
    ``stop_block_cap`` (8) cut the loop first, with another result and turn count
    than native; through the relay (a Claude Code hook) hookd adds no cap, while a
    plain client fire — an agent with no cap of its own — still gets it."""
    handle = await daemon_factory()
    always = {"type": "command", "command": "echo AGAIN >&2; exit 2"}
    configure(handle, {"Stop": [{"hooks": [always]}]})
    for _ in range(10):
        proc = await _run_relay(
            relay_cmd, "Stop", "--socket", str(handle.socket), stdin=_input("Stop")
        )
        assert b"AGAIN" in proc.stdout + proc.stderr
        assert b"consecutive" not in proc.stdout + proc.stderr

    def fire_ten() -> list[str | None]:
        from hookd_client.client import Client

        raw = json.loads(_input("Stop"))
        raw["session_id"] = "another-session"
        with Client(handle.socket) as client:
            return [client.fire("Stop", raw).result.decision for _ in range(10)]

    decisions = await trio.to_thread.run_sync(fire_ten)
    assert decisions == ["block"] * 8 + [None, "block"]


async def test_big_input_and_the_agents_environment_reach_the_hook(
    daemon_factory: Any, relay_cmd: list[str]
) -> None:
    """A 300 KB input (bin32) and the relay's environment arrive intact; an entry that
    is not UTF-8 (no msgpack str can hold it) is left out rather than failing the event."""
    handle = await daemon_factory()
    report = (
        "python3 -c 'import json,os,sys; d=json.load(sys.stdin); "
        'print(len(d["prompt"]), os.environ.get("RELAY_VAR"), "NOT_UTF8" in os.environ)\''
    )
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": report}]}]}
    configure(handle, hooks)
    raw = json.loads(_input("UserPromptSubmit"))
    raw["prompt"] = "é→" * 60_000
    proc = await _run_relay(
        relay_cmd,
        "UserPromptSubmit",
        "--socket=" + str(handle.socket),
        stdin=json.dumps(raw, ensure_ascii=False).encode(),
        env={"RELAY_VAR": "ü→✓ " * 100, b"NOT_UTF8": b"\xff\xfe"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == f"120000 {'ü→✓ ' * 100} False\n"


async def test_both_relays_fail_with_the_same_bytes(tmp_path: Path, compiled_relay: Path) -> None:
    """The agent sees one relay whichever is installed: same message, same code."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    compiled = [str(compiled_relay)]
    quote = tmp_path / 'say "hi"\\\tthere.sock'  # JSON escaping of quote, backslash, control
    lax = tmp_path / "lax"  # ours, but anyone may replace what is in it
    lax.mkdir()
    lax.chmod(0o777)
    _hold(lax / "s.sock").close()
    group = tmp_path / "group"  # ours, but the group may replace what is in it
    group.mkdir()
    group.chmod(0o770)
    _hold(group / "s.sock").close()
    for name in (".h", "h.", "..x"):  # names that are no `..`, lax
        (tmp_path / name).mkdir()
        (tmp_path / name).chmod(0o777)
        _hold(tmp_path / name / "s.sock").close()
    dotted = tmp_path / ".h"
    for hops in (40, 41):  # a chain of links: 40 is followed, one more is a loop
        (tmp_path / f"chain{hops}-0").symlink_to(tmp_path)
        for k in range(1, hops):
            (tmp_path / f"chain{hops}-{k}").symlink_to(tmp_path / f"chain{hops}-{k - 1}")
    plain = tmp_path / "plain-file"
    plain.write_text("")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    (tmp_path / "via-link").symlink_to(tmp_path)
    cases: list[tuple[str, ...]] = [
        ("PreToolUse", "--socket", str(quote)),
        ("Stop", "--socket", str(tmp_path / "x.sock"), "--fail-closed"),
        ("--agent", "codex", "PreToolUse", "--socket", str(tmp_path / "x.sock")),
        ("--agent=gemini", "BeforeTool", "--socket", str(tmp_path / "x.sock"), "--fail-closed"),
        ("--agent", "copilot", "preToolUse", "--socket", str(quote)),
        ("--agent", "copilot", "PreToolUse", "--socket", str(quote), "--fail-closed"),
        ("--agent", "copilot", "agentStop", "--socket", str(tmp_path / "x.sock")),
        ("--agent", "copilot", "userPromptSubmitted", "--fail-closed", "--socket", str(quote)),
        ("--agent", "copilot", "sessionEnd", "--fail-closed", "--socket", str(quote)),
        ("--agent", "copilot", "permissionRequest", "--socket", str(quote)),
        ("--agent", "copilot", "PermissionRequest", "--fail-closed", "--socket", str(quote)),
        ("--agent", "kiro", "preToolUse", "--socket", str(tmp_path / "x.sock")),
        ("--agent", "cline", "PreToolUse", "--socket", str(quote), "--fail-closed"),
        ("--agent", "cline", "PreToolUse", "--socket", str(tmp_path / "x.sock")),
        ("--agent", "qwen", "PreToolUse", "--socket", str(tmp_path / "x.sock")),
        ("--agent", "claude", "Stop", "--socket", str(tmp_path / "x.sock")),
        ("PreToolUse", "--socket", str(tmp_path / ("long" * 40) / "hookd.sock")),
        # the socket checks (sockpath.unsafe_reason and its C twin), word for word
        ("PreToolUse", "--socket", str(lax / "s.sock")),
        ("Stop", "--socket", str(lax / "s.sock"), "--fail-closed"),
        ("PreToolUse", "--socket", str(group / "s.sock")),
        ("PreToolUse", "--socket", str(dotted / "s.sock")),
        ("PreToolUse", "--socket", f"{dotted}/../.h/./s.sock"),
        ("PreToolUse", "--socket", str(tmp_path / "h." / "s.sock")),
        ("PreToolUse", "--socket", str(tmp_path / "..x" / "s.sock")),
        ("PreToolUse", "--socket", str(tmp_path / "chain40-39" / "x.sock")),
        ("PreToolUse", "--socket", str(tmp_path / "chain41-40" / "x.sock")),
        ("PreToolUse", "--socket", f"{lax}/../x.sock"),
        ("PreToolUse", "--socket", f"{dotted}/../plain-file"),  # named as the walk left it
        ("PreToolUse", "--socket", str(plain)),
        ("PreToolUse", "--socket", str(loop / "s.sock")),
        ("PreToolUse", "--socket", str(tmp_path / "via-link" / "x.sock")),
        ("PreToolUse", "--socket", str(tmp_path)),
        # bad deadlines fail as the entry's mode says
        ("PreToolUse", "--socket", str(tmp_path / "x.sock"), "--timeout", "soon"),
        ("Stop", "--socket", str(tmp_path / "x.sock"), "--connect-timeout=0", "--fail-closed"),
    ]
    for args in cases:
        want = await _run_relay(python, *args, stdin=b"{}")
        got = await _run_relay(compiled, *args, stdin=b"{}")
        assert (got.returncode, got.stdout, got.stderr) == (
            want.returncode,
            want.stdout,
            want.stderr,
        ), args
    for bad in [(), ("--nope",), ("A", "B"), ("--socket",)]:
        assert (await _run_relay(python, *bad, stdin=b"")).returncode == 1
        got = await _run_relay(compiled, *bad, stdin=b"")
        assert got.returncode == 1, bad
        assert got.stderr.startswith(b"usage: hookd-relay [--agent AGENT] EVENT"), bad


async def test_socket_path_order_as_the_process_sees_it(
    tmp_path: Path, relay_cmd: list[str]
) -> None:
    """``$HOOKD_SOCKET``, else ``$XDG_RUNTIME_DIR/hookd`` when that directory exists
    (read back from the fail-open message, which names the socket it tried)."""

    async def tried(env: dict[Any, Any], *args: str) -> str:
        proc = await _run_relay(relay_cmd, "Stop", *args, stdin=b"{}", env=env)
        message: str = json.loads(proc.stdout)["systemMessage"]
        return message.rsplit("(socket ", 1)[1].rstrip(")")

    env = {"HOOKD_SOCKET": str(tmp_path / "env.sock"), "XDG_RUNTIME_DIR": str(tmp_path)}
    assert await tried(env, "--socket", str(tmp_path / "flag.sock")) == f"{tmp_path}/flag.sock"
    assert await tried(env) == f"{tmp_path}/env.sock"
    assert await tried({**env, "HOOKD_SOCKET": ""}) == f"{tmp_path}/hookd/hookd.sock"


# --- a peer that is not a well-behaved hookd ------------------------------------------


@pytest.fixture(scope="session")
def sanitized_relay(compiled_relay: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled relay under AddressSanitizer and UBSan: an out-of-bounds read or
    write, or undefined behaviour, on any hostile reply below aborts it (exit != 0/2)."""
    out = tmp_path_factory.mktemp("relay-asan") / "hookd-relay-asan"
    source = Path(__file__).resolve().parents[2] / "relay" / "hookd-relay.c"
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    proc = subprocess.run(
        [os.environ.get("CC", "cc"), *flags, "-Wall", "-Wextra", "-Werror", "-o", str(out), source],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"this C compiler cannot build with sanitizers: {proc.stderr[-300:]!r}")
    return out


@pytest.fixture(params=["python", "compiled", "sanitized"])
def any_relay(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "python":
        return [sys.executable, "-I", "-S", str(RELAY)]
    return [str(request.getfixturevalue(f"{request.param}_relay"))]


def _frame(message: dict[str, Any]) -> bytes:
    body = msgspec.msgpack.encode(message)
    return len(body).to_bytes(4, "big") + body


def _serve_once(path: Path, reply: bytes, got: list[bytes], listening: trio.Event) -> None:
    """Accept one relay, read its two frames, answer ``reply`` verbatim, close."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(1)
        trio.from_thread.run_sync(listening.set)
        listener.settimeout(60)
        conn, _ = listener.accept()
        with conn:
            data = b""
            frames = 0
            while frames < 2:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
                frames, at = 0, 0
                while len(data) >= at + 4 and len(data) >= at + 4 + int.from_bytes(
                    data[at : at + 4], "big"
                ):
                    at += 4 + int.from_bytes(data[at : at + 4], "big")
                    frames += 1
            got.append(data)
            with contextlib.suppress(BrokenPipeError):  # a relay that hung up hears nothing
                conn.sendall(reply)


WELCOME = _frame({"kind": "welcome", "version": 1, "server": "x", "pid": 1, "max_frame": 1 << 24})
NESTED = bytes([0x81, 0xA4]) + b"deep" + bytes([0x91] * 5000) + bytes([0xC0])
HOSTILE = {
    "huge-length": (b"\x7f\xff\xff\xff", "reply frame too large (2147483647 bytes)"),
    "closed-mid-frame": (b"\x00\x00\x00\x64" + b"\x80" * 10, "closed the connection"),
    "not-a-map": (b"\x00\x00\x00\x02\x91\x01", "reply is not a map"),
    "truncated-map": (b"\x00\x00\x00\x03\x83\xa1k", "hookd failed to answer: "),
    "str-past-the-end": (b"\x00\x00\x00\x06\x81\xa1k\xdb\xff\xff", "hookd failed to answer: "),
    "nested-5000": (len(NESTED).to_bytes(4, "big") + NESTED, "hookd failed to answer: "),
    # a count past the frame's end is malformed: nothing after it is taken as the answer
    "count-past-the-end": (
        b"\x00\x00\x00\x08\x81\xa1k\xdd\xff\xff\xff\xff"
        + _frame({"kind": "relay_reply", "id": 1, "stdout": "NOT-MINE"}),
        "hookd failed to answer: ",
    ),
    "other-id-then-eof": (
        WELCOME + _frame({"kind": "relay_reply", "id": 2, "stdout": "NOT-MINE"}),
        "closed the connection",
    ),
    "error": (
        _frame({"kind": "error", "code": "busy", "message": "over max_connections", "id": None}),
        "hookd refused the event (busy): over max_connections",
    ),
}


async def _relay_against(
    reply: bytes, cmd: list[str], sock: Path, *args: str, stdin: bytes, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run one relay against a scripted peer; its answer and what the peer received."""
    got: list[bytes] = []
    proc = await _relay_with_peer(
        lambda listening: _serve_once(sock, reply, got, listening),
        cmd,
        *args,
        "--socket",
        str(sock),
        stdin=stdin,
        env={"ASAN_OPTIONS": "detect_leaks=0", **env},
    )
    return proc, got[0] if got else b""


async def _relay_with_peer(
    peer: Callable[[trio.Event], None],
    cmd: list[str],
    *args: str,
    stdin: bytes,
    env: dict[str, str],
) -> subprocess.CompletedProcess[bytes]:
    """Run one relay once ``peer`` (a blocking function, in a thread) sets the event it is
    given: it listens.  Returns when both are done."""
    listening = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, peer, listening)
        await listening.wait()
        return await _run_relay(cmd, *args, stdin=stdin, env=env)


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_hostile_reply_fails_open_without_crashing(
    case: str, any_relay: list[str], tmp_path: Path
) -> None:
    reply, said = HOSTILE[case]
    proc, _ = await _relay_against(
        reply, any_relay, tmp_path / "peer.sock", "PreToolUse", stdin=b"{}", env={}
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    assert proc.stderr == b""
    assert said in json.loads(proc.stdout)["systemMessage"]
    assert b"NOT-MINE" not in proc.stdout


async def test_unknown_fields_and_types_in_the_reply_are_skipped(
    any_relay: list[str], tmp_path: Path
) -> None:
    """Forward compatibility: extra keys of every MessagePack type around the fields read."""
    extra = {"f": 1.5, "n": None, "b": True, "bin": b"\x00" * 300, "neg": -70000, "m": {"x": [1]}}
    reply = WELCOME + _frame(
        {
            **extra,
            "kind": "relay_reply",
            "id": 1,
            "stdout": "OUT é\n",
            "stderr": "ERR",
            "exit_code": 3,
        }
    )
    proc, got = await _relay_against(
        reply,
        any_relay,
        tmp_path / "peer.sock",
        "Stop",
        stdin=b'{"a": 1}',
        env={"CLAUDE_PID": "4242"},
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "OUT é\n".encode(), b"ERR")
    at = 4 + int.from_bytes(got[:4], "big")
    assert msgspec.msgpack.decode(got[4:at]) == {
        "kind": "hello",
        "version": 1,
        "client": "hookd-relay",
        "pid": 4242,
    }
    request = protocol.decode_client(got[at + 4 :])
    assert isinstance(request, protocol.Relay)
    assert (request.event, request.input, request.pid, request.id) == ("Stop", b'{"a": 1}', 4242, 1)


# --- the frames, at every MessagePack width (both relays hand-encode them) ----------------

# Lengths and counts at each edge where MessagePack changes a value's header: fixstr/str8/
# str16/str32, bin8/bin16/bin32, fixmap/map16/map32, and the uint widths (a pid).
_STR_EDGES = (0, 31, 32, 255, 256, 65535, 65536)
_BIN_EDGES = (0, 255, 256, 65535, 65536)
_MAP_EDGES = (15, 16, 17, 65535, 65536)
_UINT_EDGES = (0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1)
_OK = WELCOME + _frame({"kind": "relay_reply", "id": 1, "stdout": "ok"})


def _frames(got: bytes) -> list[bytes]:
    bodies, at = [], 0
    while at < len(got):
        size = int.from_bytes(got[at : at + 4], "big")
        bodies.append(got[at + 4 : at + 4 + size])
        at += 4 + size
    assert at == len(got), "a frame's length prefix does not match its body"
    return bodies


def _frame_cases() -> list[tuple[str, dict[str, str], bytes, tuple[str, ...]]]:
    """(id, the extra environment, stdin, extra arguments) at every edge."""
    cases: list[tuple[str, dict[str, str], bytes, tuple[str, ...]]] = [
        (f"env-value-{n}", {"V": "v" * n}, b"{}", ()) for n in _STR_EDGES
    ]
    cases += [(f"env-key-{n}", {"K" * n: "k"}, b"{}", ()) for n in _STR_EDGES[1:5]]
    # the last: a frame whose length needs all four bytes of its prefix
    cases += [(f"input-{n}", {}, b"i" * n, ()) for n in (*_BIN_EDGES, 1 << 24)]
    # the relay's environment is PATH, ASAN_OPTIONS, LC_CTYPE and these: n entries in all
    cases += [
        (f"env-{n}-entries", {f"E{k}": "" for k in range(n - 3)}, b"{}", ()) for n in _MAP_EDGES
    ]
    cases += [(f"pid-{n}", {"CLAUDE_PID": str(n)}, b"{}", ()) for n in _UINT_EDGES]
    cases += [(f"agent-{n}", {}, b"{}", ("--agent", "a" * n)) for n in (1, 31, 32)]
    return cases


@pytest.mark.parametrize(
    ("env", "stdin", "args"),
    [case[1:] for case in _frame_cases()],
    ids=[case[0] for case in _frame_cases()],
)
async def test_every_frame_is_the_shortest_messagepack_of_exactly_what_was_given(
    relay_cmd: list[str], tmp_path: Path, env: dict[str, str], stdin: bytes, args: tuple[str, ...]
) -> None:
    """The hello and relay frames decode to exactly the event, input, environment, agent and
    pid the relay was given, each in MessagePack's shortest form (what msgspec writes): a
    header one width off at any edge would be another value, or another type, to hookd."""
    given = {"LC_CTYPE": "C.UTF-8"}  # set, so Python's locale coercion adds nothing
    proc, got = await _relay_against(
        _OK, relay_cmd, tmp_path / "peer.sock", *args, "Stop", stdin=stdin, env=given | env
    )
    assert (proc.returncode, proc.stdout) == (0, b"ok"), proc.stderr
    hello, request = _frames(got)
    for body in (hello, request):
        assert msgspec.msgpack.encode(msgspec.msgpack.decode(body)) == body
    pid = int(env["CLAUDE_PID"]) if "CLAUDE_PID" in env else None
    assert msgspec.msgpack.decode(hello) == {
        "kind": "hello",
        "version": 1,
        "client": "hookd-relay",
        **({"pid": pid} if pid is not None else {}),
    }
    sent = msgspec.msgpack.decode(request)
    path = os.environ.get("PATH", "/usr/bin:/bin")
    assert sent["env"] == {"PATH": path, "ASAN_OPTIONS": "detect_leaks=0", **given, **env}
    assert (sent["kind"], sent["id"], sent["event"], sent["input"]) == ("relay", 1, "Stop", stdin)
    assert sent.get("agent") == (args[1] if args else None)
    if pid is not None:
        assert sent["pid"] == pid


async def test_both_relays_say_a_refusal_alike(tmp_path: Path, compiled_relay: Path) -> None:
    """An ``error`` frame, its code and message each a str, nil or absent (all hookd's
    protocol allows), in a fixmap or a map16, under each failure mode: the compiled relay
    answers the agent byte for byte as the Python one (which prints None for nil)."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    missing = object()
    for code, message, pad, closed in itertools.product(
        ("busy", None, missing), ("over max_connections", "", None, missing), (0, 16), (0, 1)
    ):
        error: dict[str, Any] = {f"x{k}": k for k in range(pad)} | {"kind": "error", "id": None}
        error |= {} if code is missing else {"code": code}
        error |= {} if message is missing else {"message": message}
        args = ("Stop", *(["--fail-closed"] if closed else []))
        want, _ = await _relay_against(
            _frame(error), python, tmp_path / "p.sock", *args, stdin=b"{}", env={}
        )
        got, _ = await _relay_against(
            _frame(error), [str(compiled_relay)], tmp_path / "c.sock", *args, stdin=b"{}", env={}
        )
        assert b"hookd refused the event (" in want.stdout + want.stderr, error
        assert (got.returncode, got.stdout, got.stderr) == (
            want.returncode,
            want.stdout,
            want.stderr,
        ), error
        (tmp_path / "p.sock").unlink()
        (tmp_path / "c.sock").unlink()


_EXTRA_VALUES = {
    "array16": list(range(16)),
    "array32": [0] * 65536,
    "map16": {f"k{k}": k for k in range(16)},
    "map32": {f"k{k}": 0 for k in range(65536)},
    "bin-edges": [b"b" * n for n in _BIN_EDGES],
    "str-edges": ["s" * n for n in _STR_EDGES],
    "int-edges": [*_UINT_EDGES, -1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**63)],
    "floats": [0.5, 1e300],
    "nested": [[[{"a": [None, True, False]}]]],
    "empty": [[], {}, "", b"", [[]], {"e": {}}],
}


@pytest.mark.parametrize("kind", sorted(_EXTRA_VALUES))
async def test_an_unknown_field_of_every_type_and_width_is_skipped(
    relay_cmd: list[str], tmp_path: Path, kind: str
) -> None:
    """Forward compatibility: a field the relay does not read, of any MessagePack type and
    header width, before and after the ones it reads, is skipped whole."""
    extra = _EXTRA_VALUES[kind]
    reply = WELCOME + _frame(
        {"a": extra, "kind": "relay_reply", "b": extra, "id": 1, "stdout": "OUT", "exit_code": 3}
    )
    proc, _ = await _relay_against(
        reply, relay_cmd, tmp_path / "peer.sock", "Stop", stdin=b"{}", env={}
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, b"OUT", b"")


async def test_a_claude_pid_past_uint64_fails_alike_and_sends_nothing(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """``CLAUDE_PID`` that MessagePack's uint64 cannot hold: neither relay sends a frame
    with some other pid; both fail as the entry's mode says, with the same bytes."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    for closed in ((), ("--fail-closed",)):
        answers = []
        for name, cmd in (("p", python), ("c", [str(compiled_relay)])):
            proc, got = await _relay_against(
                b"",
                cmd,
                tmp_path / f"{name}.sock",
                "Stop",
                *closed,
                stdin=b"{}",
                env={"CLAUDE_PID": str(2**64)},
            )
            assert b"integer too large" in proc.stdout + proc.stderr, proc
            assert got == b"", got  # no hello, no relay frame
            answers.append((proc.returncode, proc.stdout, proc.stderr))
            (tmp_path / f"{name}.sock").unlink()
        assert answers[0] == answers[1], closed


# Each edge of UTF-8 (the shortest and longest of every length, around the surrogates and
# past U+10FFFF), valid and not: an environment entry that is not UTF-8 is left out of the
# relay frame (a MessagePack str must be), by both relays alike.
_UTF8_EDGES = [
    *(
        chr(c).encode()
        for c in (0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFF, 0x10000)
    ),
    *(chr(c).encode() for c in (0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF)),
    b"\x80",  # a continuation byte alone
    b"\xc0\x80",  # overlong forms of each length
    b"\xc1\xbf",
    b"\xe0\x9f\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xed\xa0\x80",  # a surrogate
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xf5\x80\x80\x80",
    b"\xe0\xa0",  # cut short
    b"\xc2\xc0",  # a lead byte where a continuation should be
    b"\xe1\x80\xc0",
    b"\xf1\x80\x80\xc0",
]


async def test_exactly_the_utf8_environment_entries_are_forwarded(
    relay_cmd: list[str], tmp_path: Path
) -> None:
    env: dict[bytes, bytes] = {b"LC_CTYPE": b"C.UTF-8"}
    for k, edge in enumerate(_UTF8_EDGES):
        env[b"V%d" % k] = b"<" + edge + b">"  # in a value
        env[b"E%d" % k] = b"<" + edge  # at the end of one, where a cut-short form ends
        env[b"K%d" % k + edge] = b"key"  # and in a name
        env[edge + b"S%d" % k] = b"start"  # at the start of a name: the entry's first byte
        env[b"W%d" % k] = edge + b">"  # at the start of a value
    proc, got = await _relay_against(
        _OK,
        relay_cmd,
        tmp_path / "peer.sock",
        "Stop",
        stdin=b"{}",
        env=env,  # type: ignore[arg-type]
    )
    assert proc.returncode == 0, proc.stderr
    sent = msgspec.msgpack.decode(_frames(got)[1])["env"]

    def utf8(data: bytes) -> bool:
        try:
            data.decode()
        except UnicodeDecodeError:
            return False
        return True

    expected = {k.decode(): v.decode() for k, v in env.items() if utf8(k) and utf8(v)}
    assert len(expected) > len(_UTF8_EDGES)  # the valid half is there to be forwarded
    assert {k: v for k, v in sent.items() if k not in ("PATH", "ASAN_OPTIONS")} == expected


@pytest.mark.parametrize(
    ("size", "code"),
    list(
        zip(
            [*_STR_EDGES, *_STR_EDGES[:3]],
            [0, 1, 2, 127, 128, 255, 256, -1, -200, 70000],
            strict=True,
        )
    ),
)
async def test_a_reply_of_every_width_is_answered_as_it_says(
    relay_cmd: list[str], tmp_path: Path, size: int, code: int
) -> None:
    """stdout and stderr of every str width, the exit code of every int width (its low 8
    bits, as sys.exit), in a map of 16 keys or more: the agent gets exactly them."""
    extra = {f"x{k}": k for k in range(16)}  # a map16 reply, unknown keys first
    out, err = "o" * size, "e" * (size // 2)
    reply = WELCOME + _frame(
        {**extra, "kind": "relay_reply", "id": 1, "stdout": out, "stderr": err, "exit_code": code}
    )
    proc, _ = await _relay_against(
        reply, relay_cmd, tmp_path / "peer.sock", "Stop", stdin=b"{}", env={}
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (code & 0xFF, out.encode(), err.encode())


# --- deadlines: a daemon that took the connection and never answers (issue 28, item 8) -----


def _hold(path: Path) -> Any:
    """A listening socket nobody accepts on: a stopped daemon, or a socket activation
    whose service does not start (the kernel completes the connect; nobody answers)."""
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    return listener


def _welcome_then_silence(path: Path, listening: trio.Event) -> None:
    """Accept one relay, greet it, then read until it hangs up: a wedged daemon."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(1)
        trio.from_thread.run_sync(listening.set)
        listener.settimeout(60)
        conn, _ = listener.accept()
        with conn:
            conn.sendall(WELCOME)
            while conn.recv(65536):
                pass


def _welcome_then_trickle(path: Path, listening: trio.Event) -> None:
    """Greet, announce a reply, then send it a byte at a time, slowly: every single wait
    of the relay is short, only the whole is long."""
    import select
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(1)
        trio.from_thread.run_sync(listening.set)
        listener.settimeout(60)
        conn, _ = listener.accept()
        with conn:
            conn.sendall(WELCOME + (1000).to_bytes(4, "big"))
            for _ in range(1000):  # 1000 x 0.2 s: far past any deadline of the test
                try:
                    conn.sendall(b"\xc0")
                except OSError:
                    return  # the relay hung up
                readable, _, _ = select.select([conn], [], [], 0.2)
                try:
                    if readable and not conn.recv(65536):
                        return  # the relay hung up (its request is read on the way)
                except ConnectionResetError:
                    return  # it hung up with a trickled byte unread: Linux says reset


def _decided(proc: subprocess.CompletedProcess[bytes], closed: bool) -> str:
    """The reason the relay gave, after checking it answered as its failure mode says."""
    if closed:
        assert (proc.returncode, proc.stdout) == (2, b""), proc.stderr
        return proc.stderr.decode()
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    message: str = json.loads(proc.stdout)["systemMessage"]
    return message


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
@pytest.mark.parametrize("how", ["flag", "env"])
async def test_a_daemon_that_never_greets_is_decided_by_the_connect_deadline(
    any_relay: list[str], tmp_path: Path, closed: bool, how: str
) -> None:
    sock = tmp_path / "held.sock"
    listener = _hold(sock)
    try:
        args = ["PreToolUse", "--socket", str(sock), *(["--fail-closed"] if closed else [])]
        env = {"ASAN_OPTIONS": "detect_leaks=0"}
        if how == "flag":
            args += ["--connect-timeout", "0.5"]
        else:
            env["HOOKD_RELAY_CONNECT_TIMEOUT"] = "0.5"
        with trio.fail_after(60):  # a guard: today's relays wait for the agent to kill them
            proc = await _run_relay(any_relay, *args, stdin=b"{}", env=env)
    finally:
        listener.close()
    why = _decided(proc, closed)
    assert "hookd failed to answer: no welcome within 0.5 s" in why
    assert "--connect-timeout" in why


async def test_the_whole_deadline_also_bounds_the_greeting(
    any_relay: list[str], tmp_path: Path
) -> None:
    """``--timeout`` under ``--connect-timeout``: the greeting is part of the exchange."""
    sock = tmp_path / "held.sock"
    listener = _hold(sock)
    try:
        with trio.fail_after(60):  # a guard: 10 s would be the connect deadline alone
            proc = await _run_relay(
                any_relay,
                "PreToolUse",
                "--socket",
                str(sock),
                "--timeout",
                "0.5",
                stdin=b"{}",
                env={"ASAN_OPTIONS": "detect_leaks=0", "HOOKD_RELAY_CONNECT_TIMEOUT": "50"},
            )
    finally:
        listener.close()
    assert "hookd failed to answer: no welcome within 0.5 s" in _decided(proc, closed=False)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
@pytest.mark.parametrize("how", ["flag", "env"])
async def test_a_daemon_that_greets_then_never_answers_is_decided_by_the_deadline(
    any_relay: list[str], tmp_path: Path, closed: bool, how: str
) -> None:
    sock = tmp_path / "wedged.sock"
    args = ["Stop", "--socket", str(sock), *(["--fail-closed"] if closed else [])]
    env = {"ASAN_OPTIONS": "detect_leaks=0"}
    if how == "flag":
        args += ["--timeout", "3"]  # the greeting must come first even on a loaded box
    else:
        env["HOOKD_RELAY_TIMEOUT"] = "3"
    with trio.fail_after(60):  # a guard: today's relays wait for the agent to kill them
        proc = await _relay_with_peer(
            lambda listening: _welcome_then_silence(sock, listening),
            any_relay,
            *args,
            stdin=b"{}",
            env=env,
        )
    assert "hookd failed to answer: no reply within 3 s (--timeout)" in _decided(proc, closed)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
async def test_a_reply_trickled_past_the_deadline_is_decided_by_it(
    any_relay: list[str], tmp_path: Path, closed: bool
) -> None:
    """The deadline bounds the whole exchange, not each read."""
    sock = tmp_path / "trickle.sock"
    args = ["Stop", "--socket", str(sock), "--timeout", "3", *(["--fail-closed"] if closed else [])]
    with trio.fail_after(60):  # a guard: a per-read timeout would wait 200 s here
        proc = await _relay_with_peer(
            lambda listening: _welcome_then_trickle(sock, listening),
            any_relay,
            *args,
            stdin=b"{}",
            env={"ASAN_OPTIONS": "detect_leaks=0"},
        )
    assert "hookd failed to answer: no reply within 3 s (--timeout)" in _decided(proc, closed)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
async def test_a_full_backlog_is_decided_by_the_connect_deadline(
    any_relay: list[str], tmp_path: Path, closed: bool
) -> None:
    """Nobody accepts and the backlog is full: even connecting would wait forever."""
    import socket

    sock = tmp_path / "full.sock"
    listener = _hold(sock)
    listener.listen(0)
    queued: list[socket.socket] = []
    try:
        while True:
            waiting = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            waiting.setblocking(False)
            try:
                waiting.connect(str(sock))
            except BlockingIOError:
                waiting.close()
                break
            queued.append(waiting)
        args = ["PreToolUse", "--socket", str(sock), "--connect-timeout", "0.5"]
        with trio.fail_after(60):  # a guard: today's relays block in connect for good
            proc = await _run_relay(
                any_relay,
                *args,
                *(["--fail-closed"] if closed else []),
                stdin=b"{}",
                env={"ASAN_OPTIONS": "detect_leaks=0"},
            )
    finally:
        for waiting in queued:
            waiting.close()
        listener.close()
    assert "its socket takes no more connections (the listen backlog is full" in _decided(
        proc, closed
    )


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
async def test_a_daemon_that_never_reads_a_large_request_is_decided_by_the_deadline(
    relay_cmd: list[str], tmp_path: Path, closed: bool
) -> None:
    """Connected (the backlog took it) but nobody reads: a request larger than the socket's
    buffers blocks in send, and the deadline decides that wait too, as the entry says."""
    sock = tmp_path / "deaf.sock"
    listener = _hold(sock)
    try:
        with trio.fail_after(60):  # a guard: a relay that ignored it would wait for good
            proc = await _run_relay(
                relay_cmd,
                "PreToolUse",
                "--socket",
                str(sock),
                "--connect-timeout",
                "0.5",
                *(["--fail-closed"] if closed else []),
                stdin=b"x" * (4 << 20),
            )
    finally:
        listener.close()
    assert "hookd failed to answer: no welcome within 0.5 s" in _decided(proc, closed)


def test_a_stopped_daemon_is_decided_by_both_relays(relay_cmd: list[str], tmp_path: Path) -> None:
    """The real thing: ``hookd serve``, SIGSTOPped while it listens."""
    import signal

    from cli.helpers import cli_env, serving_client

    sock = tmp_path / "s.sock"
    (tmp_path / "hooks.json").write_text("{}")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "hookd", "serve", "--socket", str(sock), "--state-dir",
         str(tmp_path / "state"), "--no-watch", "--user-file", str(tmp_path / "hooks.json"),
         "--policy-file", str(tmp_path / "policy.json")],
        env=cli_env(),
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        serving_client(sock, daemon).close()
        daemon.send_signal(signal.SIGSTOP)
        for closed in (False, True):
            args = ["PreToolUse", "--socket", str(sock), *(["--fail-closed"] if closed else [])]
            proc = _run_with_stdin(
                relay_cmd + args, subprocess.PIPE, {"HOOKD_RELAY_CONNECT_TIMEOUT": "1"}
            )  # its timeout=60 is a guard: today's relays wait until they are killed
            assert "no welcome within 1 s" in _decided(proc, closed)
    finally:
        daemon.send_signal(signal.SIGCONT)
        daemon.kill()
        daemon.wait()


def test_the_relay_deadline_keeps_under_the_timeout_the_installer_writes() -> None:
    """Every relay entry ``hookctl claude install`` writes decides before Claude Code
    kills it: its ``--timeout`` (or the relay's default for the event) is under the
    entry's ``timeout`` (or Claude Code's default for the event)."""
    from hookd.installers.claude_settings import Bridge, bridge_hooks

    cc_default = {"UserPromptSubmit": 30.0, "PreModelSwitch": 30.0, "PostModelSwitch": 30.0}
    for longest in (None, 10, 29, 200, 900):
        hook: dict[str, Any] = {"type": "command", "command": "true"}
        if longest is not None:
            hook["timeout"] = longest
        config = {
            event: [{"hooks": [hook]}] for event in ("Stop", "UserPromptSubmit", "SessionStart")
        }
        for transport in ("http", "mod"):
            assert transport in ("http", "mod")  # the Literal mypy wants
            bridge = Bridge(port=1, token="t", relay_binary="/x/relay", transport=transport)
            for event, groups in bridge_hooks(bridge, config).items():
                handler = groups[0]["hooks"][0]
                if handler["type"] != "command":
                    continue
                args = handler["args"]
                agent_kills_at = float(handler.get("timeout", cc_default.get(event, 600.0)))
                if "--timeout" in args:
                    decides_at = float(args[args.index("--timeout") + 1])
                else:
                    decides_at = relay.default_deadline(event, "")
                assert decides_at < agent_kills_at, (event, longest, transport)
                if longest is not None and event in config:
                    assert decides_at > longest, (event, longest)  # hookd's own timeout first


# --- every failure under --fail-closed blocks; --help (issue 28 item 13, issue 31.7) ----


@pytest.mark.parametrize(
    "case",
    ["closed-stdin", "directory-stdin", "bad-option", "no-event", "bad-timeout", "bad-env"],
)
async def test_every_failure_under_fail_closed_blocks(
    any_relay: list[str], tmp_path: Path, case: str
) -> None:
    if case == "directory-stdin" and any_relay[0] == sys.executable:
        pytest.skip("CPython itself refuses a directory on stdin before any code runs (exit 1)")
    args = ["PreToolUse", "--socket", str(tmp_path / "nobody.sock"), "--fail-closed"]
    env = {"ASAN_OPTIONS": "detect_leaks=0"}
    stdin: Any = subprocess.PIPE
    said = "hookd is not running"
    if case == "closed-stdin":
        stdin, said = None, "hookd-relay cannot read the hook input on stdin: stdin is closed"
    elif case == "directory-stdin":
        stdin, said = tmp_path, "cannot read the hook input on stdin: Is a directory"
    elif case == "bad-option":
        args, said = [*args, "--nope"], "usage: hookd-relay"
    elif case == "no-event":
        args, said = args[1:], "usage: hookd-relay"
    elif case == "bad-timeout":
        args, said = [*args, "--timeout", "soon"], "--timeout must be a number of seconds"
    else:
        env["HOOKD_RELAY_TIMEOUT"] = "-1"
        said = "$HOOKD_RELAY_TIMEOUT must be a number of seconds"
    proc = await trio.to_thread.run_sync(lambda: _run_with_stdin(any_relay + args, stdin, env))
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr.decode()


def _run_with_stdin(
    argv: list[str], stdin: Path | int | None, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """Run with stdin a directory (a Path), a pipe, or closed (None: fd 0 not open)."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    if isinstance(stdin, Path):
        fd = os.open(stdin, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return subprocess.run(argv, stdin=fd, env=base, capture_output=True, timeout=60)
        finally:
            os.close(fd)
    if stdin is None:  # fd 0 closed in the child, as a careless parent leaves it
        return subprocess.run(
            argv, env=base, capture_output=True, timeout=60, preexec_fn=lambda: os.close(0)
        )
    return subprocess.run(argv, input=b"{}", env=base, capture_output=True, timeout=60)


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("how", ["as-installed", "console-script"])
async def test_help_names_hookd_relay_and_exits_0(
    relay_cmd: list[str], flag: str, how: str
) -> None:
    if how == "console-script":  # the `hookd-relay` on PATH (pyproject's entry point)
        if relay_cmd[0] != sys.executable:
            pytest.skip("the console script is the Python relay")
        script = Path(sys.executable).parent / "hookd-relay"
        if not script.exists():
            pytest.skip("hookd-relay is not installed beside this interpreter")
        relay_cmd = [str(script)]
    proc = await _run_relay(relay_cmd, flag, stdin=b"")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"usage: hookd-relay [--agent AGENT] EVENT")
    for documented in (
        b"--fail-closed",
        b"--timeout",
        b"--connect-timeout",
        b"HOOKD_RELAY_TIMEOUT",
    ):
        assert documented in proc.stdout


# --- the size bounds: at the edge, where only the byte counts differ --------------------

_MAX_FRAME = 64 << 20  # relay.py's _MAX_REPLY; hookd-relay.c's MAX_FRAME
_INPUT_LIMIT = _MAX_FRAME - 4096  # hookd-relay.c: the most hook input it forwards


def _feed(argv: list[str], size: int, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """Run the relay with ``size`` bytes on stdin, written a block at a time (never held
    whole here): the relay alone holds the input."""
    block = b"i" * (1 << 20)
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=base
    ) as proc:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # a relay that gave up reads no more
            left = size
            while left:
                left -= proc.stdin.write(block[: min(left, len(block))])
        out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
def test_the_compiled_relay_forwards_input_up_to_its_bound_and_refuses_a_byte_more(
    compiled_relay: Path, tmp_path: Path, closed: bool
) -> None:
    """64 MiB − 4 KiB of hook input is read and goes on (here to a socket that is not
    there); one byte more is refused, saying so, as the entry's failure mode says.
    (relay.py has no such bound: it reads what it is given and the daemon's frame limit
    refuses it.)"""
    args = [str(compiled_relay), "Stop", "--socket", str(tmp_path / "nobody.sock")]
    args += ["--fail-closed"] if closed else []
    fits = _feed(args, _INPUT_LIMIT, {})
    assert "hookd is not running" in _decided(fits, closed)
    over = _feed(args, _INPUT_LIMIT + 1, {})
    assert _decided(over, closed).rstrip("\n") == (
        f"hookd failed to answer: hook input over {_INPUT_LIMIT} bytes"
    )


def _request_size(pad: int) -> int:
    """The bytes of the hello and relay bodies for a ``Stop`` with the whole input and
    an environment of PATH, CLAUDE_PID=1 and PAD of ``pad`` bytes (the shortest
    MessagePack, which the frame tests hold both relays to)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CLAUDE_PID": "1", "PAD": "p" * pad}
    hello = {"kind": "hello", "version": 1, "client": "hookd-relay", "pid": 1}
    request = {"kind": "relay", "id": 1, "event": "Stop", "input": b"", "env": env, "pid": 1}
    empty = len(msgspec.msgpack.encode(request))  # input as bin8 (2 bytes of header)
    return len(msgspec.msgpack.encode(hello)) + empty - 2 + 5 + _INPUT_LIMIT


@pytest.mark.parametrize("over", [0, 1], ids=["at-the-bound", "one-byte-over"])
def test_the_compiled_relay_sends_a_request_up_to_the_frame_bound_and_no_more(
    compiled_relay: Path, tmp_path: Path, over: int
) -> None:
    """The request (the input and the environment together) may be 64 MiB of MessagePack
    and no more: at the bound it is sent (here to a daemon that never reads, so the
    greeting's deadline decides), one byte over it is refused before anything is sent."""
    pad = 300  # a str16, so the size grows byte for byte with it
    pad += _MAX_FRAME + over - _request_size(pad)
    assert 256 <= pad < 65536 and _request_size(pad) == _MAX_FRAME + over
    sock = tmp_path / "deaf.sock"
    listener = _hold(sock)
    try:
        args = [str(compiled_relay), "Stop", "--socket", str(sock), "--connect-timeout", "0.5"]
        proc = _feed(args, _INPUT_LIMIT, {"CLAUDE_PID": "1", "PAD": "p" * pad})
    finally:
        listener.close()
    said = _decided(proc, closed=False)
    if over:
        assert said == f"hookd failed to answer: request over {_MAX_FRAME} bytes"
    else:
        assert "hookd failed to answer: no welcome within 0.5 s" in said


@pytest.mark.parametrize("size", [_MAX_FRAME, _MAX_FRAME + 1])
async def test_a_reply_frame_is_read_up_to_the_bound_by_both_relays(
    relay_cmd: list[str], tmp_path: Path, size: int
) -> None:
    """A reply frame may say it is 64 MiB long (here the peer then hangs up) but not a
    byte more: that one is refused from its header alone, by both relays alike."""
    reply = WELCOME + size.to_bytes(4, "big")
    proc, _ = await _relay_against(
        reply, relay_cmd, tmp_path / "peer.sock", "Stop", stdin=b"{}", env={}
    )
    said = _decided(proc, closed=False)
    if size > _MAX_FRAME:
        assert said == f"hookd failed to answer: reply frame too large ({size} bytes)"
    else:
        assert said == "hookd failed to answer: hookd closed the connection before replying"


# --- the socket walk: every owner that is not the caller nor root -------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="files of other uids need chown, which needs root")
async def test_a_socket_directory_or_link_of_any_other_uid_is_refused_alike(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Whoever owns it — a system uid (1, 2), a user's (1000), nobody (65534), one past
    16 bits — a socket, a directory on the way or a symlink on the way that is neither
    the caller's nor root's is refused, by both relays with the same bytes."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    for owner in (1, 2, 1000, 65534, 70000):
        here = tmp_path / f"u{owner}"
        here.mkdir()
        _hold(here / "theirs.sock").close()
        os.chown(here / "theirs.sock", owner, -1)
        (here / "dir").mkdir(mode=0o700)
        _hold(here / "dir" / "s.sock").close()
        os.chown(here / "dir", owner, -1)
        (here / "mine").mkdir(mode=0o700)
        _hold(here / "mine" / "s.sock").close()
        (here / "link").symlink_to(here / "mine")
        os.lchown(here / "link", owner, -1)
        for path in (here / "theirs.sock", here / "dir" / "s.sock", here / "link" / "s.sock"):
            args = ("Stop", "--socket", str(path))
            want = await _run_relay(python, *args, stdin=b"{}")
            got = await _run_relay([str(compiled_relay)], *args, stdin=b"{}")
            assert f"belongs to uid {owner}, not to you".encode() in want.stdout, path
            assert (got.returncode, got.stdout, got.stderr) == (
                want.returncode,
                want.stdout,
                want.stderr,
            ), path


# --- a reply value cut short by its frame's end -----------------------------------------

# One value of every MessagePack type and header width, as raw bytes (float32 by hand:
# msgspec writes float64 only).
_CUT_VALUES = [
    *(
        msgspec.msgpack.encode(v)
        for v in (
            200, 60000, 2**32 - 1, 2**64 - 1, -100, -1000, -(2**31), -(2**63), 0.5,
            "s" * 5, "s" * 40, "s" * 300, "s" * 70000, b"b" * 5, b"b" * 300, b"b" * 70000,
            [1, 2], list(range(16)), [0] * 65536, {"a": 1}, {f"k{k}": k for k in range(16)},
            {f"k{k}": 0 for k in range(65536)},
        )
    ),
    b"\xca\x3f\x00\x00\x00",
]  # fmt: skip


def _cut_cases() -> list[tuple[str, bytes]]:
    """A welcome frame whose last value is cut: before it, after its first byte, one byte
    short; each followed by a well-formed reply that must not be taken as the answer."""
    head = b"\x82" + msgspec.msgpack.encode("kind") + msgspec.msgpack.encode("welcome")
    head += msgspec.msgpack.encode("v")
    cases = [("missing", head)]
    for raw in _CUT_VALUES:
        for keep in sorted({1, len(raw) - 1} - {0, len(raw)}):
            cases.append((f"{raw[0]:02x}-{len(raw)}-kept-{keep}", head + raw[:keep]))
    return cases


async def test_a_reply_value_cut_short_by_its_frame_is_malformed_in_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """A frame that ends inside a value — of any type, at any header width, cut in its
    header or its payload — is a malformed reply: never read as a shorter value, and
    nothing after it taken as the answer; both relays say so with the same bytes."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    after = _frame({"kind": "relay_reply", "id": 1, "stdout": "NOT-MINE"})
    for name, body in _cut_cases():
        reply = len(body).to_bytes(4, "big") + body + after
        answers = []
        for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
            sock = tmp_path / f"{who}.sock"
            proc, _ = await _relay_against(reply, cmd, sock, "Stop", stdin=b"{}", env={})
            sock.unlink()
            answers.append((proc.returncode, proc.stdout, proc.stderr))
        assert answers[0] == answers[1], name
        assert b"NOT-MINE" not in answers[1][1], name
        said = _decided(subprocess.CompletedProcess([], *answers[1]), closed=False)
        assert said == "hookd failed to answer: malformed reply frame", name


async def test_the_greeting_deadline_is_10_s_unless_one_is_set(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Neither ``--connect-timeout`` nor ``$HOOKD_RELAY_CONNECT_TIMEOUT``: both relays wait
    10 s for the daemon's welcome (what --help and docs/claude-code.md say), then fail
    with the same bytes.  (Run side by side: the test waits the 10 s once.)"""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    sock = tmp_path / "held.sock"
    listener = _hold(sock)
    answers: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def run(name: str, cmd: list[str]) -> None:
        answers[name] = await _run_relay(cmd, "PreToolUse", "--socket", str(sock), stdin=b"{}")

    try:
        with trio.fail_after(120):  # a guard: the relays decide at 10 s
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run, "python", python)
                nursery.start_soon(run, "compiled", [str(compiled_relay)])
    finally:
        listener.close()
    said = _decided(answers["compiled"], closed=False)
    assert said.startswith("hookd failed to answer: no welcome within 10 s:"), said
    want, got = answers["python"], answers["compiled"]
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)


def _pairs(n: int) -> bytes:
    return b"".join(msgspec.msgpack.encode(f"x{k}") + b"\x00" for k in range(n))


# Every header a map may have, empty and not, shortest or not: each is a frame to read and
# pass over (none is the answer), never "not a map".
_MAP_FORMS = {
    "fixmap-0": b"\x80",
    "fixmap-1": b"\x81" + _pairs(1),
    "fixmap-15": b"\x8f" + _pairs(15),
    "map16-0": b"\xde\x00\x00",
    "map16-16": b"\xde\x00\x10" + _pairs(16),
    "map32-0": b"\xdf\x00\x00\x00\x00",
    "map32-1": b"\xdf\x00\x00\x00\x01" + _pairs(1),
}


async def test_a_frame_of_every_map_form_is_read_and_passed_over_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """A frame that is a map of any header form — fixmap, map16, map32, empty or not —
    without a kind the relay waits for is passed over, and the reply after it answered."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    answer = _frame({"kind": "relay_reply", "id": 1, "stdout": "OUT", "exit_code": 3})
    for name, body in _MAP_FORMS.items():
        reply = WELCOME + len(body).to_bytes(4, "big") + body + answer
        for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
            sock = tmp_path / f"{who}.sock"
            proc, _ = await _relay_against(reply, cmd, sock, "Stop", stdin=b"{}", env={})
            sock.unlink()
            assert (proc.returncode, proc.stdout, proc.stderr) == (3, b"OUT", b""), (name, who)


# --- the command line, the reply's shape and the socket path: every form, both relays ---


async def _both_alike(
    compiled_relay: Path, *args: str, stdin: bytes = b"{}", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run both relays with the same arguments; assert the same code, stdout and stderr
    (byte for byte) and return the compiled relay's answer."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    want = await _run_relay(python, *args, stdin=stdin, env=env)
    got = await _run_relay([str(compiled_relay)], *args, stdin=stdin, env=env)
    assert (got.returncode, got.stdout, got.stderr) == (
        want.returncode,
        want.stdout,
        want.stderr,
    ), (
        args,
        want.stderr[-300:],
        got.stderr[-300:],
    )
    return got


_VALUED = ("--socket", "--agent", "--timeout", "--connect-timeout")


def _bad_command_lines() -> list[tuple[str, ...]]:
    """Every way a command line is bad usage: no EVENT, two, an unknown or bare-dash
    option, and each valued option without its value — alone, after EVENT (last), before
    --help — each with and without --fail-closed (which makes bad usage block)."""
    lines: list[tuple[str, ...]] = [
        (),
        ("--nope",),
        ("Stop", "--nope"),
        ("-x", "Stop"),
        ("-",),
        ("Stop", "-"),
        ("A", "B"),
        ("A", "--socket=/x", "B"),
        ("-h", "--nope"),
        ("--nope", "--help"),
        ("A", "B", "--help"),
    ]
    for flag in _VALUED:
        lines += [(flag,), ("Stop", flag), (flag, "--help"), (f"{flag}=x",), ("Stop", "-" + flag)]
    return lines + [("--fail-closed", *line) for line in lines]


async def test_every_bad_command_line_is_said_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """Bad usage prints the same two usage lines on stderr and exits 1 (2 under
    --fail-closed) in both relays, whatever the mistake; and a valued option given its
    value in either form, anywhere on the line, is read as that option's value."""
    env = {"HOOKD_SOCKET": str(tmp_path / "env.sock")}
    for line in _bad_command_lines():
        proc = await _both_alike(compiled_relay, *line, env=env)
        assert proc.returncode == (2 if "--fail-closed" in line else 1), line
        assert (proc.stdout, proc.stderr) == (b"", relay.USAGE.split("\n\n")[0].encode() + b"\n")
    flag_sock = str(tmp_path / "flag.sock")
    for line in [
        ("Stop", "--socket", flag_sock, "--connect-timeout", "5", "--timeout", "7"),
        ("--timeout=7", "--connect-timeout=5", "--socket=" + flag_sock, "Stop"),
        ("--connect-timeout", "5", "--timeout", "7", "Stop", "--socket", flag_sock),
        ("--agent", "codex", "--socket", flag_sock, "PreToolUse", "--timeout", "7"),
        ("--socket", flag_sock, "--agent=gemini", "BeforeTool", "--connect-timeout", "5"),
    ]:
        proc = await _both_alike(compiled_relay, *line, env=env)
        assert proc.returncode == 0, line
        assert f"(socket {flag_sock})".encode() in proc.stdout + proc.stderr, line
    for line in [("Stop", "--timeout", "0"), ("--connect-timeout", "-1", "Stop")]:
        proc = await _both_alike(compiled_relay, *line, env=env)
        assert b"must be a number of seconds over 0" in proc.stdout, line
    # --fail-closed anywhere on the line holds, even where an option took it as its value
    for line in [("Stop", "--socket", "--fail-closed"), ("--agent", "--fail-closed", "Stop")]:
        proc = await _both_alike(compiled_relay, *line, env=env)
        assert (proc.returncode, proc.stdout) == (2, b""), line


def _enc(value: Any) -> bytes:
    return msgspec.msgpack.encode(value)


# A container's header holding one element (a map's one key is "k"), in each form.
_ONE = {
    "fixarray": b"\x91",
    "array16": b"\xdc\x00\x01",
    "fixmap": b"\x81\xa1k",
    "map32": b"\xdf\x00\x00\x00\x01\xa1k",
}
_EMPTY = {
    "fixarray": b"\x90",
    "array16": b"\xdc\x00\x00",
    "fixmap": b"\x80",
    "map32": b"\xdf" + bytes(4),
}


def _nested(levels: int, form: str, inner: str) -> tuple[bytes, int]:
    """``levels`` containers of ``form``, each inside the one before, the innermost holding
    a nil (``inner="nil"``) or nothing; returns the bytes and the depth of the deepest value,
    counting the frame's map as level 0 (the nesting's outermost container is level 1)."""
    if inner == "nil":
        return _ONE[form] * levels + b"\xc0", levels + 1
    return _ONE[form] * (levels - 1) + _EMPTY[form], levels


def _reply_around(key: bytes, value: bytes) -> bytes:
    """A relay_reply frame whose first pair is ``key: value``, then the answer's fields."""
    body = b"\x85" + key + value + _enc("kind") + _enc("relay_reply") + _enc("id") + b"\x01"
    body += _enc("stdout") + _enc("OUT") + _enc("exit_code") + b"\x03"
    return len(body).to_bytes(4, "big") + body


def _nesting_cases() -> list[tuple[str, bytes, bool]]:
    """(id, reply, read): values and keys nested to each side of the 64-level bound, in
    every container form, and far past it."""
    cases = []
    for form, inner in itertools.product(_ONE, ("nil", "empty")):
        for levels in (63, 64, 65, 66):
            nested, depth = _nested(levels, form, inner)
            name = f"{form}-{levels}-{inner}"
            cases.append((f"value-{name}", _reply_around(_enc("x"), nested), depth <= 64))
            cases.append((f"key-{name}", _reply_around(nested, _enc("v")), depth <= 64))
    for levels in (500, 1000, 5000):
        nested, _ = _nested(levels, "fixarray", "nil")
        cases.append((f"value-fixarray-{levels}", _reply_around(_enc("x"), nested), False))
    return cases


# A map key of every MessagePack type that is not a str (hookd sends none): the pair is
# passed over, at the frame's top level or inside a value, and the answer still read.
_ODD_KEYS = {
    "int": _enc(5),
    "negative": _enc(-1),
    "uint16": _enc(60000),
    "nil": b"\xc0",
    "true": b"\xc3",
    "float": _enc(0.5),
    "bin-kind": _enc(b"kind"),
    "array": _enc([1]),
    "empty-array": b"\x90",
    "array-of-kind": _enc(["kind"]),
    "map": _enc({"a": 1}),
    "empty-map": b"\x80",
    "map-of-kind": _enc({"kind": "relay_reply"}),
    "array16-of-maps": b"\xdc\x00\x02" + _enc({"a": [1]}) + _enc({}),
}


async def test_nesting_and_map_keys_of_every_kind_are_read_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """A reply value may nest 64 levels deep (the frame's map is level 0); one level more,
    in any container form, as a value or as a key, is a malformed reply, in both relays
    with the same bytes (Python's own recursion limit no longer decides).  A map key of any
    type but str — an int, nil, a float, bin, an array, a map — is passed over like an
    unknown field, at the top or inside a value, and the answer is read."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    cases = _nesting_cases()
    for name, key in _ODD_KEYS.items():
        cases.append((f"top-key-{name}", _reply_around(key, _enc("NOT-MINE")), True))
        inside = b"\x82" + key + _enc("NOT-MINE") + _enc("b") + _enc([key.hex()])
        cases.append((f"inner-key-{name}", _reply_around(_enc("m"), inside), True))
    for name, reply, read in cases:
        answers = []
        for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
            sock = tmp_path / f"{who}.sock"
            proc, _ = await _relay_against(WELCOME + reply, cmd, sock, "Stop", stdin=b"{}", env={})
            sock.unlink()
            answers.append((proc.returncode, proc.stdout, proc.stderr))
        assert answers[0] == answers[1], name
        if read:
            assert answers[1] == (3, b"OUT", b""), name
        else:
            said = _decided(subprocess.CompletedProcess([], *answers[1]), closed=False)
            assert said == "hookd failed to answer: malformed reply frame", name


def _long_paths(tmp_path: Path) -> list[str]:
    """Paths whose walk reaches a name of 4094–4098 bytes (PATH_MAX is 4096 with its NUL),
    as the last component or before another one, or jumps past it with one long name; and
    a path whose rest grows past 8 KiB through links (each target a long run of ``./``).
    Each is reached through a short link, so that every message stays short."""
    deep = tmp_path / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:  # mkdir relative to a directory descriptor: no call sees the whole long path
        length = len(str(deep))
        while length < 3940:
            name = "d" * min(250, 3940 - length - 1)
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd, length = inner, length + 1 + len(name)
        (tmp_path / "to-deep").symlink_to(os.readlink(f"/proc/self/fd/{fd}"))
    finally:
        os.close(fd)
    paths = []
    for total in (4094, 4095, 4096, 4097, 4098):
        name = "n" * (total - length - 1)  # the deep directory's path + "/" + name
        paths += [f"{tmp_path}/to-deep/{name}", f"{tmp_path}/to-deep/{name}/x.sock"]
    paths.append(f"{tmp_path}/to-deep/{'n' * 255}/x.sock")  # from under to over in one name
    for k in (1, 2, 3):  # l1 -> l2/./././…/x, l2 -> l3/./…, …: the rest outgrows 8 KiB
        (tmp_path / f"l{k}").symlink_to(f"l{k + 1}/" + "./" * 2000 + "x")
    (tmp_path / "l4").symlink_to(".")
    return [*paths, f"{tmp_path}/l1/y.sock"]


async def test_every_path_form_is_checked_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path, sanitized_relay: Path
) -> None:
    """The socket path in every form a user or an agent may give: relative (plain, with
    ``.``, ``..``, ``//``, a trailing ``/``, through a link, from a working directory that
    was removed), absolute with ``..`` above ``/``, at the PATH_MAX edge and past it, and
    grown past 8 KiB by links.  Both relays check it the same way and say so with the same
    bytes (sockpath.unsafe_reason and hookd-relay.c's unsafe_reason, word for word); the
    compiled relay under AddressSanitizer too (a name one byte past its buffer aborts it)."""
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "lax").mkdir()
    (work / "lax").chmod(0o777)
    (work / "to-sub").symlink_to("sub")
    held = _hold(work / "sub" / "held.sock")
    gone = tmp_path / "gone"
    relative = [
        "x.sock", "./x.sock", "sub/x.sock", "sub//x.sock", "sub/./x.sock", "sub/../x.sock",
        "../work/sub/x.sock", "lax/x.sock", "sub/", "sub", ".", "..", "to-sub/x.sock",
        "to-sub/../x.sock", "sub/held.sock", "to-sub/held.sock", "sub/held.sock/",
    ]  # fmt: skip
    absolute = [
        f"//{str(work)[1:]}//sub//x.sock", f"/../../..{work}/sub/x.sock", f"{work}/sub/held.sock",
        f"{work}/to-sub/../lax/x.sock", "/", "/..",
    ]  # fmt: skip
    python = [sys.executable, "-I", "-S", str(RELAY)]

    async def both(path: str, cwd: Path, remove_cwd: bool = False) -> None:
        answers = []
        for cmd in (python, [str(compiled_relay)], [str(sanitized_relay)]):
            if remove_cwd:  # the relay starts in `gone`, which is removed under it
                gone.mkdir()
                cmd = ["sh", "-c", 'rmdir "$PWD" && exec "$0" "$@"', *cmd]
            argv = [*cmd, "Stop", "--socket", path, "--connect-timeout", "0.2"]
            proc = await trio.run_process(
                argv,
                stdin=b"{}",
                cwd=cwd,
                env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"},
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
            answers.append((proc.returncode, proc.stdout, proc.stderr))
        assert answers[0] == answers[1] == answers[2], (path, answers)
        assert answers[1][0] == 0 and answers[1][1].startswith(b'{"systemMessage": '), path

    try:
        for path in relative:
            await both(path, work)
        for path in absolute + _long_paths(tmp_path):
            await both(path, work)
        await both("x.sock", gone, remove_cwd=True)
        await both(str(work / "sub" / "x.sock"), gone, remove_cwd=True)
    finally:
        held.close()


def _str_bytes(raw: bytes) -> bytes:
    """A MessagePack str of exactly these bytes (valid UTF-8 or not), shortest header."""
    n = len(raw)
    if n < 32:
        return bytes([0xA0 | n]) + raw
    width, code = (1, 0xD9) if n < 256 else (2, 0xDA) if n < 65536 else (4, 0xDB)
    return bytes([code]) + n.to_bytes(width, "big") + raw


# The bytes a str field may carry: every header width, non-ASCII, a NUL, control
# characters and JSON's quote and backslash, UTF-8 that is not (a lone continuation byte,
# a cut sequence, a surrogate, an overlong form).
_FIELD_BYTES = {
    "empty": b"",
    "31": b"x" * 31,
    "32": b"x" * 32,
    "256": "é".encode() * 128,
    "65536": b"y" * 65536,
    "nul": b"a\x00b",
    "controls": b'tab\there "quoted" back\\slash\x1f\x7f',
    "lone-continuation": b"a\x80b",
    "cut-sequence": b"a\xe2\x82",
    "surrogate": b"\xed\xa0\x80",
    "overlong": b"\xc0\xaf",
    "ff": b"\xff\xfe",
}
# A field of another type than str: said as None.
_FIELD_OTHER = {"int": _enc(5), "nil": b"\xc0", "bin": _enc(b"busy"), "array": _enc(["b"])}


def _json_bytes(text: bytes) -> bytes:
    """``text`` as a JSON string, escaped as both relays escape their own message: a quote,
    a backslash and a control character; every other byte as it is."""
    out = b"".join(
        b"\\" + bytes([c]) if c in b'"\\' else b"\\u%04x" % c if c < 0x20 else bytes([c])
        for c in text
    )
    return b'"' + out + b'"'


async def test_an_error_frame_of_every_field_form_is_said_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """An ``error`` frame's code and message are said whole, as the bytes sent (no
    truncation, no replacement of what is not UTF-8, a NUL escaped in JSON), and as None
    when not a str or missing: the same bytes from both relays, failing open (JSON) and
    closed (stderr)."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    forms = {name: (_str_bytes(raw), raw) for name, raw in _FIELD_BYTES.items()}
    forms |= {name: (value, b"None") for name, value in _FIELD_OTHER.items()}
    frames = {"missing": (_frame({"kind": "error"}), b"None", b"None")}
    for name, (value, shown) in forms.items():
        head = b"\x83" + _enc("kind") + _enc("error")
        frames[f"code-{name}"] = (
            _frame_of(head + _enc("code") + value + _enc("message") + _enc("m")),
            shown,
            b"m",
        )
        frames[f"message-{name}"] = (
            _frame_of(head + _enc("message") + value + _enc("code") + _enc("c")),
            b"c",
            shown,
        )
    for name, (reply, code, message) in frames.items():
        said = b"hookd failed to answer: hookd refused the event (%s): %s" % (code, message)
        for mode, want in (
            ((), (0, b'{"systemMessage": ' + _json_bytes(said) + b"}\n", b"")),
            (("--fail-closed",), (2, b"", said + b"\n")),
        ):
            for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
                sock = tmp_path / f"{who}.sock"
                proc, _ = await _relay_against(
                    WELCOME + reply, cmd, sock, "Stop", *mode, stdin=b"{}", env={}
                )
                sock.unlink()
                assert (proc.returncode, proc.stdout, proc.stderr) == want, (name, mode, who)


def _frame_of(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


@pytest.mark.parametrize("name", sorted(_FIELD_BYTES))
async def test_a_reply_s_stdout_and_stderr_reach_the_agent_as_the_bytes_sent(
    name: str, any_relay: list[str], tmp_path: Path
) -> None:
    """The hook's stdout and stderr in the reply are written as the bytes sent, whatever
    they are (UTF-8 or not, a NUL, control characters), by every relay."""
    raw = _FIELD_BYTES[name]
    body = b"\x85" + _enc("kind") + _enc("relay_reply") + _enc("id") + b"\x01"
    body += _enc("stdout") + _str_bytes(raw) + _enc("stderr") + _str_bytes(raw[::-1])
    body += _enc("exit_code") + b"\x03"
    proc, _ = await _relay_against(
        WELCOME + _frame_of(body), any_relay, tmp_path / "peer.sock", "Stop", stdin=b"{}", env={}
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, raw, raw[::-1])


async def test_the_default_socket_is_found_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """With no ``--socket`` (or an empty one): ``$HOOKD_SOCKET`` unless empty, else
    ``$XDG_RUNTIME_DIR/hookd/hookd.sock`` when that is a directory (a link to one counts,
    as ``os.path.isdir`` says), else ``/tmp/hookd-<uid>/hookd.sock`` — when it is missing,
    empty, a file or a dangling link.  Both relays try the same socket and say it alike."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (tmp_path / "to-runtime").symlink_to(runtime)
    (tmp_path / "file").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    fallback = f"{sockpath.fallback_dir()}/hookd.sock"
    env_sock, linked = str(tmp_path / "env.sock"), tmp_path / "to-runtime"
    cases = [
        ({"HOOKD_SOCKET": env_sock}, (), env_sock),
        ({"HOOKD_SOCKET": env_sock}, ("--socket=",), env_sock),
        ({"HOOKD_SOCKET": "", "XDG_RUNTIME_DIR": str(runtime)}, (), f"{runtime}/hookd/hookd.sock"),
        ({"XDG_RUNTIME_DIR": str(linked)}, (), f"{linked}/hookd/hookd.sock"),
    ]
    if not Path(fallback).parent.exists():  # never send a test's event to a real daemon
        for base in (
            "",
            str(tmp_path / "missing"),
            str(tmp_path / "file"),
            str(tmp_path / "dangling"),
        ):
            cases.append(({"XDG_RUNTIME_DIR": base}, (), fallback))
        cases.append(({}, (), fallback))
    for env, args, tried in cases:
        proc = await _both_alike(compiled_relay, "Stop", *args, env=env)
        assert f"(socket {tried})" in json.loads(proc.stdout)["systemMessage"], (env, args)


# Every spelling of a deadline: a decimal number between ASCII blanks is one; hex, `_`,
# other scripts' digits, inf/nan, anything around it are not (nor 0, negative, ≥ 1e9).
_SPELLINGS = [
    "5", " 5", "5 ", "\t5\n", "5\r", "5\x0b", "\x0c5", "+5", "5.", ".5", "5e0", "5E-1", "0.001",
    "999999999.9", "1e-320", "1e9", "0", "-0", "-5", "1e-400", "1e400", "inf", "nan", "0x10",
    "0x1p3", "1_0", "\u0665", "5\u00a0", " ", "5 5", "5s", "1,5", "1e", "e1", ".", "+", "--5",
    "a'b\"c", "\x01",
]  # fmt: skip


async def test_every_spelling_of_a_deadline_is_read_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """``--timeout``, ``--connect-timeout`` and their environment variables, in every
    spelling: both relays take the same ones and refuse the others with the same words
    (the text as given, quoted), failing as the mode says."""
    sock = str(tmp_path / "missing.sock")
    for text in _SPELLINGS:
        for how in ("--timeout", "--connect-timeout=", "HOOKD_RELAY_TIMEOUT"):
            args: tuple[str, ...] = ()
            env: dict[str, str] = {}
            if how.startswith("--"):
                args = (how + text,) if how.endswith("=") else (how, text)
            else:
                env = {how: text}
            proc = await _both_alike(compiled_relay, "Stop", "--socket", sock, *args, env=env)
            said = json.loads(proc.stdout)["systemMessage"]
            taken = said.startswith("hookd is not running")
            assert taken or f"not '{text}'" in said, (text, how, said)


# CLAUDE_PID: ASCII digits only are a pid (str.isdigit alone takes other scripts' digits).
_PIDS = [
    "0",
    "7",
    "0042",
    "4242",
    " 42",
    "42 ",
    "+42",
    "-1",
    "4_2",
    "\u0661\u0662",
    "\u00b2",
    "",
    "x",
]


async def test_every_spelling_of_claude_pid_is_sent_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """``CLAUDE_PID`` in every spelling: both relays send the same two frames, byte for
    byte — the pid in hello and relay when it is ASCII digits, else the parent's pid in
    the relay frame only — and answer alike."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    for pid in _PIDS:
        answers, sent = [], []
        for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
            sock = tmp_path / f"{who}.sock"
            proc, got = await _relay_against(
                _OK, cmd, sock, "Stop", stdin=b"{}", env={"CLAUDE_PID": pid, "LC_CTYPE": "C.UTF-8"}
            )
            sock.unlink()
            answers.append((proc.returncode, proc.stdout, proc.stderr))
            sent.append(got)
        assert answers[0] == answers[1] == (0, b"ok", b""), pid
        assert sent[0] == sent[1], pid
        hello = msgspec.msgpack.decode(_frames(sent[1])[0])
        assert hello.get("pid") == (int(pid) if pid.isascii() and pid.isdigit() else None), pid


def _peer_answers_with_a_block(path: Path, got: list[bytes], listening: trio.Event) -> None:
    """A peer whose hooks block: stdout, stderr and exit code 2."""
    reply = WELCOME + _frame(
        {"kind": "relay_reply", "id": 1, "stdout": "OUT", "stderr": "ERR", "exit_code": 2}
    )
    _serve_once(path, reply, got, listening)


@pytest.mark.parametrize("closed", [(1,), (2,), (1, 2)], ids=str)
async def test_a_closed_stdout_or_stderr_never_changes_what_the_hooks_decided(
    closed: tuple[int, ...], any_relay: list[str], tmp_path: Path
) -> None:
    """Started with stdout, stderr or both closed: the relay's socket never takes
    fd 1 or 2 (the frames reach hookd intact, nothing of our output in them) and the exit
    code is the hooks' (a block stays exit 2), in every relay."""
    got: list[bytes] = []
    sock = tmp_path / "peer.sock"
    argv = [*any_relay, "Stop", "--socket", str(sock)]

    def run() -> subprocess.CompletedProcess[bytes]:
        def close() -> None:
            for fd in closed:
                os.close(fd)

        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ASAN_OPTIONS": "detect_leaks=0"}
        return subprocess.run(
            argv,
            input=b"{}",
            env=env,
            timeout=60,
            preexec_fn=close,
            check=False,
        )

    listening = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            trio.to_thread.run_sync, _peer_answers_with_a_block, sock, got, listening
        )
        await listening.wait()
        proc = await trio.to_thread.run_sync(run)
    assert proc.returncode == 2
    frames = _frames(got[0])
    assert len(frames) == 2
    assert msgspec.msgpack.decode(frames[0])["kind"] == "hello"
    request = protocol.decode_client(frames[1])
    assert isinstance(request, protocol.Relay)
    assert request.input == b"{}"


# One value of every MessagePack type and header width: the integers at every width hold
# 1 (what `id` must be), then other numbers, a bool, a float, strs, bin, containers.
_EVERY_TYPE = {
    "fixint-1": b"\x01",
    "uint8-1": b"\xcc\x01",
    "uint16-1": b"\xcd\x00\x01",
    "uint32-1": b"\xce\x00\x00\x00\x01",
    "uint64-1": b"\xcf" + (1).to_bytes(8, "big"),
    "int8-1": b"\xd0\x01",
    "int16-1": b"\xd1\x00\x01",
    "int32-1": b"\xd2\x00\x00\x00\x01",
    "int64-1": b"\xd3" + (1).to_bytes(8, "big"),
    "fixint-0": b"\x00",
    "fixint-127": b"\x7f",
    "negative-1": b"\xff",
    "negative-32": b"\xe0",
    "uint8-200": b"\xcc\xc8",
    "int8-minus-2": b"\xd0\xfe",
    "int16-minus-300": b"\xd1\xfe\xd4",
    "uint64-max": b"\xcf" + b"\xff" * 8,
    "int64-min": b"\xd3\x80" + bytes(7),
    # negative at each width, the low bits of 1 (never the id) or of 128 (exit 128)
    "int8-minus-127": b"\xd0\x81",
    "int8-minus-128": b"\xd0\x80",
    "int16-minus-32767": b"\xd1\x80\x01",
    "int32-minus-2147483647": b"\xd2\x80\x00\x00\x01",
    "int64-minus-max": b"\xd3\x80" + bytes(6) + b"\x01",
    "uint64-2-63-plus-1": b"\xcf\x80" + bytes(6) + b"\x01",
    "nil": b"\xc0",
    "false": b"\xc2",
    "true": b"\xc3",
    "float32-1": b"\xca\x3f\x80\x00\x00",
    "float64-1": b"\xcb\x3f\xf0" + bytes(6),
    "str-1": b"\xa11",
    "str-empty": b"\xa0",
    "str8": b"\xd9\x03abc",
    "bin-1": b"\xc4\x01\x01",
    "fixarray-empty": b"\x90",
    "fixarray-1": b"\x91\x01",
    "array16-1": b"\xdc\x00\x01\x01",
    "fixmap-empty": b"\x80",
    "fixmap-1": b"\x81\xa1k\x01",
    "map16-empty": b"\xde\x00\x00",
    "map32-empty": b"\xdf" + bytes(4),
}


async def test_each_field_the_relay_reads_of_every_type_is_read_alike_by_both_relays(
    tmp_path: Path, compiled_relay: Path
) -> None:
    """``kind``, ``id``, ``stdout``, ``stderr`` and ``exit_code`` of a reply, each given a
    value of every type and width: an integer 1 of any width is the id, a bool or a float
    never; an integer of any width is the exit code (its low 8 bits), anything else 0;
    only a str is output.  Both relays answer with the same bytes."""
    python = [sys.executable, "-I", "-S", str(RELAY)]
    fields = {
        "kind": _enc("relay_reply"),
        "id": b"\x01",
        "stdout": _enc("OUT"),
        "stderr": _enc("ERR"),
        "exit_code": b"\x03",
    }
    for field, (name, value) in itertools.product(fields, _EVERY_TYPE.items()):
        body = b"\x85" + b"".join(_enc(k) + (value if k == field else v) for k, v in fields.items())
        answers = []
        for who, cmd in (("p", python), ("c", [str(compiled_relay)])):
            sock = tmp_path / f"{who}.sock"
            proc, _ = await _relay_against(
                WELCOME + _frame_of(body), cmd, sock, "Stop", stdin=b"{}", env={}
            )
            sock.unlink()
            answers.append((proc.returncode, proc.stdout, proc.stderr))
        assert answers[0] == answers[1], (field, name, answers)
        ones = {f"{width}-1" for width in ("fixint", "uint8", "uint16", "uint32", "uint64")}
        ones |= {f"int{bits}-1" for bits in (8, 16, 32, 64)}
        taken = field not in ("kind", "id") or (field == "id" and name in ones)
        answered = not answers[1][1].startswith(b'{"systemMessage": ')
        assert answered == taken, (field, name, answers[1])


@pytest.mark.parametrize("agent", ["claude", "copilot"])
@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed"])
@pytest.mark.parametrize("which", ["python", "compiled"])
def test_a_relay_out_of_memory_says_so_and_exits_as_its_mode_says(
    request: pytest.FixtureRequest, tmp_path: Path, which: str, closed: bool, agent: str
) -> None:
    """Run out of memory (an address-space limit of 32 MiB, 40 MiB of hook input): both
    relays say ``MemoryError: out of memory`` and exit 2 under --fail-closed, 1
    otherwise, whatever the agent — never a crash, never exit 0 (which would let a
    blocking hook's event go ahead without it: the Python relay did, failing open),
    and nothing is sent.  (Not the sanitized build: ASan's shadow memory alone is
    larger than the limit.)"""
    import resource

    relay_cmd = (
        [sys.executable, "-I", "-S", str(RELAY)]
        if which == "python"
        else [str(request.getfixturevalue("compiled_relay"))]
    )
    argv = [*relay_cmd, "--agent", agent, "Stop", "--socket", str(tmp_path / "x.sock")]
    argv += ["--fail-closed"] if closed else []
    limit = 32 << 20

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    block, left = b"i" * (1 << 20), 40 << 20
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        preexec_fn=small,
    ) as proc:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it gave up reading
            while left:
                left -= proc.stdin.write(block)
        out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out) == (2 if closed else 1, b"")
    assert err == b"hookd-relay failed: MemoryError: out of memory\n"

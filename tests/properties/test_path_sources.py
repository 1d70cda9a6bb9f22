"""Every path hookd receives, from any source, passes the same validation (issue 32).

The rule (``hookd_client/paths.py``): a path with a NUL byte or longer than
``PATH_MAX`` is refused wherever it comes from, and so is a relative one where a
directory is meant (it would be resolved against the *daemon's* directory).  The
sources, enumerated: an event input's ``cwd``, ``transcript_path`` and
``agent_transcript_path``, the agent's environment's ``CLAUDE_PROJECT_DIR``, the
control requests' ``cwd``/``project``/``source``/``files``, and the http door's
event input.  Each bad path is answered with a clear error that names the field
(``bad_request``/``bad_input`` on the socket, ``400`` at the http door), no hook
runs, no session is made for it — and the daemon serves the next event.

Names are the other half: a session id becomes one component of the paths hookd
creates (``hookd/safe_names.py``); whatever the id, that component stays one plain
name inside its parent, and two ids never share it (hypothesis).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from hookd.doors import http_endpoint
from hookd.safe_names import file_name_for
from hookd_client import protocol
from hookd_client.paths import PATH_MAX
from support.daemon import configure
from support.events import fixture_event
from support.http_door import exchange

BAD: dict[str, str] = {
    "a NUL byte": "/tmp/hookd-\0-x",
    "longer than PATH_MAX": "/" + "a" * PATH_MAX,
}
RELATIVE = "relative/dir"


def _fire(input_: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    fire: dict[str, Any] = {"kind": "fire", "id": 1, "event": input_["hook_event_name"]}
    fire["input"] = input_
    if env is not None:
        fire["env"] = env
    return fire


def _sources(bad: str, marks: Path) -> dict[str, dict[str, Any]]:
    """Every socket request that carries a path, with ``bad`` in that path."""
    pre = fixture_event("PreToolUse-Bash", session_id="s-paths", cwd=str(marks))
    sub = fixture_event("SubagentStop", session_id="s-paths", cwd=str(marks))
    return {
        "input cwd": _fire({**pre, "cwd": bad}),
        "input transcript_path": _fire({**pre, "transcript_path": bad}),
        "input agent_transcript_path": _fire({**sub, "agent_transcript_path": bad}),
        "env CLAUDE_PROJECT_DIR": _fire(pre, env={"CLAUDE_PROJECT_DIR": bad}),
        "hooks cwd": {"kind": "hooks", "id": 1, "cwd": bad},
        "validate files": {"kind": "validate", "id": 1, "files": [bad]},
        "register project": {
            "kind": "register_session_hooks",
            "id": 1,
            "session_id": "s-paths",
            "hooks": {},
            "project": bad,
        },
        "register source": {
            "kind": "register_session_hooks",
            "id": 1,
            "session_id": "s-paths",
            "hooks": {},
            "source": bad,
        },
    }


ABSOLUTE_ONLY = {"input cwd", "env CLAUDE_PROJECT_DIR", "hooks cwd", "register project"}
"""The sources that name a directory: a relative path is refused there too."""

FIELD = {
    "input cwd": "cwd",
    "input transcript_path": "transcript_path",
    "input agent_transcript_path": "agent_transcript_path",
    "env CLAUDE_PROJECT_DIR": "project directory",
    "hooks cwd": "cwd",
    "validate files": "files[0]",
    "register project": "project",
    "register source": "source",
}


def _ask(path: Path, message: dict[str, Any]) -> dict[str, Any]:
    """One request on a fresh connection (blocking): the daemon's answer as a dict."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        hello = protocol.encode(protocol.Hello(client="path-sources"))
        body = msgspec.msgpack.encode(message)
        conn.sendall(hello + protocol.HEADER.pack(len(body)) + body)
        answers: list[dict[str, Any]] = []
        buffer = b""
        while len(answers) < 2:  # the welcome, then the answer
            while len(buffer) < 4 or len(buffer) < 4 + protocol.HEADER.unpack(buffer[:4])[0]:
                chunk = conn.recv(65536)
                assert chunk, f"the daemon closed the connection after {answers}"
                buffer += chunk
            (length,) = protocol.HEADER.unpack(buffer[:4])
            answers.append(msgspec.msgpack.decode(buffer[4 : 4 + length]))
            buffer = buffer[4 + length :]
        return answers[1]


EVENT_SOURCES = {s for s in FIELD if s.startswith(("input ", "env "))}
"""The sources an event carries: refused alike in a session hookd already knows."""

CASES = [
    pytest.param(source, kind, known, id=f"{source}-{kind}{'-known session' if known else ''}")
    for source in FIELD
    for kind in [*BAD, *(["relative"] if source in ABSOLUTE_ONLY else [])]
    for known in [False, *([True] if source in EVENT_SOURCES else [])]
]


@pytest.mark.parametrize(("source", "kind", "known"), CASES)
async def test_every_path_source_refuses_every_unusable_path(
    daemon_factory: Any, tmp_path: Path, source: str, kind: str, known: bool
) -> None:
    """``known``: the session had an event already — a path it brings later (a new
    ``CLAUDE_PROJECT_DIR``, a transcript) passes the same validation as its first."""
    handle = await daemon_factory()
    marks = tmp_path / "ran"
    marks.mkdir()
    hook = {"type": "command", "command": f"mktemp {marks}/ran.XXXXXX"}  # a mark per run
    configure(handle, {e: [{"hooks": [hook]}] for e in ("PreToolUse", "SubagentStop")})
    ran = 0
    if known:
        first = _fire(fixture_event("PreToolUse-Bash", session_id="s-paths", cwd=str(marks)))
        answer = await trio.to_thread.run_sync(_ask, handle.socket, first)
        assert answer["kind"] == "fire_reply", answer
        ran = len(list(marks.iterdir()))
        assert ran == 1
    bad = RELATIVE if kind == "relative" else BAD[kind]
    message = _sources(bad, marks)[source]
    answer = await trio.to_thread.run_sync(_ask, handle.socket, message)
    assert answer["kind"] == "error", (source, kind, answer)
    assert answer["code"] in ("bad_request", "bad_input"), answer
    assert FIELD[source] in answer["message"], answer["message"]
    assert len(list(marks.iterdir())) == ran, "a hook ran for a refused path"
    assert all(s.project != bad for s in handle.daemon.sessions.all()), "a session was made"
    good = _fire(fixture_event("PreToolUse-Bash", session_id="s-good", cwd=str(tmp_path)))
    served = await trio.to_thread.run_sync(_ask, handle.socket, good)
    assert served["kind"] == "fire_reply", served
    assert len(list(marks.iterdir())) == ran + 1


@pytest.mark.parametrize(
    ("field", "kind"),
    [("cwd", "relative"), *((f, k) for f in ("cwd", "transcript_path") for k in BAD)],
)
async def test_the_http_door_refuses_the_same_paths(
    daemon_factory: Any, tmp_path: Path, field: str, kind: str
) -> None:
    handle = await daemon_factory(http_port=0)
    marks = tmp_path / "ran"
    marks.mkdir()
    configure(
        handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marks}/x"}]}]}
    )
    token = http_endpoint.load_or_create_token()
    bad = RELATIVE if kind == "relative" else BAD[kind]
    body = json.dumps({**fixture_event("PreToolUse-Bash", cwd=str(tmp_path)), field: bad}).encode()
    request = (
        f"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        f"authorization: Bearer {token}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    response = await trio.to_thread.run_sync(exchange, handle.daemon.http_port, request)
    assert response.startswith(b"HTTP/1.1 400 "), response[:300]
    assert field.encode() in response, response
    assert list(marks.iterdir()) == []


_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+=-]{0,127}|id-[0-9a-f]{32}")


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.sampled_from([".", "..", "../..", "/etc", "a/b", "a\0b", "-x", ".hidden", "x" * 200]),
        st.text(alphabet="./-_aA0\0\\~ ", max_size=12),
    )
)
def test_a_session_id_becomes_one_plain_name_whatever_it_is(session_id: str) -> None:
    name = file_name_for(session_id)
    if not session_id:
        assert name == "no-session"
        return
    assert _PLAIN.fullmatch(name), (session_id, name)
    assert name not in (".", "..") and "/" not in name and "\0" not in name
    assert (Path("/parent") / name).parent == Path("/parent")


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1), st.text(min_size=1))
def test_two_session_ids_never_share_a_name(first: str, second: str) -> None:
    if first != second:
        assert file_name_for(first) != file_name_for(second)

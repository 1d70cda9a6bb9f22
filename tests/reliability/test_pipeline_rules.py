"""Three rules of the event pipeline that its mutation run found unstated (issue 32).

- A fire reply says the trust gate held hooks back exactly when it did: with the
  count of the hooks held back, for an untrusted project with matching hooks; never
  for a trusted one, nor for one whose hooks do not match the event.
- A one-shot fire (``Fire.once``: ``hookctl fire``, a test harness) leaves no session
  behind, whether hooks ran for it or not, and ends none it did not make; a normal fire
  keeps its session.
- A session resumed by another agent process is that process's from its next event
  whose hooks run.
- The count of held-back hooks is the project's alone: the user's hooks that match
  beside them run, and are not counted.
- A session's record is the sum of its events (events, hook runs, each outcome), and
  nothing stays in flight after them (a hook is listed as running, for its own
  session, exactly while it runs); ``SessionEnd`` forgets the session and the
  circuit breakers of its hooks; resetting a breaker is audited.  What an event's hooks
  printed is held in the buffer budget only until its answer.
- A paused hook a session registered itself stays paused when the breakers are pruned
  (another session's end, a reload): only breakers of hooks that are gone are forgotten.
- An event cancelled because its requester left (the http door's hang-up) keeps its
  session.
- A session keeps the project it started in: an event of it that names another
  directory is judged by the session's project's hooks, and the reply says which
  (``kept_project``) — only then.
- hookd caps a Stop loop only for an agent with no cap of its own: a plain client
  fire is cut after ``stop_block_cap`` blocks; Claude Code's doors — the relay, the
  http door (port and ``http.sock``), a fire rendered for Claude Code — never are.

A real daemon on its socket; the trust store written as ``hookctl trust`` writes it.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import trio

from hookd.daemon.audit import AuditBreaker, AuditEvent, read_records
from hookd.daemon.trust import TrustStore
from hookd.doors.http_endpoint import load_or_create_token
from hookd_client import protocol
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure
from support.http_door import read_response


def _project(handle: Any, name: str, event_name: str, hooks: int) -> Path:
    project: Path = handle.project(name)
    guards = [{"type": "command", "command": f"true {n}"} for n in range(hooks)]  # not deduped
    groups = [{"matcher": "Bash", "hooks": guards}] if hooks else []
    text = json.dumps({"hooks": {event_name: groups}})
    (project / ".claude" / "hooks.json").write_text(text)
    return project


async def test_a_reply_names_the_held_back_hooks_exactly_when_some_were(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    untrusted = _project(handle, "untrusted", "PreToolUse", 2)
    elsewhere = _project(handle, "other-event", "PostToolUse", 1)
    trusted = _project(handle, "trusted", "PreToolUse", 2)
    TrustStore(handle.daemon.settings.state_path() / "trust.json").trust(
        str(trusted), handle.daemon.layout
    )
    handle.daemon.reload()

    def fire(project: Path, session: str) -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(cwd=str(project), session_id=session))

    held = await trio.to_thread.run_sync(fire, untrusted, "s-untrusted")
    assert held.held_back is not None and held.held_back.hooks == 2, held
    assert held.held_back.project == str(untrusted) and "hookctl trust" in held.held_back.reason
    assert held.result.hooks == []
    for project, session in ((trusted, "s-trusted"), (elsewhere, "s-elsewhere")):
        reply = await trio.to_thread.run_sync(fire, project, session)
        assert reply.held_back is None, (project, reply.held_back)
    assert len((await trio.to_thread.run_sync(fire, trusted, "s-t2")).result.hooks) == 2


async def test_the_held_back_count_is_the_projects_hooks_alone(daemon_factory: Any) -> None:
    handle = await daemon_factory(require_trust=True)
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true user"}]}]})
    project = _project(handle, "untrusted", "PreToolUse", 3)
    handle.daemon.reload()

    def fire() -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(cwd=str(project), session_id="s-mixed"))

    reply = await trio.to_thread.run_sync(fire)
    assert reply.held_back is not None and reply.held_back.hooks == 3, reply.held_back
    assert [run.hook.name for run in reply.result.hooks] == ["true user"], reply.result


STOP_LOOP = {"Stop": [{"hooks": [{"type": "command", "command": "echo AGAIN >&2; exit 2"}]}]}


def _stop_request(session: str, project: Path, token: str | None) -> bytes:
    raw = event("Stop", session_id=session, cwd=str(project))
    body = json.dumps(raw).encode()
    head = b"POST /hooks/Stop HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n" % len(body)
    if token is not None:
        head += b"authorization: Bearer " + token.encode() + b"\r\n"
    return head + b"\r\n" + body


async def test_only_an_agent_without_its_own_cap_gets_hookds_stop_cap(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(http_port=0)
    configure(handle, STOP_LOOP)
    cap = handle.daemon.settings.stop_block_cap
    token = load_or_create_token()
    loops = cap + 2

    def fires(session: str, times: int = loops, **how: Any) -> list[str | None]:
        raw = event("Stop", session_id=session, cwd=str(tmp_path))
        with Client(handle.socket) as client:
            return [client.fire("Stop", raw, **how).result.decision for _ in range(times)]

    def posts(session: str, over_unix: bool) -> list[bytes]:
        family = socket.AF_UNIX if over_unix else socket.AF_INET
        address: Any = (
            str(handle.daemon.http_socket) if over_unix else ("127.0.0.1", handle.daemon.http_port)
        )
        request = _stop_request(session, tmp_path, None if over_unix else token)
        with socket.socket(family) as conn:
            conn.settimeout(30)
            conn.connect(address)
            answers = []
            for _ in range(loops):
                conn.sendall(request)
                answers.append(read_response(conn)[1])
        return answers

    plain = await trio.to_thread.run_sync(fires, "s-plain")
    assert plain == ["block"] * cap + [None, "block"], plain
    # A Stop that runs no hook ends the loop: the count starts again after it.
    configure(handle, {})
    assert await trio.to_thread.run_sync(fires, "s-plain", 1) == [None]
    configure(handle, STOP_LOOP)
    again = await trio.to_thread.run_sync(fires, "s-plain", cap + 1)
    assert again == ["block"] * cap + [None], again
    for over_unix in (False, True):
        answers = await trio.to_thread.run_sync(posts, f"s-http-{over_unix}", over_unix)
        assert all(json.loads(a).get("decision") == "block" for a in answers), answers

    for_claude = await trio.to_thread.run_sync(partial(fires, "s-claude-format", claude=True))
    assert for_claude == ["block"] * loops, for_claude


def _input(event_name: str, cwd: Path, session: str, **fields: str) -> dict[str, Any]:
    """A recorded PreToolUse input in ``cwd``; for another event, its fields common to
    every event, the event's name and ``fields``."""
    raw: dict[str, Any] = event(cwd=str(cwd), session_id=session)
    if event_name == "PreToolUse":
        return raw
    common = {k: raw[k] for k in ("session_id", "transcript_path", "cwd")}
    return {**common, "hook_event_name": event_name, **fields}


async def test_a_one_shot_fire_leaves_no_session_behind(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = _project(handle, "p", "PreToolUse", 1)
    handle.daemon.reload()

    def fire(session: str, event_name: str, once: bool) -> None:
        raw = _input(event_name, project, session, prompt="hello")
        with Client(handle.socket) as client:
            client.fire(event_name, raw, once=once)

    for event_name in ("PreToolUse", "UserPromptSubmit"):  # hooks run / none match
        await trio.to_thread.run_sync(fire, f"once-{event_name}", event_name, True)
        await trio.to_thread.run_sync(fire, f"kept-{event_name}", event_name, False)
        # A one-shot fire into a session hookd already knows leaves it to its agent.
        await trio.to_thread.run_sync(fire, f"kept-{event_name}", event_name, True)
    sessions = {s.session_id for s in handle.daemon.sessions.all()}
    assert sessions == {"kept-PreToolUse", "kept-UserPromptSubmit"}, sessions


POST = r"""
import json, os, socket, sys
print(os.getpid())
body = json.dumps(json.loads(sys.argv[2])).encode()
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"POST /hooks/UserPromptSubmit HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
          + b"content-length: %d\r\n\r\n" % len(body) + body)
while s.recv(65536):
    pass
"""


async def test_a_resumed_session_belongs_to_the_process_that_resumed_it(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """``--resume`` in a new agent process: the session's next event whose hooks run
    comes from another process, and from then on the session is that process's (its
    wake-ups, ``hookctl sessions``) — not the exited one's."""
    handle = await daemon_factory()
    configure(handle, {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "true"}]}]})
    raw = event("UserPromptSubmit", session_id="s-resumed", cwd=str(tmp_path))
    sock = str(handle.daemon.http_socket)
    first = await trio.run_process(
        [sys.executable, "-I", "-S", "-c", POST, sock, json.dumps(raw)], capture_stdout=True
    )
    session = handle.daemon.sessions.get("s-resumed")
    assert session is not None and session.agent_pid == int(first.stdout)

    def post_here() -> None:
        body = json.dumps(raw).encode()
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(sock)
            conn.sendall(
                b"POST /hooks/UserPromptSubmit HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
                + b"content-length: %d\r\n\r\n" % len(body)
                + body
            )
            while conn.recv(65536):
                pass

    await trio.to_thread.run_sync(post_here)
    session = handle.daemon.sessions.get("s-resumed")
    assert session is not None and session.agent_pid == os.getpid()


async def test_a_sessions_record_is_the_sum_of_its_events_and_ends_with_it(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(breaker_threshold=2, breaker_cooldown=3600)
    hooks = [
        {"type": "command", "command": "true"},
        {"type": "command", "command": "echo broken >&2; exit 1"},
        {"type": "command", "command": "echo no >&2; exit 2"},
    ]
    big = {"type": "command", "command": "head -c 300000 /dev/zero | tr '\\0' x >&2"}
    configure(handle, {"PreToolUse": [{"hooks": hooks}], "Stop": [{"hooks": [big]}]})
    daemon = handle.daemon

    def fire(session: str, event_name: str = "PreToolUse") -> Any:
        with Client(handle.socket) as client:
            return client.fire(event_name, _input(event_name, tmp_path, session, reason="other"))

    replies = [await trio.to_thread.run_sync(fire, "s-acct") for _ in range(3)]
    runs = [run for reply in replies for run in reply.result.hooks]
    assert len(runs) == 8, "the failing hook is paused after two failures"
    session = daemon.sessions.get("s-acct")
    assert session is not None
    assert (session.events, session.hook_runs) == (3, 8)
    assert session.outcomes == Counter(run.outcome for run in runs), session.outcomes
    assert session.last_event == "PreToolUse"
    assert session.in_flight == 0 and daemon.activity.in_flight == 0
    assert daemon.activity.running_hooks() == []
    counters = daemon.activity.counters
    assert (counters["events"], counters["daemon_faults"], counters["breaker_paused"]) == (3, 0, 1)
    assert [state.key for state in daemon.breaker.states()] != []
    loud = await trio.to_thread.run_sync(fire, "s-acct", "Stop")
    assert len(loud.result.hooks[0].stderr) >= 100_000, "the output was kept"
    assert daemon.buffer_budget.used == 0, "an answered event still holds its hooks' output"

    # An event no hook matches is answered at once — and counted, and audited, once.
    quiet = await trio.to_thread.run_sync(fire, "s-acct", "UserPromptSubmit")
    assert quiet.result.hooks == []
    assert (session.events, counters["events"]) == (5, 5)
    audited = read_records(daemon.settings.state_path() / "audit").records
    assert [r.event for r in audited if isinstance(r, AuditEvent)].count("UserPromptSubmit") == 1

    await trio.to_thread.run_sync(fire, "s-acct", "SessionEnd")
    assert daemon.sessions.get("s-acct") is None
    assert daemon.breaker.states() == [], "the ended session's breakers are kept"

    for _ in range(2):
        await trio.to_thread.run_sync(fire, "s-reset")

    def reset() -> Any:
        with Client(handle.socket) as client:
            return client.call(protocol.ResetBreakers(id=client.next_id(), hook="broken"))

    assert len((await trio.to_thread.run_sync(reset))["reset"]) == 1
    records = read_records(daemon.settings.state_path() / "audit").records
    states = [r.state for r in records if isinstance(r, AuditBreaker)]
    assert states == ["paused", "paused", "reset"], states


async def test_a_hook_is_listed_as_running_for_its_session_while_it_runs(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    started, go = tmp_path / "started", tmp_path / "go"
    wait = f"touch {started}; while [ ! -e {go} ]; do sleep 0.01; done"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": wait}]}]})

    def fire() -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(session_id="s-running", cwd=str(tmp_path)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, fire)
        with trio.fail_after(30):
            while not started.exists():
                await trio.sleep(0.01)
        try:
            [running] = handle.daemon.activity.running_hooks()
        finally:
            go.touch()
        assert (running.session_id, running.event) == ("s-running", "PreToolUse"), running
        assert running.hook.startswith("touch "), running
    assert handle.daemon.activity.running_hooks() == []


async def test_an_event_whose_requester_left_keeps_its_session(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Claude Code hangs up at its hook timeout: the http door cancels the event's hooks.
    The session is still the agent's: its next event comes."""
    handle = await daemon_factory()
    daemon = handle.daemon
    started = tmp_path / "started"
    hang = f"touch {started}; while :; do sleep 0.05; done"
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": hang}]}]})
    body = json.dumps(event(session_id="s-left", cwd=str(tmp_path))).encode()
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(daemon.http_socket))
        conn.sendall(
            b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\n"
            + b"content-length: %d\r\n\r\n" % len(body)
            + body
        )
        with trio.fail_after(30):
            while not started.exists():
                await trio.sleep(0.01)
    with trio.fail_after(30):  # the requester left: its hooks are cancelled
        while daemon.activity.in_flight:
            await trio.sleep(0.01)
    session = daemon.sessions.get("s-left")
    assert session is not None, "a session forgotten with its event"
    assert session.in_flight == 0


async def test_a_session_keeps_its_project_and_the_reply_says_so(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    first = _project(handle, "first", "PreToolUse", 1)
    second = _project(handle, "second", "PreToolUse", 2)
    handle.daemon.reload()

    def fire(project: Path) -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(cwd=str(project), session_id="s-kept"))

    started = await trio.to_thread.run_sync(fire, first)
    assert started.kept_project is None and len(started.result.hooks) == 1
    moved = await trio.to_thread.run_sync(fire, second)
    assert moved.kept_project == str(first), moved
    assert len(moved.result.hooks) == 1, "judged by another project's hooks"
    again = await trio.to_thread.run_sync(fire, first)
    assert again.kept_project is None


async def test_a_sessions_own_paused_hook_stays_paused_when_breakers_are_pruned(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(breaker_threshold=1, breaker_cooldown=3600)
    failing = {"type": "command", "command": "echo broken >&2; exit 1"}
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]})

    def fire(session: str, event_name: str = "PreToolUse") -> Any:
        with Client(handle.socket) as client:
            return client.fire(event_name, _input(event_name, tmp_path, session, reason="other"))

    def register() -> int:
        with Client(handle.socket) as client:
            hooks = {"PreToolUse": [{"hooks": [failing]}]}
            return client.register_session_hooks("s-own", hooks, project=str(tmp_path))

    assert await trio.to_thread.run_sync(register) == 1
    first = await trio.to_thread.run_sync(fire, "s-own")
    assert sorted(run.outcome for run in first.result.hooks) == ["non_blocking_error", "success"]
    await trio.to_thread.run_sync(fire, "s-other")
    await trio.to_thread.run_sync(fire, "s-other", "SessionEnd")  # prunes the breakers
    handle.daemon.reload()
    paused = await trio.to_thread.run_sync(fire, "s-own")
    assert [run.outcome for run in paused.result.hooks] == ["success"], paused.result
    assert any("paused by the circuit breaker" in e for e in paused.result.errors)

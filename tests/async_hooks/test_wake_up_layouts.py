"""Every asyncRewake wake-up reaches exactly its own session, whatever the layout (issue 32).

The rule, over the process/session layouts agents really have: one Agent SDK process
with two sessions (on two connections, or both on one), a session after ``/clear``
(the old session's subscription still open, or gone), two agent processes, and
agent-wide subscriptions (no session named).  Each session's hook wakes up after
every subscription is in place; each wake-up is pushed to exactly the subscription
of its own session (or, agent-wide, of its own process) — never to another session
of the same process — and one with no such subscriber waits for its own session's
poll.  The issue's hand-made mutant delivered session A's wake-up to session B of
the same process; no test had two sessions in one process.

Each hook names its session in its message, so a push that carries the right
``session_id`` but another session's text is caught too.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from .helpers import command_hook, configure, event, poll_results, wait_until

WAKE = """\
import json, os, sys, time
data = json.load(sys.stdin)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
print("WAKE-UP " + data["session_id"], file=sys.stderr)
sys.exit(2)
"""

P, Q = 717171, 727272
"""Two agent processes' pids."""

# layout: connections {name: pid}; subscriptions [(conn, session | None)];
# fires [(conn, session)]; closed before the wake-ups [conn];
# where each session's wake-up must go: a connection's name, or "poll".
LAYOUTS: dict[str, dict[str, Any]] = {
    "one process, two sessions on two connections": {
        "conns": {"a": P, "b": P},
        "subscribe": [("a", "s-a"), ("b", "s-b")],
        "fire": [("a", "s-a"), ("b", "s-b")],
        "close": [],
        "expect": {"s-a": "a", "s-b": "b"},
    },
    "one process, two sessions fired on one connection, subscribed apart": {
        "conns": {"sdk": P, "a": P, "b": P},
        "subscribe": [("b", "s-b"), ("a", "s-a")],
        "fire": [("sdk", "s-a"), ("sdk", "s-b")],
        "close": [],
        "expect": {"s-a": "a", "s-b": "b"},
    },
    "after /clear, the old session still subscribed": {
        "conns": {"old": P, "new": P},
        "subscribe": [("old", "s-before"), ("new", "s-after")],
        "fire": [("old", "s-before"), ("new", "s-after")],
        "close": [],
        "expect": {"s-before": "old", "s-after": "new"},
    },
    "after /clear, the old session's subscription gone": {
        "conns": {"old": P, "new": P},
        "subscribe": [("old", "s-before"), ("new", "s-after")],
        "fire": [("old", "s-before")],
        "close": ["old"],
        "expect": {"s-before": "poll"},
    },
    "the new session subscribed only; the old one's wake-up waits": {
        "conns": {"agent": P, "new": P},
        "subscribe": [("new", "s-after")],
        "fire": [("agent", "s-before"), ("agent", "s-after")],
        "close": [],
        "expect": {"s-before": "poll", "s-after": "new"},
    },
    "two processes, a session each": {
        "conns": {"p": P, "q": Q},
        "subscribe": [("q", "s-q"), ("p", "s-p")],
        "fire": [("p", "s-p"), ("q", "s-q")],
        "close": [],
        "expect": {"s-p": "p", "s-q": "q"},
    },
    "two processes, agent-wide subscriptions": {
        "conns": {"p": P, "q": Q},
        "subscribe": [("q", None), ("p", None)],
        "fire": [("p", "s-p"), ("q", "s-q"), ("p", "s-p2")],
        "close": [],
        "expect": {"s-p": "p", "s-q": "q", "s-p2": "p"},
    },
    "agent-wide subscription of another process beside a session's": {
        "conns": {"p": P, "q": Q},
        "subscribe": [("q", None), ("p", "s-p")],
        "fire": [("p", "s-p"), ("p", "s-p-other")],
        "close": [],
        "expect": {"s-p": "p", "s-p-other": "poll"},
    },
}


@pytest.mark.parametrize("name", list(LAYOUTS))
async def test_every_wake_up_reaches_exactly_its_own_session(
    daemon_factory: Any, wire: Any, tmp_path: Path, name: str
) -> None:
    layout = LAYOUTS[name]
    go = tmp_path / "go"
    hook = tmp_path / "wake.py"
    hook.write_text(WAKE, encoding="utf-8")
    handle = await daemon_factory()
    command = f"{sys.executable} -I -S {hook} '{go}'"
    configure(handle, {"PostToolUse": [{"hooks": [command_hook(command, asyncRewake=True)]}]})
    conns = {conn: await wire(handle.socket, pid=pid) for conn, pid in layout["conns"].items()}
    for conn, session in layout["subscribe"]:
        await conns[conn].subscribe(session)
    for conn, session in layout["fire"]:
        await conns[conn].fire("PostToolUse", event("PostToolUse-Bash", session))
    for conn in layout["close"]:
        await conns[conn].aclose()
    expect: dict[str, str] = layout["expect"]
    polled = [s for s, where in expect.items() if where == "poll"]
    go.touch()
    for conn in {where for where in expect.values() if where != "poll"}:
        wanted = sorted(s for s, where in expect.items() if where == conn)
        got: list[str] = []
        with trio.fail_after(20):
            while len(got) < len(wanted):
                push = await conns[conn].pushes.receive()
                assert push.rewake, push
                assert push.messages[0].endswith(f"WAKE-UP {push.session_id}"), push
                got.append(push.session_id)
        assert sorted(got) == wanted, (name, conn, got)
    await wait_until(
        lambda: (
            handle.daemon.async_runner.stats()["undelivered"] == len(polled)
            and handle.daemon.async_runner.stats().get("running", 0) == 0
        )
    )
    for conn, client in conns.items():
        if conn not in layout["close"]:
            with pytest.raises(trio.WouldBlock):
                extra = client.pushes.receive_nowait()
                raise AssertionError(f"{name}: {conn} was also pushed {extra}")
    poller = await wire(handle.socket, pid=99)
    for session in polled:
        [waiting] = await poll_results(poller, session, 1)
        assert waiting["messages"][0].endswith(f"WAKE-UP {session}"), waiting

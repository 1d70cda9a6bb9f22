"""Soak: many sessions for many minutes against one real daemon; memory, descriptors, results.

Run by hand (not a unit test; issue 14's acceptance run is 30 minutes):

    .venv/bin/python bench/soak.py [--minutes 30] [--sessions 50] [--sample 30]

It starts a real ``hookd serve`` subprocess (watching its config) and runs
``--sessions`` agents at once, each on its own connection, firing one event
after another until the time is up, in a mix of:

* ``PreToolUse`` on ``Read``: no hook matches (the daemon's fast path);
* ``UserPromptSubmit``: a command hook echoing ``$HOOK_SESSION_ID`` and its stdin — the
  reply must carry this session and this prompt's nonce;
* ``PostToolUse``: an **async** command hook whose result is a ``systemMessage`` naming the
  event's nonce; every nonce must come back exactly once, through a later ``fire`` reply
  (``async_results``) or ``check_async``;
* ``PreToolUse`` on ``Faulty``: a rotating faulty hook — one that hangs past its 1 s timeout,
  one that escapes with ``setsid`` and ``env -i``, one that exits 1, one that prints broken JSON;

while a reloader rewrites the hook file every ``--reload-every`` seconds (editor style:
temp file and rename; the daemon's watcher picks it up) and sends a ``reload`` request.  Every
``--sample`` seconds it prints the daemon's RSS, open descriptors, children and zombies.  At
the end it drains the async results and prints lost / duplicated / mismatched counts, the
first and last samples, and the peak.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import hookd_daemon, open_fds, rss_kb
from fuzz import EVENT, HELLO, _read_frame, encode, frame

ECHO_PROMPT = "printf '%s ' \"$HOOK_SESSION_ID\"; cat"
ASYNC_NONCE = 'printf \'{"systemMessage":"%s"}\' "$(grep -o \'nonce-[0-9a-f]*\' | head -n 1)"'
ESCAPE = """(setsid env -i sh -c 'trap "" TERM; sleep 1000' &); sleep 1000"""
FAULTY = {
    "Hang": {"type": "command", "command": "sleep 30", "timeout": 1},
    "Escape": {"type": "command", "command": ESCAPE, "timeout": 1},
    "Fail": {"type": "command", "command": "echo broken >&2; exit 1"},
    "BadJson": {"type": "command", "command": "echo '{\"decision\": }'"},
}
MIX = ["read", "prompt", "read", "async", "read", "prompt", "faulty", "async", "read", "check"]


def hooks(generation: int) -> dict[str, Any]:
    """The hook set; ``generation`` changes a harmless Notification hook so reloads count."""
    return {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ECHO_PROMPT}]}],
        "PostToolUse": [
            {"hooks": [{"type": "command", "command": ASYNC_NONCE, "async": True, "timeout": 30}]}
        ],
        "PreToolUse": [{"matcher": name, "hooks": [hook]} for name, hook in FAULTY.items()],
        "Notification": [{"hooks": [{"type": "command", "command": f"true {generation}"}]}],
    }


@dataclass
class Tally:
    events: int = 0
    replies: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    mismatched: int = 0
    async_sent: set[str] = field(default_factory=set)
    async_seen: Counter[str] = field(default_factory=Counter)
    reloads: int = 0
    listed: Counter[str] = field(default_factory=Counter)
    """States of the async entries the daemon still lists at the end."""
    problems: list[str] = field(default_factory=list)

    def bad(self, what: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(what)


def _payload(kind: str, session: str, nonce: str, project: str) -> tuple[str, dict[str, Any]]:
    base = {**EVENT, "session_id": session, "cwd": project}
    if kind == "prompt":
        base.pop("tool_name", None)
        base.pop("tool_input", None)
        base.pop("tool_use_id", None)
        return "UserPromptSubmit", {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": nonce,
        }
    if kind == "async":
        return "PostToolUse", {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_input": {"command": nonce},
            "tool_response": {"stdout": "", "stderr": ""},
        }
    if kind == "faulty":
        tool = list(FAULTY)[int(nonce[-2:], 16) % len(FAULTY)]
        return "PreToolUse", {**base, "tool_name": tool, "tool_input": {"command": nonce}}
    return "PreToolUse", {**base, "tool_name": "Read", "tool_input": {"file_path": "/x"}}


def _take_async(tally: Tally, texts: list[Any]) -> None:
    for text in texts:
        if isinstance(text, str) and text.startswith("nonce-"):
            tally.async_seen[text] += 1


async def agent(sock: Path, session: str, project: str, until: float, tally: Tally) -> None:
    stream = await trio.open_unix_socket(str(sock))
    buf = bytearray()
    async with stream:
        await stream.send_all(HELLO)
        await _read_frame(stream, buf)
        rid = 0
        while time.monotonic() < until:
            rid += 1
            kind = MIX[rid % len(MIX)]
            nonce = f"nonce-{uuid.uuid4().hex}"
            if kind == "check":
                body = encode({"kind": "check_async", "id": rid, "session_id": session})
            else:
                event, payload = _payload(kind, session, nonce, project)
                body = encode({"kind": "fire", "id": rid, "event": event, "input": payload})
                if kind == "async":
                    tally.async_sent.add(nonce)
            tally.events += 1
            await stream.send_all(frame(body))
            with trio.move_on_after(120) as scope:
                reply = await _read_frame(stream, buf)
            if scope.cancelled_caught or reply is None:
                tally.bad(f"{session}: no reply to {rid} ({kind})")
                tally.errors["no_reply"] += 1
                return
            tally.replies += 1
            if reply.get("id") != rid:
                tally.mismatched += 1
                tally.bad(f"{session}: sent {rid}, got {reply.get('id')}")
                continue
            if reply.get("kind") == "error":
                tally.errors[str(reply.get("code"))] += 1
                tally.bad(f"{session}: {kind} → {reply.get('code')}: {reply.get('message')}")
                continue
            if kind == "check":
                _take_async(tally, [m for e in reply.get("data") or [] for m in e["messages"]])
                continue
            result = reply["result"]
            _take_async(tally, result.get("async_results", []))
            context = (result.get("plain_context") or [""])[0]
            if kind == "prompt" and not (context.startswith(f"{session} ") and nonce in context):
                tally.mismatched += 1
                tally.bad(f"{session}: prompt echo {context[:60]!r} lacks {nonce}")


async def drain(sock: Path, sessions: list[str], tally: Tally, quiet_for: float = 5.0) -> None:
    """Collect what async hooks still owe, until nothing new arrives for ``quiet_for`` s."""
    stream = await trio.open_unix_socket(str(sock))
    buf = bytearray()
    async with stream:
        await stream.send_all(HELLO)
        await _read_frame(stream, buf)
        rid = 0
        last_new = time.monotonic()
        while time.monotonic() - last_new < quiet_for:
            before = sum(tally.async_seen.values())
            for session in sessions:
                rid += 1
                body = encode({"kind": "check_async", "id": rid, "session_id": session})
                await stream.send_all(frame(body))
                reply = await _read_frame(stream, buf)
                if reply and reply.get("kind") == "reply":
                    texts = [m for e in reply.get("data") or [] for m in e["messages"]]
                    _take_async(tally, texts)
            if sum(tally.async_seen.values()) != before:
                last_new = time.monotonic()
            await trio.sleep(0.5)
        # What the daemon still lists: the states of results never seen.
        rid += 1
        await stream.send_all(frame(encode({"kind": "async_list", "id": rid})))
        reply = await _read_frame(stream, buf)
        for entry in (reply or {}).get("data") or []:
            if entry.get("session_id") in sessions:
                tally.listed[str(entry.get("state"))] += 1


def _children(pid: int) -> tuple[int, int]:
    """(live children, zombie children) of ``pid``."""
    live = zombies = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[-1].split()
        if int(fields[1]) == pid:
            if fields[0] == b"Z":
                zombies += 1
            else:
                live += 1
    return live, zombies


def sample(pid: int, sock: Path, started: float, tally: Tally) -> dict[str, Any]:
    live, zombies = _children(pid)
    row = {
        "t_s": round(time.monotonic() - started),
        "rss_kb": rss_kb(pid),
        "fds": open_fds(pid, sock),
        "children": live,
        "zombies": zombies,
        "events": tally.events,
        "async_sent": len(tally.async_sent),
        "async_seen": sum(tally.async_seen.values()),
        "reloads": tally.reloads,
    }
    print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return row


async def main_async(args: argparse.Namespace) -> int:
    with hookd_daemon(hooks(0)) as daemon:
        project = daemon.root / "project"
        sessions = [f"soak-{i:03d}" for i in range(args.sessions)]
        tally = Tally()
        rows: list[dict[str, Any]] = []
        started = time.monotonic()
        until = started + args.minutes * 60
        print(f"soak: {args.sessions} sessions for {args.minutes} min, daemon pid {daemon.pid}")
        rows.append(sample(daemon.pid, daemon.socket, started, tally))

        async def reloader() -> None:
            generation = 0
            stream = await trio.open_unix_socket(str(daemon.socket))
            buf = bytearray()
            async with stream:
                await stream.send_all(HELLO)
                await _read_frame(stream, buf)
                while time.monotonic() < until:
                    await trio.sleep(args.reload_every)
                    generation += 1
                    daemon.write_hooks(hooks(generation))
                    await stream.send_all(frame(encode({"kind": "reload", "id": generation})))
                    await _read_frame(stream, buf)
                    tally.reloads += 1

        async def sampler() -> None:
            while time.monotonic() < until:
                await trio.sleep(args.sample)
                rows.append(sample(daemon.pid, daemon.socket, started, tally))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reloader)
            nursery.start_soon(sampler)
            for session in sessions:
                nursery.start_soon(agent, daemon.socket, session, str(project), until, tally)
        await drain(daemon.socket, sessions, tally)
        rows.append(sample(daemon.pid, daemon.socket, started, tally))

    lost = tally.async_sent - set(tally.async_seen)
    duplicated = sum(1 for n in tally.async_seen.values() if n > 1)
    unknown = set(tally.async_seen) - tally.async_sent
    peak = max(rows, key=lambda r: r["rss_kb"])
    first, last = rows[1] if len(rows) > 2 else rows[0], rows[-1]
    print()
    print(f"events {tally.events}, replies {tally.replies}, reloads {tally.reloads}")
    print(f"error replies {dict(tally.errors)}, mismatched {tally.mismatched}")
    print(
        f"async results: sent {len(tally.async_sent)}, delivered {len(tally.async_seen)}, "
        f"lost {len(lost)}, duplicated {duplicated}, unknown {len(unknown)}; "
        f"still listed by the daemon: {dict(tally.listed)}"
    )
    print(
        f"RSS {rows[0]['rss_kb']} kB at start, {first['rss_kb']} kB after the first sample, "
        f"{last['rss_kb']} kB at the end (peak {peak['rss_kb']} kB at {peak['t_s']} s); "
        f"fds {rows[0]['fds']} → {first['fds']} → {last['fds']}; "
        f"zombies at the end {last['zombies']}, children {last['children']}"
    )
    for problem in tally.problems:
        print("  problem:", problem)
    failed = bool(lost or duplicated or tally.mismatched or tally.errors.get("no_reply"))
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--reload-every", type=float, default=10.0)
    return trio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())

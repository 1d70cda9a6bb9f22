"""Memory under a burst of big event inputs: what events in flight hold, and what stays.

Run by hand (the test suite runs a short version, tests/reliability/test_memory.py):

    .venv/bin/python bench/big_inputs.py [--clients 40] [--mib 8] [--rounds 3] [--hooks 2]

It starts a real ``hookd serve`` subprocess (bench/fuzz.py's), configured with
``--hooks`` command hooks on PreToolUse that read their whole stdin (``cat >
/dev/null``), then ``--clients`` threads each fire ``--rounds`` PreToolUse events
whose ``tool_input`` holds ``--mib`` MiB, each on a fresh connection (a client that
retries), while a small session fires a no-hook event in a loop.  It samples the
daemon's RSS from ``/proc`` every 20 ms and prints: RSS before, the peak, after the
burst (once the daemon is idle) and how the events were answered (replies, refusals
by code, fallbacks), and how many small events were answered during the burst.
"""

from __future__ import annotations

import argparse
import collections
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz

from hookd_client import protocol
from hookd_client.client import Client, DaemonError, DaemonUnavailable

MIB = 1024 * 1024


def hooks(count: int) -> dict[str, Any]:
    """``count`` command hooks on PreToolUse/Bash that read all of stdin."""
    return {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": f"cat > /dev/null # {i}"}
                        for i in range(count)
                    ],
                }
            ]
        }
    }


def big_event(mib: float, session: str) -> dict[str, Any]:
    event = dict(fuzz.EVENT, session_id=session)
    event["tool_input"] = {"command": "x" * int(mib * MIB)}
    return event


@dataclass
class Outcome:
    answers: collections.Counter[str] = field(default_factory=collections.Counter)
    small_during: int = 0
    small_failed: list[str] = field(default_factory=list)
    peak_kb: int = 0
    samples: int = 0


def _fire_big(
    sock: Path, mib: float, rounds: int, index: int, outcome: Outcome, reuse: bool
) -> None:
    """``rounds`` big events: each on a fresh connection, or (``reuse``) all on one
    connection kept open between them, as an agent keeps its own (a new one after a
    failure)."""
    payload = big_event(mib, f"big-{index}")
    client = Client(sock, name="big", fire_timeout=120.0)
    try:
        for _ in range(rounds):
            try:
                client.fire("PreToolUse", payload)
                outcome.answers["reply"] += 1
            except DaemonError as exc:
                outcome.answers[f"error:{exc.code}"] += 1
            except DaemonUnavailable as exc:
                outcome.answers[f"unavailable:{exc.reason[:60]}"] += 1
            if not reuse:
                client.close()
    finally:
        client.close()


def _post_big(http: Path, mib: float, rounds: int, index: int, outcome: Outcome) -> None:
    """``rounds`` big events POSTed to the http door's Unix socket (``http.sock``, the
    Claude Code mod's door: no token), one connection each."""
    body = json.dumps(big_event(mib, f"big-{index}")).encode()
    head = (
        b"POST /hooks/PreToolUse HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n" % len(body)
    )
    for _ in range(rounds):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(120)
                conn.connect(str(http))
                conn.sendall(head + body)
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
            status = data.split(b" ", 2)[1].decode() if data else "closed"
            outcome.answers["reply" if status == "200" else f"http:{status}"] += 1
        except OSError as exc:
            outcome.answers[f"unavailable:{exc}"[:60]] += 1


def _small_loop(sock: Path, stop: threading.Event, outcome: Outcome) -> None:
    small = dict(fuzz.EVENT, session_id="small", tool_name="Read")
    small["tool_input"] = {"file_path": "/etc/hostname"}
    with Client(sock, name="small") as client:
        while not stop.is_set():
            try:
                reply = client.fire("PreToolUse", small)
            except (DaemonError, DaemonUnavailable) as exc:
                outcome.small_failed.append(repr(exc))
                return
            assert isinstance(reply, protocol.FireReply)
            outcome.small_during += 1
            stop.wait(0.05)


def _sample(daemon: fuzz.DaemonProcess, stop: threading.Event, outcome: Outcome) -> None:
    while not stop.is_set():
        outcome.peak_kb = max(outcome.peak_kb, daemon.rss_kb())
        outcome.samples += 1
        stop.wait(0.02)


def burst(
    daemon: fuzz.DaemonProcess,
    clients: int,
    mib: float,
    rounds: int,
    reuse: bool = False,
    door: str = "socket",
) -> Outcome:
    """The burst itself, against a running daemon, through ``door`` (``socket``: the
    daemon's own, ``fire``; ``http``: its http socket); returns what happened."""
    outcome = Outcome()
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(daemon, stop, outcome))
    small = threading.Thread(target=_small_loop, args=(daemon.socket, stop, outcome))
    sampler.start()
    small.start()
    http = daemon.socket.parent / "http.sock"
    workers = [
        threading.Thread(target=_fire_big, args=(daemon.socket, mib, rounds, i, outcome, reuse))
        if door == "socket"
        else threading.Thread(target=_post_big, args=(http, mib, rounds, i, outcome))
        for i in range(clients)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    sampler.join()
    small.join()
    return outcome


def idle_rss_kb(daemon: fuzz.DaemonProcess, timeout: float = 30.0) -> int:
    """RSS once the daemon has nothing in flight (status says so)."""
    deadline = time.monotonic() + timeout
    with Client(daemon.socket, name="probe") as client:
        while time.monotonic() < deadline:
            status = client.status()
            if status["in_flight"] == 0 and status["connections"] <= 1:
                break
            time.sleep(0.05)
    return daemon.rss_kb()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=40)
    parser.add_argument("--mib", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hooks", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="one connection per client")
    parser.add_argument("--door", choices=("socket", "http"), default="socket")
    parser.add_argument("--budget-mib", type=int, default=None, help="buffer_budget (MiB)")
    args = parser.parse_args()
    extra: tuple[str, ...] = ()
    if args.budget_mib is not None:
        extra = ("--buffer-budget", str(args.budget_mib * MIB))
    with fuzz.daemon_process(hooks(args.hooks), extra) as daemon:
        before = daemon.rss_kb()
        started = time.monotonic()
        outcome = burst(daemon, args.clients, args.mib, args.rounds, args.reuse, args.door)
        took = time.monotonic() - started
        after = idle_rss_kb(daemon)
        print(
            json.dumps(
                {
                    "clients": args.clients,
                    "mib": args.mib,
                    "rounds": args.rounds,
                    "hooks": args.hooks,
                    "reuse": args.reuse,
                    "door": args.door,
                    "seconds": round(took, 1),
                    "rss_before_mib": round(before / 1024, 1),
                    "rss_peak_mib": round(outcome.peak_kb / 1024, 1),
                    "rss_after_mib": round(after / 1024, 1),
                    "answers": dict(outcome.answers),
                    "small_answered_during": outcome.small_during,
                    "small_failed": outcome.small_failed,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Hostile-client fuzzer: random, truncated, oversized and wrongly typed frames at a live daemon.

Run by hand (the test suite runs a short version, tests/reliability/test_fuzz.py):

    .venv/bin/python bench/fuzz.py [--frames 20000] [--workers 8] [--seed 1]

It starts a real ``hookd serve`` subprocess in a private directory (or uses
``--socket`` of a running one; then RSS/fd figures are skipped), measures a
well-behaved session's latency (a PreToolUse that runs one command hook)
alone, then again while ``--workers`` connections send bad frames, and
prints: frames by case, how each was answered (``error`` frame, connection
closed, or *silent* — a failure), the probe's p50/p90 both ways and their
ratio, and the daemon's RSS and open fds before and after.

Cases (each on a fresh connection; most greet first so the bad frame reaches
request decoding, not only the handshake):

* ``random_bytes``     a well-framed body of random bytes
* ``random_msgpack``   random MessagePack values (maps, lists, scalars)
* ``wrong_types``      a known ``kind`` with every field of a wrong type
* ``unknown_kind``     a map with an unknown ``kind``
* ``truncated_body``   a valid body cut short, framed at its cut length
* ``garbage_event``    a valid ``fire`` whose event input is wrongly typed
* ``huge_length``      a length prefix beyond ``max_frame`` (framing lost)
* ``half_frame``       a prefix announcing N bytes, fewer sent, then EOF
* ``no_hello``         a valid request before ``hello``
* ``big_frame``        a 1–4 MiB body of junk (under ``max_frame``)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
HEADER = struct.Struct(">I")
EVENT: dict[str, Any] = json.loads(
    (ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json").read_bytes()
)
CASES = (
    "random_bytes",
    "random_msgpack",
    "wrong_types",
    "unknown_kind",
    "truncated_body",
    "garbage_event",
    "huge_length",
    "half_frame",
    "no_hello",
    "big_frame",
)
ANSWER_TIMEOUT = 15.0
"""Seconds a bad frame may wait for its error or close before it counts as *silent*."""


# --- a daemon subprocess ---------------------------------------------------------------


@dataclass
class DaemonProcess:
    proc: subprocess.Popen[bytes]
    socket: Path
    state: Path
    base: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def fds(self) -> int:
        """Open descriptors: ``/proc/<pid>/fd``, or — ``hookd serve`` is not dumpable, so
        for a user other than root that directory is closed — what the daemon reports."""
        try:
            return len(os.listdir(f"/proc/{self.pid}/fd"))
        except PermissionError:
            from hookd_client.client import Client

            with Client(self.socket, name="fuzz") as client:
                return int(client.status()["process"]["fds"])


def probe_hooks() -> dict[str, Any]:
    """The probe session's hooks: one command hook per PreToolUse (a real process each)."""
    return {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]
        }
    }


def start_daemon(
    base: Path,
    hooks: dict[str, Any] | None = None,
    extra_args: tuple[str, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> DaemonProcess:
    """``python -m hookd serve`` with its socket, state and config under ``base``.

    Starting it again on the same ``base`` is a restart: same socket, same
    state dir (async journal, audit log, trust store).
    """
    base.mkdir(parents=True, exist_ok=True)
    user = base / "hooks.json"
    user.write_text(json.dumps(hooks if hooks is not None else probe_hooks()))
    sock = base / "hookd.sock"
    env = {
        **os.environ,
        "HOME": str(base),
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_STATE_HOME": str(base / "state"),
    }
    env.pop("HOOKD_SOCKET", None)
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "hookd",
            "serve",
            "--socket",
            str(sock),
            "--state-dir",
            str(base / "state"),
            "--policy-file",
            str(base / "none.json"),
            "--user-file",
            str(user),
            "--no-watch",
            "--log-level",
            "error",
            *extra_args,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=None if os.environ.get("FUZZ_DAEMON_LOG") else subprocess.DEVNULL,
        cwd=str(ROOT),
        preexec_fn=preexec_fn,
    )
    deadline = time.monotonic() + 30
    while not _accepts(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"hookd did not start (exit {proc.returncode})")
        time.sleep(0.02)
    return DaemonProcess(proc, sock, base / "state", base)


def stop_daemon(daemon: DaemonProcess) -> None:
    proc = daemon.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def daemon_process(
    hooks: dict[str, Any] | None = None,
    extra_args: tuple[str, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[DaemonProcess]:
    """A daemon in a private directory; stopped (and the directory removed) on exit."""
    base = Path(tempfile.mkdtemp(prefix="hkfz", dir="/tmp"))
    try:
        daemon = start_daemon(base, hooks, extra_args, preexec_fn)
        try:
            yield daemon
        finally:
            stop_daemon(daemon)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _accepts(path: Path) -> bool:
    """The socket file exists *and* listens (it exists a moment before ``listen``)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


# --- frames ----------------------------------------------------------------------------


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def encode(obj: Any) -> bytes:
    return msgspec.msgpack.encode(obj)


HELLO = frame(encode({"kind": "hello", "version": 1, "client": "fuzz"}))


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(9 if depth < 3 else 6)
    if pick == 0:
        return rng.randrange(-(2**63), 2**63)
    if pick == 1:
        return rng.random() * 10 ** rng.randrange(-5, 300)
    if pick == 2:
        return "".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(0, 40)))
    if pick == 3:
        return rng.randbytes(rng.randrange(0, 64))
    if pick == 4:
        return rng.choice([None, True, False])
    if pick == 5:
        return rng.choice(["", "kind", "fire", "PreToolUse", "id", "\x00", "💥"])
    if pick == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 6))]
    keys = ["kind", "id", "event", "input", "env", "session_id", "x", "tool_input"]
    return {
        rng.choice(keys) if rng.random() < 0.6 else str(_random_value(rng, 3)): _random_value(
            rng, depth + 1
        )
        for _ in range(rng.randrange(0, 6))
    }


_SHAPES: dict[str, dict[str, str]] = {
    "fire": {"event": "str", "input": "map", "env": "map", "context": "str", "progress": "bool"},
    "relay": {"event": "str", "input": "bin", "env": "map", "pid": "int"},
    "hooks": {"cwd": "str", "session_id": "str"},
    "tail": {"follow": "bool", "last": "int"},
    "register_session_hooks": {"session_id": "str", "hooks": "map", "scope": "str"},
    "cancel": {"target": "int"},
    "check_async": {"session_id": "str"},
    "validate": {"files": "list"},
    "reset_breakers": {"hook": "str"},
}
_NOT: dict[str, list[Any]] = {
    "str": [1, 1.5, [], {}, b"\xff", True],
    "int": ["x", 1.5, [], {}, b"1", True],
    "bool": ["x", 2, 1.5, [], {}],
    "map": ["x", 1, [1, 2], b"\x00", True],
    "bin": [1, [], {}, 1.5],
    "list": ["x", 1, {"a": 1}, 1.5],
}


def _wrong_types(rng: random.Random, rid: int) -> bytes:
    """A known kind whose fields are all present and at least one is of the wrong type."""
    kind = rng.choice(list(_SHAPES))
    msg: dict[str, Any] = {
        "kind": kind,
        "id": rid if rng.random() < 0.7 else rng.choice(_NOT["int"]),
    }
    fields = _SHAPES[kind]
    for name, typ in fields.items():
        msg[name] = rng.choice(_NOT[typ]) if rng.random() < 0.5 else _random_value(rng, 2)
    victim = rng.choice(list(fields))
    msg[victim] = rng.choice(_NOT[fields[victim]])
    return encode(msg)


def _garbage_event(rng: random.Random, rid: int) -> bytes:
    data = dict(EVENT)
    data["session_id"] = f"fuzz-{rid}"
    victim = rng.choice(["session_id", "cwd", "tool_name", "hook_event_name", "transcript_path"])
    data[victim] = rng.choice([1, 2.5, None, [], {"a": 1}, True])
    if rng.random() < 0.3:
        data["tool_input"] = _random_value(rng, 1)
    return encode({"kind": "fire", "id": rid, "event": "PreToolUse", "input": data})


@dataclass
class Case:
    name: str
    greet: bool
    payload: bytes
    then_eof: bool = False


def make_case(rng: random.Random, name: str, rid: int) -> Case:
    if name == "random_bytes":
        return Case(name, True, frame(rng.randbytes(rng.randrange(1, 4096))))
    if name == "random_msgpack":
        body = encode(_random_value(rng))
        if body[:1] and 0x80 <= body[0] <= 0x8F and b"kind" in body:
            body = encode([body])  # a random map could be valid by luck; keep it hostile
        return Case(name, True, frame(body))
    if name == "wrong_types":
        return Case(name, True, frame(_wrong_types(rng, rid)))
    if name == "unknown_kind":
        return Case(name, True, frame(encode({"kind": f"nope-{rid}", "id": rid})))
    if name == "truncated_body":
        full = encode({"kind": "fire", "id": rid, "event": "PreToolUse", "input": EVENT})
        cut = rng.randrange(1, len(full) - 1)
        return Case(name, True, frame(full[:cut]))
    if name == "garbage_event":
        return Case(name, True, frame(_garbage_event(rng, rid)))
    if name == "huge_length":
        size = rng.choice([2**31, 2**32 - 1, 64 * 1024 * 1024, 16 * 1024 * 1024 + 1])
        return Case(name, rng.random() < 0.5, HEADER.pack(size) + rng.randbytes(16))
    if name == "half_frame":
        return Case(name, rng.random() < 0.5, HEADER.pack(1000) + rng.randbytes(10), then_eof=True)
    if name == "no_hello":
        return Case(name, False, frame(encode({"kind": "status", "id": rid})))
    if name == "big_frame":
        return Case(name, True, frame(rng.randbytes(rng.randrange(1, 4) * 1024 * 1024)))
    raise ValueError(name)


# --- the fuzzing loop ------------------------------------------------------------------


@dataclass
class FuzzReport:
    sent: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    """``error:<code>``, ``closed``, ``reply:<kind>`` and ``silent`` (the failures)."""
    silent: list[str] = field(default_factory=list)

    @property
    def frames(self) -> int:
        return sum(self.sent.values())


async def _read_frame(stream: trio.SocketStream, buf: bytearray) -> dict[str, Any] | None:
    """One server frame decoded as a plain map; None at EOF."""
    while True:
        if len(buf) >= 4:
            (n,) = HEADER.unpack(buf[:4])
            if len(buf) >= 4 + n:
                body = bytes(buf[4 : 4 + n])
                del buf[: 4 + n]
                value = msgspec.msgpack.decode(body)
                return value if isinstance(value, dict) else {"kind": "?"}
        chunk = await stream.receive_some(65536)
        if not chunk:
            return None
        buf += chunk


async def run_case(socket_path: Path, case: Case, report: FuzzReport) -> None:
    report.sent[case.name] += 1
    try:
        stream = await trio.open_unix_socket(str(socket_path))
    except OSError as exc:
        report.answers["connect_failed"] += 1
        report.silent.append(f"{case.name}: connect: {exc}")
        return
    buf = bytearray()
    async with stream:
        try:
            with trio.fail_after(ANSWER_TIMEOUT):
                if case.greet:
                    await stream.send_all(HELLO)
                    welcome = await _read_frame(stream, buf)
                    if welcome is None or welcome.get("kind") != "welcome":
                        report.answers["no_welcome"] += 1
                        report.silent.append(f"{case.name}: no welcome: {welcome!r}")
                        return
                await stream.send_all(case.payload)
                if case.then_eof:
                    await stream.send_eof()
                answer = await _read_frame(stream, buf)
        except trio.TooSlowError:
            report.answers["silent"] += 1
            report.silent.append(f"{case.name}: no answer within {ANSWER_TIMEOUT}s")
            return
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            # The daemon closed on us mid-send (e.g. after a huge length): a close.
            report.answers["closed"] += 1
            return
        if answer is None:
            report.answers["closed"] += 1
        elif answer.get("kind") == "error":
            report.answers[f"error:{answer.get('code')}"] += 1
        else:
            report.answers[f"reply:{answer.get('kind')}"] += 1


def make_plan(frames: int, seed: int) -> list[Case]:
    """Every case, generated up front so generating them does not compete with the probe."""
    rng = random.Random(seed)
    plan = [make_case(rng, CASES[i % len(CASES)], i + 1) for i in range(frames)]
    rng.shuffle(plan)
    return plan


async def fuzz(socket_path: Path, plan: list[Case], workers: int, pace: float = 0.0) -> FuzzReport:
    """Send every case of ``plan`` from ``workers`` connections at once.

    ``pace``: seconds each worker waits between cases (0: as fast as it can).
    """
    report = FuzzReport()
    queue = iter(plan)

    async def worker() -> None:
        for case in queue:
            await run_case(socket_path, case, report)
            if pace:
                await trio.sleep(pace)

    async with trio.open_nursery() as nursery:
        for _ in range(workers):
            nursery.start_soon(worker)
    return report


# --- the probe: a well-behaved session's latency --------------------------------------


async def probe(socket_path: Path, samples: list[float], stop: trio.Event, count: int) -> None:
    """Fire PreToolUse in a loop on one connection, recording each round trip (seconds)."""
    stream = await trio.open_unix_socket(str(socket_path))
    buf = bytearray()
    async with stream:
        await stream.send_all(HELLO)
        await _read_frame(stream, buf)
        payload = dict(EVENT, session_id="probe")
        rid = 0
        while not stop.is_set() and len(samples) < count:
            rid += 1
            body = encode({"kind": "fire", "id": rid, "event": "PreToolUse", "input": payload})
            started = time.perf_counter()
            await stream.send_all(frame(body))
            reply = await _read_frame(stream, buf)
            if reply is None or reply.get("kind") != "fire_reply" or reply.get("id") != rid:
                raise RuntimeError(f"probe got {reply!r}")
            samples.append(time.perf_counter() - started)
            await trio.sleep(0.005)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


@dataclass
class Measurement:
    report: FuzzReport
    baseline: list[float]
    under_fuzz: list[float]
    rss_before_kb: int = 0
    rss_after_kb: int = 0
    fds_before: int = 0
    fds_after: int = 0
    seconds: float = 0.0

    @property
    def ratio(self) -> float:
        base = pct(self.baseline, 0.5)
        return pct(self.under_fuzz, 0.5) / base if base else float("nan")

    def probe_within_bound(self, slack: float = 0.010) -> bool:
        """The well-behaved session's p50 under fuzz stays within 2× its own (+ slack)."""
        return pct(self.under_fuzz, 0.5) <= 2 * pct(self.baseline, 0.5) + slack


async def measure(
    daemon: DaemonProcess | None,
    socket_path: Path,
    frames: int,
    workers: int,
    seed: int,
    probes: int = 100,
    pace: float = 0.0,
) -> Measurement:
    """Baseline probe, then fuzz with the probe running alongside; RSS/fds before and after."""
    plan = make_plan(frames, seed)
    baseline: list[float] = []
    await probe(socket_path, baseline, trio.Event(), probes)
    m = Measurement(FuzzReport(), baseline, [])
    if daemon is not None:
        m.rss_before_kb, m.fds_before = daemon.rss_kb(), daemon.fds()
    stop = trio.Event()
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(probe, socket_path, m.under_fuzz, stop, 10**9)
        m.report = await fuzz(socket_path, plan, workers, pace)
        stop.set()
    m.seconds = time.perf_counter() - started
    if daemon is not None:
        # Let the daemon finish closing the fuzz connections before counting fds.
        for _ in range(100):
            m.fds_after = daemon.fds()
            if m.fds_after <= m.fds_before:
                break
            await trio.sleep(0.05)
        m.rss_after_kb = daemon.rss_kb()
    return m


def print_measurement(m: Measurement) -> None:
    r = m.report
    print(f"frames fuzzed: {r.frames} in {m.seconds:.1f}s")
    for name in CASES:
        print(f"  {name:<16} {r.sent[name]}")
    print("answers:")
    for name, count in sorted(r.answers.items()):
        print(f"  {name:<24} {count}")
    for line in r.silent[:20]:
        print(f"  SILENT {line}")
    print(
        f"probe p50 {pct(m.baseline, 0.5) * 1000:.2f} ms alone, "
        f"{pct(m.under_fuzz, 0.5) * 1000:.2f} ms under fuzz (x{m.ratio:.2f}); "
        f"p90 {pct(m.baseline, 0.9) * 1000:.2f} / {pct(m.under_fuzz, 0.9) * 1000:.2f} ms; "
        f"n={len(m.baseline)}/{len(m.under_fuzz)}; "
        f"within 2x (+10 ms): {'yes' if m.probe_within_bound() else 'NO'}"
    )
    if m.rss_before_kb:
        print(
            f"daemon RSS {m.rss_before_kb / 1024:.1f} -> {m.rss_after_kb / 1024:.1f} MiB, "
            f"fds {m.fds_before} -> {m.fds_after}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds between cases per worker (0: flood)"
    )
    parser.add_argument("--socket", type=Path, help="fuzz a running daemon instead")
    args = parser.parse_args()
    if args.socket:
        m = trio.run(
            measure, None, args.socket, args.frames, args.workers, args.seed, 100, args.pace
        )
        print_measurement(m)
        return 1 if m.report.silent else 0
    with daemon_process() as daemon:
        m = trio.run(
            measure, daemon, daemon.socket, args.frames, args.workers, args.seed, 100, args.pace
        )
        alive = daemon.proc.poll() is None
    print_measurement(m)
    print(f"daemon alive at the end: {alive}")
    return 0 if alive and not m.report.silent else 1


if __name__ == "__main__":
    sys.exit(main())

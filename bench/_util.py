"""Shared pieces of the benchmarks: a daemon subprocess, a raw client, statistics.

Everything here talks only to this machine (Unix sockets, 127.0.0.1) and every
loop is bounded in count *and* time, so a hung daemon ends a row, not the run.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookd_client import protocol

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
EVENT = json.loads((ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json").read_bytes())
"""A real PreToolUse input as Claude Code sent it (~700 B)."""


# --- statistics ------------------------------------------------------------------------


def pct(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; samples need not be sorted."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summary(samples_s: list[float]) -> dict[str, float]:
    """p50/p90/p99 in microseconds of samples in seconds."""
    return {
        "n": len(samples_s),
        "p50_us": round(pct(samples_s, 0.5) * 1e6, 1),
        "p90_us": round(pct(samples_s, 0.9) * 1e6, 1),
        "p99_us": round(pct(samples_s, 0.99) * 1e6, 1),
    }


def ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")


# --- a raw blocking client (the same one for hookd and for the floor) ----------------


class RawClient:
    """One blocking Unix-socket connection speaking hookd's frames, nothing else.

    Encoding and decoding use the real protocol Structs, so the client's cost
    is honest and identical against the daemon and against the floor server.
    """

    def __init__(self, path: Path | str, timeout: float = 30.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        # A kernel-side receive timeout (SO_RCVTIMEO) instead of settimeout(): the
        # socket stays blocking, so a round trip is one sendall and one recv, with
        # no poll() before each call — a hung daemon still ends the loop.
        seconds = int(timeout)
        micros = int((timeout - seconds) * 1e6)
        self.sock.setsockopt(
            socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", seconds, micros)
        )
        self._buf = bytearray()
        self.next_id = 1
        self.send(protocol.Hello(client="bench", pid=os.getpid()))
        welcome = self.receive()
        if not isinstance(welcome, protocol.Welcome):
            raise RuntimeError(f"expected welcome, got {welcome!r}")

    def send(self, message: Any) -> None:
        self.sock.sendall(protocol.encode(message))

    def receive(self) -> Any:
        """The next frame: cut from a buffer filled by as few recv calls as possible."""
        buf = self._buf
        header = protocol.HEADER.size
        while True:
            if len(buf) >= header:
                end = header + protocol.HEADER.unpack_from(buf)[0]
                if len(buf) >= end:
                    body = bytes(buf[header:end])
                    del buf[:end]
                    return protocol.decode_server(body)
            try:
                chunk = self.sock.recv(65536)
            except BlockingIOError:
                raise TimeoutError("no reply within the receive timeout") from None
            if not chunk:
                raise ConnectionError("server closed the connection")
            buf += chunk

    def fire(self, event: str, payload: dict[str, Any], **kw: Any) -> protocol.FireReply:
        rid = self.next_id
        self.next_id += 1
        self.send(protocol.Fire(id=rid, event=event, input=payload, **kw))
        reply = self.receive()
        if not isinstance(reply, protocol.FireReply) or reply.id != rid:
            raise RuntimeError(f"bad reply to {rid}: {reply!r}")
        return reply

    def call(self, message: Any) -> Any:
        self.send(message)
        reply = self.receive()
        if isinstance(reply, protocol.Error):
            raise RuntimeError(f"{reply.code}: {reply.message}")
        return reply

    def close(self) -> None:
        self.sock.close()


def time_fires(
    client: RawClient,
    event: str,
    payload: dict[str, Any],
    count: int,
    budget_s: float,
    warmup: int = 50,
) -> list[float]:
    """Latencies (seconds) of up to ``count`` sequential fires within ``budget_s``."""
    for _ in range(warmup):
        client.fire(event, payload)
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    clock = time.perf_counter
    for _ in range(count):
        start = clock()
        client.fire(event, payload)
        end = clock()
        samples.append(end - start)
        if end > deadline:
            break
    return samples


# --- processes -----------------------------------------------------------------------


def wait_for_socket(path: Path, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        if path.exists():
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {path} after {timeout} s")


def stop(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@dataclass
class DaemonProc:
    """A ``python -m hookd serve`` subprocess in a private directory."""

    root: Path
    socket: Path
    user_file: Path
    proc: subprocess.Popen[bytes]
    http_port: int | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def write_hooks(self, hooks: dict[str, Any]) -> None:
        """Replace the user hooks file the way editors save: write a temp file, rename."""
        tmp = self.user_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"hooks": hooks}))
        os.replace(tmp, self.user_file)

    def client(self) -> RawClient:
        return RawClient(self.socket)

    def env(self) -> dict[str, str]:
        return bench_env(self.root)


def bench_env(root: Path) -> dict[str, str]:
    """A private HOME and XDG dirs, so no real configuration leaks into a measurement."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": str(root / "home"),
        "XDG_CONFIG_HOME": str(root / "home" / ".config"),
        "XDG_STATE_HOME": str(root / "home" / ".local" / "state"),
        "XDG_RUNTIME_DIR": str(root / "run"),
    }


@contextmanager
def tempdir(prefix: str = "hkb") -> Iterator[Path]:
    """A short private directory (Unix socket paths must stay < 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def hookd_daemon(
    hooks: dict[str, Any] | None = None,
    *,
    watch: bool = True,
    http_port: int | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[DaemonProc]:
    """Start the real daemon as its own process (its own GIL, as in real use)."""
    with tempdir() as root:
        for sub in ("home/.config/hookd", "home/.local/state", "run", "project"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "run").chmod(0o700)
        user = root / "home" / ".config" / "hookd" / "hooks.json"
        user.write_text(json.dumps({"hooks": hooks or {}}))
        policy = root / "policy.json"
        sock = root / "hookd.sock"
        args = [
            PYTHON,
            "-m",
            "hookd",
            "serve",
            "--socket",
            str(sock),
            "--user-file",
            str(user),
            "--policy-file",
            str(policy),
            "--state-dir",
            str(root / "state"),
            "--log-level",
            "error",
            "--log-format",
            "json",
            *extra_args,
        ]
        if not watch:
            args.append("--no-watch")
        if http_port is not None:
            args += ["--http-port", str(http_port)]
        log = open(root / "hookd.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(args, env=bench_env(root), stdout=log, stderr=log, cwd=root)
        try:
            wait_for_socket(sock, proc)
            yield DaemonProc(root, sock, user, proc, http_port)
        finally:
            stop(proc)
            log.close()


@contextmanager
def floor_server() -> Iterator[Path]:
    """The floor: a bare trio + msgspec echo server (bench/echo_floor.py) in its own process."""
    with tempdir("hkf") as root:
        sock = root / "floor.sock"
        proc = subprocess.Popen([PYTHON, str(BENCH / "echo_floor.py"), str(sock)])
        try:
            wait_for_socket(sock, proc)
            yield sock
        finally:
            stop(proc)


def event_in(project: Path, **changes: Any) -> dict[str, Any]:
    """The fixture event, pointed at a private project directory."""
    payload = dict(EVENT)
    payload["cwd"] = str(project)
    payload.update(changes)
    return payload


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def open_fds(pid: int, sock: Path) -> int:
    """The daemon's open descriptors: ``/proc/<pid>/fd``, or — since ``hookd serve`` is
    not dumpable, that directory is root's — what the daemon reports of itself."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except PermissionError:
        from hookd_client.client import Client

        with Client(sock, name="bench") as client:
            return int(client.status()["process"]["fds"])


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": str(os.cpu_count() or 0),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "python_executable": sys.executable,
    }

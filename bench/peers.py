"""hookd beside the hook daemons users pick instead, each measure interleaved in one run.

Run by hand (not in CI), after ``bench/peers_setup.sh``:

    .venv/bin/python bench/peers.py                  # about a minute
    .venv/bin/python bench/peers.py --rounds 4 --block 50 --no-save
    .venv/bin/python bench/peers.py --rows "no hook,deny" --pace-ms 20 --block 25  # an agent's pace
    .venv/bin/python bench/peers.py --rows "no hook" --audit-off --floor  # hookd's part, split

Peers (docs/performance.md, *hookd and its peers*, says how each is run and pinned):

* **hookd** — ``python -m hookd serve --http-port`` (the http door Claude Code's ``http``
  hooks use), one daemon per row's configuration;
* **clooks** — ``bench/peers/clooks_model.mjs`` under node: a model of clooks' request
  path (clooks itself cannot be installed here; see that file);
* **Edmonds** — the Edmonds claude-code-hooks-daemon (``/work/peers/edmonds``), run in the
  foreground by ``bench/peers/edmonds_serve.py``; its door is a Unix socket, one JSON line
  per connection (what its shell forwarders send), so its rows are per connection.

Two more on the no-hook row when asked, to split it rather than to compare: ``--audit-off``
(hookd with ``--no-audit``: what the record written before each answer costs) and
``--floor`` (``bench/peers/trio_floor.py``, a bare trio responder: what trio and the kernel
cost).

Rows, each with a daemon per peer configured for that row only:

1. a PreToolUse that matches no hook, on a keep-alive connection;
2. one ``cat`` command hook (Edmonds runs no command hooks);
3. an in-daemon deny policy (hookd: an ``inDaemon`` ``async def``; clooks: an ``inline``
   JS module; Edmonds: its built-in ``destructive_git`` handler) denying ``git reset --hard``;
4. a request on a new connection: ``curl`` started per request (whole process), and a raw
   socket connect + request + close from this process (the daemon's part alone);
5. idle RSS of each no-hook daemon after the run (hookd: the daemon and any children).

Interleaving: each row runs ``rounds`` rounds; in a round every peer sends a ``block`` of
requests, the order rotating each round, so drift on the shared machine hits every peer.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _util
from _util import (
    BENCH,
    EVENT,
    bench_env,
    hookd_daemon,
    machine,
    pct,
    stop,
    tempdir,
)

PEERS_DIR = Path(os.environ.get("HOOKD_PEERS", "/work/peers"))
EDMONDS_PY = PEERS_DIR / "edmonds" / ".venv" / "bin" / "python"
HOOKD_PY = PEERS_DIR / "hookd" / "bin" / "python"
"""hookd as a user installs it (bench/peers_setup.sh): its dependencies only."""
CLOOKS_MODEL = BENCH / "peers" / "clooks_model.mjs"
TRIO_FLOOR = BENCH / "peers" / "trio_floor.py"
EDMONDS_SERVE = BENCH / "peers" / "edmonds_serve.py"
DENIED = "git reset --hard"
ALLOWED = "ls"

HOOKD_POLICY = f"""
async def deny(event):
    if {DENIED!r} in event.typed.tool_input.get("command", ""):
        return {{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"}}}}
    return None
"""
CLOOKS_POLICY = f"""
export default async function (input) {{
  if ((input.tool_input?.command ?? '').includes({json.dumps(DENIED)})) {{
    return {{ hookSpecificOutput: {{ hookEventName: 'PreToolUse',
      permissionDecision: 'deny', permissionDecisionReason: 'no' }} }};
  }}
}}
"""


def event(command: str, cwd: str) -> bytes:
    raw = dict(EVENT, cwd=cwd, session_id="peers-bench")
    raw["tool_input"] = {"command": command, "description": "bench"}
    return json.dumps(raw).encode()


# --- the doors -------------------------------------------------------------------------


def _http_request(port: int, token: str, body: bytes, close: bool = False) -> bytes:
    head = (
        f"POST /hooks/PreToolUse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
    )
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


class ServerClosed(RuntimeError):
    """The server closed the connection before a byte of the answer."""


def _read_http(sock: socket.socket) -> bytes:
    data = b""
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].lower()
            length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
            if len(data) >= end + 4 + length:
                if not data.startswith(b"HTTP/1.1 200"):
                    raise RuntimeError(f"answer {data[:200]!r}")
                return data[end + 4 : end + 4 + length]
        chunk = sock.recv(65536)
        if not chunk:
            if not data:
                raise ServerClosed("closed before answering")
            raise RuntimeError(f"closed after {data[:200]!r}")
        data += chunk


@dataclass
class HttpDoor:
    """An http daemon (hookd or the clooks model) on 127.0.0.1."""

    port: int
    token: str
    sock: socket.socket | None = None

    def keep_alive(self, body: bytes) -> bytes:
        request = _http_request(self.port, self.token, body)
        if self.sock is not None:
            try:
                self.sock.sendall(request)
                return _read_http(self.sock)
            except (ServerClosed, ConnectionResetError, BrokenPipeError):
                # The server closed the idle connection (node's keepAliveTimeout is 5 s:
                # long blocks of the other peers outlast it): reconnect, as axios does.
                self.sock.close()
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(request)
        return _read_http(self.sock)

    def new_connection(self, body: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(_http_request(self.port, self.token, body, close=True))
            return _read_http(sock)

    def curl(self, body_file: Path) -> bytes:
        out = subprocess.run(
            [
                "curl",
                "-sS",
                "-H",
                f"Authorization: Bearer {self.token}",
                "-H",
                "Content-Type: application/json",
                "--data-binary",
                f"@{body_file}",
                f"http://127.0.0.1:{self.port}/hooks/PreToolUse",
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        return out.stdout


@dataclass
class EdmondsDoor:
    """The Edmonds daemon's Unix socket: one JSON line in, one out, per connection."""

    path: str

    def request(self, body: bytes) -> bytes:
        line = b'{"event":"PreToolUse","hook_input":' + body + b"}\n"
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(30)
            sock.connect(self.path)
            sock.sendall(line)
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data


# --- the daemons -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start (exit {proc.poll()})")
        time.sleep(0.05)


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@contextmanager
def hookd(hooks: dict[str, Any], *, audit: bool = True) -> Iterator[tuple[HttpDoor, int, str]]:
    port = _free_port()
    extra = () if audit else ("--no-audit",)
    with hookd_daemon(hooks, http_port=port, extra_args=extra) as daemon:
        token_file = daemon.root / "home" / ".config" / "hookd" / "http-token"
        _wait(lambda: token_file.exists() and _connects(port), daemon.proc, "hookd")
        project = daemon.root / "project"
        yield HttpDoor(port, token_file.read_text().strip()), daemon.pid, str(project)


@contextmanager
def clooks(handlers: dict[str, Any]) -> Iterator[tuple[HttpDoor, int, str]]:
    with tempdir("hkc") as root:
        manifest = root / "manifest.json"
        token = "peers-bench-token-0123456789abcdef"
        manifest.write_text(json.dumps({"token": token, "handlers": handlers}))
        port = _free_port()
        log = open(root / "clooks.out", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            ["node", str(CLOOKS_MODEL), str(manifest), str(port), str(root)],
            stdout=log,
            stderr=log,
            env={**bench_env(root), "SHELL": "/bin/sh"},
        )
        try:
            _wait(lambda: _connects(port), proc, "the clooks model")
            yield HttpDoor(port, token), proc.pid, str(root)
        finally:
            stop(proc)
            log.close()


@contextmanager
def trio_floor() -> Iterator[tuple[HttpDoor, int, str]]:
    """A bare trio responder (bench/peers/trio_floor.py): what trio and the kernel cost."""
    with tempdir("hkf") as root:
        port = _free_port()
        proc = subprocess.Popen([_util.PYTHON, str(TRIO_FLOOR), str(port)], env=bench_env(root))
        try:
            _wait(lambda: _connects(port), proc, "the trio floor")
            yield HttpDoor(port, "unchecked"), proc.pid, str(root)
        finally:
            stop(proc)


@contextmanager
def edmonds(mode: str) -> Iterator[tuple[EdmondsDoor, int, str]]:
    with tempdir("hke") as root:
        project = root / "proj"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        subprocess.run(
            ["git", "-C", str(project), "remote", "add", "origin", "https://example.invalid/b.git"],
            check=True,
        )
        subprocess.run([str(EDMONDS_PY), str(EDMONDS_SERVE), "--config", mode, str(project)])
        path = str(root / "e.sock")
        log = open(root / "edmonds.out", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [str(EDMONDS_PY), str(EDMONDS_SERVE), str(project), path],
            stdout=log,
            stderr=log,
            env=bench_env(root),
        )
        try:
            _wait(lambda: os.path.exists(path), proc, "the Edmonds daemon")
            yield EdmondsDoor(path), proc.pid, str(project)
        finally:
            stop(proc)
            log.close()


# --- measuring -------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    """VmRSS of ``pid`` and all its descendants, MiB."""
    total = 0
    children = [pid]
    while children:
        current = children.pop()
        try:
            with open(f"/proc/{current}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{current}/task/{current}/children") as fh:
                children.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return total / 1024


def interleave(
    targets: dict[str, Callable[[], object]],
    rounds: int,
    block: int,
    warmup: int,
    pace: float = 0.0,
) -> dict[str, dict[str, float]]:
    """``pace``: seconds of idle before each timed request (not timed) — an agent's
    rhythm, one event at a time with the daemon idle in between, where back-to-back
    blocks measure a daemon kept busy."""
    samples: dict[str, list[float]] = {name: [] for name in targets}
    for fn in targets.values():
        for _ in range(warmup):
            fn()
    names = list(targets)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            fn = targets[name]
            for _ in range(block):
                if pace:
                    time.sleep(pace)
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
    return {
        name: {"p50_ms": pct(s, 0.5) * 1000, "p99_ms": pct(s, 0.99) * 1000, "n": len(s)}
        for name, s in samples.items()
    }


def _expect(answer: bytes, deny: bool, who: str) -> None:
    if deny != (b'"deny"' in answer):
        raise RuntimeError(f"{who}: expected {'a deny' if deny else 'no deny'}, got {answer!r}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    rounds, block, warmup = args.rounds, args.block, args.warmup
    results: dict[str, Any] = {"machine": machine(), "rows": {}, "hookd_python": _util.PYTHON}
    results["block"], results["rounds"], results["pace_ms"] = block, rounds, args.pace_ms
    results["audit_off_peer"], results["floor_peer"] = args.audit_off, args.floor
    cat = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat"}]}]}
    with tempdir("hkp") as scratch, ExitStack() as stack:
        policy = scratch / "deny_policy.py"
        policy.write_text(HOOKD_POLICY)
        module = scratch / "deny_policy.mjs"
        module.write_text(CLOOKS_POLICY)
        deny_hook = {"type": "python", "callable": f"{policy}:deny", "inDaemon": True}
        h_none = stack.enter_context(hookd({}))
        h_cat = stack.enter_context(hookd(cat))
        h_deny = stack.enter_context(hookd({"PreToolUse": [{"hooks": [deny_hook]}]}))
        c_none = stack.enter_context(clooks({}))
        c_cat = stack.enter_context(
            clooks({"PreToolUse": [{"id": "cat", "type": "script", "command": "cat"}]})
        )
        c_deny = stack.enter_context(
            clooks({"PreToolUse": [{"id": "deny", "type": "inline", "module": str(module)}]})
        )
        # hookd without its audit log: not a configuration to compare with the peers
        # (the record written before each answer is one of hookd's guarantees), but
        # the measure of what that guarantee costs on the no-hook path.
        h_bare = stack.enter_context(hookd({}, audit=False)) if args.audit_off else None
        floor = stack.enter_context(trio_floor()) if args.floor else None
        e_none = stack.enter_context(edmonds("none"))
        e_deny = stack.enter_context(edmonds("deny"))

        def body(daemon: tuple[Any, int, str], command: str) -> bytes:
            return event(command, daemon[2])

        def keep(daemon: tuple[HttpDoor, int, str], command: str, deny: bool) -> Callable[[], None]:
            data = body(daemon, command)
            return lambda: _expect(daemon[0].keep_alive(data), deny, "keep-alive")

        def fresh(daemon: tuple[HttpDoor, int, str], command: str) -> Callable[[], None]:
            data = body(daemon, command)
            return lambda: _expect(daemon[0].new_connection(data), False, "new connection")

        def unix(
            daemon: tuple[EdmondsDoor, int, str], command: str, deny: bool
        ) -> Callable[[], None]:
            data = body(daemon, command)
            return lambda: _expect(daemon[0].request(data), deny, "edmonds")

        def curl(daemon: tuple[HttpDoor, int, str]) -> Callable[[], None]:
            path = scratch / f"body-{daemon[0].port}.json"
            path.write_bytes(body(daemon, ALLOWED))
            return lambda: _expect(daemon[0].curl(path), False, "curl")

        rows: dict[str, dict[str, Callable[[], object]]] = {
            "no hook (keep-alive)": {
                "hookd": keep(h_none, ALLOWED, False),
                "clooks": keep(c_none, ALLOWED, False),
                "Edmonds (per connection)": unix(e_none, ALLOWED, False),
            },
            "one cat command hook": {
                "hookd": keep(h_cat, ALLOWED, False),
                "clooks": keep(c_cat, ALLOWED, False),
            },
            "in-daemon deny policy": {
                "hookd": keep(h_deny, DENIED, True),
                "clooks": keep(c_deny, DENIED, True),
                "Edmonds (per connection)": unix(e_deny, DENIED, True),
            },
            "new connection, raw socket": {
                "hookd": fresh(h_none, ALLOWED),
                "clooks": fresh(c_none, ALLOWED),
            },
        }
        if h_bare is not None:
            rows["no hook (keep-alive)"]["hookd, audit off"] = keep(h_bare, ALLOWED, False)
        if floor is not None:
            rows["no hook (keep-alive)"]["trio floor"] = keep(floor, ALLOWED, False)
        if shutil.which("curl"):
            rows["new connection, curl process"] = {"hookd": curl(h_none), "clooks": curl(c_none)}
        for name, targets in rows.items():
            if args.rows and not any(word in name for word in args.rows.split(",")):
                continue
            n_rounds = rounds
            pace = args.pace_ms / 1000
            results["rows"][name] = interleave(targets, n_rounds, block, warmup, pace)
            print(
                f"{name}: "
                + ", ".join(
                    f"{peer} {v['p50_ms']:.3f}/{v['p99_ms']:.3f} ms"
                    for peer, v in results["rows"][name].items()
                ),
                flush=True,
            )
        results["rss_mib"] = {
            "hookd": rss_mib(h_none[1]),
            "clooks": rss_mib(c_none[1]),
            "Edmonds": rss_mib(e_none[1]),
        }
        print("idle RSS MiB: " + ", ".join(f"{k} {v:.1f}" for k, v in results["rss_mib"].items()))
    return results


_COLUMNS = (
    # (the peer's name in a row, its column, its name in rss_mib: None when not measured)
    ("hookd", "hookd", "hookd"),
    ("clooks", "clooks (model)", "clooks"),
    ("Edmonds (per connection)", "Edmonds", "Edmonds"),
    ("hookd, audit off", "hookd, audit off", None),
    ("trio floor", "trio floor", None),
)


def table(results: dict[str, Any]) -> str:
    """The run as a Markdown table, one column per peer that answered any row."""
    measured = {peer for values in results["rows"].values() for peer in values}
    columns = [c for c in _COLUMNS if c[0] in measured or c[2] in results["rss_mib"]]
    lines = [
        "| p50 / p99, ms | " + " | ".join(title for _, title, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for row, values in results["rows"].items():
        cells = []
        for peer, _, _ in columns:
            v = values.get(peer)
            cells.append(f"{v['p50_ms']:.2f} / {v['p99_ms']:.2f}" if v else "–")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    rss = [f"{results['rss_mib'][key]:.1f}" if key else "–" for _, _, key in columns]
    lines.append("| idle RSS, MiB | " + " | ".join(rss) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument(
        "--pace-ms",
        type=float,
        default=0.0,
        help="idle before each timed request (an agent's rhythm); 0: back to back",
    )
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("--rows", default="", help="only rows whose name has one of these words")
    parser.add_argument(
        "--audit-off",
        action="store_true",
        help="add hookd without its audit log to the no-hook row (what the audit costs)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="add a bare trio responder to the no-hook row (what trio and the kernel cost)",
    )
    args = parser.parse_args()
    if not EDMONDS_PY.exists():
        sys.exit(f"{EDMONDS_PY} missing: run bench/peers_setup.sh first")
    if HOOKD_PY.exists():
        _util.PYTHON = str(HOOKD_PY)
    else:
        print(f"{HOOKD_PY} missing: hookd runs from the dev venv (RSS includes rich, click)")
    results = run(args)
    print(table(results))
    if not args.no_save:
        out = BENCH / "results" / f"peers-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
        out.write_text(json.dumps(results, indent=2))
        print(f"saved {out}")


if __name__ == "__main__":
    main()

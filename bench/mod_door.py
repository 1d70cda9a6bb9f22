"""hookd's side of the mod door, without Claude Code: one request per event, keep-alive.

    .venv/bin/python bench/mod_door.py [N]

Row 6 measures what a tool call costs through the real CLI; this splits off
what of it is hookd's: the same PreToolUse input posted N times, interleaved
request by request, to

* ``/mod/PreToolUse`` on the daemon's Unix socket (what the mod does), with the
  row's python policy and with no hook for the event;
* ``/hooks/PreToolUse`` on the loopback port with the token (what an http hook
  does), with the policy.

Each request is timed from its first byte written to the last byte of the
answer read, over one kept-alive connection per door (Claude Code keeps one
for the session).  p50 / p90 / p99 in µs.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from typing import Any

from _util import EVENT, hookd_daemon, summary, tempdir
from cases import POLICY_HOOK


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(path: str, body: bytes, headers: dict[str, str]) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nhost: hookd\r\ncontent-length: {len(body)}\r\n"
    head += "content-type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + body


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += sock.recv(65536)
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.decode(errors="replace"))
    return rest


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempdir("hkm") as tmp:
        hook = tmp / "policy_hook.py"
        hook.write_text(POLICY_HOOK)
        hooks = {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "python", "callable": f"{hook}:check"}]}
            ]
        }
        port = _free_port()
        with hookd_daemon(hooks, http_port=port) as d:
            event: dict[str, Any] = {**EVENT, "cwd": str(d.root / "project")}
            body = json.dumps(event).encode()
            no_hook = json.dumps({**event, "tool_name": "Read", "tool_input": {}}).encode()
            token_file = d.root / "home" / ".config" / "hookd" / "http-token"
            deadline = time.monotonic() + 20
            while not token_file.exists() and time.monotonic() < deadline:
                time.sleep(0.05)  # the daemon writes it as the http endpoint starts
            token = token_file.read_text().strip()
            while not (d.root / "http.sock").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            unix.connect(str(d.root / "http.sock"))
            tcp = socket.create_connection(("127.0.0.1", port))
            tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            doors = {
                "mod over http.sock, python policy": (
                    unix,
                    _request("/mod/PreToolUse", body, {}),
                ),
                "mod over http.sock, no hook for the tool": (
                    unix,
                    _request("/mod/PreToolUse", no_hook, {}),
                ),
                "http hook over TCP + token, python policy": (
                    tcp,
                    _request("/hooks/PreToolUse", body, {"authorization": f"Bearer {token}"}),
                ),
            }
            for sock, request in doors.values():  # warm: worker started, agent looked up
                for _ in range(20):
                    _exchange(sock, request)
            samples: dict[str, list[float]] = {name: [] for name in doors}
            for _ in range(n):
                for name, (sock, request) in doors.items():
                    t0 = time.perf_counter()
                    _exchange(sock, request)
                    samples[name].append(time.perf_counter() - t0)
            unix.close()
            tcp.close()
    for name, values in samples.items():
        s = summary(values)
        p50, p90, p99 = s["p50_us"], s["p90_us"], s["p99_us"]
        print(f"{name:45} p50 {p50:7.0f}  p90 {p90:7.0f}  p99 {p99:7.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

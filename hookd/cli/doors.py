"""The doors an agent's wired hook files point at, and whether hookd answers at each.

A wired file can be perfect and its hooks still never reach hookd: the daemon
is not running, the relay binary it names was deleted with an old checkout,
the http port it posts to is served by nobody (or by another user's hookd, or
with another token), the mod's socket is gone.  Every one of those fails
*open* — the agent treats an unreachable hook as a non-blocking error and goes
ahead — so nothing looks wrong.  ``hookctl doctor`` therefore follows each
door the way the agent will (:func:`check_doors`), and ``hookctl status``
compares Claude Code's wiring with what the daemon it asked serves
(:func:`unserved`).

Standard library and the client only: ``hookctl status`` must not load trio
or the engine (tests/cli/test_hookctl_cli.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hookd.dirs import config_dir
from hookd_client import sockpath
from hookd_client.client import Client, DaemonError, DaemonUnavailable

__all__ = ["Wiring", "check_doors", "claude_files", "find_wirings", "unserved"]

_URL = re.compile(r"^https?://(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/hooks/[A-Za-z]+$")
Kind = Literal["http", "relay", "mod"]


@dataclass(frozen=True)
class Wiring:
    """One door of one wired file, with the events that use it."""

    agent: str
    path: Path
    kind: Kind
    target: str
    """http: ``http://127.0.0.1:PORT``; relay: the program; mod: the http socket."""
    port: int | None = None
    token: str | None = None
    """http: the token the file's headers carry (``$VAR`` when it names a variable)."""
    argv: tuple[str, ...] = ()
    """relay: the part of the command that starts the relay (program, ``-c CODE``)."""
    socket: str | None = None
    """relay: its ``--socket`` (None: the relay's own search)."""
    events: int = field(default=1, compare=False)


def claude_files(home: Path, project: Path | None) -> list[Path]:
    """Claude Code's settings files, user scope first (``hookctl claude install``'s)."""
    files = [home / ".claude" / "settings.json"]
    if project is not None:
        base = project / ".claude"
        files += [base / "settings.json", base / "settings.local.json"]
    return list(dict.fromkeys(files))  # the project may be HOME itself


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text.splitlines()  # a script (Cline's per-event hooks): one command a line


def _strings_and_dicts(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings_and_dicts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_and_dicts(item)


def _is_relay(text: str) -> bool:
    return "hookd-relay" in text or ("import relay" in text and "hookd_client" in text)


def _relay(agent: str, path: Path, argv: list[str]) -> Wiring | None:
    while argv and argv[0] in ("exec", "env"):
        argv = argv[1:]
    if not argv:
        return None
    start = argv[: argv.index("-c") + 2] if "-c" in argv else argv[:1]
    sock = None
    if "--socket" in argv[:-1]:
        sock = argv[argv.index("--socket") + 1]
    sock = next((a.split("=", 1)[1] for a in argv if a.startswith("--socket=")), sock)
    return Wiring(agent, path, "relay", start[0], argv=tuple(start), socket=sock)


def _token(handler: dict[str, Any]) -> str | None:
    headers = handler.get("headers")
    if not isinstance(headers, dict):
        return None
    for name, value in headers.items():
        if not isinstance(value, str):
            continue
        if name.lower() == "x-hookd-token":
            return value.strip()
        if name.lower() == "authorization" and value.lower().startswith("bearer "):
            return value[7:].strip()
    return None


def _from_dict(agent: str, path: Path, item: dict[str, Any]) -> Iterator[Wiring]:
    url = item.get("url")
    match = _URL.match(url) if isinstance(url, str) else None
    if match:
        port = int(match.group(1))
        yield Wiring(agent, path, "http", f"http://127.0.0.1:{port}", port, _token(item))
    command = item.get("command")
    args = item.get("args")
    extra = [str(a) for a in args] if isinstance(args, list) else []
    if isinstance(command, str) and _is_relay(" ".join([command, *extra])):
        try:
            # Exec form (``args`` given): the command is the program itself.
            argv = [command, *extra] if isinstance(args, list) else shlex.split(command)
            wiring = _relay(agent, path, argv)
        except ValueError:
            wiring = None
        if wiring is not None:
            yield wiring
    mod = item.get("HOOKD_HTTP_SOCKET")
    if isinstance(mod, str) and mod:
        yield Wiring(agent, path, "mod", mod)


def find_wirings(agent: str, path: Path, text: str) -> list[Wiring]:
    """Every door ``text`` (the file at ``path``) sends ``agent``'s events to, counted."""
    found: dict[Wiring, int] = {}
    commands_seen: set[int] = set()
    for item in _strings_and_dicts(_parsed(text)):
        if isinstance(item, dict):
            for wiring in _from_dict(agent, path, item):
                found[wiring] = found.get(wiring, 0) + 1
            if isinstance(item.get("command"), str):
                commands_seen.add(id(item["command"]))
                args = item.get("args")
                if isinstance(args, list):
                    commands_seen.update(id(a) for a in args)
        elif isinstance(item, str) and id(item) not in commands_seen and _is_relay(item):
            try:
                relay = _relay(agent, path, shlex.split(item))
            except ValueError:
                continue
            if relay is not None:
                found[relay] = found.get(relay, 0) + 1
    return [
        Wiring(w.agent, w.path, w.kind, w.target, w.port, w.token, w.argv, w.socket, n)
        for w, n in found.items()
    ]


# --- status: Claude Code's wiring against the daemon's own answer --------------------


def unserved(wirings: list[Wiring], status: dict[str, Any]) -> list[str]:
    """One line per wired http port or mod socket that the daemon of ``status`` does not
    serve: Claude Code's hooks there fail open."""
    lines: list[str] = []
    pid = status.get("pid")
    for w in wirings:
        if w.kind == "http" and w.port != status.get("http_port"):
            serving = status.get("http_port")
            now = "no http port" if serving is None else f"port {serving}"
            why = f" ({status['http_error']})" if status.get("http_error") else ""
            lines.append(
                f"{w.path}: {w.events} event(s) post to {w.target}, but hookd (pid {pid}) "
                f"serves {now}{why}: they fail open (hookctl doctor)"
            )
        elif w.kind == "mod" and w.target != status.get("http_socket"):
            lines.append(
                f"{w.path}: the mod posts to {w.target}, but hookd (pid {pid}) serves "
                f"{status.get('http_socket') or 'no http socket'}: its events fail open"
            )
    return lines


# --- doctor: follow each door -------------------------------------------------------


@dataclass(frozen=True)
class _Daemon:
    socket: str
    status: dict[str, Any] | None
    error: str | None


def _ask_daemon(sock: str | None) -> _Daemon:
    path = sock or sockpath.default_socket_path()
    try:
        with Client(sock, name="hookctl-doctor", retries=0, timeout=5.0) as client:
            return _Daemon(path, client.status(), None)
    except DaemonUnavailable:
        return _Daemon(
            path,
            None,
            "hookd is not running (nobody answers there; start it: `hookd serve`, or "
            "`hookctl systemd install`)",
        )
    except (DaemonError, OSError) as exc:
        return _Daemon(path, None, f"hookd did not answer: {exc}")


def _relay_problem(w: Wiring) -> str | None:
    """Whether the relay's program exists and starts: run without an event, it must
    print its usage line (exit 1) — proof that the interpreter and the relay load."""
    program = w.argv[0]
    resolved = program if "/" in program else shutil.which(program)
    if resolved is None:
        return f"the relay {program} is not on PATH"
    if not os.path.isfile(resolved):
        return f"the relay {resolved} does not exist (install again)"
    if not os.access(resolved, os.X_OK):
        return f"the relay {resolved} is not executable"
    try:
        done = subprocess.run(
            [resolved, *w.argv[1:]],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the relay {resolved} does not start: {exc}"
    if b"usage:" not in done.stderr:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"the relay {resolved} does not start (exit {done.returncode}): {last[0]}"
    return None


def _request(sock: socket.socket, token: str | None) -> tuple[int, dict[str, Any]]:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall(
        f"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n".encode()
    )
    data = b""
    while len(data) < 65536:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        if sep and length and len(body) >= int(length.group(1)):
            break
    head, _, body = data.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/"):
        raise ValueError("not an http answer")
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        parsed = {}
    return int(status_line[1]), parsed if isinstance(parsed, dict) else {}


def _health(address: tuple[str, int] | str, token: str | None) -> tuple[int, dict[str, Any]]:
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(5.0)
        sock.connect(address)
        return _request(sock, token)


def _token_for(w: Wiring) -> tuple[str | None, str]:
    """The token to knock with, and where it came from."""
    if w.token and w.token.startswith("$"):
        name = w.token.strip("${}")
        if os.environ.get(name):
            return os.environ[name], f"${name}"
        try:
            return (config_dir() / "http-token").read_text().strip(), "the token file"
        except OSError:
            return None, f"${name} (unset here, and no token file)"
    return w.token, "the file's token"


def _http_problem(w: Wiring, daemon: _Daemon) -> str | None:
    assert w.port is not None
    token, whence = _token_for(w)
    try:
        code, body = _health(("127.0.0.1", w.port), token)
    except ConnectionRefusedError:
        now = _serves(daemon)
        return f"nobody listens on {w.target}{now}"
    except (OSError, ValueError) as exc:
        return f"{w.target} does not answer as hookd does: {exc}"
    if code == 401:
        return (
            f"{w.target} refuses {whence} (401): another hookd (another user's?) serves "
            "it, or the token file changed since install — install again"
        )
    if code != 200 or "pid" not in body:
        return f"{w.target} is not served by a hookd that knows this token (HTTP {code})"
    if daemon.status is not None and body["pid"] != daemon.status.get("pid"):
        return (
            f"{w.target} is served by hookd pid {body['pid']}, not by the one on "
            f"{daemon.socket} (pid {daemon.status.get('pid')})"
        )
    return None


def _serves(daemon: _Daemon) -> str:
    if daemon.status is None:
        return " (hookd is not running)"
    port = daemon.status.get("http_port")
    error = daemon.status.get("http_error")
    now = f"serves port {port}" if port is not None else "serves no http port"
    return f" (hookd pid {daemon.status.get('pid')} {now}{': ' + error if error else ''})"


def _mod_problem(w: Wiring, daemon: _Daemon) -> str | None:
    try:
        code, body = _health(w.target, None)
    except (OSError, ValueError) as exc:
        return f"nobody answers on the mod's socket {w.target}: {exc}"
    if code != 200 or "pid" not in body:
        return f"the mod's socket {w.target} is not served by hookd (HTTP {code})"
    if daemon.status is not None and body["pid"] != daemon.status.get("pid"):
        return f"the mod's socket {w.target} is served by hookd pid {body['pid']}, not this one"
    return None


def check_doors(wirings: list[Wiring]) -> list[tuple[Wiring, str]]:
    """Each door that will not reach hookd, with one specific line why."""
    daemons: dict[str | None, _Daemon] = {}

    def daemon(sock: str | None) -> _Daemon:
        if sock not in daemons:
            daemons[sock] = _ask_daemon(sock)
        return daemons[sock]

    problems: list[tuple[Wiring, str]] = []
    relays_checked: dict[tuple[str, ...], str | None] = {}
    for w in wirings:
        reach = daemon(w.socket if w.kind == "relay" else None)
        if w.kind == "relay":
            if w.argv not in relays_checked:
                relays_checked[w.argv] = _relay_problem(w)
            problem = relays_checked[w.argv]
            if problem is None and reach.error is not None:
                problem = f"the relay's daemon socket {reach.socket}: {reach.error}"
        elif w.kind == "http":
            problem = _http_problem(w, reach)
        else:
            problem = _mod_problem(w, reach)
        if problem is not None:
            problems.append((w, problem))
    return problems

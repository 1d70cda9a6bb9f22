"""hookd-relay: a Claude Code ``command`` hook that hands the event to the daemon.

Installed as ``/abs/python3 -I -S -c "<import relay from its directory>" EVENT
[--fail-closed]`` (``python3 -I -S relay.py EVENT`` works too).
It reads the hook input from stdin, sends ``hello`` and ``relay`` frames to the
daemon's socket, and prints the reply's stdout/stderr and exits with its exit
code — byte for byte what a command hook would, so Claude Code cannot tell.

Why it imports nothing but ``_socket``, ``sys``, ``os`` (and the package's own
``sockpath``, which needs only ``os``): a relay runs once
per event, and its start-up is the whole cost (perf-floors.md (d): ``-I -S``
with ``_socket`` ≈ 9 ms; the ``socket`` module doubles it, ``json`` or
``msgspec`` triple it or worse).  So the two small MessagePack maps are
encoded and decoded by hand here, the hook input is forwarded as raw bytes
(the daemon parses it), and the only JSON ever written is a one-line
``systemMessage`` built with an escaping function.  For the same reason the
installed command *imports* this file rather than running it as a script: a
script is compiled on every run (~6 ms), an import uses the cached bytecode;
and there is no ``from __future__`` import (it is a real module import).

Socket path: ``--socket``, else the one rule every party shares
(:mod:`hookd_client.sockpath`, which imports nothing but ``os``): ``$HOOKD_SOCKET``,
``$XDG_RUNTIME_DIR/hookd/hookd.sock`` (when that directory exists), else
``/tmp/hookd-$UID/hookd.sock`` — and a path in that shared ``/tmp`` directory is
used only when ``lstat`` shows it is the user's own and private, so a
directory another user created first never sees a hook input.

Frames are read here by hand (:func:`_recv_exact`) rather than with the
client package's sans-IO reader on purpose: that reader needs ``msgspec``,
and the relay reads exactly one reply.

When the daemon cannot be reached or answers with an error the relay fails
*open* by default — exit 0 with a visible ``systemMessage`` — because a
missing daemon must not freeze the agent; ``--fail-closed`` (used for events
that have a hook marked ``onFailure: "block"``) exits 2 with the reason on
stderr, which blocks wherever exit 2 blocks.  Under ``--fail-closed`` *every*
failure does so — bad usage, a closed stdin, a bug — never exit 1, which the
agent would read as "go ahead".

A daemon that took the connection and never answers is such a failure too,
decided before the agent's own timeout kills the relay (and goes ahead, which
would turn fail-closed into fail-open): ``--connect-timeout`` bounds the wait
for its ``welcome``, ``--timeout`` the whole exchange (:class:`_Clock`; the
defaults keep 3 s under Claude Code's timeout for the event, and the installer
writes ``--timeout`` where it writes a longer ``timeout``).
"""

import _socket
import os
import sys

if __package__:  # imported as hookd_client.relay (tests, the hookd-relay script)
    from hookd_client import sockpath
else:  # the installed hook (relay_bootstrap put this directory on sys.path) or a script
    if os.path.dirname(__file__) not in sys.path:
        sys.path.append(os.path.dirname(__file__))  # appended: it never shadows the stdlib
    import sockpath  # type: ignore[import-not-found, no-redef]

_HEADER = 4
_MAX_REPLY = 64 * 1024 * 1024
_MAX_DEPTH = 64
"""How deep a reply value may nest (the frame's map is level 0): hookd's replies are a few
levels deep; deeper is "malformed reply frame", as hookd-relay.c's mp_read says, where
Python's own recursion limit would otherwise decide at ~500 levels with another message."""


# --- MessagePack, the subset the protocol needs -------------------------------------


def _uint(n: int, small: int, codes: tuple[int, ...]) -> bytes:
    # codes: formats for 1, 2, 4, 8 bytes
    if n < small:
        return bytes((codes[0] | n,)) if codes[0] else bytes((n,))
    for size, code in zip((1, 2, 4, 8), codes[1:], strict=True):
        if n < 1 << (8 * size):
            return bytes((code,)) + n.to_bytes(size, "big")
    raise ValueError("integer too large")


def _int(n: int) -> bytes:
    if n < 0:
        raise ValueError("negative integers are not used by the relay")
    return _uint(n, 128, (0, 0xCC, 0xCD, 0xCE, 0xCF))


def _str(s: str) -> bytes:
    data = s.encode("utf-8")
    n = len(data)
    if n < 32:
        return bytes((0xA0 | n,)) + data
    if n < 256:
        return b"\xd9" + bytes((n,)) + data
    if n < 65536:
        return b"\xda" + n.to_bytes(2, "big") + data
    return b"\xdb" + n.to_bytes(4, "big") + data


def _bin(b: bytes) -> bytes:
    n = len(b)
    if n < 256:
        return b"\xc4" + bytes((n,)) + b
    if n < 65536:
        return b"\xc5" + n.to_bytes(2, "big") + b
    return b"\xc6" + n.to_bytes(4, "big") + b


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x80 | n,))
    if n < 65536:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")


def _value(v: object) -> bytes:
    if v is None:
        return b"\xc0"
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        return _int(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, bytes):
        return _bin(v)
    if isinstance(v, dict):
        return _map(v)
    raise TypeError(type(v).__name__)


def _map(d: dict[str, object]) -> bytes:
    parts = [_map_header(len(d))]
    for k, v in d.items():
        parts.append(_str(k))
        parts.append(_value(v))
    return b"".join(parts)


def _frame(d: dict[str, object]) -> bytes:
    body = _map(d)
    return len(body).to_bytes(_HEADER, "big") + body


def _decode(buf: bytes, i: int, depth: int = 0) -> tuple[object, int]:
    """One value at ``buf[i]``, ``depth`` levels inside the frame's map; returns
    ``(value, next_index)``."""
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deep")
    t = buf[i]
    i += 1
    if t < 0x80:
        return t, i
    if t >= 0xE0:
        return t - 0x100, i
    if 0xA0 <= t <= 0xBF:
        n = t & 0x1F
        return buf[i : i + n].decode("utf-8", "surrogateescape"), i + n
    if 0x80 <= t <= 0x8F:
        return _decode_map(buf, i, t & 0x0F, depth)
    if 0x90 <= t <= 0x9F:
        return _decode_array(buf, i, t & 0x0F, depth)
    if t == 0xC0:
        return None, i
    if t in (0xC2, 0xC3):
        return t == 0xC3, i
    sizes = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8}
    if t in sizes:
        n = sizes[t]
        return int.from_bytes(buf[i : i + n], "big", signed=t >= 0xD0), i + n
    lengths = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}
    if t in lengths:
        w = lengths[t]
        n = int.from_bytes(buf[i : i + w], "big")
        i += w
        raw = bytes(buf[i : i + n])
        return (raw if t <= 0xC6 else raw.decode("utf-8", "surrogateescape")), i + n
    if t in (0xDC, 0xDD):
        w = 2 if t == 0xDC else 4
        return _decode_array(buf, i + w, int.from_bytes(buf[i : i + w], "big"), depth)
    if t in (0xDE, 0xDF):
        w = 2 if t == 0xDE else 4
        return _decode_map(buf, i + w, int.from_bytes(buf[i : i + w], "big"), depth)
    if t in (0xCA, 0xCB):  # floats: not in the replies the relay reads; skip them
        return None, i + (4 if t == 0xCA else 8)
    raise ValueError(f"unsupported MessagePack type 0x{t:02x}")


def _decode_map(buf: bytes, i: int, n: int, depth: int) -> tuple[object, int]:
    """A map's ``n`` pairs.  A pair whose key is an array or a map (no field hookd sends;
    unhashable here) is passed over, as hookd-relay.c passes over every key that is not a
    string: an unknown field, never a crash."""
    out: dict[object, object] = {}
    for _ in range(n):
        k, i = _decode(buf, i, depth + 1)
        v, i = _decode(buf, i, depth + 1)
        if not isinstance(k, (list, dict)):
            out[k] = v
    return out, i


def _decode_array(buf: bytes, i: int, n: int, depth: int) -> tuple[object, int]:
    out: list[object] = []
    for _ in range(n):
        v, i = _decode(buf, i, depth + 1)
        out.append(v)
    return out, i


# --- JSON for the one message the relay writes itself ---------------------------------


def _json_str(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif o < 0x20:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# --- the relay ------------------------------------------------------------------------


def socket_path(explicit: str | None = None) -> str:
    return explicit or sockpath.default_socket_path()


def _recv_exact(sock: _socket.socket, n: int, clock: "_Clock | None" = None) -> bytes:
    chunks = []
    while n:
        if clock is not None:
            clock.arm(sock)  # each wait gets only the time left: a trickle cannot stretch it
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("hookd closed the connection before replying")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _environment() -> dict[str, str]:
    """The agent's environment, minus entries that are not valid UTF-8 (msgpack str)."""
    env: dict[str, str] = {}
    for key, value in os.environ.items():
        try:
            key.encode("utf-8")
            value.encode("utf-8")
        except UnicodeEncodeError:
            continue
        env[key] = value
    return env


class _NotRunning(OSError):
    """Nothing accepts connections on the socket path (missing file, stale socket)."""


class _Unsafe(OSError):
    """The socket path is in the shared fallback directory and not the user's own."""


_SYSTEM_MESSAGE_AGENTS = frozenset({"", "codex", "gemini", "qwen", "factory", "claude-agent-sdk"})
"""Agents that show a hook's ``{"systemMessage": …}`` to the user ("" is Claude Code).
Every other agent's stdout is another shape (Copilot shows no systemMessage, Kiro
turns stdout into context, Cline reads ``{cancel, …}``): its fail-open message goes
to stderr, and stdout stays empty — "no opinion" in every dialect."""


def fail_open(agent: str, why: str, event: str = "") -> tuple[str, str, int]:
    """What the relay prints when hookd cannot answer and the hook fails open.

    Visible, in the agent's own format: a ``systemMessage`` for the agents that
    show it to the user and go on (:data:`_SYSTEM_MESSAGE_AGENTS`), Copilot's own
    way (:func:`_copilot_fail`), else a line on stderr with exit 0 and nothing on
    stdout.
    """
    if agent == "copilot":
        return _copilot_fail(event, why, closed=False)
    if agent in _SYSTEM_MESSAGE_AGENTS:
        return '{"systemMessage": ' + _json_str(why) + "}\n", "", 0
    return "", why + "\n", 0


def fail_closed(agent: str, why: str, event: str = "") -> tuple[str, str, int]:
    """Exit 2 with the reason on stderr: Claude Code, Codex and Gemini CLI block on
    it (agents.md); Copilot blocks in JSON (:func:`_copilot_fail`); Cline reads no
    exit code at all (3.0.65: a hook that exits 2 blocks nothing), so its block is
    its own JSON, ``{"cancel": true, "errorMessage": …}`` with exit 0."""
    if agent == "copilot":
        return _copilot_fail(event, why, closed=True)
    if agent == "cline":
        return '{"cancel": true, "errorMessage": ' + _json_str(why) + "}\n", "", 0
    return "", why + "\n", 2


_COPILOT_GATES = frozenset({"preToolUse", "PreToolUse"})
_COPILOT_PERMISSION = frozenset({"permissionRequest", "PermissionRequest"})
_COPILOT_BLOCKS = frozenset(
    {
        "userPromptSubmitted",
        "UserPromptSubmit",
        "postToolUse",
        "PostToolUse",
        "agentStop",
        "Stop",
        "subagentStop",
        "SubagentStop",
    }
)


def _copilot_fail(event: str, why: str, *, closed: bool) -> tuple[str, str, int]:
    """Copilot CLI 1.0.102 when hookd cannot answer (seen running it).

    Copilot reads exit codes its own way: *any* non-zero exit of a preToolUse
    hook denies the call ("hook errored"), while elsewhere exit 2 blocks nothing
    and its stderr is shown to the user as a warning (``! <stderr>``) — the only
    hook text ``copilot -p`` shows the user at all (a systemMessage, or stderr
    with exit 0, is shown nowhere).  So:

    * fail open: on preToolUse exit 0 with the message as ``additionalContext``
      (the model learns the call went unchecked; nothing reaches the user there),
      on permissionRequest (where a non-zero exit denies too, and which fires
      after preToolUse has told the model) exit 0 with the message on stderr,
      elsewhere exit 2 with the message on stderr (a visible warning, no block);
    * fail closed: a deny or a block in Copilot's JSON, with the message as the
      reason, where Copilot can block (exit 2 would not block a prompt or a stop);
      elsewhere the same visible warning as failing open.
    """
    if event in _COPILOT_GATES:
        if closed:
            out = '{"permissionDecision": "deny", "permissionDecisionReason": '
            return out + _json_str(why) + "}\n", "", 0
        return '{"additionalContext": ' + _json_str(why) + "}\n", "", 0
    if event in _COPILOT_PERMISSION:
        if closed:
            return '{"behavior": "deny", "message": ' + _json_str(why) + "}\n", "", 0
        return "", why + "\n", 0
    if closed and event in _COPILOT_BLOCKS:
        return '{"decision": "block", "reason": ' + _json_str(why) + "}\n", "", 0
    return "", why + "\n", 2


_SHORT_CC_EVENTS = frozenset({"UserPromptSubmit", "PreModelSwitch", "PostModelSwitch"})
"""Events whose Claude Code default command timeout is 30 s, not 600 s."""
_MARGIN = 3.0
"""Seconds the relay keeps between its own deadline and the agent's timeout."""
_HANDSHAKE = 10.0
"""Default seconds for the daemon's ``welcome`` (``--connect-timeout``)."""


def deadline_for(agent_timeout: float) -> float:
    """The relay's ``--timeout`` under an agent hook timeout of ``agent_timeout`` s:
    3 s less (half of it under 6 s), so the relay decides — open or closed, as
    its entry says — before the agent kills it and goes ahead."""
    return max(agent_timeout - _MARGIN, agent_timeout / 2)


def default_deadline(event: str, agent: str) -> float:
    """The relay's deadline when neither ``--timeout`` nor ``$HOOKD_RELAY_TIMEOUT`` says:
    under Claude Code's default timeout for ``event`` (30 s or 600 s), which is
    also what every other agent's installed entry gets (600 s)."""
    return deadline_for(30.0 if not agent and event in _SHORT_CC_EVENTS else 600.0)


_BACKLOG_FULL = (
    "its socket takes no more connections (the listen backlog is full: a stopped or wedged daemon?)"
)


class _Late(OSError):
    """The daemon took the connection but did not answer within the relay's deadline."""


class _Clock:
    """The relay's deadlines: ``welcome`` within ``greet`` s, the reply within ``total``
    s, both from the start of the exchange.  ``os.times().elapsed`` (a monotonic
    clock, 10 ms steps) because importing ``time`` costs start-up; each socket
    wait gets the time left as its timeout."""

    def __init__(self, total: float, greet: float) -> None:
        self.start = os.times().elapsed
        self.total = total
        self.greet = min(greet, total)
        self.greeted = False

    def arm(self, sock: _socket.socket) -> None:
        limit = self.total if self.greeted else self.greet
        sock.settimeout(max(limit - (os.times().elapsed - self.start), 0.001))

    def late(self) -> _Late:
        if self.greeted:
            return _Late(f"no reply within {self.total:g} s (--timeout)")
        return _Late(
            f"no welcome within {self.greet:g} s: the daemon took the connection but does "
            "not answer (stopped, wedged, or a socket activation that did not start it; "
            "--connect-timeout)"
        )


def relay(
    event: str,
    data: bytes,
    path: str,
    agent: str = "",
    timeout: float | None = None,
    connect_timeout: float = _HANDSHAKE,
) -> tuple[str, str, int]:
    """Send one event; return ``(stdout, stderr, exit_code)`` from the daemon's reply.

    ``agent``: the agent whose hook this is (``--agent``); empty is Claude Code,
    and then the request carries no ``agent`` key, byte for byte as before.
    ``timeout`` bounds the whole exchange (connect, hello, request, reply;
    default :func:`default_deadline`), ``connect_timeout`` the part up to the
    daemon's ``welcome``: a daemon that took the connection and never answers
    (stopped, wedged, a socket activation whose service does not start) raises
    :class:`_Late` instead of holding the agent until it kills the hook."""
    clock = _Clock(default_deadline(event, agent) if timeout is None else timeout, connect_timeout)
    pid = os.environ.get("CLAUDE_PID", "")
    hello: dict[str, object] = {"kind": "hello", "version": 1, "client": "hookd-relay"}
    request: dict[str, object] = {
        "kind": "relay",
        "id": 1,
        "event": event,
        "input": data,
        "env": _environment(),
    }
    if agent:
        request["agent"] = agent
    if pid.isascii() and pid.isdigit():  # ASCII digits, as hookd-relay.c reads them
        hello["pid"] = int(pid)
        request["pid"] = int(pid)
    else:
        request["pid"] = os.getppid()
    unsafe = sockpath.unsafe_reason(path)
    if unsafe is not None:
        raise _Unsafe(unsafe)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        clock.arm(sock)
        try:
            sock.connect(path)
        except (BlockingIOError, TimeoutError):  # EAGAIN: a full backlog, nobody accepts
            raise _Late(_BACKLOG_FULL) from None
        except OSError as exc:
            raise _NotRunning(exc.strerror or str(exc)) from None
        try:
            sock.sendall(_frame(hello) + _frame(request))
            return _reply(sock, clock)
        except TimeoutError:
            raise clock.late() from None
    finally:
        sock.close()


def _decode_frame(body: bytes) -> dict[object, object]:
    """A reply frame's map, or "malformed reply frame" when a value in it is cut short
    by the frame's end (or of a type hookd never sends), as hookd-relay.c says: a
    short value is not read as a shorter one, and nothing after it is the answer."""
    try:
        message, end = _decode(body, 0)
    except (IndexError, ValueError):
        raise ValueError("malformed reply frame") from None
    if end > len(body) or not isinstance(message, dict):
        raise ValueError("malformed reply frame")
    return message


def _integer(value: object) -> int | None:
    """A MessagePack integer, or None: a bool is not one (``True == 1`` in Python, but an
    ``id`` or ``exit_code`` of ``true`` is no integer to hookd-relay.c, nor to hookd)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _reply(sock: _socket.socket, clock: _Clock) -> tuple[str, str, int]:
    """Read frames (each wait armed with the time left) until the relay reply."""
    while True:
        size = int.from_bytes(_recv_exact(sock, _HEADER, clock), "big")
        if size > _MAX_REPLY:
            raise ValueError(f"reply frame too large ({size} bytes)")
        body = _recv_exact(sock, size, clock)
        if not body or not (0x80 <= body[0] <= 0x8F or body[0] in (0xDE, 0xDF)):
            raise ValueError("reply is not a map")
        message = _decode_frame(body)
        kind = message.get("kind")
        if kind == "welcome":
            clock.greeted = True
        elif kind == "relay_reply" and _integer(message.get("id")) == 1:
            stdout, stderr, code = (message.get(k) for k in ("stdout", "stderr", "exit_code"))
            return (
                stdout if isinstance(stdout, str) else "",
                stderr if isinstance(stderr, str) else "",
                (_integer(code) or 0) & 0xFF,  # the exit status's 8 bits, as hookd-relay.c
            )
        elif kind == "error":
            code, text = (message.get(k) for k in ("code", "message"))
            code, text = (v if isinstance(v, str) else None for v in (code, text))
            raise RuntimeError(f"hookd refused the event ({code}): {text}")


USAGE = """\
usage: hookd-relay [--agent AGENT] EVENT [--socket PATH] [--fail-closed]
                   [--timeout SECONDS] [--connect-timeout SECONDS]

Hand one hook event (its JSON on stdin) to the hookd daemon and answer as the
command hook would: the reply's stdout, stderr and exit code.

  EVENT                  the hook event, as the agent names it (PreToolUse, ...)
  --agent AGENT          whose hook this is (codex, gemini, copilot, ...; default: Claude Code)
  --socket PATH          the daemon's socket (default: $HOOKD_SOCKET, else
                         $XDG_RUNTIME_DIR/hookd/hookd.sock, else /tmp/hookd-$UID/hookd.sock)
  --fail-closed          when hookd cannot answer, block (exit 2, reason on stderr)
                         instead of going ahead with a visible message
  --timeout SECONDS      deadline for the whole exchange (default: $HOOKD_RELAY_TIMEOUT,
                         else 3 s under Claude Code's timeout for EVENT: 27 or 597)
  --connect-timeout SECONDS
                         deadline for the daemon's greeting (default:
                         $HOOKD_RELAY_CONNECT_TIMEOUT, else 10)
  -h, --help             show this and exit

Before sending anything the socket must be yours and so must every directory on
the way to it (or root's; shared ones sticky): see docs/claude-code.md.
"""

_VALUED = ("--socket", "--agent", "--timeout", "--connect-timeout")
_BLANKS = " \t\n\r\v\f"
_DECIMAL = "0123456789+-.eE"


def _options(args: list[str]) -> dict[str, str] | None:
    """``--agent``, EVENT, ``--socket``, ``--timeout``, ``--connect-timeout``,
    ``--fail-closed`` (as ``"1"``), ``--help``; None: bad usage."""
    found: dict[str, str] = {}
    while args:
        arg = args.pop(0)
        if arg == "--fail-closed":
            found["closed"] = "1"
        elif arg in ("-h", "--help"):
            found["help"] = "1"
        elif arg in _VALUED and args:
            found[arg[2:]] = args.pop(0)
        elif arg.startswith(tuple(name + "=" for name in _VALUED)):
            name, _, value = arg[2:].partition("=")
            found[name] = value
        elif "event" not in found and not arg.startswith("-"):
            found["event"] = arg
        else:
            return None
    return found if "event" in found or "help" in found else None


def _seconds(options: dict[str, str], name: str, env: str) -> float | None:
    """``--name`` or ``$env`` as seconds (None when neither is set); ValueError names it."""
    text = options.get(name) or os.environ.get(env)
    if not text:
        return None
    number = text.strip(_BLANKS)
    try:  # a decimal number only, as hookd-relay.c reads it (no `_`, hex or other digits)
        value = float(number) if number and not number.strip(_DECIMAL) else -1.0
    except ValueError:
        value = -1.0
    if not 0 < value < 1e9:
        source = f"--{name}" if options.get(name) else f"${env}"
        raise ValueError(f"{source} must be a number of seconds over 0, not '{text}'")
    return value


def _write(stdout: str, stderr: str) -> None:
    """Bytes, not text: the output must be UTF-8 whatever the locale is.  A stream that
    whoever started us closed (None), or that fails, is passed over: nobody is left to
    tell, and the exit code must still say what the hooks decided (an exit 2 blocks), as
    hookd-relay.c's write_all does — never turned into a fail-open exit 0."""
    for text, stream in ((stdout, sys.stdout), (stderr, sys.stderr)):
        if not text or stream is None:
            continue
        try:
            stream.buffer.write(text.encode("utf-8", "surrogateescape"))
            stream.flush()
        except OSError:
            continue  # the agent closed the pipe


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    closed = "--fail-closed" in args
    options = _options(args)
    if options is None or "help" in options:
        # Bad usage is a failure too: under --fail-closed it blocks (exit 2).
        stream = sys.stdout if options is not None else sys.stderr
        if stream is not None:
            stream.write(USAGE if options is not None else USAGE.split("\n\n")[0] + "\n")
        return 0 if options is not None else (2 if closed else 1)
    if closed:  # anywhere on the line, even taken as a value (`--socket --fail-closed`):
        options["closed"] = "1"  # fail-closed is never dropped, as hookd-relay.c reads it
    event, agent = options["event"], options.get("agent", "")
    if agent == "claude":
        agent = ""  # Claude Code is the default door: the same request as without --agent
    try:
        return _run(options, event, agent)
    except MemoryError:
        return _out_of_memory(closed)
    except Exception as exc:
        why = f"hookd-relay failed: {type(exc).__name__}: {exc}"
    stdout, stderr, code = (fail_closed if closed else fail_open)(agent, why, event)
    try:
        _write(stdout, stderr)
    except (OSError, AttributeError):
        pass  # the agent closed our output: nobody is left to tell; the exit code says it
    return code


_OUT_OF_MEMORY = b"hookd-relay failed: MemoryError: out of memory\n"
"""Made before it is needed: out of memory, even formatting a message may fail."""


def _out_of_memory(closed: bool) -> int:
    """Out of memory (a hook input or a reply larger than the relay can hold): no answer
    was had, so never exit 0 — which would let the event go ahead as if hookd had
    allowed it — but exit 1, or 2 under ``--fail-closed``, with the reason on stderr
    and nothing on stdout, whatever the agent: byte for byte hookd-relay.c's
    ``die_oom``."""
    try:
        os.write(2, _OUT_OF_MEMORY)
    except OSError:
        pass  # stderr closed: nobody is left to tell; the exit code says it
    return 2 if closed else 1


def _run(options: dict[str, str], event: str, agent: str) -> int:
    path = socket_path(options.get("socket"))
    outcome = _attempt(options, event, agent, path)
    if isinstance(outcome, str):  # why hookd could not answer
        fail = fail_closed if "closed" in options else fail_open
        outcome = fail(agent, outcome, event)
    stdout, stderr, code = outcome
    _write(stdout, stderr)
    return code


def _attempt(
    options: dict[str, str], event: str, agent: str, path: str
) -> tuple[str, str, int] | str:
    """The daemon's answer, or why there is none (every way it can fail, in words)."""
    try:
        timeout = _seconds(options, "timeout", "HOOKD_RELAY_TIMEOUT")
        greet = _seconds(options, "connect-timeout", "HOOKD_RELAY_CONNECT_TIMEOUT")
    except ValueError as exc:
        return f"hookd-relay: {exc}"
    try:
        if sys.stdin is None:  # fd 0 closed: Python leaves sys.stdin unset
            raise OSError("stdin is closed")
        data = sys.stdin.buffer.read()
    except OSError as exc:
        return f"hookd-relay cannot read the hook input on stdin: {exc.strerror or exc}"
    try:
        return relay(event, data, path, agent, timeout, _HANDSHAKE if greet is None else greet)
    except _NotRunning as exc:
        return f"hookd is not running: {exc} (socket {path})"
    except _Unsafe as exc:
        return f"hookd-relay refused to connect to {path}: {exc}"
    except (OSError, ValueError, RuntimeError, IndexError) as exc:
        return f"hookd failed to answer: {exc}"


if __name__ == "__main__":
    sys.exit(main())

"""Warm Python for unchanged command hooks: the interpreter's start-up paid before the event.

A command hook such as ``python3 check.py``, ``/repo/.venv/bin/python hook.py --strict`` or an
executable ``./hook.py`` with a ``#!/usr/bin/env python3`` line spends most of its time starting
CPython (~10–15 ms here with the system interpreter, far more behind a version manager) and
importing ``json`` and ``re``. hookd keeps, per interpreter, a *spare*: that same interpreter,
started the way the cold run would start it — same executable path as ``argv[0]``, same flags,
same start-up environment, same working directory, the hook's pipes as its stdio, its own
session and process group — which has compiled the script and imported a few common modules and
waits on a control socket (:mod:`hookd.handlers.warm_bootstrap`); an event that finds it still
starting waits for it (:meth:`WarmPool.take_when_started`). When the hook's event comes, the
spare is handed the hook's argv, environment and script and becomes the cold run; a new spare is
started once that run has ended and the daemon is idle (:meth:`WarmPool.refill`), handed the
script's path so that it compiles the script ahead. An interpreter whose events come faster
than a spare starts keeps a second, and one with several hooks on one event (they start
together) a spare for each (:attr:`WarmPool.crowd`), all within the pool's bound.

Why spares and not a fork server: a forked child would inherit one interpreter's hash seed,
its ``/proc`` identity and its parent, and hookd's process nets (process group, run marker,
subreaper, reaping by the daemon) would need a second path. A spare is an ordinary hook
process of the daemon's, spawned through :func:`hookd.handlers.spawn.spawn`: timeouts, tree
kills, output caps and the subreaper treat it exactly as a cold hook, and it serves one run.

What is warm, decided on the command alone (:func:`plan`), everything else runs cold:

- ``<python> [flags] script.py args``, where ``<python>`` is an ELF executable named
  ``python``, ``python3`` or ``python3.N`` (a venv's ``bin/python`` is one), looked up as the
  cold exec would look it up, and the flags are ones whose effect a spare started with the same
  flags reproduces (``-u -I -E -s -S -B -O -OO -P -b -bb -q -R``, ``-W arg``);
- an executable script whose ``#!`` line names such an interpreter, directly or through
  ``/usr/bin/env python3``, with at most one such flag.

Not warm, and why is recorded on the run (``hookctl tail``, the audit log): ``-c``/``-m``/``-X``
and combined flags, launcher scripts (a pyenv shim is a shell script, not an interpreter),
other interpreters, a script that is not a regular file. The first run of each interpreter
and working directory is cold (it starts the spare), as is a run that finds its spare still
starting, its spares all running its other hooks of the same event, or its used spare's
replacement not started yet. What a warm run cannot reproduce is listed in
docs/configuration.md.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import stat
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec
import structlog
import trio

# trio.testing's own name for it imports pytest (~10 MB, ~65 ms) into the daemon: the
# function itself lives in trio's core, which the daemon has loaded anyway.  A trio that
# moved it still serves, through its public (heavier) name.
try:
    from trio._core._run import wait_all_tasks_blocked
except ImportError:  # pragma: no cover - only on a trio that moved it
    from trio.testing import wait_all_tasks_blocked

from hookd.config.schema import CommandHandler
from hookd.handlers.direct_exec import simple_argv
from hookd.handlers.process import signal_group
from hookd.handlers.python_launchers import (
    Delta,
    Launched,
    LauncherResolver,
    is_pyenv_shim,
    is_uv_script,
    startup_environment,
)
from hookd.handlers.spawn import HookProcess, spawn

__all__ = [
    "BOOTSTRAP",
    "ExitReport",
    "Spare",
    "WarmPool",
    "WarmTarget",
    "launch_preview",
    "plan",
]

log = structlog.get_logger("hookd.warm_python")

BOOTSTRAP = (Path(__file__).with_name("warm_bootstrap.py")).read_text(encoding="utf-8")
"""The program a spare runs (``-c``); read once, at import."""

_INTERPRETER_NAME = re.compile(r"python(3(\.\d+)?)?")
_START_WAIT = 1.0
"""How long an event waits for its spare to finish starting before it runs cold instead."""
_IDLE_WAIT = 0.05
"""How long a replacement spare waits for an idle daemon before it starts regardless."""
_END_GRACE = 1.0
"""How long a run that reported its exit status may take to exit before its group is killed."""
_CREDENTIALS = struct.Struct("iII")
"""``struct ucred``: pid, uid, gid."""
_REPORT_READS = 16
_SIMPLE_FLAGS = frozenset(
    {"-u", "-I", "-E", "-s", "-S", "-B", "-O", "-OO", "-P", "-b", "-bb", "-q", "-R"}
)


@dataclass(frozen=True, slots=True)
class WarmTarget:
    """How the cold run would start, and so how its spare must start."""

    interpreter: str
    """``argv[0]`` of the interpreter as the cold exec gives it (``python3``, a path)."""
    flags: tuple[str, ...]
    script: str
    """The script as the interpreter is handed it (``sys.argv[0]``)."""
    args: tuple[str, ...]
    identity: tuple[str, int, int, int]
    """The interpreter file (real path, device, inode, mtime): a new build is a new spare."""
    env_delta: Delta = ()
    """What a launcher (a pyenv shim, ``uv run --script``) changes in the environment before
    it starts the interpreter — a value, or None for a variable it removes
    (:mod:`hookd.handlers.python_launchers`); empty for an interpreter named directly."""

    def orig_argv(self) -> list[str]:
        return [self.interpreter, *self.flags, self.script, *self.args]

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment the cold run's interpreter would start with."""
        changed = dict(env)
        for name, value in self.env_delta:
            if value is None:
                changed.pop(name, None)
            else:
                changed[name] = value
        return changed


def _which(program: str, env: Mapping[str, str], cwd: str) -> str | None:
    """The file ``execvp`` would run for ``program`` (None: it would not find one)."""
    if "/" in program:
        path = os.path.join(cwd, program)
        return path if os.access(path, os.X_OK) else None
    for directory in env.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory or ".", program)
        if not os.path.isabs(candidate):
            candidate = os.path.join(cwd, candidate)
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _interpreter_identity(path: str) -> tuple[str, int, int, int] | str:
    """The real interpreter behind ``path``, or why it is not one hookd can start warm."""
    real = os.path.realpath(path)
    if not _INTERPRETER_NAME.fullmatch(os.path.basename(real)):
        return f"{real} is not a CPython interpreter (python, python3, python3.N)"
    try:
        with open(real, "rb") as fh:
            magic = fh.read(4)
        st = os.stat(real)
    except OSError as exc:
        return f"{real}: {exc.strerror}"
    if magic != b"\x7fELF":
        return f"{real} is a launcher script (a version manager's shim?), not an interpreter"
    return (real, st.st_dev, st.st_ino, st.st_mtime_ns)


def _split_flags(words: Sequence[str]) -> tuple[tuple[str, ...], int] | str:
    """The interpreter's flags before the script, and the script's index; or why not warm."""
    flags: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in _SIMPLE_FLAGS:
            flags.append(word)
        elif word == "-W" and i + 1 < len(words):
            flags += (word, words[i + 1])
            i += 1
        elif word.startswith("-W") and len(word) > 2:
            flags.append(word)
        elif word in ("-", "--") or word.startswith("-"):
            return f"interpreter option {word!r} is not one a warm start reproduces"
        else:
            return tuple(flags), i
        i += 1
    return "no script to run"


def _shebang(path: str) -> tuple[str, str | None] | None:
    """A script's ``#!`` interpreter and its one optional argument (as Linux splits them)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].strip(b" \t\r")
    try:
        text = line.decode()
    except UnicodeDecodeError:
        return None
    interpreter, _, argument = text.partition(" ")
    argument = argument.strip(" \t")
    return interpreter, (argument or None)


def plan(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    launchers: LauncherResolver | None = None,
) -> WarmTarget | str:
    """How ``argv`` (as it would be exec'd) runs warm, or why it runs cold.

    ``launchers``: where pyenv shims and ``uv run --script`` are resolved (None: they
    run cold)."""
    if not argv:
        return "empty command"
    uv_script = is_uv_script(argv)
    interpreter = _INTERPRETER_NAME.fullmatch(os.path.basename(argv[0])) is not None
    key = (argv[0], env.get("PATH"), cwd)
    if not uv_script and not interpreter:
        known = _NOT_PYTHON.get(key)
        if known is not None:
            return known
    program = _which(argv[0], env, cwd)
    if program is None:
        return f"{argv[0]} not found"
    if uv_script:
        if launchers is None:
            return "uv run --script is resolved by the daemon only"
        return _launched(launchers.uv_script(program, argv, env, cwd), cwd)
    if interpreter:
        return _interpreter_command(argv, program, env, cwd, launchers)
    target = _script_command(argv, program, env, cwd, launchers)
    if isinstance(target, _ByContent):
        _NOT_PYTHON.remember(key, program, target)
    return target


class _ByContent(str):
    """Why a program runs cold, when the answer depends on the file's first line alone
    (no ``#!`` line, or one naming no Python interpreter): :class:`_NotPython` keeps it."""

    __slots__ = ()


_NOT_A_PYTHON_COMMAND = _ByContent("not a Python command")


class _NotPython:
    """Programs that :func:`plan` found to be no Python script: ``cat``, ``jq``, ``node`` —
    most command hooks.

    Finding that out costs the PATH lookup (a ``stat`` per directory until the program: 9
    here for ``cat``) and a read of the file's first bytes, ~25 µs of the daemon's loop per
    hook, every hook (docs/performance.md, "Fourth pass: row 5").  Kept per (program, PATH,
    working directory): the file found, its identity (device, inode, mtime, size), and the
    answer, re-validated with one ``stat`` of that file and trusted for ``_NOT_PYTHON_TTL``
    at most.  What it can miss within that time, a new file of the same name earlier on
    PATH, only makes a hook run cold that could have run warm: nothing is remembered of a
    program found *to be* Python, and a cold run is the run the hook would have had without
    hookd (the exec looks the program up on PATH itself)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str | None, str], tuple[str, tuple[int, ...], float, str]] = {}

    def get(self, key: tuple[str, str | None, str]) -> str | None:
        entry = self._known.get(key)
        if entry is None:
            return None
        program, identity, until, why = entry
        if time.monotonic() < until and _file_identity(program) == identity:
            return why
        del self._known[key]
        return None

    def remember(self, key: tuple[str, str | None, str], program: str, why: str) -> None:
        """``program`` (found for ``key``) runs cold, ``why``: a reason that depends on
        its content alone, which its identity stands for."""
        identity = _file_identity(program)
        if identity is None:
            return
        if len(self._known) >= _NOT_PYTHON_MAX:
            self._known.clear()  # many programs, PATHs or projects: start again
        self._known[key] = (program, identity, time.monotonic() + _NOT_PYTHON_TTL, why)


def _file_identity(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, st.st_mode)


_NOT_PYTHON_TTL = 1.0
"""Seconds a program found to be no Python script is taken for one without a new lookup
(a new file of its name earlier on PATH is seen within this time)."""
_NOT_PYTHON_MAX = 256
_NOT_PYTHON = _NotPython()


def _interpreter_command(
    argv: Sequence[str],
    program: str,
    env: Mapping[str, str],
    cwd: str,
    launchers: LauncherResolver | None,
) -> WarmTarget | str:
    """``<python> [flags] script args``."""
    split = _split_flags(argv[1:])
    if isinstance(split, str):
        return split
    flags, index = split
    script, args = argv[1 + index], tuple(argv[2 + index :])
    if launchers is not None and is_pyenv_shim(program):
        return _through_shim(launchers, program, env, cwd, flags, script, args)
    return _target(argv[0], flags, script, args, cwd, program=program)


def _script_command(
    argv: Sequence[str],
    program: str,
    env: Mapping[str, str],
    cwd: str,
    launchers: LauncherResolver | None,
) -> WarmTarget | str:
    """An executable script whose ``#!`` line names a Python interpreter.  A reason that
    depends on the file's first line alone is a :class:`_ByContent`."""
    shebang = _shebang(program)
    if shebang is None:
        return _NOT_A_PYTHON_COMMAND
    interpreter, argument = shebang
    # The kernel hands the interpreter the path the script was exec'd by.
    script, args = (argv[0] if "/" in argv[0] else program), tuple(argv[1:])
    if os.path.basename(interpreter) == "env":
        words = _env_words(argument)
        if words is None:
            return _ByContent(f"#!{interpreter} {argument or ''}: not a plain `env python3` line")
        if words == ["uv", "run", "--script"]:  # PEP 723's own executable-script line
            return _uv_shebang(launchers, [*words, script, *args], env, cwd)
        if len(words) > 2:
            why = f"#!{shebang[0]} {shebang[1]}: not a command a warm start reproduces"
            return _ByContent(why)
        interpreter, argument = words[0], (words[1] if len(words) == 2 else None)
        named = _INTERPRETER_NAME.fullmatch(os.path.basename(interpreter)) is not None
        resolved = _which(interpreter, env, cwd) if named else None  # `env bash`: no lookup
    else:
        resolved = interpreter if os.path.isabs(interpreter) else None
    if argument is not None and argument not in _SIMPLE_FLAGS:
        return _ByContent(f"#! argument {argument!r} is not one a warm start reproduces")
    flags = (argument,) if argument is not None else ()
    if not _INTERPRETER_NAME.fullmatch(os.path.basename(interpreter)):
        return _ByContent(f"#!{interpreter}: not a CPython interpreter hookd can find")
    if resolved is None:
        return f"#!{interpreter}: not a CPython interpreter hookd can find"
    if launchers is not None and is_pyenv_shim(resolved):
        return _through_shim(launchers, resolved, env, cwd, flags, script, args)
    return _target(interpreter, flags, script, args, cwd, program=resolved)


_ENV_WORD = re.compile(r"[A-Za-z0-9_./:@%+-]+")


def _env_words(argument: str | None) -> list[str] | None:
    """The command an ``#!/usr/bin/env`` line runs: ``python3``, or ``-S`` and plain words
    (``-S uv run --script``, ``-S python3 -u``), which ``env -S`` splits at blanks; None
    for anything ``env`` would read another way (options, ``NAME=value``, quotes,
    escapes, ``${VAR}``)."""
    if argument is None:
        return None
    words = argument[3:].split() if argument.startswith("-S ") else [argument]
    if not words or words[0].startswith("-"):
        return None
    return words if all(_ENV_WORD.fullmatch(word) for word in words) else None


def _uv_shebang(
    launchers: LauncherResolver | None, argv: list[str], env: Mapping[str, str], cwd: str
) -> WarmTarget | str:
    """``#!/usr/bin/env -S uv run --script``: ``env`` finds ``uv`` on PATH and runs
    ``uv run --script SCRIPT args``, which is resolved like the command itself."""
    uv = _which("uv", env, cwd)
    if uv is None:
        return "#!/usr/bin/env -S uv run --script: uv not found"
    if launchers is None:
        return "uv run --script is resolved by the daemon only"
    return _launched(launchers.uv_script(uv, argv, env, cwd), cwd)


def _through_shim(
    launchers: LauncherResolver,
    shim: str,
    env: Mapping[str, str],
    cwd: str,
    flags: tuple[str, ...],
    script: str,
    args: tuple[str, ...],
) -> WarmTarget | str:
    """The interpreter a pyenv shim execs (its path as ``argv[0]``, as ``pyenv exec`` gives
    it), with the variables the shim changes."""
    found = launchers.pyenv(shim, env, cwd)
    if isinstance(found, str):
        return found
    return _target(found.orig_argv[0], flags, script, args, cwd, delta=found.env_delta)


def _launched(found: Launched | str, cwd: str) -> WarmTarget | str:
    """A warm start of what ``uv run --script`` started: its interpreter, argv, variables."""
    if isinstance(found, str):
        return found
    interpreter, *rest = found.orig_argv
    split = _split_flags(rest)
    if isinstance(split, str):
        return split
    flags, index = split
    script, args = rest[index], tuple(rest[index + 1 :])
    return _target(interpreter, flags, script, args, cwd, delta=found.env_delta)


def launch_preview(handler: CommandHandler, env: Mapping[str, str], cwd: str) -> str:
    """How a command hook would start in ``cwd`` under ``env`` (``hookctl explain``):
    ``warm Python (<interpreter>)`` once its spare is up, or ``cold: <why>``."""
    values = {"CLAUDE_PROJECT_DIR": env.get("CLAUDE_PROJECT_DIR", cwd)}
    command = handler.command
    for key, value in values.items():
        command = command.replace("${" + key + "}", value)
    if handler.shell == "powershell":
        return "cold: a PowerShell command"
    if handler.args is not None:
        argv: list[str] | None = [command, *handler.args]
    else:
        argv = simple_argv(command, {**values, **env})
    if argv is None:
        return "cold: the command needs a shell"
    target = plan(argv, env, cwd)
    if isinstance(target, str):
        return f"cold: {target}"
    return f"warm Python ({target.identity[0]}), from its second run on"


def _target(
    interpreter: str,
    flags: tuple[str, ...],
    script: str,
    args: tuple[str, ...],
    cwd: str,
    *,
    program: str | None = None,
    delta: Delta = (),
) -> WarmTarget | str:
    """The target, once the interpreter (``program``: the file ``interpreter`` names,
    when it is a bare name found on PATH) and the script are what a warm start needs."""
    identity = _interpreter_identity(program or interpreter)
    if isinstance(identity, str):
        return identity
    try:
        st = os.stat(os.path.join(cwd, script))
    except OSError:
        return f"script {script} not found"
    if not stat.S_ISREG(st.st_mode):
        return f"script {script} is not a regular file"
    return WarmTarget(interpreter, flags, script, args, identity, delta)


class _Request(msgspec.Struct):
    """What a spare is told to become (read by warm_bootstrap.py with ``json``)."""

    cwd: str
    env: dict[str, str]
    script: str
    argv: list[str]
    orig_argv: list[str]
    report: str | None = None
    """The abstract socket to say the exit status on (:class:`ExitReport`), or None."""


class ExitReport:
    """Where a warm run says its exit status before its interpreter is torn down.

    An interpreter's exit unmaps its ~13 MB, and only then does the kernel say it has
    exited (pidfd, EOF on its pipes): ~0.5 ms here (docs/performance.md, "Cutting the quiet
    floor"), the largest single part of a warm run's fixed cost. So a spare, after its
    final flush, closes its stdout and stderr and sends its status as one datagram to this
    socket, then calls ``_exit``; the run ends on the datagram (the pipes' EOF has come
    already) and the pool reaps the process when it is gone (:meth:`WarmPool.ended`).

    No descriptor of the hook's run holds it: the spare opens its end only after the
    hook's last line, atexit and the final flush, so a hook sees nothing a cold run would
    not have. The socket has an abstract name (``hookd-exit-<marker>``), which anyone on
    the machine may send to, so a datagram counts only when the kernel's credentials on it
    (``SO_PASSCRED``) name the run's own process and the daemon's user. A hook can of
    course send one itself and keep running: its run then ends with the status it chose,
    as an early ``_exit`` would end it, and its process group is killed if it has not
    exited ``_END_GRACE`` later.
    """

    def __init__(self, marker: str) -> None:
        self.address = f"hookd-exit-{marker}"
        self.said = False
        """Its run reported a status (and so was not reaped when its run ended)."""
        self.socket = socket.socket(
            socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC
        )
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
            self.socket.bind(b"\0" + self.address.encode())
        except OSError:
            self.socket.close()
            raise

    def fileno(self) -> int:
        return self.socket.fileno()

    def read(self, pid: int) -> int | None:
        """The status ``pid`` reported (None: none from it), reading what waits — at most
        ``_REPORT_READS`` datagrams a call, so that another user's flood costs the daemon a
        few reads per wake-up, not the loop."""
        code: int | None = None
        for _ in range(_REPORT_READS):
            try:
                data, ancillary, _flags, _address = self.socket.recvmsg(
                    16, socket.CMSG_SPACE(_CREDENTIALS.size)
                )
            except (BlockingIOError, InterruptedError):
                return code
            except OSError as exc:
                log.info("warm python exit report unreadable", error=str(exc))
                return code
            sender = _sender(ancillary)
            if sender == (pid, os.getuid()) and data.isdigit() and len(data) <= 3:
                code = int(data)
                self.said = True
        return code

    def close(self) -> None:
        self.socket.close()


def _sender(ancillary: list[tuple[int, int, bytes]]) -> tuple[int, int] | None:
    """The pid and uid the kernel put on a datagram (``SCM_CREDENTIALS``)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            if len(data) >= _CREDENTIALS.size:
                pid, uid, _gid = _CREDENTIALS.unpack_from(data)
                return pid, uid
    return None


_encode_request = msgspec.json.Encoder().encode


_Key = tuple[object, ...]
SpareState = Literal["ready", "starting", "unsupported", "gone"]


@dataclass(eq=False, slots=True)
class Spare:
    """A started interpreter waiting for its hook; serves exactly one run."""

    process: HookProcess
    control: socket.socket
    marker: str
    """Its ``HOOKD_RUN_ID``: set at start, it becomes the run's marker."""
    started: float
    ready: bool = False
    waited: bool = False
    """An event has waited for it to start (once only: one slow to start is not waited for
    again, those events run cold)."""
    waiting: bool = False
    report: ExitReport | None = None
    """Where its run says its exit status (None: the run ends on its exit alone)."""

    async def wait_started(self, limit: float) -> None:
        """Wait, at most ``limit`` seconds, until it has said how it started (or is gone)."""
        self.waited = self.waiting = True
        try:
            with trio.move_on_after(limit):
                await trio.lowlevel.wait_readable(self.control)
        except trio.ClosedResourceError:
            pass  # retired meanwhile: state() says "gone"
        finally:
            self.waiting = False

    def state(self) -> SpareState:
        """``ready`` when it waits for a request, ``starting``, ``unsupported`` (the
        interpreter said it cannot run the bootstrap) or ``gone`` (its socket is at EOF)."""
        flags = socket.MSG_DONTWAIT | (socket.MSG_PEEK if self.ready else 0)
        try:
            said = self.control.recv(1, flags)
        except BlockingIOError:
            return "ready" if self.ready else "starting"
        except OSError:
            return "gone"
        if said == b"R" and not self.ready:
            self.ready = True
            return "ready"
        return "unsupported" if said == b"U" else "gone"

    def become(self, target: WarmTarget, env: Mapping[str, str], cwd: str) -> HookProcess | None:
        """Send the request; from here on the process is the hook's run (None: it died
        between the readiness check and the request — the caller runs the hook cold)."""
        request = _Request(
            cwd=cwd,
            env=dict(env),
            script=target.script,
            argv=[target.script, *target.args],
            orig_argv=target.orig_argv(),
            report=self.report.address if self.report is not None else None,
        )
        try:
            self.control.sendall(_encode_request(request))
        except OSError as exc:
            log.info("warm python spare went away", pid=self.process.pid, error=str(exc))
            return None
        finally:
            self.close_control()
        return self.process

    def close_control(self) -> None:
        """Close the control socket — telling trio first when an event waits on it
        (:meth:`wait_started`): a socket closed under a waiting task leaves its number
        registered in trio, and the next descriptor to get that number (a hook's pipes'
        epoll set) could not be waited on ("another task is already reading")."""
        if self.waiting:
            trio.lowlevel.notify_closing(self.control)
        self.control.close()


@dataclass(slots=True)
class WarmPool:
    """Spares by interpreter, flags, start-up environment and working directory.

    Bounded: at most ``limit`` spares at once (the oldest idle one retires first), and a
    spare unused for ``idle`` seconds retires (:meth:`retire_idle`, from the daemon's sweep).
    Owned by the command runner; :meth:`close` retires them all at shutdown.
    """

    limit: int = 8
    idle: float = 600.0
    spares: dict[_Key, Spare] = field(default_factory=dict)
    unusable: set[_Key] = field(default_factory=set)
    """Interpreters that said they cannot run the bootstrap (older than 3.10, not CPython)."""
    retired: list[HookProcess] = field(default_factory=list)
    launchers: LauncherResolver = field(default_factory=lambda: LauncherResolver())
    seconds: dict[_Key, Spare] = field(default_factory=dict)
    """A second spare, for an interpreter whose events come faster than a spare starts (one
    of them had to wait for its spare: :attr:`hurried`); counted in ``limit``."""
    hurried: set[_Key] = field(default_factory=set)
    crowd: dict[_Key, list[Spare]] = field(default_factory=dict)
    """More spares, for an interpreter with more hooks on one event than its first and second
    spare (they start together, each wants a spare): up to :attr:`width`; counted in
    ``limit``."""
    width: dict[_Key, int] = field(default_factory=dict)
    """How many spares an interpreter keeps (two or more) once one of its events found all
    its spares running its other hooks: as many as that event had going at once."""
    pending: list[tuple[WarmTarget, tuple[tuple[str, str], ...], str]] = field(default_factory=list)
    """Spares to start once the daemon is idle (:meth:`refill`): target, start-up
    environment, working directory."""
    ending: list[tuple[HookProcess, float]] = field(default_factory=list)
    """Runs that reported their exit status and may still be exiting, with when their
    group is killed if they have not (:meth:`ended`)."""
    _wake: trio.Event | None = None
    """Set when :attr:`pending` or :attr:`ending` has work; None while no
    :meth:`refill_when_idle` runs."""
    running: dict[_Key, int] = field(default_factory=dict)
    """Spares handed out whose run has not ended yet (:meth:`refill` ends it), per key: a
    run that finds no spare while its interpreter's others run (several of its hooks on one
    event) is told so, not that it is the interpreter's first run."""

    async def take_when_started(
        self, target: WarmTarget, env: Mapping[str, str], cwd: str
    ) -> tuple[Spare | None, str]:
        """:meth:`take`, once a spare still starting has started (waited for once, at most
        ``_START_WAIT``): it is the same interpreter a cold run would start now, with a head
        start — and a cold start beside it would have the two compete for the CPU."""
        key = _key(target, env, cwd)
        spare = self.spares.get(key)
        if spare is not None and not spare.waited and spare.state() == "starting":
            self.hurried.add(key)
            if not self._second_ready(key) and not self._crowd_ready(key):
                await spare.wait_started(_START_WAIT)
        return self.take(target, env, cwd, key)

    def _second_ready(self, key: _Key) -> bool:
        """Make a ready second spare the first one (the first, still starting, becomes the
        second); whether there was one.  A second that has gone is retired."""
        second = self.seconds.get(key)
        if second is None:
            return False
        state = second.state()
        if state != "ready":
            if state != "starting":
                self.retire(self.seconds.pop(key))
            return False
        first = self.spares.get(key)
        self.spares[key] = self.seconds.pop(key)
        if first is not None:
            self.seconds[key] = first
        return True

    def take(
        self, target: WarmTarget, env: Mapping[str, str], cwd: str, key: _Key | None = None
    ) -> tuple[Spare | None, str]:
        """A ready spare for ``target``, or why not (then a new one is started for the next
        event).  A spare handed out is replaced by :meth:`refill` once its run has ended:
        the new interpreter then starts after the run instead of competing with it.
        ``key``: :func:`_key` of the three, when the caller has it already."""
        key = _key(target, env, cwd) if key is None else key
        self._reap_retired()
        if key in self.unusable:
            return None, "the interpreter cannot run hookd's warm start (CPython 3.10 or newer)"
        first = self.spares.get(key)
        if key in self.seconds and (first is None or first.state() != "ready"):
            self._second_ready(key)
        spare = self.spares.pop(key, None)
        state = spare.state() if spare is not None else "gone"
        if spare is not None and state != "ready":
            if state == "starting":
                self.spares[key] = spare
            else:
                self.retire(spare)
        if state == "unsupported":
            self.unusable.add(key)
            return None, "the interpreter cannot run hookd's warm start (CPython 3.10 or newer)"
        if state != "ready":
            crowded = self._from_crowd(key)
            spare, state = (spare, state) if crowded is None else (crowded, "ready")
        if spare is not None and state == "ready":
            self.running[key] = self.running.get(key, 0) + 1
            return spare, ""
        if state == "starting":
            return None, "its warm spare is still starting"
        self._start(key, target, env, cwd)
        if spare is not None:
            return None, "its warm spare had exited: a new one is starting"
        if self.running.get(key):
            # Its other hooks of this event run in its spares: keep one more from now on.
            self.width[key] = min(self.limit, max(self.width.get(key, 2), self.running[key] + 1))
        return None, self._why_none(key)

    def _crowd_ready(self, key: _Key) -> bool:
        return any(spare.state() == "ready" for spare in self.crowd.get(key, []))

    def _from_crowd(self, key: _Key) -> Spare | None:
        """A ready spare of :attr:`crowd` for ``key`` (those gone are retired; those still
        starting stay)."""
        crowd = self.crowd.get(key, [])
        for spare in list(crowd):
            state = spare.state()
            if state == "ready":
                crowd.remove(spare)
                return spare
            if state != "starting":
                crowd.remove(spare)
                self.retire(spare)
        return None

    def _why_none(self, key: _Key) -> str:
        """Why there was no spare at all for ``key`` (one is starting now)."""
        if self.running.get(key):
            return "its warm spares are running its other hooks: another is starting"
        if any(_key(t, dict(e), c) == key for t, e, c in self.pending):
            return "its warm spare's replacement had not started yet: it is starting now"
        return "first run of this interpreter here: its warm spare is starting"

    def after_run(
        self,
        target: WarmTarget,
        env: Mapping[str, str],
        cwd: str,
        process: HookProcess,
        report: ExitReport | None,
    ) -> None:
        """A taken spare's run is over: :meth:`ended`, then :meth:`refill`."""
        self.ended(process, report)
        self.refill(target, env, cwd)

    def ended(self, process: HookProcess, report: ExitReport | None) -> None:
        """A warm run is over; its process may still be exiting (it reported its status
        before its teardown: :class:`ExitReport`) — reaped by :meth:`refill_when_idle`,
        its group killed if it is still there ``_END_GRACE`` later."""
        if report is None:
            return
        report.close()
        if not report.said or process.returncode is not None:
            return  # ended on its exit (reaped), or went on as an async hook (adopted)
        if self._wake is None:  # the pool's task is gone (shutdown): reaped with the retired
            self.retired.append(process)
            return
        self.ending.append((process, trio.current_time() + _END_GRACE))
        self._wake.set()

    def refill(self, target: WarmTarget, env: Mapping[str, str], cwd: str) -> None:
        """Start the spare that replaces one :meth:`take` handed out, once that run has
        ended: while :meth:`refill_when_idle` runs (the daemon's), when the daemon has
        nothing else to do — the run's reply is out — else now.

        Not while the run runs: a new interpreter's start-up is ~15 ms of CPU, and on a
        machine of two cores it took one from the hook it was replacing, and its spawn
        held the event loop (measured: docs/performance.md, "Where a warm run's time goes")."""
        key = _key(target, env, cwd)
        if self.running.get(key, 0) > 1:
            self.running[key] -= 1
        else:
            self.running.pop(key, None)
        if self._wake is None:
            self._refill_now(target, env, cwd)
            return
        self.pending.append((target, startup_environment(env), cwd))
        self._wake.set()

    async def refill_when_idle(self) -> None:
        """Start the spares :meth:`refill` queued, each time every other task of the daemon
        is blocked (its replies written), or after ``_IDLE_WAIT`` on a daemon never idle —
        once the runs that said their end (:meth:`ended`) have exited and are reaped."""
        self._wake = trio.Event()
        try:
            while True:
                await self._wake.wait()
                with trio.move_on_after(_IDLE_WAIT):
                    await wait_all_tasks_blocked()
                self._wake = trio.Event()
                # The runs that said their end first: their teardown takes a core for
                # ~0.5 ms, a new interpreter's start the other — and the client woken by
                # the reply just sent needs one (measured: docs/performance.md).
                await self._reap_ending()
                pending, self.pending = self.pending, []
                for target, env, cwd in pending:
                    self._refill_now(target, dict(env), cwd)
        finally:
            self._wake = None
            self.retired += [process for process, _ in self.ending]
            self.ending.clear()

    async def _reap_ending(self) -> None:
        """Reap the runs that reported their end, once each has exited; kill the group
        of one that has not within its grace (a hook that sent the report itself)."""
        while self.ending:
            process, deadline = self.ending[0]
            with trio.move_on_at(deadline):
                await process.wait()
            if process.returncode is None:
                log.warning("warm python run still alive after its exit report", pid=process.pid)
                _kill_group(process)
                await process.wait()
            self.ending.pop(0)

    def _refill_now(self, target: WarmTarget, env: Mapping[str, str], cwd: str) -> None:
        key = _key(target, env, cwd)
        if key not in self.spares:
            self._start(key, target, env, cwd)
        if (key in self.hurried or key in self.width) and key not in self.seconds:
            self._start(key, target, env, cwd, self.seconds)
        crowd = self.crowd.setdefault(key, [])
        while 2 + len(crowd) < self.width.get(key, 0):
            spare = self._start(key, target, env, cwd, {})
            if spare is None:
                break
            crowd.append(spare)
        if not crowd:
            del self.crowd[key]

    def _count(self) -> int:
        return len(self.spares) + len(self.seconds) + sum(map(len, self.crowd.values()))

    def _start(
        self,
        key: _Key,
        target: WarmTarget,
        env: Mapping[str, str],
        cwd: str,
        into: dict[_Key, Spare] | None = None,
    ) -> Spare | None:
        """Start a spare for ``key`` into ``into`` (the first spares by default); it, or
        None when it could not start."""
        into = self.spares if into is None else into
        while self._count() >= self.limit:
            self._retire_oldest()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        marker = os.urandom(16).hex()
        # The script goes along so the spare compiles it ahead (it checks the file's bytes
        # again at run time); the next run here is most likely this hook's again.
        argv = [
            target.interpreter,
            *target.flags,
            "-c",
            BOOTSTRAP,
            str(theirs.fileno()),
            target.script,
        ]
        # Only what shapes the start-up: the event that happens to start a spare is not
        # the one it will serve, and its variables (another session's, secrets among
        # them) must not sit in an idle process's /proc/<pid>/environ.
        startup = dict(startup_environment(env))
        report = self._report(marker)  # bound before the marker exists anywhere else
        try:
            process = spawn(
                argv,
                cwd=cwd,
                env={**startup, "HOOKD_RUN_ID": marker},
                pass_fds=(theirs.fileno(),),
                own_session=True,  # as the same hook started cold (command.py)
            )
        except OSError as exc:
            ours.close()
            if report is not None:
                report.close()
            log.info("warm python spare did not start", argv0=target.interpreter, error=str(exc))
            return None
        finally:
            theirs.close()
        spare = into[key] = Spare(process, ours, marker, time.monotonic(), report=report)
        return spare

    def _report(self, marker: str) -> ExitReport | None:
        """A spare's :class:`ExitReport`, where :meth:`refill_when_idle` runs to reap the
        runs that end by it (else None: such runs end on their exit)."""
        if self._wake is None:
            return None
        try:
            return ExitReport(marker)
        except OSError as exc:
            log.info("warm python exit report unavailable", error=str(exc))
            return None

    def _retire_oldest(self) -> None:
        """Make room: the oldest spare of a crowd, else the oldest second spare, else the
        oldest spare."""
        crowds = [key for key, spares in self.crowd.items() if spares]
        if crowds:
            key = min(crowds, key=lambda k: self.crowd[k][0].started)
            self.retire(self.crowd[key].pop(0))
            self.width.pop(key, None)  # not room for all: it keeps what it has
            return
        pool = self.seconds or self.spares
        oldest = min(pool, key=lambda k: pool[k].started)
        self.retire(pool.pop(oldest))

    def retire_idle(self, now: float | None = None) -> int:
        """Retire spares unused for ``idle`` seconds; how many."""
        now = time.monotonic() if now is None else now
        stale = [k for k, s in self.spares.items() if now - s.started >= self.idle]
        for key in stale:
            self.retire(self.spares.pop(key))
            self.hurried.discard(key)
            self.width.pop(key, None)
        for key, crowd in list(self.crowd.items()):
            for spare in [s for s in crowd if now - s.started >= self.idle]:
                crowd.remove(spare)
                self.retire(spare)
            if not crowd:
                del self.crowd[key]
        for key in [k for k, s in self.seconds.items() if now - s.started >= self.idle]:
            self.retire(self.seconds.pop(key))
        self._reap_retired()
        return len(stale)

    def close(self) -> None:
        self.launchers.close()
        crowds = [spare for crowd in self.crowd.values() for spare in crowd]
        for spare in [*self.spares.values(), *self.seconds.values(), *crowds]:
            self.retire(spare)
        self.spares.clear()
        self.seconds.clear()
        self.crowd.clear()
        for process, _ in self.ending:  # said their end: what is left of the group goes too
            _kill_group(process)
        self.retired += [process for process, _ in self.ending]
        self.ending.clear()
        for process in self.retired:
            process.kill_now()
        self._reap_retired()

    def retire(self, spare: Spare) -> None:
        """End a spare — idle, surplus, or taken but unusable — and reap it once it is
        gone: closing its control socket ends a waiting spare (it exits 0, silently)."""
        spare.close_control()
        if spare.report is not None:
            spare.report.close()
        spare.process.close_pipes()
        self.retired.append(spare.process)

    def _reap_retired(self) -> None:
        self.retired = [p for p in self.retired if not p.reap_now()]


def _kill_group(process: HookProcess) -> None:
    """SIGKILL a warm run's process group (its own: a spare starts its own session) —
    only while its leader is unreaped, so that its pid still names that group."""
    if process.returncode is None:
        signal_group(process.pid, signal.SIGKILL)


def _key(target: WarmTarget, env: Mapping[str, str], cwd: str) -> _Key:
    return (target.interpreter, target.identity, target.flags, startup_environment(env), cwd)

"""What hookd reads about an agent's process from ``/proc`` (Linux; a safe default elsewhere).

Both front doors that learn an agent's pid — the relay request and the http
endpoint — ask the same question of it, so the answer lives here, below both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import structlog

__all__ = [
    "AgentInfo",
    "AgentLookup",
    "ProcessView",
    "agent_context",
    "claude_version",
    "claude_version_at",
    "own_process",
    "read_cwd",
    "read_environ",
]

log = structlog.get_logger("hookd.agent_process")


@dataclass(frozen=True, slots=True)
class AgentInfo:
    """What a door learned about the agent behind one event."""

    pid: int | None
    context: str
    """``batch`` (``claude -p``) or ``interactive``: :func:`agent_context`."""
    env: dict[str, str] | None
    """The hook environment for this event (None: the daemon's own)."""


class AgentLookup(Protocol):
    """The agent behind a door, found only when the event pipeline needs it.

    Finding it can cost a search of ``/proc`` (the http door: TCP has no peer
    credentials), and most events — a tool call of a known session that no
    hook matches — need nothing of it.  A door's lookup finds the agent at
    most once per connection and derives each event's environment from that.
    """

    async def resolve(self, event: str, raw: Mapping[str, Any]) -> AgentInfo: ...


class ProcessView:
    """One process, pinned: its ``/proc/<pid>`` directory opened once, every read made
    relative to that descriptor.

    A pid is only a number: between finding the process behind a connection and
    reading its environment, the process can exit and the number be given to
    another — another user's, say.  The directory descriptor stays bound to the
    process that was opened: after it exits, reads through it fail (``ESRCH``)
    instead of reading the newcomer.  So "this process holds the socket", "this
    process is the daemon's uid" and "this is its environment" are all said of
    one process.
    """

    __slots__ = ("fd", "pid")

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd

    @classmethod
    def open(cls, pid: int) -> ProcessView | None:
        """The process ``pid`` now (None: gone, or no ``/proc``)."""
        try:
            return cls(pid, os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY))
        except OSError:
            return None

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> ProcessView:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _read(self, name: str) -> bytes | None:
        try:
            fd = os.open(name, os.O_RDONLY, dir_fd=self.fd)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def uids(self) -> tuple[int, ...] | None:
        """Real, effective, saved and filesystem uid (``status``); None when unreadable."""
        status = self._read("status")
        for line in (status or b"").splitlines():
            if line.startswith(b"Uid:"):
                try:
                    return tuple(int(field) for field in line.split()[1:])
                except ValueError:
                    return None
        return None

    def holds(self, link: str) -> bool:
        """Whether one of the process's descriptors is ``link`` (``socket:[<inode>]``)."""
        try:
            fd_dir = os.open("fd", os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.fd)
        except OSError:
            return False
        try:
            for name in os.listdir(fd_dir):
                try:
                    if os.readlink(name, dir_fd=fd_dir) == link:
                        return True
                except OSError:
                    continue
            return False
        except OSError:
            return False
        finally:
            os.close(fd_dir)

    def context(self) -> str:
        """:func:`agent_context` of this process."""
        cmdline = self._read("cmdline")
        if cmdline is None:
            return "interactive"
        argv = cmdline.split(b"\0")
        return "batch" if b"-p" in argv or b"--print" in argv else "interactive"

    def environ(self) -> dict[str, str] | None:
        """:func:`read_environ` of this process."""
        data = self._read("environ")
        return None if data is None else _parse_environ(data)

    def cwd(self) -> str | None:
        """The process's working directory (None when it cannot be read)."""
        try:
            return os.readlink("cwd", dir_fd=self.fd)
        except OSError:
            return None

    def exe(self) -> str | None:
        """The process's executable, symbolic links resolved (None when unreadable)."""
        try:
            return os.path.realpath(os.readlink("exe", dir_fd=self.fd))
        except OSError:
            return None


def own_process(pid: int, holding: str | None = None) -> ProcessView | None:
    """``pid`` pinned, if it is a process of the daemon's own uid (real, effective, saved
    and filesystem, from its ``status``) — and, with ``holding``, one that holds that
    socket (``socket:[<inode>]``) now, so a pid reused since it was found is not taken.

    Only such a process may tell hookd what environment its hooks get: another user's
    ``PATH`` would choose the programs hooks run as the daemon's user (issue 28).  Any
    other process: None, and logged.  The caller closes the view.
    """
    view = ProcessView.open(pid)
    if view is None:
        return None
    me = os.getuid()
    uids = view.uids()
    if uids is None or any(uid != me for uid in uids):
        log.warning(
            "agent process is not the daemon's user's; its environment is not used",
            agent_pid=pid,
            agent_uids=uids,
            daemon_uid=me,
        )
        view.close()
        return None
    if holding is not None and not view.holds(holding):
        log.info("agent process no longer holds the connection; not used", agent_pid=pid)
        view.close()
        return None
    return view


def agent_context(pid: int | None) -> str:
    """``batch`` when the agent is ``claude -p`` (nobody to ask; asyncRewake hooks
    are waited for, as observed), else ``interactive`` — read from its command line."""
    if pid is None:
        return "interactive"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return "interactive"
    return "batch" if b"-p" in argv or b"--print" in argv else "interactive"


def read_environ(pid: int) -> dict[str, str] | None:
    """``/proc/<pid>/environ`` as a dict (entries that are not UTF-8 are dropped: hook
    environments are text).  None when it cannot be read (gone, another user, not Linux).
    Says nothing of whose process it is: hooks' environments come from
    :func:`own_process`'s view."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return _parse_environ(data)


def _parse_environ(data: bytes) -> dict[str, str]:
    env: dict[str, str] = {}
    for entry in data.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if not sep or not name:
            continue
        try:
            env[name.decode("utf-8")] = value.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return env


def read_cwd(pid: int) -> str | None:
    """The process's working directory (None when it cannot be read)."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def claude_version(pid: int) -> str | None:
    """Claude Code's version from the ``package.json`` next to its executable (npm
    layout: ``…/claude-code/bin/claude.exe``) or a ``versions/<x.y.z>`` path (the
    native installer).  Best effort: None when neither is there."""
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
    except OSError:
        return None
    return claude_version_at(exe)


def claude_version_at(exe: str) -> str | None:
    """:func:`claude_version` of the executable at ``exe`` (a resolved path)."""
    parts = exe.split(os.sep)
    if len(parts) >= 2 and parts[-2] == "versions":
        return parts[-1]
    directory = os.path.dirname(exe)
    for candidate in (directory, os.path.dirname(directory)):
        try:
            with open(os.path.join(candidate, "package.json"), encoding="utf-8") as fh:
                meta = json.load(fh)
        except (OSError, ValueError):
            continue
        name, version = meta.get("name"), meta.get("version")
        if isinstance(name, str) and name.startswith("@anthropic-ai/claude-code"):
            return version if isinstance(version, str) else None
    return None

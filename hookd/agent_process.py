"""What hookd reads about an agent's process from ``/proc`` (Linux; a safe default elsewhere).

Both front doors that learn an agent's pid — the relay request and the http
endpoint — ask the same question of it, so the answer lives here, below both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "AgentInfo",
    "AgentLookup",
    "agent_context",
    "claude_version",
    "read_cwd",
    "read_environ",
]


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
    environments are text).  None when it cannot be read (gone, another user, not Linux)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
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

"""The environment a Claude Code hook subprocess would have had, rebuilt for an http hook.

Natively every hook inherits Claude Code's whole environment — the user's
``PATH`` (pyenv, nvm, a venv), tokens, whatever the agent was started with —
plus a few variables Claude Code adds for its hook subprocesses (observed with
2.1.330, claude-code-observed.md, env row).  An http hook request carries none
of that, and the daemon's own environment is the wrong one: under a service
manager it is a plain ``PATH`` and nothing of the user's shell, so a policy
hook that needs the user's tools fails to start and, failing open, allows.

The endpoint already knows the peer process of each connection (its pid, from
``/proc/net/tcp``); this module reads that process's environment and working
directory from ``/proc`` (Linux) once per connection — only a process of the
daemon's own uid, pinned by its ``/proc`` directory (:func:`own_process`), so a
peer of another user, or a pid reused meanwhile, never chooses the ``PATH`` of
hooks that run as the daemon's user (issue 28) — one
connection is one Claude Code process, whose start-up environment is fixed —
and adds per event what Claude Code would add:

=================================  ============================================
variable                           value here (natively)
=================================  ============================================
``CLAUDECODE``                     ``1``
``CLAUDE_PID``                     the peer pid (Claude Code's ``process.pid``)
``CLAUDE_PROJECT_DIR``             the peer's working directory: Claude Code
                                   never ``chdir``\\ s, so it stays the project
                                   root when the model runs ``cd sub``
``CLAUDE_CODE_CHILD_SESSION``      ``1``
``CLAUDE_CODE_ENTRYPOINT``         the agent's own value if it has one, else
                                   ``sdk-cli`` for ``claude -p``, ``cli``
                                   otherwise (Claude Code sets it at start-up)
``CLAUDE_CODE_SESSION_ATTENDED``   ``0`` for ``claude -p``, else ``1``
``AI_AGENT``                       ``claude-code_<version>_harness`` when the
                                   version can be read next to the executable
``CLAUDE_EFFORT``                  the input's ``effort.level`` (tool and Stop
                                   events: exactly those whose input has it)
``CLAUDE_ENV_FILE``                on SessionStart/Setup/CwdChanged/FileChanged:
                                   ``<config dir>/session-env/<session>/
                                   <event>-hook-0.sh``, the directory Claude
                                   Code reads; the command runner gives hook
                                   *i* the file of index *i* there
``COREPACK_ENABLE_AUTO_PIN``       ``0``;
``NoDefaultCurrentDirectory…``     ``1`` (both set by Claude Code at start-up)
=================================  ============================================

Not known here, so absent through http: ``CLAUDE_CODE_MESSAGING_SOCKET`` /
``_TOKEN`` and ``CLAUDE_CODE_CHILD_NOTES_DIR`` (per-process values Claude Code
creates at run time) and ``TRACEPARENT`` (docs/claude-code.md).

Precedence: this environment is the base; the command runner then puts
hookd's own variables on top (``CLAUDE_PROJECT_DIR``,
``CLAUDE_CODE_SESSION_ID``, ``CLAUDE_ENV_FILE``, ``CLAUDE_PLUGIN_ROOT``,
``HOOK_*``, ``HOOKD_RUN_ID``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from hookd.agent_process import ProcessView, claude_version_at, own_process

__all__ = [
    "ENV_FILE_EVENTS",
    "ClaudeAgentEnv",
    "agent_env_of",
    "claude_config_dir",
    "read_agent",
]

log = structlog.get_logger("hookd.doors.agent_env")

ENV_FILE_EVENTS = frozenset({"SessionStart", "Setup", "CwdChanged", "FileChanged"})
"""The events whose command hooks get ``CLAUDE_ENV_FILE`` (as in the command runner)."""

_STARTUP_VARS = {"COREPACK_ENABLE_AUTO_PIN": "0", "NoDefaultCurrentDirectoryInExePath": "1"}


def claude_config_dir(env: Mapping[str, str]) -> str:
    """Claude Code's config directory: ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``."""
    explicit = env.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return explicit
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")


@dataclass(frozen=True, slots=True)
class ClaudeAgentEnv:
    """One Claude Code process's hook environment, minus what depends on the event."""

    base: dict[str, str]

    def for_event(self, event: str, raw: Mapping[str, Any]) -> dict[str, str]:
        """The environment for one event's hooks (a fresh dict: the runner adds to it)."""
        env = dict(self.base)
        effort = raw.get("effort")
        level = effort.get("level") if isinstance(effort, dict) else None
        if isinstance(level, str):
            env["CLAUDE_EFFORT"] = level
        session = raw.get("session_id")
        if event in ENV_FILE_EVENTS and isinstance(session, str) and session:
            directory = os.path.join(claude_config_dir(env), "session-env", session)
            env["CLAUDE_ENV_FILE"] = os.path.join(directory, f"{event.lower()}-hook-0.sh")
        return env


def read_agent(pid: int | None, context: str) -> ClaudeAgentEnv:
    """Read a Claude Code peer's environment (blocking: call it in a worker thread).

    Only a process of the daemon's own uid is read (:func:`own_process`);
    :func:`agent_env_of` says what is made of it.
    """
    view = None if pid is None else own_process(pid)
    try:
        return agent_env_of(view, context)
    finally:
        if view is not None:
            view.close()


def agent_env_of(view: ProcessView | None, context: str) -> ClaudeAgentEnv:
    """The hook environment of the pinned agent process ``view`` (blocking).

    Without a process (none found, gone, or not the daemon's user's: a peer of
    another uid must not choose the ``PATH`` of hooks that run as the daemon's
    user) or a readable ``environ`` the base is the daemon's own environment —
    logged, because a hook may then miss what the user's shell would have given it.
    """
    environ = None if view is None else view.environ()
    pid = None if view is None else view.pid
    if environ is None:
        log.warning("agent environment unreadable; hooks get the daemon's", agent_pid=pid)
        env = dict(os.environ)
    else:
        env = environ
    batch = context == "batch"
    env.update(_STARTUP_VARS)
    env["CLAUDECODE"] = "1"
    env["CLAUDE_CODE_CHILD_SESSION"] = "1"
    env.setdefault("CLAUDE_CODE_ENTRYPOINT", "sdk-cli" if batch else "cli")
    env["CLAUDE_CODE_SESSION_ATTENDED"] = "0" if batch else "1"
    for name in ("CLAUDE_ENV_FILE", "CLAUDE_EFFORT", "CLAUDE_PROJECT_DIR"):
        env.pop(name, None)
    if view is not None:
        env["CLAUDE_PID"] = str(view.pid)
        cwd = view.cwd()
        if cwd is not None:
            env["CLAUDE_PROJECT_DIR"] = cwd
        exe = view.exe()
        version = None if exe is None else claude_version_at(exe)
        if version is not None:
            env["AI_AGENT"] = f"claude-code_{version.replace('.', '-')}_harness"
    return ClaudeAgentEnv(env)

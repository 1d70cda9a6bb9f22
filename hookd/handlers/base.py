"""What every handler kind receives and returns.

A handler turns one :class:`Invocation` into one :class:`HandlerResult`; it
never decides what the result *means*.  Interpretation (exit codes, JSON
rules, ``onFailure``) lives in :mod:`hookd.engine.interpret`, once for all
handler kinds, so an http hook and a command hook that say the same thing are
read the same way.
"""

from __future__ import annotations

import errno
import itertools
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hookd.config.model import HookSpec

if TYPE_CHECKING:
    from hookd.handlers.process import AsyncHandoff, OutputBudget

RunAdopter = Callable[["Invocation", "AsyncHandoff"], "str | None"]
"""Takes over the run of a command hook that backgrounded itself (first stdout line
``{"async": true}``): given the invocation and the still-running process, returns None
when it adopted it or the reason it refused (the async runner's ``adopt``)."""

__all__ = [
    "NO_JSON",
    "RESOURCE_ERRNOS",
    "HandlerFn",
    "HandlerResult",
    "HttpPolicy",
    "Invocation",
    "failed_with",
    "out_of_resources",
]


NO_JSON: Any = object()
"""Marker: the handler produced text (stdout) rather than an already-decoded answer."""


_RUN_PREFIX = uuid.uuid4().hex[:16]
_run_numbers = itertools.count()


def new_run_id() -> str:
    """A run id unique on this machine: this daemon's random prefix and a counter.

    32 hex digits like a uuid4, without a ``getrandom`` system call per hook run;
    the prefix keeps ids of different daemons (and of a restarted one, whose
    journal still names the old runs) apart.
    """
    return f"{_RUN_PREFIX}{next(_run_numbers):016x}"


@dataclass(frozen=True, slots=True)
class HttpPolicy:
    """The settings-wide HTTP hook allowlists (reference §4.5); ``None`` means "no restriction"."""

    allowed_urls: tuple[str, ...] | None = None
    """``allowedHttpHookUrls``: patterns with ``*``; an empty tuple allows no URL at all."""
    allowed_env_vars: tuple[str, ...] | None = None
    """``httpHookAllowedEnvVars``: intersected with each hook's own ``allowedEnvVars``."""


@dataclass(slots=True)
class Invocation:
    """One hook run: which hook, on what input, with what budget and environment."""

    spec: HookSpec
    event_name: str
    input: dict[str, Any]
    stdin: bytes
    """The compact UTF-8 JSON of ``input`` plus a newline: what a command hook reads."""
    timeout: float
    env: Mapping[str, str]
    cwd: str
    project_dir: str
    session_id: str
    hook_index: int
    """Position among the event's matched hooks (names CLAUDE_ENV_FILE per hook)."""
    env_file_dir: str
    """Where ``CLAUDE_ENV_FILE`` files go when the agent names none: the daemon's state
    directory, never a shared one such as ``/tmp`` (another user could own it first)."""
    context: str = "interactive"
    pid: int | None = None
    """Set by process-spawning handlers once the hook's process exists (for status)."""
    run_id: str = field(default_factory=lambda: new_run_id())
    """Marks every process of this run (``HOOKD_RUN_ID``), so its tree can be found
    and killed — by the runner at a timeout, or after a crash from the async journal."""
    http_policy: HttpPolicy = field(default_factory=HttpPolicy)
    project_trusted: bool = True
    """May the handler load code from the project directory (python hooks)?  False in an
    untrusted project: a user-level hook then must not import the repository's modules."""
    async_adopter: RunAdopter | None = None
    """Who takes a command hook that backgrounds itself (first stdout line ``{"async": true}``)."""
    launch: str | None = None
    """How a command hook started: ``warm`` (a warm Python spare) or ``cold: <why>``."""
    output_budget: OutputBudget | None = None
    """Where the output a command hook's run keeps is charged (None: nowhere)."""


@dataclass(slots=True)
class HandlerResult:
    exit_code: int | None = 0
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    timed_out: bool = False
    failure: str | None = None
    """The hook could not run or its transport failed (spawn error, HTTP error …)."""
    json_output: Any = field(default=NO_JSON)
    """An answer that is already decoded (python, callback, http JSON body)."""
    pid: int | None = None
    went_async: bool = False
    daemon_fault: bool = False
    """The daemon could not start the hook for want of resources (:func:`out_of_resources`):
    a failure of the daemon's, which the circuit breaker does not hold against the hook."""


RESOURCE_ERRNOS = frozenset({errno.EAGAIN, errno.ENOMEM, errno.EMFILE, errno.ENFILE})
"""What ``fork``/``posix_spawn``/``pipe``/``socket``/``open`` say when the daemon's user is out
of processes (RLIMIT_NPROC), memory, or descriptors (its own or the system's)."""


def out_of_resources(exc: BaseException | None) -> bool:
    """``exc`` (or an exception it was raised from) says the daemon ran out of resources.

    Such a failure is not the hook's: any session's hooks can exhaust the
    daemon user's processes or descriptors (a fork bomb), and a breaker that
    counted it against an unrelated session's guard would switch that guard off
    (issue 28).  ``threading`` says so in words, not with an errno."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
            return True
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def failed_with(why: str, exc: BaseException | None, **fields: Any) -> HandlerResult:
    """A failed run (``why``, caused by ``exc``): a daemon fault when ``exc`` is resource
    exhaustion — the hook, or its transport, could not even start."""
    if out_of_resources(exc):
        return HandlerResult(
            exit_code=None,
            failure=f"{why} (the daemon is out of processes, memory or file descriptors; "
            "not counted against the hook by the circuit breaker)",
            daemon_fault=True,
            **fields,
        )
    return HandlerResult(exit_code=None, failure=why, **fields)


HandlerFn = Callable[[Any, Invocation], Awaitable[HandlerResult]]
"""A runner: one handler Struct (``CommandHandler`` …) and one invocation → its result."""

"""``statusLine`` and ``fileSuggestion`` commands (seed 000).

Both are Claude Code settings that run a user command with JSON on stdin, the
same way a command hook runs (``/bin/sh -c``, own process group, killed with
its descendants at the deadline — :func:`hookd.handlers.process.run_process_capped`):

* ``statusLine`` gets the session's status JSON and prints the line to show.
  :func:`run_status_line` returns the **first line** of stdout (trailing
  whitespace stripped; ANSI colour codes kept, the terminal renders them), or
  ``None`` when the command failed, timed out or printed nothing — the caller
  then keeps the previous line rather than blanking it.
* ``fileSuggestion`` gets ``{"query": "<what the user typed after @>"}`` (plus
  whatever the caller adds) and prints one path per line.
  :func:`run_file_suggestion` returns those paths, blank lines dropped, at most
  ``limit`` of them; ``[]`` on failure, so the caller falls back to its own
  suggestions.

Both default to a 5-second deadline: they run while a person is typing or
watching, so a slow script must not hold anything up.  Output is capped at
64 KiB — a status line is one line, a suggestion list is short.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from hookd.config.timeouts import STATUS_COMMAND_TIMEOUT
from hookd.handlers.process import ProcessResult, run_process_capped

__all__ = ["CommandOutput", "run_file_suggestion", "run_status_line"]

log = structlog.get_logger("hookd.handlers.statusline")

OUTPUT_CAP = 64 * 1024
DEFAULT_SUGGESTION_LIMIT = 15
KILL_GRACE = 0.5
"""TERM → KILL for a status command past its timeout.  Shorter than a hook's
(``kill_grace``) on purpose: the agent redraws its prompt while it waits."""
PIPE_GRACE = 0.2
"""How long output is still read after the command exits (a hook's: ``pipe_grace``)."""


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """Why a run produced nothing, for callers that want to report it."""

    stdout: str
    ok: bool
    error: str | None = None


async def _run(
    command: str,
    payload: Mapping[str, Any],
    *,
    timeout: float,
    cwd: str | None,
    env: Mapping[str, str] | None,
) -> CommandOutput:
    result: ProcessResult = await run_process_capped(
        ["/bin/sh", "-c", command],
        stdin=msgspec.json.encode(payload) + b"\n",
        cwd=cwd,
        env=dict(os.environ if env is None else env),
        timeout=timeout,
        output_cap=OUTPUT_CAP,
        kill_grace=KILL_GRACE,
        pipe_grace=PIPE_GRACE,
    )
    stdout = result.stdout.decode("utf-8", errors="replace")
    error: str | None = None
    if result.spawn_error is not None:
        error = f"could not start: {result.spawn_error}"
    elif result.timed_out:
        error = f"timed out after {timeout:g}s"
    elif result.returncode != 0:
        stderr = result.stderr.decode("utf-8", errors="replace").strip()
        error = f"exit code {result.returncode}" + (f": {stderr.splitlines()[0]}" if stderr else "")
    if error is not None:
        log.info("status command failed", command=command, error=error)
    return CommandOutput(stdout=stdout, ok=error is None, error=error)


async def run_status_line(
    command: str,
    input: Mapping[str, Any],
    timeout: float = STATUS_COMMAND_TIMEOUT,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """The status line ``command`` prints for ``input``; ``None`` if it gave none."""
    out = await _run(command, input, timeout=timeout, cwd=cwd, env=env)
    if not out.ok:
        return None
    lines = out.stdout.splitlines()
    if not lines or not lines[0].strip():
        return None
    return lines[0].rstrip()


async def run_file_suggestion(
    command: str,
    input: Mapping[str, Any],
    timeout: float = STATUS_COMMAND_TIMEOUT,
    *,
    limit: int = DEFAULT_SUGGESTION_LIMIT,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """The paths ``command`` suggests for ``input`` (``{"query": …}``), at most ``limit``."""
    out = await _run(command, input, timeout=timeout, cwd=cwd, env=env)
    if not out.ok:
        return []
    paths = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return paths[:limit]

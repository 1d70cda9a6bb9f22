"""``hookctl fire``'s input and output, shared by the local and the daemon path.

Input: the caller's JSON as given when it is complete (a real agent input),
else with the fields it lacks filled from the event's example
(:mod:`hookd.cli.examples`), so a partial input (``{"tool_input": {"command":
"rm -rf /"}}``) is enough.  Output: ``--format text`` (a summary for people), ``json`` (the
whole result) or ``claude`` (exactly what a Claude Code command hook prints).

This module is light (no trio, no engine): the remote ``fire`` starts as fast
as the blocking client.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from hookd.cli.examples import fill_input
from hookd.cli.style import Style
from hookd_client.protocol import ClaudeHookOutput
from hookd_client.results import FireResult

__all__ = [
    "EXIT_BLOCKED",
    "InputError",
    "fire_exit_code",
    "held_back_line",
    "print_fire_result",
    "read_input",
    "read_json_object",
]

EXIT_OK = 0
EXIT_BLOCKED = 4
"""``fire`` (text and json formats): the event was blocked (deny, block, or
``continue: false``).  Not 2: argparse exits 2 on a usage error, and a script
must be able to tell "blocked" from "called wrongly"."""


class InputError(ValueError):
    """The ``--input`` file is missing, unreadable or not a JSON object: one line, no traceback."""


def read_input(value: str | None, event: str) -> dict[str, Any]:
    """The event input: ``--input`` as given when complete (an agent's real input reaches
    the hooks as the agent sent it, key order included), else with the example's missing
    fields filled (:func:`hookd.cli.examples.fill_input`) — named on stderr, so nobody
    mistakes a filled field for one the agent sent.  Without ``--input``: the example,
    with a session id of its own."""
    given = {} if value is None else read_json_object(value)
    filled, missing = fill_input(given, event)
    if value is not None and missing:
        print(f"hookctl fire: filled from the example: {', '.join(missing)}", file=sys.stderr)
    return filled


def read_json_object(value: str) -> dict[str, Any]:
    """A JSON object from a file (``-``: stdin); InputError says what is wrong in one line."""
    where = "stdin" if value == "-" else value
    try:
        text = sys.stdin.read() if value == "-" else Path(value).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"--input {where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--input {where}: cannot read: {exc}") from None
    try:
        raw: Any = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InputError(f"--input {where}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise InputError(f"--input {where}: expected a JSON object, got {type(raw).__name__}")
    return raw


def held_back_line(hooks: int, project: str, reason: str) -> str:
    """What ``fire`` says on stderr when trust held hooks back (both paths say it alike)."""
    return f"hookctl: {hooks} hook(s) of {project} held back: {reason}"


def fire_exit_code(result: FireResult) -> int:
    return EXIT_BLOCKED if result.blocked or not result.continue_ else EXIT_OK


def print_fire_result(
    result: FireResult, fmt: str, claude: ClaudeHookOutput | None = None, style: Style | None = None
) -> int:
    """Print a result as ``--format`` asks; return the exit code hookctl exits with.

    ``claude``: exactly what one Claude Code command hook must print, and its
    exit code (``claude`` is the rendering, done by whoever ran the hooks);
    ``json``: the whole result, every hook's outcome included; ``text``: a
    summary.  ``json`` and ``text`` exit 4 when the event was blocked.
    """
    if fmt == "claude":
        assert claude is not None, "the claude rendering is made where the hooks ran"
        stderr = claude.stderr
        if result.errors:
            # A hook that failed (a prompt hook's API error, a crashed command…) is a
            # non-blocking error, and Claude Code shows one from stderr: print each, so a
            # failure never looks exactly like "no opinion".  The exit code stays what the
            # rendering says — the equivalence vectors pin it to Claude Code's behaviour.
            stderr += "".join(f"{error}\n" for error in result.errors)
        sys.stdout.write(claude.stdout)
        sys.stdout.flush()
        sys.stderr.write(stderr)
        sys.stderr.flush()
        return claude.exit_code
    if fmt == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(result).decode(), indent=2) + "\n")
    else:
        sys.stdout.write(summarise(result, style or Style.for_stream(sys.stdout)))
    sys.stdout.flush()
    return fire_exit_code(result)


def summarise(result: FireResult, style: Style) -> str:
    """The verdict first, then why, then each hook's run: what a person wants to see."""
    if result.blocked or not result.continue_:
        verdict = style.red(f"{result.event}: {result.decision or 'stopped'}")
    elif result.decision:
        verdict = style.yellow(f"{result.event}: {result.decision}")
    else:
        verdict = style.green(f"{result.event}: allowed (no hook objected)")
    lines = [f"{verdict}  ({len(result.hooks)} hook{'s' if len(result.hooks) != 1 else ''})"]
    if result.reason:
        lines.append(f"  reason: {result.reason}")
    if not result.continue_ and result.stop_reason:
        lines.append(f"  stop: {result.stop_reason}")
    lines.extend(f"  context: {c}" for c in [*result.additional_context, *result.plain_context])
    lines.extend(f"  message: {m}" for m in result.system_messages)
    if result.updated_input is not None:
        lines.append(f"  updated input: {json.dumps(result.updated_input)}")
    lines.extend(style.yellow(f"  error: {e}") for e in result.errors)
    for run in result.hooks:
        code = "-" if run.exit_code is None else str(run.exit_code)
        lines.append(
            f"  {style.dim('hook')} {run.hook.name}  {run.outcome}  exit={code}  "
            f"{run.duration_ms:.1f}ms"
        )
    return "\n".join(lines) + "\n"

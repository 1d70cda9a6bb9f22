"""Hook files that list commands per event, and agents whose hooks speak their own protocol.

Cursor (``{"version": 1, "hooks": {"beforeShellExecution": [{"command": …}]}}``),
Windsurf (``{"hooks": {"pre_run_command": [{"command": …, "show_output": …}]}}``)
and Kiro (``{"hooks": {"preToolUse": [{"matcher": …, "command": …,
"timeout_ms": …}]}}``) keep a flat list of entries per event — no matcher
groups — and their hooks read the agent's own stdin and answer in its own
words (``{"permission": "deny"}``, exit 2, ``{"cancel": true}``).

That second point decides what ``install`` may do with the user's hooks.
hookd runs its hooks with Claude Code's input and reads Claude Code's
answers; a Cursor hook moved into hookd's config would read fields that are
not there and answer in words hookd does not read — a guard that denies in
Cursor's dialect would *allow* through hookd, silently.  So for these agents
:func:`read_flat` moves nothing: the user's entries stay in the agent's file
and keep running there, beside hookd's one entry per event, each with a
warning saying so (port a hook to Claude Code's format to run it through
hookd).  Nothing runs twice either way.

:func:`wire_flat` therefore *adds* hookd's entry per event (after removing an
earlier one, so it is idempotent) instead of replacing the list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hookd.agents.base import EventSpec, NativeHooks
from hookd.agents.claude_shape import is_hookd_command
from hookd.json_object import parse_object

__all__ = ["count_own", "read_flat", "wire_flat", "wired_flat"]


def _entries(data: dict[str, Any]) -> Mapping[str, Any]:
    hooks = data.get("hooks")
    return hooks if isinstance(hooks, dict) else {}


def read_flat(path: Path, specs: Sequence[EventSpec], agent: str) -> NativeHooks:
    """Nothing to move (see the module's docstring): one warning per event with own hooks."""
    text = path.read_text(encoding="utf-8") if path.exists() else None
    data = parse_object(str(path), text)
    out = NativeHooks()
    known = {s.native for s in specs}
    for event, entries in _entries(data).items():
        if not isinstance(entries, list):
            continue
        own = [e for e in entries if not is_hookd_command(e)]
        if not own:
            continue
        where = "" if event in known else " (an event hookd does not take over)"
        out.warnings.append(
            f"hooks.{event}{where}: {len(own)} hook(s) written for {agent}'s own protocol stay "
            f"in this file and {agent} keeps running them itself; port one to Claude Code's "
            "format in hookd's config to run it through hookd"
        )
    return out


def count_own(text: str) -> int:
    """The user's own entries in a flat file (``hookctl agents status``)."""
    data = parse_object("hook file", text)
    return sum(
        len([e for e in entries if not is_hookd_command(e)])
        for entries in _entries(data).values()
        if isinstance(entries, list)
    )


def wire_flat(
    text: str | None,
    specs: Sequence[EventSpec],
    command: Callable[[EventSpec], str],
    *,
    entry: Callable[[EventSpec, str], dict[str, Any]] = lambda _s, c: {"command": c},
    top: Mapping[str, Any] | None = None,
    what: str = "hook file",
) -> str:
    """``text`` with hookd's entry for every event of ``specs`` (one each, first in the list).

    The user's entries stay after it, in their order; keys of ``top`` are set when
    missing (Cursor's ``"version": 1``).  Pure and idempotent.
    """
    data = parse_object(what, text)
    for key, value in (top or {}).items():
        data.setdefault(key, value)
    hooks = dict(_entries(data))
    for spec in specs:
        current = hooks.get(spec.native)
        own = [e for e in current if not is_hookd_command(e)] if isinstance(current, list) else []
        hooks[spec.native] = [entry(spec, command(spec)), *own]
    data["hooks"] = hooks
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def wired_flat(text: str, specs: Sequence[EventSpec]) -> bool:
    """Does every event of ``specs`` have hookd's entry?"""
    try:
        hooks = _entries(parse_object("hook file", text))
    except ValueError:
        return False
    for spec in specs:
        entries = hooks.get(spec.native)
        if not isinstance(entries, list) or not any(is_hookd_command(e) for e in entries):
            return False
    return True

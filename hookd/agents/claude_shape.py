"""Hook files in Claude Code's shape, for every agent that reads that shape.

Claude Code's settings, Codex's ``hooks.json`` and Copilot's Claude-shaped
``.github/hooks/*.json`` all hold ``{"hooks": {Event: [{"matcher": …,
"hooks": [{"type": "command", "command": …, "timeout": …}]}]}}``.  Reading the
user's own hooks out of such a file, wiring one hookd entry per event into it,
and recognising hookd's entries is the same job for each of them, so it is
done once here; each adapter says only which events, which file, and which
timeout its entries need.

hookd's own entries are recognised by their command: it runs ``hookd-relay``
(the compiled relay, the console script, or the Python relay imported with
``import relay``) — the same rule :mod:`hookd.installers.claude_settings` uses
for Claude Code's settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hookd.agents.base import EventSpec, NativeHooks
from hookd.json_object import parse_object

__all__ = [
    "is_hookd_command",
    "nest_hooks",
    "read_claude_shaped",
    "unnest_hooks",
    "wire_claude_shaped",
    "wired_claude_shaped",
]


def is_hookd_command(handler: object) -> bool:
    """Whether a handler is an entry ``hookctl agents install`` wrote (it runs hookd-relay)."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    text = " ".join([str(handler.get("command", "")), *(str(a) for a in handler.get("args") or [])])
    return "hookd-relay" in text or "hookd_client/relay.py" in text or "import relay" in text


def _groups(hooks: Any) -> Iterable[tuple[str, list[Any]]]:
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        if isinstance(groups, list):
            yield str(event), groups


def nest_hooks(text: str | None, what: str) -> str | None:
    """A file that is the ``hooks`` object itself (its keys the events) as Claude Code's
    shape, ``{"hooks": …}``, so that the functions here read and wire it."""
    if text is None or not text.strip():
        return text
    return json.dumps({"hooks": parse_object(what, text)})


def unnest_hooks(text: str) -> str:
    """:func:`nest_hooks` undone: the ``hooks`` object of ``text``, as the file's text."""
    return json.dumps(parse_object("hook file", text).get("hooks", {}), indent=2) + "\n"


def read_claude_shaped(
    path: Path,
    specs: Sequence[EventSpec],
    *,
    tools: Mapping[str, str] | None = None,
    timeout_unit: float = 1.0,
    top_level: bool = False,
) -> NativeHooks:
    """The user's hooks in ``path`` (hookd's entries left out), keyed by canonical event.

    ``tools`` maps native tool names in plain matchers to Claude Code's; an
    event the adapter does not know is kept under its own name with a warning
    (hookd's loader then says whether it knows it).  ``top_level``: the file is
    the ``hooks`` object itself, its keys the events (Factory Droid's ``hooks.json``).
    """
    text = path.read_text(encoding="utf-8") if path.exists() else None
    data = parse_object(str(path), text)
    if top_level:
        data = {"hooks": data}
    canonical = {s.native: s.canonical for s in specs}
    out = NativeHooks()
    for event, groups in _groups(data.get("hooks")):
        name = canonical.get(event)
        if name is None:
            out.warnings.append(f"{path}: hooks.{event}: not an event this agent fires; kept as is")
            name = event
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                out.warnings.append(f"{path}: hooks.{event}[{i}]: not a hook group; left out")
                continue
            handlers = []
            for handler in group["hooks"]:
                if is_hookd_command(handler):
                    continue
                if isinstance(handler, dict) and timeout_unit != 1.0:
                    timeout = handler.get("timeout")
                    if isinstance(timeout, int | float) and not isinstance(timeout, bool):
                        handler = {**handler, "timeout": timeout * timeout_unit}
                handlers.append(handler)
            if not handlers:
                continue
            moved = {**group, "hooks": handlers}
            matcher = group.get("matcher")
            if tools and isinstance(matcher, str) and matcher in tools:
                moved["matcher"] = tools[matcher]
            out.hooks.setdefault(name, []).append(moved)
    return out


def wire_claude_shaped(
    text: str | None,
    specs: Sequence[EventSpec],
    command: Callable[[EventSpec], str],
    *,
    timeout: Callable[[EventSpec], float | None] = lambda _spec: None,
    what: str = "hook file",
) -> str:
    """``text`` with ``hooks`` replaced by one matcher-less hookd entry per event.

    Everything else in the file is kept.  Pure and idempotent: the entries are
    a function of ``specs`` and ``command`` alone.
    """
    data = parse_object(what, text)
    hooks: dict[str, Any] = {}
    for spec in specs:
        handler: dict[str, Any] = {"type": "command", "command": command(spec)}
        limit = timeout(spec)
        if limit is not None:
            handler["timeout"] = limit
        hooks[spec.native] = [{"hooks": [handler]}]
    data["hooks"] = hooks
    return json.dumps(data, indent=2) + "\n"


def wired_claude_shaped(text: str, specs: Sequence[EventSpec]) -> bool:
    """Does every event of ``specs`` reach hookd through this file (and nothing else run)?"""
    try:
        data = parse_object("hook file", text)
    except ValueError:
        return False
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for spec in specs:
        groups = hooks.get(spec.native)
        if not isinstance(groups, list) or not groups:
            return False
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                return False
            if not all(is_hookd_command(h) for h in group["hooks"]):
                return False
    return True

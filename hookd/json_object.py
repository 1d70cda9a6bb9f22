"""A file's text as one JSON object — the one reading of every JSON file hookctl edits.

An agent's hook file (read by its adapter, ``hookd/agents/``) and hookd's own config
or an install record (read by the installers, ``hookd/installers/json_files.py``)
fail the same way: the file, then the line and column and the parser's reason, or
what the top level is instead of an object. It sits at the top level because both
layers use it and the installers sit above the adapters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["parse_object"]


def parse_object(source: Path | str, text: str | None, *, what: str = "") -> dict[str, Any]:
    """``text`` (read from ``source``) as a JSON object; no text or blank text is an empty one.

    ``source`` heads the error — the file, or what it is when the caller has no path
    (an adapter's ``wire`` gets the text alone: ``"Copilot hook file"``; the installer
    names the file around it); ``what`` follows it (``"not an install record hookctl
    wrote: "``). A ``ValueError`` always: nesting too deep for the parser included,
    which would otherwise escape as a ``RecursionError``.
    """
    if text is None or not text.strip():
        return {}
    head = f"{source}: {what}" if str(source) else what
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{head}line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    except RecursionError as exc:
        raise ValueError(f"{head}nested too deeply to read") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{head}expected a JSON object at the top level, got {_kind(data)}")
    return data


def _kind(value: object) -> str:
    """A JSON value's kind in JSON's own words (``got an array``, not ``got a list``)."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return "a number"

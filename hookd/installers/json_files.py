"""The JSON files the installers read and write: an agent's settings, hookd's config, records.

One reader so that every file an installer touches fails the same way — the file,
the line and column, what was wrong — and one writer so that every file it writes
looks the same (two-space indent, UTF-8 kept as written).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["dump_object", "parse_object", "read_object"]


def parse_object(path: Path, text: str, *, what: str = "") -> dict[str, Any]:
    """``text`` (read from ``path``) as a JSON object; blank text is an empty one.
    ``what`` heads the error (``"not an install record hookctl wrote: "``)."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: {what}line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {what}expected a JSON object")
    return data


def read_object(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None: no such file) and its JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    return text, parse_object(path, text)


def dump_object(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

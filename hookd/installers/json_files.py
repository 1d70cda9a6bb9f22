"""The JSON files the installers read and write: an agent's settings, hookd's config, records.

One reader so that every file an installer touches fails the same way — the file,
the line and column, what was wrong — and one writer so that every file it writes
looks the same (two-space indent, UTF-8 kept as written).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hookd.json_object import parse_object

__all__ = ["dump_object", "read_object"]


def read_object(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None: no such file) and its JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    return text, parse_object(path, text)


def dump_object(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

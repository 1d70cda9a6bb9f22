"""Where each value of a JSON text starts: the line a JSON path points at.

msgspec's validation errors carry a JSON path (``$.hooks.PreToolUse[0].timeout``)
but no position, and the decoded data keeps none.  Re-scanning the text (which
already decoded, so it is well formed) gives every value's start offset keyed
by the same path syntax the loader reports, so an error can say ``file:12``
as well as the path — the line is what an editor jumps to.
"""

from __future__ import annotations

import bisect
import json
import re

__all__ = ["line_of_path", "value_lines"]

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


def value_lines(text: str) -> dict[str, int]:
    """``{json path: line}`` for every value in ``text`` (1-based lines).

    Object members are ``$.key`` (whatever the key: the loader writes event
    paths the same way), array items ``$[i]``.  Raises ValueError on
    malformed JSON.
    """
    scanner = _Scanner(text)
    scanner.value(0, "$")
    return scanner.lines


class _Scanner:
    """A recursive-descent walk over JSON text that records where each value starts."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: dict[str, int] = {}
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def _at(self, pos: int) -> str:
        return self.text[pos : pos + 1]

    def _skip(self, pos: int) -> int:
        match = _WS.match(self.text, pos)
        return match.end() if match else pos

    def _string(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.text, pos)
        if match is None:
            raise ValueError(f"unterminated string at offset {pos}")
        decoded: str = json.loads(match.group())
        return decoded, match.end()

    def value(self, pos: int, path: str) -> int:
        pos = self._skip(pos)
        self.lines[path] = bisect.bisect_left(self._newlines, pos) + 1
        char = self._at(pos)
        if char == "{":
            return self._object(pos + 1, path)
        if char == "[":
            return self._array(pos + 1, path)
        if char == '"':
            return self._string(pos)[1]
        match = _SCALAR.match(self.text, pos)
        if match is None:
            raise ValueError(f"unexpected character at offset {pos}")
        return match.end()

    def _object(self, pos: int, path: str) -> int:
        pos = self._skip(pos)
        if self._at(pos) == "}":
            return pos + 1
        while True:
            if self._at(pos) != '"':
                raise ValueError(f"expected a key at offset {pos}")
            key, pos = self._string(pos)
            pos = self._skip(pos)
            if self._at(pos) != ":":
                raise ValueError(f"expected ':' at offset {pos}")
            pos = self._skip(self.value(pos + 1, f"{path}.{key}"))
            if self._at(pos) == "}":
                return pos + 1
            if self._at(pos) != ",":
                raise ValueError(f"expected ',' or '}}' at offset {pos}")
            pos = self._skip(pos + 1)

    def _array(self, pos: int, path: str) -> int:
        pos = self._skip(pos)
        if self._at(pos) == "]":
            return pos + 1
        index = 0
        while True:
            pos = self._skip(self.value(pos, f"{path}[{index}]"))
            index += 1
            if self._at(pos) == "]":
                return pos + 1
            if self._at(pos) != ",":
                raise ValueError(f"expected ',' or ']' at offset {pos}")
            pos += 1


def line_of_path(lines: dict[str, int], path: str) -> int | None:
    """The line of ``path``, or of the nearest enclosing value that exists.

    A missing field (``$.hooks.Stop[0].hooks[0].command``) has no value to
    point at: its object's line is the right answer.
    """
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        if cut <= 0:
            break
        path = path[:cut]
    return lines.get("$")

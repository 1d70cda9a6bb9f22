"""Colour for hookctl's human output: only on a terminal, never with ``NO_COLOR``.

https://no-color.org: any non-empty ``NO_COLOR`` turns colour off; output
that is piped or redirected never gets escape codes (scripts and files read
plain text).  ``--color always|never`` overrides both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Style"]


@dataclass(frozen=True)
class Style:
    enabled: bool

    @classmethod
    def for_stream(cls, stream: TextIO, choice: str = "auto") -> Style:
        if choice != "auto":
            return cls(choice == "always")
        if os.environ.get("NO_COLOR"):
            return cls(False)
        isatty = getattr(stream, "isatty", None)
        return cls(bool(isatty and isatty()) and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)

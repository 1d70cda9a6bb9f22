"""structlog setup: JSON lines when not a TTY (journald-friendly), readable when it is.

Readable lines are coloured only on a terminal and never with ``NO_COLOR``.

Logs always go to stderr: stdout belongs to command output (``hookctl fire
--format claude`` prints exactly what Claude Code must read).  No secret ever
goes in a log line: handlers log labels (:func:`hookd.config.schema.handler_label`),
never header values or environments.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Literal, TextIO, cast

import structlog

__all__ = ["colour_wanted", "configure_logging", "debug_enabled"]

LogFormat = Literal["auto", "json", "console"]

_debug = True
"""Until :func:`configure_logging` says otherwise: unconfigured structlog prints debug."""


def configure_logging(fmt: LogFormat = "auto", level: str = "info") -> None:
    global _debug
    threshold = logging.getLevelNamesMapping()[level.upper()]
    _debug = threshold <= logging.DEBUG
    as_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=colour_wanted())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(threshold),
        logger_factory=structlog.PrintLoggerFactory(file=cast(TextIO, _CurrentStderr())),
        cache_logger_on_first_use=True,
    )


class _CurrentStderr:
    """``sys.stderr`` as it is when a line is written, not when logging was set up: a
    process that swaps it (pytest's capture, an embedding agent) gets its lines there."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def colour_wanted() -> bool:
    """Console lines are coloured only on a terminal, never with ``NO_COLOR`` set
    (https://no-color.org: any non-empty value), nor on a ``TERM=dumb`` one — the
    rule of hookctl's output (:mod:`hookd.cli.style`)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stderr.isatty()


def debug_enabled() -> bool:
    """Whether debug lines are written.  Asked on the hot path before a per-event debug
    line: a module's logger is structlog's lazy proxy, which costs a few µs a call
    even for a line the level then drops."""
    return _debug

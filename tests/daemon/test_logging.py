"""The log level decides which per-event lines are even built (``debug_enabled``)."""

from __future__ import annotations

import os

from hookd.logging import configure_logging, debug_enabled


def test_debug_lines_are_asked_for_by_the_configured_level() -> None:
    try:
        configure_logging("json", "debug")
        assert debug_enabled()
        configure_logging("json", "INFO")
        assert not debug_enabled()
    finally:
        configure_logging("console", os.environ.get("HOOKD_TEST_LOG", "warning"))

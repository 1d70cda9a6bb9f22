"""FileChanged and StopFailure matchers use the narrow exact set (reference §5.1).

Elsewhere a matcher of letters, digits, ``_``, ``-``, space, ``,`` and ``|`` is a
list of exact names split on ``|`` and ``,``.  On FileChanged (tested against the
changed file's *basename*) and StopFailure (against the ``error`` type) only
``[A-Za-z0-9_|]`` makes a list, split on ``|`` alone: a ``-``, a space or a ``,``
makes the matcher a regex, searched unanchored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookd.config.matching import compile_matcher

from .vectors import fire_prepared, prepare


@pytest.mark.parametrize(
    ("matcher", "name", "narrow", "wide"),
    [
        # Exact lists on both sides when only [A-Za-z0-9_|] is used.
        ("Makefile", "Makefile", True, True),
        ("Make", "Makefile", False, False),
        ("Makefile|README", "README", True, True),
        ("Makefile|", "Makefile", True, True),
        # A comma or a space: a list elsewhere, a regex here.
        ("Makefile, README", "README", False, True),
        ("Makefile,README", "Makefile", False, True),
        (" Makefile ", "Makefile", True, True),  # trimmed first, on both sides
        ("Makefile, README", "Makefile, README!", True, False),
        # A hyphen: an exact name elsewhere, a substring regex here.
        ("my-file", "my-file.txt", True, False),
        ("my-file", "my-file", True, True),
        # Anything else is a regex on both sides.
        (".env", "a.env", True, True),
        ("^\\.env$", "a.env", False, False),
        ("rate_limit|server", "server_error", False, False),
    ],
)
def test_narrow_and_wide_matcher_syntax(matcher: str, name: str, narrow: bool, wide: bool) -> None:
    for event in ("FileChanged", "StopFailure"):
        assert compile_matcher(matcher, event).matches([name]) is narrow, event
    assert compile_matcher(matcher, "PreToolUse").matches([name]) is wide


async def _selected(tmp_path: Path, event: str, matcher: str, **fields: Any) -> bool:
    source = {"session_id": "narrow", "transcript_path": "", "hook_event_name": event, **fields}
    vector = {
        "input": source,
        "event": event,
        "settings": {
            "hooks": {
                event: [{"matcher": matcher, "hooks": [{"type": "command", "command": "true"}]}]
            }
        },
    }
    result = await fire_prepared(prepare(vector, tmp_path))
    return len(result.hooks) == 1


@pytest.mark.parametrize(
    ("matcher", "path", "expected"),
    [
        ("Makefile", "/src/app/Makefile", True),
        ("app", "/src/app/Makefile", False),  # the basename, not the path
        ("Makefile, README.md", "/src/app/README.md", False),
        ("my-file", "/src/my-file.txt", True),
        ("config.json", "/src/configXjson", True),  # `.` makes it a regex
    ],
)
async def test_file_changed_matches_the_basename_with_narrow_syntax(
    tmp_path: Path, matcher: str, path: str, expected: bool
) -> None:
    assert await _selected(tmp_path, "FileChanged", matcher, file_path=path) is expected


@pytest.mark.parametrize(
    ("matcher", "error", "expected"),
    [
        ("rate_limit|overloaded", "overloaded", True),
        ("rate_limit, overloaded", "overloaded", False),
        ("rate", "rate_limit", False),
        ("rate-limit", "x-rate-limit-y", True),
    ],
)
async def test_stop_failure_matches_the_error_with_narrow_syntax(
    tmp_path: Path, matcher: str, error: str, expected: bool
) -> None:
    assert await _selected(tmp_path, "StopFailure", matcher, error=error) is expected

"""scripts/check installs the optional tools (agent CLIs, systemd, tmux, the otel extra,
Phoenix) only for the tests that use them: scripts/needs.py must name each tool exactly
when a selected test needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _needs(*args: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "needs.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(out.stdout.split())


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("tests/engine",), set()),
        (("tests/e2e/test_equivalence.py",), {"npm"}),
        (("tests/agents/test_codex.py",), {"npm"}),
        (("tests/cli/test_top.py",), {"tmux"}),
        (("tests/daemon/test_systemd.py",), {"systemd"}),
        (("tests/engine", "tests/cli/test_top.py"), {"tmux"}),
        (("tests/daemon/test_telemetry.py",), {"otel"}),
        (("tests/e2e/test_otel_phoenix.py",), {"npm", "otel", "phoenix"}),
    ],
)
def test_needs_names_exactly_the_tools_the_selected_tests_use(
    args: tuple[str, ...], expected: set[str]
) -> None:
    assert _needs(*args) == expected


def test_a_marker_expression_that_deselects_the_agents_needs_no_npm() -> None:
    assert "npm" not in _needs("tests/agents/test_codex.py", "-k", "no_such_test_name")

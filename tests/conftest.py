"""Shared fixtures. Test data lives in files under tests/data and ../shared/fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CC_FIXTURES = DATA / "cc-fixtures"
"""Real hook inputs as Claude Code 2.1.330 sent them (copied from shared/fixtures)."""


@pytest.fixture
def cc_fixtures() -> Path:
    return CC_FIXTURES

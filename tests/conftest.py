"""Shared fixtures. Test data lives in files under tests/data and ../shared/fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CC_FIXTURES = ROOT.parent / "shared" / "fixtures" / "claude-code-2.1.330"


@pytest.fixture
def cc_fixtures() -> Path:
    if not CC_FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not beside this checkout")
    return CC_FIXTURES

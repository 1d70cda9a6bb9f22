"""The installers' tests' private HOME and project (a test file may override either)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(private_home: Path) -> Path:
    """An empty HOME for this test (tests/conftest.py's ``private_home``)."""
    return private_home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project

"""The installers' tests' private HOME and project (a test file may override either)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty HOME (and its XDG config dir) for this test, and a daemon socket that no
    daemon serves — never the machine's own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("HOOKD_SOCKET", str(tmp_path / "none.sock"))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project

"""Fixtures for the client tests: hook inputs built from real Claude Code fixtures."""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CC_FIXTURES = Path(__file__).resolve().parent.parent / "data" / "cc-fixtures"

EventFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def make_event() -> EventFactory:
    """``make_event("PreToolUse-Bash", session_id=..., tool_input=...)``: a fixture input
    with fields overridden; each call gets a fresh session id unless one is given."""

    def make(fixture: str, **overrides: Any) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((CC_FIXTURES / f"{fixture}.json").read_text())
        data["session_id"] = str(uuid.uuid4())
        data.update(overrides)
        return data

    return make


@pytest.fixture
def unused_socket() -> Iterator[Path]:
    """A socket path where no daemon listens (yet), in a short directory: Unix socket
    paths must stay under 108 bytes, which pytest's tmp_path does not promise."""
    root = Path(tempfile.mkdtemp(prefix="hkc", dir="/tmp"))
    yield root / "hookd.sock"
    shutil.rmtree(root, ignore_errors=True)

"""Fixtures for the async-hook tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from .helpers import Wire


@pytest.fixture
def wire(nursery: trio.Nursery) -> Callable[..., Any]:
    """``conn = await wire(socket_path)``: a connection whose reader runs in the test nursery."""

    async def open_wire(path: Path, pid: int | None = None) -> Wire:
        return await Wire.open(path, nursery, pid)

    return open_wire


@pytest.fixture
def daemon_factory(daemon_factory: Callable[..., Any]) -> Callable[..., Any]:
    """The shared factory, without the config watcher: these tests reload explicitly,
    and a watcher racing the fixture's directory cleanup only adds noise."""

    async def start(**overrides: Any) -> Any:
        return await daemon_factory(**{"watch": False, **overrides})

    return start

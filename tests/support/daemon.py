"""An in-process daemon as the ``daemon_factory`` fixture hands it out, and its config."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hookd.daemon.server import Daemon

__all__ = ["DaemonFactory", "DaemonHandle", "configure"]


@dataclass
class DaemonHandle:
    """A running in-process daemon and the files around it."""

    daemon: Daemon
    root: Path
    socket: Path
    user_config: Path
    policy_config: Path
    home: Path
    cancel: Callable[[], None]

    def project(self, name: str = "proj") -> Path:
        path = self.root / name
        (path / ".claude").mkdir(parents=True, exist_ok=True)
        return path


class DaemonFactory(Protocol):
    """``handle = await daemon_factory(**settings_overrides)``."""

    async def __call__(self, **overrides: Any) -> DaemonHandle: ...


def configure(handle: DaemonHandle, hooks: dict[str, Any], *, policy: bool = False) -> None:
    """Write the daemon's user (or policy) hooks and reload now: the next event sees them."""
    path = handle.policy_config if policy else handle.user_config
    path.write_text(json.dumps({"hooks": hooks}))
    handle.daemon.reload()

"""An in-process daemon as the ``daemon_factory`` fixture hands it out, and its config."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hookd.daemon.server import Daemon

__all__ = ["DaemonFactory", "DaemonHandle", "configure", "configure_text"]


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
    """``handle = await daemon_factory(**settings_overrides)``; with ``settings_file``, a
    daemon that re-reads that file at each reload (``hookd serve``'s hookd.toml), the
    overrides acting as its flags."""

    async def __call__(
        self, settings_file: Path | None = None, **overrides: Any
    ) -> DaemonHandle: ...


def configure(
    handle: DaemonHandle, hooks: dict[str, Any], *, policy: bool = False, **settings: Any
) -> bool:
    """Write the daemon's user (or policy) hooks, with any other top-level ``settings``
    (``disableAllHooks``, ``statusLine`` …), and reload now: the next event sees them.

    Returns the reload's answer (True when the config changed). Invalid hooks are
    written as given: the tests of the reload rule need broken files too."""
    return configure_text(handle, json.dumps({**settings, "hooks": hooks}), policy=policy)


def configure_text(handle: DaemonHandle, text: str, *, policy: bool = False) -> bool:
    """:func:`configure` with the file's exact text: a fixture file, a syntax error."""
    path = handle.policy_config if policy else handle.user_config
    path.write_text(text)
    return handle.daemon.reload()

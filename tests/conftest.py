"""Shared fixtures. Test data lives in files under tests/data and ../shared/fixtures."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from support.daemon import DaemonFactory, DaemonHandle

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CC_FIXTURES = DATA / "cc-fixtures"
"""Real hook inputs as Claude Code 2.1.330 sent them (copied from shared/fixtures)."""


@pytest.fixture(scope="session")
def compiled_relay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """relay/hookd-relay.c built for this session by ``scripts/build-relay``, as setup builds it.

    Built here rather than taken from ``.venv/bin`` so that the tests judge the
    source as it is.  Without a C compiler the tests that need it are skipped on
    a developer's machine, and fail under CI (``$CI`` set): CI must prove it.
    """
    if shutil.which(os.environ.get("CC", "cc")) is None:
        if os.environ.get("CI"):
            pytest.fail("no C compiler: CI must build and test the compiled hookd-relay")
        pytest.skip("no C compiler: the compiled hookd-relay cannot be built here")
    out = tmp_path_factory.mktemp("relay-c") / "hookd-relay-c"
    subprocess.run([str(ROOT / "scripts" / "build-relay"), str(out)], check=True)
    assert out.exists(), "scripts/build-relay built nothing"
    return out


@pytest.fixture
def private_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty HOME of this test's own (its XDG config and state dirs below it), and a
    daemon socket that no daemon serves — never the machine's own files or daemon."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("HOOKD_SOCKET", str(tmp_path / "none.sock"))
    return home


@pytest.fixture
def cc_fixtures() -> Path:
    return CC_FIXTURES


# --- a real daemon, in-process, on a real socket ------------------------------------


@pytest.fixture
async def daemon_factory(nursery: trio.Nursery) -> AsyncIterator[DaemonFactory]:
    """Start real daemons: ``handle = await daemon_factory(**settings_overrides)``.

    Each gets a short private directory (Unix socket paths must stay < 108
    bytes), its own user/policy config files and state dir, and no access to
    the real home's config.
    """
    from hookd.config.sources import SourceLayout
    from hookd.daemon.server import Daemon
    from hookd.daemon.settings import DaemonSettings, SettingsSource

    roots: list[Path] = []
    running: list[tuple[trio.CancelScope, trio.Event]] = []

    async def start(settings_file: Path | None = None, **overrides: Any) -> DaemonHandle:
        root = Path(tempfile.mkdtemp(prefix="hk", dir="/tmp"))
        roots.append(root)
        home = root / "home"
        (home / ".config" / "hookd").mkdir(parents=True)
        user = home / ".config" / "hookd" / "hooks.json"
        policy = root / "policy.json"
        values: dict[str, Any] = {
            "socket": str(root / "hookd.sock"),
            "state_dir": str(root / "state"),
            "kill_grace": 0.3,
            "shutdown_grace": 2.0,
            "watch_debounce_ms": 20,
            # Tests put hooks in project dirs freely; trust has its own tests.
            "require_trust": False,
        }
        values.update(overrides)
        settings = DaemonSettings(**values)
        layout = SourceLayout(
            policy=(str(policy),),
            user=(str(user),),
            # ``claude_settings=True`` also reads ~/.claude/settings.json: set HOME first.
            claude_settings=settings.claude_settings,
            plugin_dirs=("{project}/.claude/plugins", str(home / ".claude" / "plugins")),
            skill_dirs=("{project}/.claude/skills", str(home / ".claude" / "skills")),
        )
        # settings_file: read again at each reload, as `hookd serve` does with hookd.toml
        # (the values here act as its flags).
        source = None if settings_file is None else SettingsSource(settings_file, values)
        daemon = Daemon(settings, layout, source)
        scope = trio.CancelScope()
        done = trio.Event()
        running.append((scope, done))

        async def run(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            try:
                with scope:
                    await daemon.run(task_status=task_status)
            finally:
                done.set()

        await nursery.start(run)
        return DaemonHandle(daemon, root, Path(values["socket"]), user, policy, home, scope.cancel)

    yield start
    # Stop every daemon (watcher included) before its files disappear under it.
    for scope, _ in running:
        scope.cancel()
    for _, done in running:
        await done.wait()
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    """Keep test output readable: only warnings and errors from hookd's loggers."""
    from hookd.logging import configure_logging

    configure_logging("console", __import__("os").environ.get("HOOKD_TEST_LOG", "warning"))

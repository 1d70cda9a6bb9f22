"""``hookctl status`` (text) shows what matters; breakers stay bound to live hooks;
``hookctl hooks`` judges a hook by the config that runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from hookd_client.client import Client
from reliability.helpers import DATA, event
from reliability.test_trust import hookctl
from support.daemon import configure_text


def _failing(command: str) -> str:
    return json.dumps(
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
    )


async def _fire(handle: Any, project: Path, session: str = "s") -> None:
    def run() -> None:
        with Client(handle.socket) as client:
            client.fire("PreToolUse", event(cwd=str(project), session_id=session))

    await trio.to_thread.run_sync(run)


async def _status(handle: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        with Client(handle.socket) as client:
            return client.status()

    return await trio.to_thread.run_sync(run)


async def test_status_text_shows_paused_hooks_and_untrusted_projects(daemon_factory: Any) -> None:
    handle = await daemon_factory(require_trust=True, breaker_threshold=1, breaker_cooldown=3600)
    handle.user_config.write_text(_failing("echo broken >&2; exit 1"))
    project = handle.project("repo")
    (project / ".claude" / "hooks.json").write_text((DATA / "project_context.json").read_text())
    handle.daemon.reload()
    await _fire(handle, project)
    text = (await trio.to_thread.run_sync(lambda: hookctl(handle, "status"))).stdout
    assert "circuit breaker (1 paused, 0 failing):" in text
    assert "paused" in text and "broken" in text and "hookctl reset" in text
    assert "untrusted projects (1)" in text
    assert f"{project}: {project} is not trusted" in text
    assert f"{project}/.claude/hooks.json" in text


async def test_breakers_are_forgotten_with_their_hooks(daemon_factory: Any) -> None:
    handle = await daemon_factory(breaker_threshold=5)
    project = handle.project()
    for attempt in range(4):  # a hook edited again and again, failing each time
        configure_text(handle, _failing(f"exit 1 # attempt {attempt}"))
        await _fire(handle, project)
    breakers = (await _status(handle))["breakers"]
    assert [b["hook"] for b in breakers] == ["exit 1 # attempt 3"]
    configure_text(handle, "{}")
    assert (await _status(handle))["breakers"] == []


async def test_hooks_listing_ignores_an_untrusted_projects_disable_all_hooks(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    handle.user_config.write_text((DATA / "user_context.json").read_text())
    project = handle.project("repo")
    (project / ".claude" / "hooks.local.json").write_text(
        (DATA / "project_disables.json").read_text()
    )
    handle.daemon.reload()
    out = await trio.to_thread.run_sync(lambda: hookctl(handle, "hooks", "--cwd", str(project)))
    [user_row] = [line for line in out.stdout.splitlines() if " user " in line]
    assert "not run" not in user_row, out.stdout
    # Trusted, its disableAllHooks applies — and the listing says so.
    hookctl(handle, "trust", str(project), "--state-dir", str(handle.daemon.settings.state_path()))
    out = await trio.to_thread.run_sync(lambda: hookctl(handle, "hooks", "--cwd", str(project)))
    [user_row] = [line for line in out.stdout.splitlines() if " user " in line]
    assert "not run: disabled by disableAllHooks" in user_row

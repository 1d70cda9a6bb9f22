"""Workspace trust: a project's own hooks run only once its directory is trusted."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from hookd.config.sources import SourceLayout
from hookd.daemon.audit import AuditEvent, read_records
from hookd.daemon.trust import TrustStore
from hookd_client import protocol
from hookd_client.client import Client
from reliability.helpers import DATA, event
from support.daemon import configure_text


async def _setup(daemon_factory: Any) -> tuple[Any, Path]:
    handle = await daemon_factory(require_trust=True)
    handle.user_config.write_text((DATA / "user_context.json").read_text())
    project = handle.project("repo")
    (project / ".claude" / "hooks.json").write_text((DATA / "project_context.json").read_text())
    handle.daemon.reload()
    return handle, project


def _fire_sync(sock: Path, project: Path) -> protocol.FireReply:
    with Client(sock) as client:
        return client.fire("PreToolUse", event(cwd=str(project), session_id="trust"))


async def contexts(handle: Any, project: Path) -> list[str]:
    reply = await trio.to_thread.run_sync(_fire_sync, handle.socket, project)
    return reply.result.additional_context


def hookctl(handle: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(handle.home / ".config")}
    return subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(handle.socket), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def state(handle: Any) -> str:
    return str(handle.daemon.settings.state_path())


async def status(handle: Any) -> dict[str, Any]:
    def run() -> dict[str, Any]:
        with Client(handle.socket) as client:
            return client.status()

    return await trio.to_thread.run_sync(run)


async def test_untrusted_project_hooks_do_not_run_and_status_says_why(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    assert await contexts(handle, project) == ["user"]
    st = await status(handle)
    [untrusted] = st["untrusted"]
    assert untrusted["project"] == str(project)
    assert "is not trusted" in untrusted["reason"]
    assert untrusted["hooks"] == [f"PreToolUse: {_label()} ({project}/.claude/hooks.json)"]
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    [recorded] = [r for r in records if isinstance(r, AuditEvent)]
    assert recorded.untrusted == 1


def _label() -> str:
    from hookd.config.loader import load_source
    from hookd.config.model import Scope
    from hookd.config.schema import handler_label
    from hookd.config.sources import SourceSpec

    loaded = load_source(SourceSpec(DATA / "project_context.json", Scope.PROJECT))
    return handler_label(loaded.groups[0][2].hooks[0])


async def test_a_tool_call_no_hook_matches_holds_nothing_back(daemon_factory: Any) -> None:
    # The pipeline asks for no verdict when no group matches (most tool calls): the
    # answer and the audit's count of held-back hooks must be what the gate gives.
    handle, project = await _setup(daemon_factory)
    payload = event(cwd=str(project), session_id="trust", tool_name="Read")
    payload["tool_input"] = {"file_path": str(project / "README.md")}

    def fire_read() -> protocol.FireReply:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", payload)

    reply = await trio.to_thread.run_sync(fire_read)
    assert reply.result.additional_context == [] and reply.result.hooks == []
    assert await contexts(handle, project) == ["user"]  # Bash: the project's is held back
    records = read_records(handle.daemon.settings.state_path() / "audit").records
    read, bash = [r for r in records if isinstance(r, AuditEvent)]
    assert (read.input or {}).get("tool_name") == "Read" and read.untrusted == 0
    assert bash.untrusted == 1


async def test_trust_and_untrust_take_effect_on_the_next_event(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    done = hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert done.returncode == 0, done.stderr
    assert await contexts(handle, project) == ["user", "project"]
    store = handle.daemon.settings.state_path() / "trust.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    # Every file the store is kept with (the store, its lock) is the user's alone.
    kept = sorted(store.parent.glob("trust*"))
    assert [p.name for p in kept] == ["trust.json", "trust.lock"]
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in kept} == {"0o600"}
    listing = hookctl(handle, "trust", "--list", "--state-dir", state(handle))
    assert str(project) in listing.stdout and "ok" in listing.stdout
    assert (await status(handle))["untrusted"] == []
    done = hookctl(handle, "untrust", str(project), "--state-dir", state(handle))
    assert done.returncode == 0, done.stderr
    assert await contexts(handle, project) == ["user"]


async def test_pinned_trust_breaks_when_a_hook_file_changes(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    done = hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert done.returncode == 0 and ".claude/hooks.json" in done.stdout
    assert await contexts(handle, project) == ["user", "project"]
    hooks = project / ".claude" / "hooks.json"
    hooks.write_text(hooks.read_text().replace("project", "changed"))
    handle.daemon.reload()
    assert await contexts(handle, project) == ["user"]
    [untrusted] = (await status(handle))["untrusted"]
    assert "changed since they were trusted" in untrusted["reason"]
    hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert await contexts(handle, project) == ["user", "changed"]
    # A new file counts as a change too.
    (project / ".claude" / "hooks.local.json").write_text("{}")
    handle.daemon.reload()
    assert await contexts(handle, project) == ["user"]


async def test_unpinned_trust_covers_subdirectories(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    hookctl(handle, "trust", str(project.parent), "--state-dir", state(handle))
    assert await contexts(handle, project) == ["user", "project"]


async def test_an_untrusted_project_cannot_switch_off_the_users_hooks(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    (project / ".claude" / "hooks.local.json").write_text(
        (DATA / "project_disables.json").read_text()
    )
    handle.daemon.reload()
    assert await contexts(handle, project) == ["user"]
    hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert await contexts(handle, project) == []  # trusted: its disableAllHooks applies


async def test_allow_managed_hooks_only_holds_in_a_trusted_project(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    configure_text(handle, (DATA / "policy_managed_only.json").read_text(), policy=True)
    hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert await contexts(handle, project) == []


async def test_a_damaged_trust_store_trusts_nothing(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)
    hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert await contexts(handle, project) == ["user", "project"]
    (handle.daemon.settings.state_path() / "trust.json").write_text("{not json")
    assert await contexts(handle, project) == ["user"]


async def test_hookctl_hooks_says_why_a_hook_does_not_run(daemon_factory: Any) -> None:
    handle, project = await _setup(daemon_factory)

    def hooks() -> dict[str, Any]:
        with Client(handle.socket) as client:
            request = protocol.Hooks(id=client.next_id(), cwd=str(project))
            data: dict[str, Any] = client.call(request)
            return data

    listing = await trio.to_thread.run_sync(hooks)
    by_scope = {h["scope"]: h for h in listing["hooks"]}
    assert by_scope["user"]["runs"] is True and "why" not in by_scope["user"]
    assert by_scope["project"]["runs"] is False
    assert "is not trusted" in by_scope["project"]["why"]
    out = await trio.to_thread.run_sync(lambda: hookctl(handle, "hooks", "--cwd", str(project)))
    assert "not run: " in out.stdout and "is not trusted" in out.stdout


def test_a_state_directory_trust_creates_is_private(tmp_path: Path) -> None:
    """``hookctl trust`` before the daemon ever ran creates the state directory: 0700
    (the store says which projects may run code)."""
    state_dir = tmp_path / "fresh" / "state"
    project = tmp_path / "proj"
    project.mkdir()
    store = TrustStore(state_dir / "trust.json")
    store.trust(str(project), SourceLayout(policy=(), user=(), claude_settings=False))
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700

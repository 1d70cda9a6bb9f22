"""``hookctl agents install | uninstall | status`` for any agent, on real files in a private HOME.

The driver (hookd/installers/agent_install.py) through the real command, with the
real adapters: Qwen Code (Claude Code's dialect: the user's hooks move),
Cursor (its own protocol: they stay) and Codex (run for real elsewhere).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from hookd.agents.cline import ClineAdapter
from hookd.agents.codex import CodexAdapter
from hookd.agents.qwen import QwenAdapter
from hookd.agents.registry import ADAPTERS
from hookd.cli.hookctl import main as hookctl
from hookd.installers.agent_install import BACKUP_SUFFIX, RECORD_SUFFIX

GUARD = {"type": "command", "command": "~/bin/guard.sh", "timeout": 10}
STOP_GROUP = {"hooks": [{"type": "command", "command": "notify-send done"}]}
QWEN_SETTINGS: dict[str, Any] = {
    "model": {"name": "qwen3-coder"},
    "hooks": {
        "PreToolUse": [{"matcher": "run_shell_command", "hooks": [GUARD]}],
        "Stop": [STOP_GROUP],
    },
}


def write(path: Path, data: Any, mode: int = 0o644) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=4) + "\n"
    path.write_text(text)
    path.chmod(mode)
    return text


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def commands(settings: dict[str, Any]) -> dict[str, str]:
    return {event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}


def test_install_moves_qwens_hooks_and_uninstall_gives_every_byte_back(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".qwen" / "settings.json"
    original = write(settings, QWEN_SETTINGS, 0o640)
    hookd_config = home / ".config" / "hookd" / "hooks.json"

    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    out = capsys.readouterr().out
    assert "moved 2 hook group(s)" in out

    wired = read(settings)
    assert wired["model"] == QWEN_SETTINGS["model"]
    assert set(wired["hooks"]) == {s.native for s in QwenAdapter.events}
    for native, command in commands(wired).items():
        argv = shlex.split(command)
        assert argv[-3:] == ["--agent", "qwen", native] and "--fail-closed" not in argv
    # The user's hooks are in hookd's config, in Claude Code's tool names.
    assert read(hookd_config)["hooks"] == {
        "PreToolUse": [{"matcher": "Bash", "hooks": [GUARD]}],
        "Stop": [STOP_GROUP],
    }
    # The backup is the original with the original's mode; the record is owner-only.
    backup = settings.with_name(settings.name + BACKUP_SUFFIX)
    assert backup.read_text() == original and backup.stat().st_mode & 0o777 == 0o640
    assert settings.stat().st_mode & 0o777 == 0o640
    record = settings.with_name(settings.name + RECORD_SUFFIX)
    assert record.stat().st_mode & 0o777 == 0o600

    # Idempotent: a second install changes nothing.
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before

    assert hookctl(["agents", "uninstall", "qwen"]) == 0
    assert settings.read_text() == original and settings.stat().st_mode & 0o777 == 0o640
    assert not hookd_config.exists()  # install created it and put nothing else there
    assert not backup.exists() and not record.exists()


def test_a_hook_group_hookd_already_had_stays_in_hookd_on_uninstall(home: Path) -> None:
    """The same guard moved from another agent earlier: it is hookd's, not this install's."""
    hookd_config = home / ".config" / "hookd" / "hooks.json"
    shared = {"matcher": "Bash", "hooks": [GUARD]}
    write(hookd_config, {"hooks": {"PreToolUse": [shared]}})
    write(home / ".qwen" / "settings.json", QWEN_SETTINGS)

    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    assert read(hookd_config)["hooks"]["PreToolUse"] == [shared]  # not twice
    assert hookctl(["agents", "uninstall", "qwen"]) == 0
    assert read(hookd_config) == {"hooks": {"PreToolUse": [shared]}}


def test_fail_closed_follows_hookds_config_per_event(home: Path) -> None:
    strict = {**GUARD, "onFailure": "block"}
    write(
        home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [strict]}]}}
    )
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    wired = commands(read(home / ".qwen" / "settings.json"))
    assert shlex.split(wired["PreToolUse"])[-1] == "--fail-closed"
    assert all("--fail-closed" not in c for e, c in wired.items() if e != "PreToolUse")


def test_uninstall_refuses_over_edits_unless_forced(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".qwen" / "settings.json"
    original = write(settings, QWEN_SETTINGS)
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    edited = read(settings)
    edited["theme"] = "dark"
    write(settings, edited)
    capsys.readouterr()

    assert hookctl(["agents", "uninstall", "qwen"]) == 1
    assert "changed since" in capsys.readouterr().err
    assert read(settings)["theme"] == "dark"
    assert hookctl(["agents", "uninstall", "qwen", "--dry-run", "--force"]) == 0
    dry = capsys.readouterr().out.splitlines()
    assert any(line.startswith("-") and '"theme": "dark"' in line for line in dry)
    assert hookctl(["agents", "uninstall", "qwen", "--force"]) == 0
    assert settings.read_text() == original


def test_dry_run_writes_nothing_and_shows_the_diff(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".qwen" / "settings.json"
    original = write(settings, QWEN_SETTINGS)
    assert hookctl(["agents", "install", "qwen", "--dry-run", "--python-relay"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# would: ") and f"+++ {settings}" in out
    assert settings.read_text() == original
    assert sorted(p.name for p in home.rglob("*") if p.is_file()) == ["settings.json"]


def test_project_scope_moves_into_the_projects_hookd_config(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    write(project / ".qwen" / "settings.json", QWEN_SETTINGS)
    assert hookctl(["agents", "install", "qwen", "--project", "--project-dir", str(project),
                    "--python-relay"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"hookctl trust {project}" in out and "trusted folder" in out
    assert read(project / ".claude" / "hooks.json")["hooks"]["PreToolUse"][0]["matcher"] == "Bash"


def test_cursors_own_hooks_stay_and_run_beside_hookds(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = home / ".cursor" / "hooks.json"
    original = write(hooks, {"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}})
    assert hookctl(["agents", "install", "cursor", "--python-relay"]) == 0
    assert "Cursor keeps running them itself" in capsys.readouterr().out
    assert read(hooks)["hooks"]["stop"][1] == {"command": "./audit.sh"}
    assert not (home / ".config" / "hookd" / "hooks.json").exists()  # nothing moved
    assert hookctl(["agents", "status", "cursor", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    user = row["files"]["user"][0]
    assert row["wired"]["user"] and user["recorded"]
    assert "stay in this file" in user["notes"][0]  # status says where the user's hook runs
    assert hookctl(["agents", "status", "cursor"]) == 0
    text = capsys.readouterr().out.splitlines()
    wired = "wired to hookd; install record kept (uninstall restores)"
    assert text[1] == f"  user     {hooks}: {wired}"
    assert "stay in this file" in text[2] and text[-1].startswith("  project  no file: ")
    assert hookctl(["agents", "uninstall", "cursor"]) == 0
    assert hooks.read_text() == original


def test_codex_through_the_generic_driver(home: Path) -> None:
    """A verified agent's install side, driven the same way (its e2e runs the real CLI)."""
    codex = CodexAdapter()
    [target, *_] = codex.hook_files("user", home, None)
    original = write(target, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [GUARD]}]}})
    assert hookctl(["agents", "install", "codex", "--python-relay"]) == 0
    assert codex.is_wired(target.read_text())
    assert read(home / ".config" / "hookd" / "hooks.json")["hooks"]["PreToolUse"][0]["hooks"] == [
        GUARD
    ]
    assert hookctl(["agents", "uninstall", "codex"]) == 0
    assert target.read_text() == original


def test_an_unparsable_file_is_an_error_naming_it_and_nothing_is_written(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"hooks": {')
    assert hookctl(["agents", "install", "qwen"]) == 1
    err = capsys.readouterr().err
    assert str(settings) in err and "line 1" in err
    assert settings.read_text() == '{"hooks": {'


def test_cline_gets_one_script_per_event_and_keeps_the_users_own(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cline reads hook files named after their event: install writes a relay script for
    each event except where the user's own hook has the name (it stays, and keeps running
    in Cline), and says so.  The relay gives up before Cline's 120 s hook timeout."""
    folder = home / "Documents" / "Cline" / "Hooks"
    folder.mkdir(parents=True)
    own = folder / "PreToolUse"
    own.write_text("#!/bin/sh\necho '{\"cancel\": false}'\n")
    own.chmod(0o755)
    assert hookctl(["agents", "install", "cline", "--python-relay"]) == 0
    out = capsys.readouterr().out
    assert "hookd is not wired for PreToolUse" in out
    scripts = sorted(p.name for p in folder.iterdir() if ".hookd-" not in p.name)
    assert scripts == sorted(s.native for s in ClineAdapter.events)
    assert own.read_text().startswith("#!/bin/sh\necho")  # untouched, and not backed up
    assert not own.with_name("PreToolUse" + BACKUP_SUFFIX).exists()
    start = folder / "TaskStart"
    assert start.stat().st_mode & 0o777 == 0o700
    argv = shlex.split(start.read_text().splitlines()[-1])
    assert argv[0] == "exec" and argv[-5:] == ["--agent", "cline", "TaskStart", "--timeout", "117"]

    assert hookctl(["agents", "install", "cline", "--python-relay"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert hookctl(["agents", "uninstall", "cline"]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["PreToolUse"]


def test_a_damaged_install_record_is_an_error_naming_it_and_nothing_is_restored(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".qwen" / "settings.json"
    write(settings, QWEN_SETTINGS)
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    wired = settings.read_text()
    record = settings.with_name(settings.name + RECORD_SUFFIX)
    data = read(record)
    data["original"] = 42
    write(record, data)
    capsys.readouterr()
    assert hookctl(["agents", "uninstall", "qwen"]) == 1
    err = capsys.readouterr().err
    assert str(record) in err and "$.original" in err
    assert settings.read_text() == wired


AGENTS = sorted(a.name for a in ADAPTERS if a.name not in ("claude", "claude-agent-sdk"))


@pytest.mark.parametrize("agent", AGENTS)
def test_every_file_an_agent_install_creates_is_the_users_alone(home: Path, agent: str) -> None:
    """Install writes the relay's wiring, its record and hookd's config: each new file is
    0600 (they may carry an agent's secrets, and the record names them), and the one kind
    that must run — Cline's per-event scripts — 0700; never anything for group or others."""
    before = {p for p in home.rglob("*")}
    assert hookctl(["agents", "install", agent, "--python-relay"]) == 0
    created = sorted(p for p in home.rglob("*") if p.is_file() and p not in before)
    assert created, "install created no file"
    modes = {str(p.relative_to(home)): oct(p.stat().st_mode & 0o777) for p in created}
    executable = {"0o700"} if agent == "cline" else set()
    assert set(modes.values()) <= {"0o600", *executable}, modes

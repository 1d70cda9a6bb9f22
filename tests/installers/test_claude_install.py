"""``hookctl claude install | uninstall | import`` on real files in a private HOME."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookd.cli.hookctl import main as hookctl
from hookd.installers import claude_settings
from hookd.installers.claude_settings import (
    BACKUP_SUFFIX,
    MOVED_SUFFIX,
    RELAY_EVENTS,
    compiled_relay,
    is_bridge_handler,
)
from hookd_client.events import EVENT_NAMES

DATA = Path(__file__).resolve().parents[1] / "data" / "bridge"

NO_DAEMON = 3
"""install's exit code with no daemon running: the files are written, but Claude Code's
hooks fail open until hookd serves them (these tests have none: HOOKD_SOCKET points nowhere)."""


@pytest.fixture
def home(private_home: Path) -> Path:
    home = private_home
    (home / ".claude").mkdir()
    shutil.copy(DATA / "claude-settings-user.json", home / ".claude" / "settings.json")
    return home


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _handler(settings: dict[str, Any], event: str) -> dict[str, Any]:
    groups = settings["hooks"][event]
    assert len(groups) == 1 and len(groups[0]["hooks"]) == 1
    handler: dict[str, Any] = groups[0]["hooks"][0]
    return handler


def test_install_sends_every_event_to_hookd_and_moves_the_users_hooks(home: Path) -> None:
    original = _json(DATA / "claude-settings-user.json")
    assert (
        hookctl(["claude", "install", "--user", "--port", "47999", "--python-relay"]) == NO_DAEMON
    )

    settings = _json(home / ".claude" / "settings.json")
    assert settings["model"] == "opus" and settings["permissions"] == original["permissions"]
    assert set(settings["hooks"]) == set(EVENT_NAMES)
    token = (home / ".config" / "hookd" / "http-token").read_text().strip()
    for event in EVENT_NAMES:
        handler = _handler(settings, event)
        assert is_bridge_handler(handler)
        if event in RELAY_EVENTS:
            assert handler["type"] == "command" and handler["args"][:3] == ["-I", "-S", "-c"]
            assert "hookd_client" in handler["args"][3] and "import relay" in handler["args"][3]
            assert handler["args"][4] == event
        else:
            assert handler["url"] == f"http://127.0.0.1:47999/hooks/{event}"
            assert handler["headers"] == {"Authorization": f"Bearer {token}"}
    # The users' hooks now live in hookd's config, unchanged.
    assert _json(home / ".config" / "hookd" / "hooks.json") == {"hooks": original["hooks"]}
    # A literal token in the file: only the owner may read it.
    assert (home / ".claude" / "settings.json").stat().st_mode & 0o777 == 0o600
    assert _json(home / ".claude" / ("settings.json" + BACKUP_SUFFIX)) == original


def test_install_wires_the_compiled_relay_and_runs_through_it(
    home: Path, compiled_relay: Path, tmp_path: Path
) -> None:
    """With a compiled relay, the relay events run it directly (no interpreter), with
    the same arguments; uninstall recognises and removes those entries too; and the
    command as written, run the way Claude Code runs it, reaches the (absent) daemon."""
    assert hookctl(["claude", "install", "--relay", str(compiled_relay)]) == NO_DAEMON
    settings = _json(home / ".claude" / "settings.json")
    for event in RELAY_EVENTS:
        handler = _handler(settings, event)
        assert handler == {"type": "command", "command": str(compiled_relay), "args": [event]}
        assert is_bridge_handler(handler)
    pre = _handler(settings, "PreToolUse")
    assert pre["type"] == "http"  # only the relay events change door
    start = _handler(settings, "SessionStart")
    proc = subprocess.run(
        [start["command"], *start["args"]],
        input=b"{}",
        capture_output=True,
        env={"HOOKD_SOCKET": str(tmp_path / "none.sock")},
        check=False,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["systemMessage"].startswith("hookd is not running:")
    assert hookctl(["claude", "uninstall"]) == 0
    assert "hooks" not in _json(home / ".claude" / "settings.json") or not any(
        is_bridge_handler(h)
        for groups in _json(home / ".claude" / "settings.json")["hooks"].values()
        for g in groups
        for h in g["hooks"]
    )


def test_install_finds_the_compiled_relay_beside_its_interpreter(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where scripts/build-relay puts it (the venv's bin): used by default, and
    ``--python-relay`` still writes the Python one; a --relay that uninstall would
    not recognise is refused."""
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "hookd-relay-c").write_text("#!/bin/sh\n")
    (venv_bin / "hookd-relay-c").chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python3"))
    assert compiled_relay() == str(venv_bin / "hookd-relay-c")
    assert hookctl(["claude", "install"]) == NO_DAEMON
    start = _handler(_json(home / ".claude" / "settings.json"), "SessionStart")
    assert start["command"] == str(venv_bin / "hookd-relay-c")
    assert hookctl(["claude", "install", "--python-relay"]) == NO_DAEMON
    start = _handler(_json(home / ".claude" / "settings.json"), "SessionStart")
    assert start["command"] == str(venv_bin / "python3") and start["args"][:2] == ["-I", "-S"]
    other = tmp_path / "myrelay"
    other.write_text("")
    assert hookctl(["claude", "install", "--relay", str(other)]) == 1
    (venv_bin / "hookd-relay-c").unlink()
    monkeypatch.setattr(claude_settings, "_installed_script", lambda _name: None)
    assert compiled_relay() is None


def test_install_finds_the_compiled_relay_where_the_distribution_put_it(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pip install --user``: the scripts go to ``~/.local/bin``, not beside the
    interpreter; the relay is found from the hookd distribution's RECORD.  Without
    one, install wires the Python relay and says why (issue 31)."""
    elsewhere = tmp_path / "local" / "bin" / "hookd-relay-c"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("#!/bin/sh\n")
    elsewhere.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "usr" / "bin" / "python3"))
    monkeypatch.setattr(claude_settings, "_installed_script", lambda _name: str(elsewhere))
    assert compiled_relay() == str(elsewhere)
    assert hookctl(["claude", "install"]) == NO_DAEMON
    start = _handler(_json(home / ".claude" / "settings.json"), "SessionStart")
    assert start["command"] == str(elsewhere)
    assert "is not installed" not in capsys.readouterr().out

    monkeypatch.setattr(claude_settings, "_installed_script", lambda _name: None)
    assert hookctl(["claude", "install", "--dry-run"]) == 0
    assert "the compiled relay (hookd-relay-c) is not installed" in capsys.readouterr().out
    assert hookctl(["claude", "install", "--dry-run", "--python-relay"]) == 0
    assert "is not installed" not in capsys.readouterr().out  # asked for: nothing to say


def test_install_carries_fail_closed_and_long_timeouts_over(home: Path) -> None:
    assert hookctl(["claude", "install"]) == NO_DAEMON
    settings = _json(home / ".claude" / "settings.json")
    pre = _handler(settings, "PreToolUse")
    assert pre["onFailure"] == "block"  # the user's guard had onFailure: block
    assert pre["timeout"] == 905  # its 900 s timeout, plus margin; CC must not give up first
    assert "onFailure" not in _handler(settings, "PostToolUse")
    assert "--fail-closed" not in _handler(settings, "SessionStart")["args"]


def test_second_install_changes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert hookctl(["claude", "install"]) == NO_DAEMON
    files = [home / ".claude" / "settings.json", home / ".config" / "hookd" / "hooks.json"]
    before = [p.read_text() for p in files]
    capsys.readouterr()
    assert hookctl(["claude", "install"]) == NO_DAEMON
    assert "nothing to change" in capsys.readouterr().out
    assert [p.read_text() for p in files] == before


def test_dry_run_prints_a_diff_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = home / ".claude" / "settings.json"
    before = settings.read_text()
    assert hookctl(["claude", "install", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"--- {settings}" in out and f"+++ {settings}" in out
    assert '+            "url": "http://127.0.0.1:47470/hooks/PreToolUse",' in out
    assert "+++ " + str(home / ".config" / "hookd" / "hooks.json") in out
    assert settings.read_text() == before
    assert not (home / ".config" / "hookd").exists()


def test_uninstall_restores_the_users_hooks(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.chmod(0o644)
    original = settings.read_bytes()
    assert hookctl(["claude", "install"]) == NO_DAEMON
    assert settings.stat().st_mode & 0o777 == 0o600  # the literal token is in it
    assert hookctl(["claude", "uninstall"]) == 0
    # Every byte back, the mode too, and nothing of hookd's left beside it.
    assert settings.read_bytes() == original and settings.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    # hookd no longer runs them too: install made its config, and it is gone again.
    assert not (home / ".config" / "hookd" / "hooks.json").exists()


def test_uninstall_keeps_hookd_only_groups_in_hookd(home: Path) -> None:
    assert hookctl(["claude", "install"]) == NO_DAEMON
    config = home / ".config" / "hookd" / "hooks.json"
    data = _json(config)
    sequential = {"sequential": True, "hooks": [{"type": "command", "command": "fmt"}]}
    data["hooks"]["PostToolUse"] = [sequential]
    config.write_text(json.dumps(data))
    assert hookctl(["claude", "uninstall"]) == 0
    assert "PostToolUse" not in _json(home / ".claude" / "settings.json")["hooks"]
    assert _json(config)["hooks"] == {"PostToolUse": [sequential]}


def test_import_copies_without_touching_claude_settings(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    before = settings.read_text()
    assert hookctl(["claude", "import"]) == 0
    assert settings.read_text() == before
    original = _json(DATA / "claude-settings-user.json")
    assert _json(home / ".config" / "hookd" / "hooks.json") == {"hooks": original["hooks"]}


def test_project_install_never_writes_the_token(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    shutil.copy(DATA / "claude-settings-user.json", project / ".claude" / "settings.json")
    assert hookctl(["claude", "install", "--project", "--project-dir", str(project)]) == NO_DAEMON
    text = (project / ".claude" / "settings.json").read_text()
    token = (home / ".config" / "hookd" / "http-token").read_text().strip()
    assert token not in text
    handler = _handler(json.loads(text), "PreToolUse")
    assert handler["headers"] == {"Authorization": "Bearer $HOOKD_HTTP_TOKEN"}
    assert handler["allowedEnvVars"] == ["HOOKD_HTTP_TOKEN"]
    assert (project / ".claude" / "hooks.json").exists()


def test_backups_and_new_files_are_owner_only(home: Path) -> None:
    """The settings file may hold API keys; after install it holds the bearer token."""
    settings = home / ".claude" / "settings.json"
    settings.chmod(0o600)
    assert hookctl(["claude", "install"]) == NO_DAEMON
    backup = home / ".claude" / ("settings.json" + BACKUP_SUFFIX)
    assert backup.stat().st_mode & 0o777 == 0o600
    record = home / ".claude" / ("settings.json" + MOVED_SUFFIX)
    assert record.stat().st_mode & 0o777 == 0o600
    # The moved hooks may carry secrets too (an http hook's header): a new file is 0600.
    assert (home / ".config" / "hookd" / "hooks.json").stat().st_mode & 0o777 == 0o600


def test_uninstall_removes_a_settings_file_install_created(home: Path) -> None:
    """No settings file before install: none after uninstall, and no backup of the token."""
    (home / ".claude" / "settings.json").unlink()
    assert hookctl(["claude", "install"]) == NO_DAEMON
    assert hookctl(["claude", "uninstall"]) == 0
    assert list((home / ".claude").iterdir()) == []


def test_uninstall_after_an_edit_leaves_no_hooks_where_there_were_none(home: Path) -> None:
    """A settings file without hooks, edited after install: uninstall takes every one of
    hookd's entries out and leaves no ``hooks`` key behind, the edit kept."""
    settings = home / ".claude" / "settings.json"
    settings.write_text(json.dumps({"model": "opus"}))
    assert hookctl(["claude", "install"]) == NO_DAEMON
    edited = _json(settings)
    assert edited["hooks"]  # hookd's
    edited["theme"] = "dark"
    settings.write_text(json.dumps(edited))
    assert hookctl(["claude", "uninstall"]) == 0
    assert _json(settings) == {"model": "opus", "theme": "dark"}


def test_uninstall_after_an_edit_puts_the_groups_back_and_keeps_the_backup(home: Path) -> None:
    original = _json(DATA / "claude-settings-user.json")
    settings = home / ".claude" / "settings.json"
    assert hookctl(["claude", "install"]) == NO_DAEMON
    edited = _json(settings)
    edited["theme"] = "dark"
    settings.write_text(json.dumps(edited))
    assert hookctl(["claude", "uninstall"]) == 0
    assert _json(settings) == {**original, "theme": "dark"}
    assert (home / ".claude" / ("settings.json" + BACKUP_SUFFIX)).exists()
    assert not (home / ".claude" / ("settings.json" + MOVED_SUFFIX)).exists()


def test_uninstall_moves_back_only_what_install_moved(home: Path) -> None:
    original = _json(DATA / "claude-settings-user.json")
    config = home / ".config" / "hookd" / "hooks.json"
    config.parent.mkdir(parents=True)
    mine = {"matcher": "Write", "hooks": [{"type": "command", "command": "~/bin/fmt.sh"}]}
    config.write_text(json.dumps({"hooks": {"PostToolUse": [mine]}}))
    assert hookctl(["claude", "install"]) == NO_DAEMON
    assert _json(config)["hooks"]["PostToolUse"] == [mine]
    assert hookctl(["claude", "uninstall"]) == 0
    # Claude Code gets back exactly its own hooks; hookd keeps the one written for hookd.
    assert _json(home / ".claude" / "settings.json") == original
    assert _json(config) == {"hooks": {"PostToolUse": [mine]}}
    assert not (home / ".claude" / ("settings.json" + MOVED_SUFFIX)).exists()


def test_uninstall_without_hookd_config_restores_from_the_record(home: Path) -> None:
    original = _json(DATA / "claude-settings-user.json")
    assert hookctl(["claude", "install"]) == NO_DAEMON
    (home / ".config" / "hookd" / "hooks.json").unlink()
    assert hookctl(["claude", "uninstall"]) == 0
    assert _json(home / ".claude" / "settings.json") == original

"""``hookctl agents … claude`` is ``hookctl claude …``: the same files, byte for byte."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hookd.cli.hookctl import main as hookctl
from support.clis import require_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "bridge"

NO_DAEMON = 3
"""install's exit code with no daemon running: the files are written, but Claude Code's
hooks fail open until hookd serves them (these tests have none: HOOKD_SOCKET points nowhere)."""


def _home(monkeypatch: pytest.MonkeyPatch, home: Path, sock: Path) -> None:
    (home / ".claude").mkdir(parents=True)
    shutil.copy(DATA / "claude-settings-user.json", home / ".claude" / "settings.json")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("HOOKD_SOCKET", str(sock))  # no daemon: never the machine's own


def _files(home: Path) -> dict[str, str]:
    return {
        str(p.relative_to(home)): p.read_text().replace(str(home), "~")
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.name != "http-token"
    }


def test_agents_install_claude_writes_what_claude_install_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    flags = ["--user", "--port", "47999", "--python-relay"]
    a, b = tmp_path / "a", tmp_path / "b"
    _home(monkeypatch, a, tmp_path / "none.sock")
    assert hookctl(["claude", "install", *flags]) == NO_DAEMON
    token = (a / ".config" / "hookd" / "http-token").read_text()
    _home(monkeypatch, b, tmp_path / "none.sock")
    (b / ".config" / "hookd").mkdir(parents=True)
    (b / ".config" / "hookd" / "http-token").write_text(token)
    (b / ".config" / "hookd" / "http-token").chmod(0o600)
    assert hookctl(["agents", "install", "claude", *flags]) == NO_DAEMON

    assert _files(a) == _files(b)
    moved = json.loads((b / ".config" / "hookd" / "hooks.json").read_text())
    original = json.loads((DATA / "claude-settings-user.json").read_text())
    assert moved == {"hooks": original["hooks"]}

    # ... and uninstall through either name gives the user's hooks back.
    assert hookctl(["agents", "uninstall", "claude", "--user"]) == 0
    settings = json.loads((b / ".claude" / "settings.json").read_text())
    assert settings["hooks"] == original["hooks"]


def test_agents_list_and_status_show_claude_wired_after_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    _home(monkeypatch, home, tmp_path / "none.sock")
    assert hookctl(["agents", "status", "claude", "--json", "--project-dir", str(tmp_path)]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before[0]["agent"] == "claude" and before[0]["wired"] == {
        "user": False,
        "project": False,
    }
    assert before[0]["files"]["user"][0]["own_groups"] > 0

    assert hookctl(["agents", "install", "claude", "--python-relay"]) == NO_DAEMON
    capsys.readouterr()
    assert hookctl(["agents", "list", "--json", "--project-dir", str(tmp_path)]) == 0
    rows = {r["agent"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["claude"]["wired"] == {"user": True, "project": False}
    assert rows["claude"]["files"]["user"][0]["own_groups"] == 0
    assert rows["claude"]["files"]["user"][0]["recorded"] is True


def test_agents_install_claude_help_is_claude_installs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        hookctl(["agents", "install", "claude", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "--literal-token" in out and "--local" in out


BIN = Path(__file__).resolve().parents[1] / "e2e" / "node_modules" / ".bin"
PINNED = {"claude": "2.1.330", "codex": "0.169.0", "gemini": "0.61.0", "copilot": "1.0.102"}


def test_agents_list_finds_the_pinned_clis_and_their_versions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real CLIs tests/e2e/package.json pins, found on PATH and asked their version."""
    require_cli(all((BIN / name).exists() for name in PINNED), "a pinned agent CLI")
    _home(monkeypatch, tmp_path / "home", tmp_path / "none.sock")
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "home" / ".copilot"))
    assert hookctl(["agents", "list", "--json", "--project-dir", str(tmp_path)]) == 0
    rows = {r["agent"]: r for r in json.loads(capsys.readouterr().out)}
    for name, version in PINNED.items():
        assert rows[name]["installed"] is True, name
        assert rows[name]["version"] == version, rows[name]
        assert rows[name]["binary"] == str(BIN / name)
    assert rows["cursor"]["installed"] is False and rows["cursor"]["verified"] is False
    # The text table says the same.
    assert hookctl(["agents", "list", "--project-dir", str(tmp_path)]) == 0
    table = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "0.169.0" in table["codex"] and "run here" in table["codex"]
    assert "from docs" in table["kiro"]

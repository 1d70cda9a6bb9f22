"""``hookctl claude install --transport mod`` on real files in a private HOME.

What is proved: the per-tool-call events get no settings hook (the mod carries
them) and every other event the relay; the settings ``env`` loads the shipped
mod and names the daemon's http socket and the fail-closed events, keeping the
user's own variables and plugin folders; a second install changes nothing;
switching transport either way leaves no trace of the other; uninstall gives
back the original settings; other scopes are refused with the reason.  The
mod's own list of the events it carries is the one the installer leaves out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.cli.hookctl import main as hookctl
from hookd.doors.mod_answer import MOD_EVENTS
from hookd.installers.claude_settings import compiled_relay, is_bridge_handler, mod_dir
from hookd_client.events import EVENT_NAMES

DATA = Path(__file__).resolve().parents[1] / "data" / "bridge"
SOCKET = "/run/user/1000/hookd/http.sock"

NO_DAEMON = 3
"""install's exit code with no daemon running: the files are written, but Claude Code's
hooks fail open until hookd serves them (these tests have none: HOOKD_SOCKET points nowhere)."""


@pytest.fixture
def home(private_home: Path) -> Path:
    home = private_home
    (home / ".claude").mkdir()
    shutil.copy(DATA / "claude-settings-user.json", home / ".claude" / "settings.json")
    return home


def _settings(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / ".claude" / "settings.json").read_text())
    return data


def _install(*extra: str) -> int:
    return hookctl(["claude", "install", "--user", "--transport", "mod", *extra])


def test_mod_events_have_no_settings_hook_and_every_other_event_the_relay(home: Path) -> None:
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    settings = _settings(home)
    assert set(settings["hooks"]) == set(EVENT_NAMES) - MOD_EVENTS
    for event, groups in settings["hooks"].items():
        (handler,) = groups[0]["hooks"]
        assert handler["type"] == "command" and is_bridge_handler(handler), event
        expected = compiled_relay() or handler["command"]
        assert handler["command"] == expected
    assert settings["env"] == {
        "HOOKD_HTTP_SOCKET": SOCKET,
        # the user's guard.sh (PreToolUse) has onFailure: "block"
        "HOOKD_MOD_FAIL_CLOSED": "PreToolUse",
        "CLAUDE_CODE_PLUGIN_DIRS": str(mod_dir()),
    }
    moved = json.loads((home / ".config" / "hookd" / "hooks.json").read_text())
    assert moved["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "~/bin/guard.sh"


def test_the_users_env_and_plugin_folders_are_kept(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    original = json.loads(path.read_text())
    original["env"] = {"FOO": "1", "CLAUDE_CODE_PLUGIN_DIRS": "/opt/mine"}
    path.write_text(json.dumps(original))
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    env = _settings(home)["env"]
    assert env["FOO"] == "1"
    assert env["CLAUDE_CODE_PLUGIN_DIRS"] == f"/opt/mine:{mod_dir()}"
    assert hookctl(["claude", "uninstall", "--user"]) == 0
    assert _settings(home) == original


def test_a_second_install_changes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    before = (home / ".claude" / "settings.json").read_text()
    capsys.readouterr()
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    assert "nothing to change" in capsys.readouterr().out
    assert (home / ".claude" / "settings.json").read_text() == before


def test_switching_transport_leaves_nothing_of_the_other(home: Path) -> None:
    assert hookctl(["claude", "install", "--user", "--port", "47999"]) == NO_DAEMON
    http = _settings(home)
    assert http["hooks"]["PreToolUse"][0]["hooks"][0]["type"] == "http"
    assert "env" not in http
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    mod = _settings(home)
    assert not MOD_EVENTS & set(mod["hooks"])
    assert all(g[0]["hooks"][0]["type"] == "command" for g in mod["hooks"].values())
    assert hookctl(["claude", "install", "--user", "--port", "47999"]) == NO_DAEMON
    assert _settings(home) == http


def test_uninstall_gives_the_original_back(home: Path) -> None:
    original = json.loads((DATA / "claude-settings-user.json").read_text())
    assert _install("--http-socket", SOCKET) == NO_DAEMON
    assert (home / ".claude" / "settings.json.hookd-backup").exists()
    assert hookctl(["claude", "uninstall", "--user"]) == 0
    assert _settings(home) == original


def test_the_socket_defaults_to_the_one_beside_the_daemon_socket(home: Path) -> None:
    assert _install("--socket", "/run/user/7/hookd/hookd.sock") == NO_DAEMON
    assert _settings(home)["env"]["HOOKD_HTTP_SOCKET"] == "/run/user/7/hookd/http.sock"
    (home / ".config" / "hookd" / "hookd.toml").write_text('http_socket_path = "/srv/h.sock"\n')
    assert _install("--socket", "/run/user/7/hookd/hookd.sock") == NO_DAEMON
    assert _settings(home)["env"]["HOOKD_HTTP_SOCKET"] == "/srv/h.sock"


@pytest.mark.parametrize("scope", ["--project", "--local"])
def test_other_scopes_are_refused_with_the_reason(
    scope: str, home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = hookctl(
        ["claude", "install", scope, "--project-dir", str(tmp_path), "--transport", "mod"]
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "--transport mod needs --user" in err
    assert "CLAUDE_CODE_PLUGIN_DIRS only from ~/.claude/settings.json" in err
    assert not (tmp_path / ".claude" / "settings.json").exists()


def test_the_mod_carries_exactly_the_events_the_installer_leaves_to_it() -> None:
    source = (mod_dir() / "hooks" / "index.ts").read_text()
    found = re.search(r"const CARRIED = \[([^\]]*)\]", source)
    assert found is not None
    carried = set(re.findall(r'"(\w+)"', found.group(1)))
    assert carried == MOD_EVENTS


def test_the_mod_is_a_plugin_folder_claude_code_loads() -> None:
    manifest = json.loads((mod_dir() / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "hookd"
    hooks = json.loads((mod_dir() / "hooks" / "hooks.json").read_text())
    assert hooks == {"modules": ["./index.ts"]}
    assert "export function register(" in (mod_dir() / "hooks" / "index.ts").read_text()


async def _install_against(home: Path, socket: Path, *args: str) -> tuple[int, str]:
    """``hookctl claude install --user --transport mod`` as its own process, asking the
    daemon at ``socket`` (an in-process daemon answers from this test's trio loop)."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "HOOKD_SOCKET": str(socket),
        "PYTHONPATH": os.pathsep.join([str(root), str(root / "client")]),
    }
    done = await trio.run_process(
        [
            *(sys.executable, "-m", "hookd.cli.hookctl", "claude", "install", "--user"),
            *("--transport", "mod", "--socket", str(socket), *args),
        ],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def test_install_confirms_the_daemon_serves_the_mods_socket(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    home = tmp_path / "h"
    (home / ".claude").mkdir(parents=True)
    code, out = await _install_against(home, handle.socket, "--json")
    assert code == 0, out
    door = json.loads(out)["daemon"]
    assert door["ok"] is True, door
    assert door["message"] == (
        f"hookd (pid {os.getpid()}) serves {handle.socket.parent / 'http.sock'}: "
        "Claude Code's mod reaches it"
    )
    env = _settings(home)["env"]
    assert env["HOOKD_HTTP_SOCKET"] == str(handle.socket.parent / "http.sock")


async def test_install_fails_when_the_daemon_serves_no_http_socket(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory(http_socket=False)
    home = tmp_path / "h"
    (home / ".claude").mkdir(parents=True)
    code, out = await _install_against(home, handle.socket)
    assert code == 1, out  # written, but the mod's events would fail open: an error
    assert (
        f"error: hookd (pid {os.getpid()}) serves no http socket, "
        f"not {handle.socket.parent / 'http.sock'}: set "
        "http_socket_path (or http_socket = true) in hookd.toml and restart it"
    ) in out

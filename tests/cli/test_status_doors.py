"""``hookctl status`` says when Claude Code is wired to a door this daemon does not serve.

Claude Code's http hooks fail open against a port nobody serves; status is where a
user looks, so such a door is an error there (a section first, exit 1), read from
the user's and the current project's settings files against the daemon's own answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.daemon import free_port

from .helpers import hookctl, serving


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "HOOKD_SOCKET": str(tmp_path / "d.sock"),
    }


def test_a_wired_port_the_daemon_does_not_serve_is_an_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    with serving(tmp_path / "d.sock", "--http-port", "None", env=env):
        assert hookctl("claude", "install", "--user", "--port", str(port), env=env).returncode == 1
        done = hookctl("status", env=env, cwd=tmp_path)
        as_json = hookctl("status", "--json", env=env, cwd=tmp_path)
        in_home = hookctl("status", "--json", env=env, cwd=Path(env["HOME"]))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # The first section after the header (daemon, config, http endpoint lines, a blank).
    first = lines.index("") + 1
    assert lines[first] == "doors not served (their hooks fail open):", done.stdout
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    assert lines[first + 1].startswith(
        f"  {settings}: 26 event(s) post to http://127.0.0.1:{port}, but hookd (pid "
    )
    assert lines[first + 1].endswith("serves no http port: they fail open (hookctl doctor)")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["door_errors"] == [lines[first + 1].strip()]
    # HOME as the project: its settings file is the user's, said once.
    assert json.loads(in_home.stdout)["door_errors"] == [lines[first + 1].strip()]


def test_a_served_door_is_no_error(env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    with serving(tmp_path / "d.sock", "--http-port", str(port), env=env):
        assert hookctl("claude", "install", "--user", "--port", str(port), env=env).returncode == 0
        done = hookctl("status", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "doors not served" not in done.stdout

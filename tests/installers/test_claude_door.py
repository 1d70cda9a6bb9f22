"""``hookctl claude install`` checks that hookd serves the http port it wires Claude Code to.

Run against a real daemon on a real socket (and, when it has one, a real
loopback http endpoint), with ``hookctl`` as a separate process.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import trio

from e2e.daemon import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    # The in-process daemon creates its http token under XDG_CONFIG_HOME: keep it here.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


async def _install(home: Path, socket: Path, *args: str) -> tuple[int, str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "HOOKD_SOCKET": str(socket),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    done = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "claude", "install", "--user", *args],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout.decode() + done.stderr.decode()


def _toml(home: Path) -> dict[str, Any]:
    return tomllib.loads((home / ".config" / "hookd" / "hookd.toml").read_text())


async def test_no_daemon_configures_the_port_and_fails(home: Path, tmp_path: Path) -> None:
    code, out = await _install(home, tmp_path / "nobody.sock")
    # Written, but Claude Code's hooks fail open until a daemon serves them: exit 3.
    assert code == 3, out
    (line,) = [line for line in out.splitlines() if "hookd is not running" in line]
    assert line.startswith("hookctl claude install: error: hookd is not running")
    assert "http://127.0.0.1:47470" in line and "hookd serve" in line and "fail open" in line
    # The next start (hookd serve, or the systemd unit) serves the wired port.
    assert _toml(home)["http_port"] == 47470
    assert (home / ".config" / "hookd" / "hookd.toml").stat().st_mode & 0o777 == 0o600


def _settings_file(home: Path) -> Path:
    return home / ".config" / "hookd" / "hookd.toml"


async def test_a_daemon_without_http_opens_the_port_install_wired(
    daemon_factory: Any, home: Path
) -> None:
    """No restart: install writes http_port into hookd.toml and the running daemon opens it."""
    handle = await daemon_factory(settings_file=_settings_file(home))
    assert handle.daemon.http_port is None
    _settings_file(home).parent.mkdir(parents=True)
    _settings_file(home).write_text('log_level = "info"\n[inject_faults]\nnone = 0\n')
    port = free_port()
    code, out = await _install(home, handle.socket, "--port", str(port))
    assert code == 0, out
    assert out.splitlines()[-1] == (
        f"hookd (pid {os.getpid()}) serves http://127.0.0.1:{port}: "
        "Claude Code's hooks run through it"
    )
    assert handle.daemon.http_port == port
    assert _toml(home) == {"http_port": port, "log_level": "info", "inject_faults": {"none": 0}}


async def test_a_port_another_process_holds_is_an_error(daemon_factory: Any, home: Path) -> None:
    handle = await daemon_factory(settings_file=_settings_file(home))
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        code, out = await _install(home, handle.socket, "--port", str(port))
    assert code == 1, out
    assert (
        f"error: hookd (pid {os.getpid()}) cannot serve http://127.0.0.1:{port}: the port is "
        "in use by another process: Claude Code's hooks fail open until it can"
    ) in out
    assert handle.daemon.http_error is not None and handle.daemon.http_port is None


async def test_a_hookd_toml_the_daemon_cannot_read_is_an_error(
    daemon_factory: Any, home: Path
) -> None:
    handle = await daemon_factory(settings_file=_settings_file(home))
    _settings_file(home).parent.mkdir(parents=True)
    _settings_file(home).write_text("[other]\nx = 1\n")
    code, out = await _install(home, handle.socket, "--port", str(free_port()))
    assert code == 1, out
    assert f"error: hookd (pid {os.getpid()}) cannot read {_settings_file(home)}: " in out
    assert "unknown field `other`" in out
    assert handle.daemon.http_port is None


async def test_a_flag_that_overrides_hookd_toml_is_an_error(
    daemon_factory: Any, home: Path
) -> None:
    """``hookd serve --http-port A``: the flag beats hookd.toml, so install cannot move it."""
    handle = await daemon_factory(settings_file=_settings_file(home), http_port=0)
    served = handle.daemon.http_port
    wanted = free_port()
    code, out = await _install(home, handle.socket, "--port", str(wanted))
    assert code == 1, out
    assert f"serves port {served}, not http://127.0.0.1:{wanted}" in out
    assert "started with --http-port or --config" in out
    assert handle.daemon.http_port == served


async def test_daemon_serving_the_port_is_confirmed(daemon_factory: Any, home: Path) -> None:
    handle = await daemon_factory(http_port=0)
    port = handle.daemon.http_port
    assert isinstance(port, int) and port > 0
    code, out = await _install(home, handle.socket, "--port", str(port), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["daemon"]["ok"] is True and data["daemon"]["state"] == "serving"
    assert data["daemon"]["message"].endswith(
        f"serves http://127.0.0.1:{port}: Claude Code's hooks run through it"
    )
    # Written although served now: the next start (without the flag) serves it too.
    assert _toml(home) == {"http_port": port}
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    url = settings["hooks"]["PreToolUse"][0]["hooks"][0]["url"]
    assert url == f"http://127.0.0.1:{port}/hooks/PreToolUse"


async def test_port_defaults_to_the_one_in_hookd_toml(home: Path, tmp_path: Path) -> None:
    config = home / ".config" / "hookd"
    config.mkdir(parents=True)
    (config / "hookd.toml").write_text("http_port = 47555\n")
    code, out = await _install(home, tmp_path / "nobody.sock", "--dry-run")
    assert code == 0, out
    assert out.startswith("# would: create ")
    assert '"url": "http://127.0.0.1:47555/hooks/PreToolUse"' in out


async def test_without_port_or_hookd_toml_install_wires_the_port_the_daemon_serves(
    daemon_factory: Any, home: Path
) -> None:
    """``hookd serve --http-port P`` and nothing in hookd.toml: install wires P (asking for
    47470 instead would be refused by the daemon's own flag)."""
    handle = await daemon_factory(settings_file=_settings_file(home), http_port=0)
    port = handle.daemon.http_port
    code, out = await _install(home, handle.socket)
    assert code == 0, out
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    url = settings["hooks"]["PreToolUse"][0]["hooks"][0]["url"]
    assert url == f"http://127.0.0.1:{port}/hooks/PreToolUse"
    assert _toml(home)["http_port"] == port  # unless a flag says otherwise, so does the next start

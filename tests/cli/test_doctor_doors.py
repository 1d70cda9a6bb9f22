"""``hookctl doctor`` follows every door a wired file names, as the agent will reach it.

Files that are perfect can still send every event nowhere: no daemon on the
socket, a relay binary that is gone, an http port nobody serves (or another
hookd serves, with another token), a mod socket that is not there.  Each is a
specific error line and exit 1 — against real daemons (``hookd serve``
processes) and real files in a private HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.daemon import free_port
from hookd.cli.hookctl import main as hookctl

from .helpers import serving


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    monkeypatch.setenv("HOOKD_SOCKET", str(tmp_path / "d.sock"))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def daemon(home: Path, tmp_path: Path) -> Iterator[Path]:
    """hookd on the socket every relay here reaches, without an http port (a flag: install
    cannot have it open one)."""
    with serving(tmp_path / "d.sock", "--http-port", "None", "--log-level", "error"):
        yield tmp_path / "d.sock"


def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    capsys.readouterr()
    code = hookctl(["doctor", "--agent", "claude", "--json"])
    rows = json.loads(capsys.readouterr().out)
    return code, [r for r in rows if "will not reach hookd" in r["message"]]


def install(*args: str) -> None:
    # Exit 3 or 1 (the door is not served): what these tests then ask doctor about.
    hookctl(["claude", "install", "--user", *args])


def test_no_daemon_on_the_relays_socket(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install("--python-relay")
    code, rows = doctor(capsys)
    assert code == 1
    relay = [r for r in rows if "relay's daemon socket" in r["message"]]
    assert relay and relay[0]["severity"] == "error"
    assert relay[0]["path"] == str(home / ".claude" / "settings.json")
    assert (
        f"the relay's daemon socket {tmp_path / 'd.sock'}: hookd is not running"
        in (relay[0]["message"])
    )


def test_a_deleted_relay_binary(
    home: Path,
    tmp_path: Path,
    daemon: Path,
    compiled_relay: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    relay = tmp_path / "bin" / "hookd-relay-old"
    relay.parent.mkdir()
    shutil.copy(compiled_relay, relay)
    install("--relay", str(relay), "--port", str(free_port()))
    relay.unlink()
    code, rows = doctor(capsys)
    assert code == 1
    [gone] = [r for r in rows if "relay" in r["message"]]
    assert f"the relay {relay} does not exist (install again)" in gone["message"]


def test_a_relay_that_does_not_start(
    home: Path, tmp_path: Path, daemon: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Python relay's interpreter is there, its module is not (an old checkout)."""
    install("--python-relay")
    settings = home / ".claude" / "settings.json"
    text = settings.read_text()
    client_dir = json.dumps(str(Path(__file__).resolve().parents[2] / "client" / "hookd_client"))
    settings.write_text(text.replace(client_dir[1:-1], str(tmp_path / "gone" / "hookd_client")))
    code, rows = doctor(capsys)
    assert code == 1
    [broken] = [r for r in rows if "relay" in r["message"]]
    assert (
        "does not start (exit 1): ModuleNotFoundError: No module named 'relay'"
        in (broken["message"])
    )


def test_a_port_nobody_serves(home: Path, daemon: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    install("--port", str(port))
    code, rows = doctor(capsys)
    assert code == 1
    [http] = [r for r in rows if "http://" in r["message"]]
    assert f"nobody listens on http://127.0.0.1:{port} (hookd pid " in http["message"]
    assert "serves no http port)" in http["message"]
    assert http["message"].startswith("26 event(s) will not reach hookd, and fail open: ")


def test_a_port_served_by_another_hookd_with_another_token(
    home: Path, tmp_path: Path, daemon: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    install("--port", str(port))
    other = {"XDG_CONFIG_HOME": str(tmp_path / "other-config"), "HOOKD_SOCKET": ""}
    other_sock = tmp_path / "o.sock"
    with serving(
        other_sock, "--http-port", str(port), "--state-dir", str(tmp_path / "o"), env=other
    ):
        code, rows = doctor(capsys)
    assert code == 1
    [http] = [r for r in rows if "http://" in r["message"]]
    assert f"http://127.0.0.1:{port} refuses the file's token (401)" in http["message"]


def test_a_port_served_by_something_else(
    home: Path, daemon: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        install("--port", str(port))
        squatter.settimeout(0)  # accepts, never answers: doctor's read times out
        code, rows = doctor(capsys)
    assert code == 1
    [http] = [r for r in rows if "http://" in r["message"]]
    assert f"http://127.0.0.1:{port} does not answer as hookd does" in http["message"]


def test_a_mod_socket_nobody_serves(
    home: Path, tmp_path: Path, daemon: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "http.sock"
    install("--transport", "mod", "--http-socket", str(missing))
    code, rows = doctor(capsys)
    assert code == 1
    [mod] = [r for r in rows if "mod" in r["message"]]
    assert mod["message"].startswith("the mod's events will not reach hookd, and fail open: ")
    assert f"nobody answers on the mod's socket {missing}" in mod["message"]


def test_every_door_served_is_no_finding(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    sock = tmp_path / "d.sock"
    with serving(sock, "--http-port", str(port), "--no-watch", "--log-level", "error"):
        install("--port", str(port))
        install("--port", str(port), "--transport", "mod")
        code, rows = doctor(capsys)
        install("--port", str(port))
        code_http, rows_http = doctor(capsys)
    assert (code, rows) == (0, []) and (code_http, rows_http) == (0, [])
    assert os.environ["HOOKD_SOCKET"] == str(sock)

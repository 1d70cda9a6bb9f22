"""Shell completion scripts (run in a real bash) and ``hookctl systemd install`` (verified by
systemd-analyze), each on a private HOME."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import hookctl


def _complete(words: list[str]) -> list[str]:
    script = hookctl("completion", "bash").stdout
    probe = (
        f"{script}\nCOMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; _hookctl; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_bash_completion_of_commands_nested_commands_options_and_events() -> None:
    assert _complete(["hookctl", "st"]) == ["status", "statusline", "stop"]
    assert _complete(["hookctl", "--socket", "/x", "claude", "in"]) == ["install"]
    assert "--dry-run" in _complete(["hookctl", "claude", "install", "--"])
    assert _complete(["hookctl", "fire", "PreTo"]) == ["PreToolUse"]
    assert _complete(["hookctl", "systemd", ""]) == ["install", "uninstall", "--help"]


def test_zsh_and_fish_scripts_are_generated() -> None:
    zsh = hookctl("completion", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("autoload -U +X bashcompinit")
    fish = hookctl("completion", "fish")
    assert "complete -c hookctl -n '__fish_seen_subcommand_from claude' -a install" in fish.stdout
    for shell in ("zsh", "fish"):
        if shutil.which(shell):
            path = Path(tempfile.mkdtemp()) / f"c.{shell}"
            path.write_text(hookctl("completion", shell).stdout)
            subprocess.run([shell, "-n", str(path)], check=True)


@pytest.fixture
def short_home() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hkh", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_systemd_install_writes_units_that_verify(short_home: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI"):
            pytest.fail("systemd-analyze is missing; scripts/check installs systemd in CI")
        pytest.skip("systemd-analyze is not installed")
    runtime = short_home / "run"
    runtime.mkdir()
    env = {"HOME": str(short_home), "XDG_RUNTIME_DIR": str(runtime)}
    env["XDG_CONFIG_HOME"] = str(short_home / ".config")
    done = hookctl("systemd", "install", "--no-enable", env=env)
    assert done.returncode == 0, done.stderr
    units = short_home / ".config" / "systemd" / "user"
    service = (units / "hookd.service").read_text()
    # However hookd was installed: this interpreter runs the hookd package.
    assert f"ExecStart={sys.executable} -m hookd serve --log-format json" in service
    assert "@" not in service.replace("%h", "")
    for line in service.splitlines():
        if line.startswith("Documentation=file://"):
            assert Path(line.removeprefix("Documentation=file://")).is_file()
    verify = subprocess.run(
        [analyze, "--user", "verify", str(units / "hookd.socket"), str(units / "hookd.service")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stderr
    again = hookctl("systemd", "install", "--no-enable", env=env)
    assert "up to date" in again.stdout
    gone = hookctl("systemd", "uninstall", "--no-enable", env=env)
    assert gone.returncode == 0 and not (units / "hookd.service").exists()

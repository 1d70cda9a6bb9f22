"""``hookctl agents list``: an agent CLI is installed exactly when its binary is on the
``PATH``, whatever its ``--version`` says (real executables in a scratch ``PATH``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookd.agents.detect import detect_binary
from hookd.agents.registry import adapter_for

VERSIONS = {
    "plain": ("echo 0.169.0", "0.169.0"),
    "a sentence": ("echo 'GitHub Copilot CLI 1.0.102.'", "1.0.102"),
    "in brackets": ("echo 'gemini (0.61.0)'", "0.61.0"),
    "no version word": ("echo 'unknown build'", None),
    "fails": ("echo oops >&2; exit 3", None),
    "nothing": ("exit 0", None),
}


@pytest.mark.parametrize("case", list(VERSIONS))
def test_a_binary_on_the_path_is_installed_whatever_its_version_says(
    tmp_path: Path, case: str
) -> None:
    script, version = VERSIONS[case]
    binary = tmp_path / "agentcli"
    binary.write_text(f"#!/bin/sh\n{script}\n")
    binary.chmod(0o755)
    found = detect_binary("agentcli", path=str(tmp_path))
    assert found.installed is True
    assert found.binary == str(binary)
    assert found.version == version


def test_a_binary_not_on_the_path_is_not_installed(tmp_path: Path) -> None:
    (tmp_path / "agentcli").write_text("#!/bin/sh\necho 1.0\n")  # not executable
    found = detect_binary("agentcli", path=os.pathsep.join([str(tmp_path), str(tmp_path / "x")]))
    assert found.installed is False and found.binary is None and found.version is None


GEMINI_CASES = {
    "its npm package names it": (
        '{"name": "@google/gemini-cli", "version": "0.61.0"}',
        "",
        "0.61.0",
    ),
    "another package: --version": ('{"name": "other", "version": "9"}', "echo 0.62.1", "0.62.1"),
    "no package: --version's last line": (None, "echo banner; echo 0.63.0", "0.63.0"),
    "no package, --version fails": (None, "echo 1.0; exit 1", None),
}


@pytest.mark.parametrize("case", list(GEMINI_CASES))
def test_gemini_is_installed_with_its_packages_version_else_its_own_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    manifest, script, version = GEMINI_CASES[case]
    package = tmp_path / "lib" / "gemini-cli"
    (package / "dist").mkdir(parents=True)
    if manifest is not None:
        (package / "package.json").write_text(manifest)
    real = package / "dist" / "index.js"
    real.write_text(f"#!/bin/sh\n{script}\n")
    real.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to(real)  # as npm links it
    monkeypatch.setenv("PATH", str(bin_dir))
    found = adapter_for("gemini").detect()
    assert found.installed is True and found.binary == str(bin_dir / "gemini")
    assert found.version == version

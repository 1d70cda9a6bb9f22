"""hookd-client is its own distribution: `pip wheel client/` builds a wheel that holds only
hookd_client and depends on msgspec alone (an agent can depend on it without hookd).

hookd's own wheel (issue 31, item 6) holds hookd alone, depends on hookd-client, ships the
compiled relay as the script ``hookd-relay-c`` and the systemd units: installed in a fresh
venv it gives every command, and ``hookctl agents install`` wires the compiled relay."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest

import hookd

ROOT = Path(__file__).resolve().parents[2]


def test_client_project_matches_hookd() -> None:
    client = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    assert client["name"] == "hookd-client"
    assert client["version"] == hookd.__version__
    assert client["dependencies"] == ["msgspec>=0.19"]


@pytest.mark.slow
def test_pip_wheel_client_builds_a_msgspec_only_wheel(tmp_path: Path) -> None:
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources.
    source = tmp_path / "client"
    shutil.copytree(ROOT / "client", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
         str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("hookd_client-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    packages = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert packages == {"hookd_client"}
    assert "hookd_client/py.typed" in names
    requires = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert requires == ["msgspec>=0.19"]


# --- hookd's wheel -------------------------------------------------------------------------

SOURCES = [
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "LICENSE",
    "README.md",
    "build_backend",
    "hookd",
    "client",
    "relay",
    "systemd",
]
"""What building hookd reads (scripts/build-relay too); the sdist must carry what the
wheel needs, which building the wheel *from the sdist* proves."""


def test_the_top_level_is_the_design_cards() -> None:
    for name in ("pyproject.toml", "hookd", "client", "tests", "systemd", "README.md", "LICENSE"):
        assert (ROOT / name).exists(), name
    assert sorted(p.name for p in (ROOT / "systemd").iterdir()) == ["hookd.service", "hookd.socket"]
    assert (ROOT / "client" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert not (ROOT / "hookd" / "units").exists()


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-4000:])
    return done


def _build(source: Path, out: Path) -> None:
    """``python -m build``: the sdist, then the wheel built from that sdist — with this
    venv's setuptools (the dev extras' ``setuptools>=77``), not a fresh one per build."""
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)])


@pytest.mark.slow
def test_the_built_wheels_install_every_command_and_the_compiled_relay(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        elif path.exists():
            shutil.copy2(path, source / name)
    (source / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "build-relay", source / "scripts" / "build-relay")
    dist = tmp_path / "dist"
    _build(source, dist)
    _build(source / "client", dist)
    compiler = shutil.which(os.environ.get("CC", "cc")) is not None
    [wheel] = dist.glob("hookd-*.whl")
    [client_wheel] = dist.glob("hookd_client-*.whl")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = email.parser.Parser().parsestr(
            archive.read("hookd-0.1.0.dist-info/METADATA").decode()
        )
    # hookd alone: hookd_client and hookd-relay are hookd-client's (a dependency, not a copy).
    assert not [n for n in names if n.startswith("hookd_client")]
    requires = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert "hookd-client==0.1.0" in requires
    assert {"hookd/units/hookd.service", "hookd/units/hookd.socket"} <= set(names)
    assert "hookd-0.1.0.dist-info/licenses/LICENSE" in names
    relay_member = "hookd-0.1.0.data/scripts/hookd-relay-c"
    if compiler:
        assert relay_member in names and not wheel.name.endswith("-any.whl"), wheel.name
    else:
        assert relay_member not in names and wheel.name.endswith("-py3-none-any.whl")

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    into = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    pip = [*into, "install", "-q"]
    _run([*pip, str(client_wheel), str(wheel)])
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    for command in ("hookd", "hookctl"):
        _run([str(venv / "bin" / command), "--help"], env=env)
    for relay in ("hookd-relay", *(["hookd-relay-c"] if compiler else [])):
        # Both relays answer --help with their usage (exit 0 since issue 31 item 7; a usage
        # error, exit 1, before it): what matters here is that the command is installed.
        done = subprocess.run(
            [str(venv / "bin" / relay), "--help"], capture_output=True, text=True, env=env
        )
        assert "usage:" in done.stdout + done.stderr and done.returncode in (0, 1), done
    wired = _run(
        [str(venv / "bin" / "hookctl"), "agents", "install", "codex", "--dry-run"], env=env
    ).stdout
    if compiler:
        assert f"{venv}/bin/hookd-relay-c --agent codex" in wired, wired
    else:
        assert "the compiled relay (hookd-relay-c) is not installed" in wired, wired
    units = _run([str(venv / "bin" / "hookctl"), "systemd", "install", "--dry-run"], env=env)
    assert f"ExecStart={venv}/bin/python -m hookd" in units.stdout, units.stdout

    # Uninstalling hookd leaves hookd-client whole (they no longer share files) …
    _run([*into, "uninstall", "-q", "-y", "hookd"])
    _run([str(venv / "bin" / "python"), "-c", "import hookd_client.relay"], env=env)
    assert (venv / "bin" / "hookd-relay").exists()
    assert not (venv / "bin" / "hookd-relay-c").exists()
    # … and hookd without hookd-client says what is missing and how to get it back.
    _run([*pip, str(wheel)])
    _run([*into, "uninstall", "-q", "-y", "hookd-client"])
    broken = subprocess.run(
        [str(venv / "bin" / "hookctl"), "--help"], capture_output=True, text=True, env=env
    )
    assert broken.returncode != 0
    assert "hookd needs the hookd-client distribution" in broken.stderr

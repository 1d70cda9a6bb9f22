"""hookd-client is its own distribution: `pip wheel client/` builds a wheel that holds only
hookd_client and depends on msgspec alone (an agent can depend on it without hookd)."""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

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

"""The build steps of hookd that ``pyproject.toml`` cannot declare.

- **The compiled relay.**  ``relay/hookd-relay.c`` is compiled by
  ``scripts/build-relay`` (the one place its flags live) while the wheel is
  built, and installed as the script ``hookd-relay-c`` — in the environment's
  ``bin`` beside ``hookd`` and ``hookctl``, where ``hookctl claude install`` and
  ``hookctl agents install`` find it.  Such a wheel holds a binary, so it is
  tagged for its platform (``py3-none-linux_x86_64``).  Without a C compiler the
  wheel is pure, holds no relay, and the build says so; ``hookctl … install``
  then wires the Python relay and says so too.
- **hookd-client is a dependency**, not a copy: ``hookd_client`` and
  ``hookd-relay`` belong to the ``hookd-client`` distribution (``client/``), so
  uninstalling hookd leaves an agent's hookd-client whole.  Installed from a
  checkout (``pip install .``, ``pipx install .``) the requirement points at the
  checkout's ``client/`` (a file URL: nothing comes from an index); built from
  an sdist — a release — it is ``hookd-client==<this version>``.  The editable
  install of a checkout (``pip install -e .``) maps ``client/hookd_client`` and
  ``hookd-relay`` itself instead (``build_backend/hookd_build.py``), so that
  edits to the client take effect and the dev setup needs no second install.
- **The systemd units** live in ``systemd/`` and are shipped in the wheel as
  ``hookd/units/`` (``hookctl systemd install`` reads them from there, or from
  ``systemd/`` in a checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from setuptools import find_packages, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.command.install_scripts import install_scripts
from setuptools.dist import Distribution

# isort: split
# setuptools' own distutils: imported after setuptools, which provides it.
from distutils.command.build_scripts import build_scripts

ROOT = Path(__file__).resolve().parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
EDITABLE = os.environ.get("HOOKD_BUILD_EDITABLE") == "1"
RELEASE = (ROOT / "PKG-INFO").exists() or "sdist" in sys.argv
"""Built from an sdist (or building one): depend on the released hookd-client."""
RELAY = "hookd-relay-c"
UNITS = ("hookd.service", "hookd.socket")

DEPENDENCIES = [
    "trio>=0.27",
    "msgspec>=0.19",
    "watchfiles>=0.24",
    "structlog>=24.1",
    "httpx>=0.27",
    "h11>=0.14",
    "PyYAML>=6.0",
]


def _say(message: str) -> None:
    print(f"hookd: {message}", file=sys.stderr)


def _compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "cc"))


def _client_requirement() -> list[str]:
    if EDITABLE:
        return []  # the editable install maps client/hookd_client itself
    client = ROOT / "client"
    if not RELEASE and (client / "pyproject.toml").is_file():
        return [f"hookd-client @ {client.as_uri()}"]
    return [f"hookd-client=={VERSION}"]


class HookdDistribution(Distribution):
    """Always has a script to build and install: the compiled relay.  Where a C compiler
    is found the relay is a binary, so the wheel is not pure (and its modules sit at the
    wheel's root, where a platform wheel's belong)."""

    def has_scripts(self) -> bool:
        return True

    def has_ext_modules(self) -> bool:
        return _compiler() is not None and not EDITABLE


class BuildRelay(build_scripts):
    """``build_scripts`` that also compiles ``relay/hookd-relay.c`` into ``hookd-relay-c``."""

    def run(self) -> None:
        super().run()
        self.mkpath(self.build_dir)
        out = Path(self.build_dir).resolve() / RELAY
        if _compiler() is None:
            _say(
                f"no C compiler ({os.environ.get('CC', 'cc')}): the compiled relay is not "
                "built; hookctl claude/agents install will wire the Python relay (~10x "
                "slower to start) and say so"
            )
            return
        script = ROOT / "scripts" / "build-relay"
        done = subprocess.run(["bash", str(script), str(out)], check=False)
        if done.returncode != 0 or not out.is_file():
            _say("the compiled relay did not build; the Python relay will be wired instead")

    def get_source_files(self) -> list[str]:
        """What the sdist needs to build the relay (the distribution has no other scripts)."""
        return [*(self.scripts or []), "relay/hookd-relay.c", "scripts/build-relay"]

    def get_outputs(self) -> list[str]:
        relay = os.path.join(self.build_dir, RELAY)
        return [relay] if os.path.exists(relay) else []


class InstallRelay(install_scripts):
    """``install_scripts`` that installs what :class:`BuildRelay` built (setuptools' copies
    only the distribution's listed scripts, and hookd lists none)."""

    def run(self) -> None:
        super().run()
        self.run_command("build_scripts")
        if os.path.isdir(self.build_dir):
            self.outfiles = [*self.outfiles, *self.copy_tree(self.build_dir, self.install_dir)]


class BuildPy(build_py):
    """``build_py`` that ships ``systemd/`` as the package data ``hookd/units/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # the checkout's systemd/ is read in place
        target = Path(self.build_lib) / "hookd" / "units"
        self.mkpath(str(target))
        for name in UNITS:
            self.copy_file(str(ROOT / "systemd" / name), str(target / name))


class Wheel(bdist_wheel):
    """A wheel that holds the compiled relay is tagged for its platform only: the relay
    is C, the rest is Python for any CPython >= 3.11 (``py3-none-linux_x86_64``)."""

    def get_tag(self) -> tuple[str, str, str]:
        python, abi, plat = super().get_tag()
        return ("py3", "none", plat) if not self.root_is_pure else (python, abi, plat)


def _layout() -> dict[str, Any]:
    packages = find_packages(str(ROOT), include=["hookd", "hookd.*"])
    scripts = ["hookd = hookd.cli.hookd_main:main", "hookctl = hookd.cli.hookctl:main"]
    package_dir: dict[str, str] = {}
    if EDITABLE:
        client = find_packages(str(ROOT / "client"), include=["hookd_client", "hookd_client.*"])
        packages += client
        package_dir = {"hookd_client": "client/hookd_client"}
        scripts.append("hookd-relay = hookd_client.relay:main")
    return {
        "packages": packages,
        "package_dir": package_dir,
        "entry_points": {"console_scripts": scripts},
    }


setup(
    distclass=HookdDistribution,
    install_requires=DEPENDENCIES + _client_requirement(),
    cmdclass={
        "build_scripts": BuildRelay,
        "install_scripts": InstallRelay,
        "build_py": BuildPy,
        "bdist_wheel": Wheel,
    },
    **_layout(),
)

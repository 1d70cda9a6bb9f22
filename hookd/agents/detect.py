"""Is an agent's CLI on this machine, and which version (``hookctl agents list``)."""

from __future__ import annotations

import shutil
import subprocess

from hookd.agents.base import Installation

__all__ = ["detect_binary"]


def detect_binary(binary: str, path: str | None = None) -> Installation:
    """``binary`` on ``PATH`` (or ``path``) and the first version-like word of its ``--version``.

    A CLI that is found but cannot say its version is still installed (the
    version is then unknown): ``--version`` failing is not the agent missing.
    """
    found = shutil.which(binary, path=path)
    if found is None:
        return Installation(installed=False)
    try:
        done = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return Installation(installed=True, binary=found)
    words = done.stdout.replace("(", " ").split()
    # "GitHub Copilot CLI 1.0.102." — a sentence's full stop is not part of the version.
    version = next((w.rstrip(".,;:)") for w in words if w[:1].isdigit()), None)
    return Installation(installed=True, binary=found, version=version)

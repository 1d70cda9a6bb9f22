"""Shared pieces of the reliability tests: the bench scripts as modules, /proc scans, events."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "reliability"
FIXTURES = ROOT / "tests" / "data" / "cc-fixtures"


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` loaded as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def event(name: str = "PreToolUse-Bash", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(changes)
    return data


def processes_with(marker: str) -> list[int]:
    """PIDs whose environment contains ``marker`` (e.g. ``RELIABILITY_MARK=<uuid>``)."""
    needle = marker.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            data = Path(f"/proc/{entry.name}/environ").read_bytes()
        except OSError:
            continue
        if any(item == needle for item in data.split(b"\0")):
            found.append(int(entry.name))
    return found


def rss_kb(pid: int | None = None) -> int:
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

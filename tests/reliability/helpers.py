"""Shared pieces of the reliability tests: the bench scripts as modules, /proc scans, events."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from support.events import fixture_event as event
from support.processes import processes_with_env as processes_with

__all__ = ["DATA", "FIXTURES", "ROOT", "bench_module", "event", "processes_with", "rss_kb"]

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


def rss_kb(pid: int | None = None) -> int:
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

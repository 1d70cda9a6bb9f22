"""hookctl commands that talk to a running daemon (filled in by the daemon work)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_commands(sub: Any) -> None:
    """Register daemon-backed subcommands on hookctl's parser."""


def fire(args: argparse.Namespace) -> int:
    print("hookctl fire: the daemon client is not built yet; use --local", file=sys.stderr)
    return 3

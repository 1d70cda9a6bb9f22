"""docs/scaling.png from row 10; skipped (with a message) when matplotlib is missing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def scaling_png(row: dict[str, Any], path: Path, subtitle: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: docs/scaling.png not drawn", file=sys.stderr)
        return False
    points = row["hookd"]["points"]
    floor = row["baseline"]["p50_us"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for matching, style in ((False, "o-"), (True, "s-")):
        pts = [p for p in points if p["axis"] == "groups" and p["matching"] == matching]
        label = "matching (matcher + if rule)" if matching else "non-matching matchers"
        left.plot([p["n"] for p in pts], [p["p50_us"] for p in pts], style, label=label)
    left.axhline(floor, color="grey", linestyle="--", label="trio+msgspec floor")
    left.set_xscale("log")
    left.set_xlabel("configured matcher groups (PreToolUse)")
    left.set_ylabel("event round trip p50 (µs)")
    left.legend()
    pts = [p for p in points if p["axis"] == "sessions"]
    right.plot([p["n"] for p in pts], [p["p50_us"] for p in pts], "o-", label="hookd")
    right.axhline(floor, color="grey", linestyle="--", label="trio+msgspec floor")
    right.set_xscale("log")
    right.set_xlabel("sessions (events round-robin)")
    right.legend()
    fig.suptitle(f"hookd per-event cost — {subtitle}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True

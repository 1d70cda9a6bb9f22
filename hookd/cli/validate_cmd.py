"""``hookctl validate FILE…``: every error of every file, with file, line and JSON path."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hookd.config.assemble import explicit_sources
from hookd.config.loader import load_source
from hookd.config.model import ConfigError

__all__ = ["cmd_validate"]

EXIT_OK, EXIT_ERROR = 0, 1


def cmd_validate(args: argparse.Namespace) -> int:
    """Every error of every file (file:line: JSON path: what), then warnings; exit 1 on errors."""
    errors = 0
    report: list[dict[str, Any]] = []
    for spec in explicit_sources(args.files):
        loaded = load_source(spec)
        count = sum(len(g.hooks) for _, _, g in loaded.groups)
        problems = [str(e) for e in loaded.errors]
        if not loaded.exists:
            problems = [f"{spec.path}: no such file"]
        errors += len(problems)
        report.append(
            {
                "file": str(spec.path),
                "ok": not problems,
                "hooks": count,
                "errors": [_error_json(e) for e in loaded.errors]
                if loaded.exists
                else [{"message": "no such file", "line": None, "path": None}],
                "warnings": [_error_json(w) for w in loaded.warnings],
            }
        )
        if args.json:
            continue
        for problem in problems:
            print(problem)
        for warning in loaded.warnings:
            print(f"warning: {warning}")
        if not problems:
            print(f"{spec.path}: ok ({count} hook{'s' if count != 1 else ''})")
        elif loaded.exists:
            print(f"{spec.path}: not applied (a file with an error runs none of its hooks)")
    if args.json:
        print(json.dumps(report, indent=2))
    return EXIT_ERROR if errors else EXIT_OK


def _error_json(error: ConfigError) -> dict[str, Any]:
    return {"message": error.message, "line": error.line, "path": error.path}

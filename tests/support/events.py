"""Event inputs: the real ones Claude Code sent (tests/data/cc-fixtures), fields changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["CC_FIXTURES", "context_output", "deny_output", "fixture_event"]

CC_FIXTURES = Path(__file__).resolve().parent.parent / "data" / "cc-fixtures"
"""Real hook inputs as Claude Code 2.1.330 sent them."""


def fixture_event(name: str = "PreToolUse-Bash", **changes: Any) -> dict[str, Any]:
    """The recorded input ``name`` (``PreToolUse-Bash``, ``Stop``, …) with ``changes`` applied."""
    data: dict[str, Any] = json.loads((CC_FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    data.update(changes)
    return data


def deny_output(reason: str) -> dict[str, Any]:
    """A PreToolUse callback's answer that denies the tool call with ``reason``."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def context_output(text: str) -> dict[str, Any]:
    """A PreToolUse callback's answer that adds ``text`` as context for the model."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}

"""The hooks a real-CLI scenario configures: ``scripted_hook.py`` runs, in groups.

The e2e modules that drive an agent with scripted hooks (Gemini, Qwen, opencode)
write the same hook in the agent's own file and in hookd's; these build it once.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

SCRIPTED_HOOK = Path(__file__).resolve().parent / "scripted_hook.py"


def scripted(records: Path, label: str, *args: str) -> str:
    """The command line of a scripted hook that appends its run to ``records`` as ``label``."""
    return shlex.join(
        [sys.executable, str(SCRIPTED_HOOK), "--record", str(records), "--label", label, *args]
    )


def group(command: str, matcher: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """One group of one command hook (Claude Code's shape)."""
    handler: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    found: dict[str, Any] = {"hooks": [handler]}
    if matcher is not None:
        found["matcher"] = matcher
    return found


def tail(path: Path) -> str:
    """The end of a log, for a failure message."""
    return path.read_text(errors="replace")[-3000:] if path.exists() else "(none)"


def js(value: Any) -> str:
    return json.dumps(value)

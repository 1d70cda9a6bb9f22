"""Every agent's stop reaches the hooks with Claude Code's ``stop_hook_active`` (issue 32).

The field is how a Stop hook that keeps the agent working avoids looping for ever:
``if data["stop_hook_active"]: exit 0``.  For every agent's recorded (or documented)
stop input, the decoded event carries it as a bool, ``true`` exactly when the agent
said this stop follows a stop hook's continuation (its own ``stop_hook_active``, or
Cursor's ``loop_count``) — a field missing, or ``true`` on a first stop, makes such a
hook crash or never block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookd.agents.base import Adapter
from hookd.agents.registry import ADAPTERS

DATA = Path(__file__).resolve().parents[1] / "data" / "agents"
CLAUDE_CODE = DATA.parent / "cc-fixtures"  # Claude Code 2.1.330's own inputs
_STOPS = ("Stop", "SubagentStop")


def _adapter_of(folder: str) -> Adapter | None:
    """``cline-cli-3.0.65`` → cline; ``claude-agent-sdk-…`` → the Agent SDK's adapter."""
    named = [a for a in ADAPTERS if folder.startswith(a.name)]
    return max(named, key=lambda a: len(a.name)) if named else None


def _cases() -> list[tuple[Adapter, str, Path]]:
    cases = []
    folders = [CLAUDE_CODE, *sorted(p for p in DATA.iterdir() if p.is_dir())]
    for folder in folders:
        adapter = _adapter_of("claude" if folder == CLAUDE_CODE else folder.name)
        if adapter is None:
            continue
        specs = {s.native: s for s in adapter.events}
        for path in sorted(folder.glob("*.json")):
            native = path.stem if path.stem in specs else path.stem.partition("-")[0]
            spec = specs.get(native)
            if spec is not None and spec.canonical in _STOPS:
                cases.append((adapter, native, path))
    return cases


def _continues(raw: dict[str, Any]) -> bool:
    return raw.get("stop_hook_active") is True or int(raw.get("loop_count") or 0) > 0


@pytest.mark.parametrize(
    ("adapter", "native", "path"),
    _cases(),
    ids=[f"{a.name}-{p.parent.name}-{p.stem}" for a, _, p in _cases()],
)
def test_a_stop_says_whether_it_continues_a_stop_hook(
    adapter: Adapter, native: str, path: Path
) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    event = adapter.decode(native, raw)
    assert event.input["stop_hook_active"] is _continues(raw), (adapter.name, path.name)


def test_every_agent_with_a_stop_has_a_stop_input_here() -> None:
    covered = {a.name for a, _, _ in _cases()}
    with_stops = {a.name for a in ADAPTERS if any(s.canonical in _STOPS for s in a.events)}
    assert with_stops - covered <= {"kilo", "opencode"}, with_stops - covered  # no stop fixture

"""Decode → real command hooks → the engine's result: what every adapter's tests fire through.

An adapter's tests check its two ends — the agent's input decoded, hookd's answer
encoded in the agent's words — and between them the real engine runs real command
hooks (Claude Code's format) on the decoded event, the same way for every agent:
written once, here.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from engine.vectors import clean_env, command_engine
from hookd.agents.base import AgentEvent
from hookd.config.assemble import load_config
from hookd.engine.engine import SessionState
from hookd_client.events import decode_event
from hookd_client.results import FireResult


def group(script: str, matcher: str | None = None) -> dict[str, Any]:
    """One hook group running ``script`` with ``sh -c``, on ``matcher`` if given."""
    found: dict[str, Any] = {
        "hooks": [{"type": "command", "command": f"sh -c {shlex.quote(script)}"}]
    }
    if matcher is not None:
        found["matcher"] = matcher
    return found


def answer(event: str, **specific: Any) -> str:
    """A script printing ``event``'s ``hookSpecificOutput`` with these fields."""
    return "echo " + shlex.quote(
        json.dumps({"hookSpecificOutput": {"hookEventName": event, **specific}})
    )


async def fire_decoded(event: AgentEvent, hooks: dict[str, Any], tmp_path: Path) -> FireResult:
    """Run ``hooks`` on the decoded ``event`` through a real engine (files under
    ``tmp_path``), a fresh session, a clean environment."""
    config = load_config(None, str(tmp_path), [json.dumps({"hooks": hooks})])
    assert not config.errors, config.errors
    engine = command_engine(
        input_file_dir=str(tmp_path),
        spill_dir=str(tmp_path / "spill"),
        env_file_dir=str(tmp_path / "envfiles"),
    )
    return await engine.fire(
        config, decode_event(event.input, event.event), session=SessionState(), env=clean_env()
    )

"""What ``hookctl doctor`` says of an agent's own hook file: only what is true of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookd.agents.registry import adapter_for
from hookd.agents.windsurf import EVENTS

EVENT = EVENTS[0].native


@pytest.mark.parametrize(
    ("entry", "warned"),
    [
        ({"command": "x", "matcher": "Bash"}, True),
        ({"command": "x", "matcher": ""}, True),
        ({"command": "x"}, False),
        ({"command": "x", "matcher": None}, False),
        ("not an object", False),
    ],
)
def test_windsurf_warns_of_a_matcher_exactly_where_an_entry_has_one(
    tmp_path: Path, entry: object, warned: bool
) -> None:
    """Windsurf has no matchers: an entry that names one runs for every action, and doctor
    says so for that entry — and for no other."""
    path = tmp_path / "hooks.json"
    text = json.dumps({"hooks": {EVENT: [{"command": "plain"}, entry]}})
    found = [f for f in adapter_for("windsurf").lint(path, text) if "matcher" in f.message]
    assert [f.where for f in found] == ([f"hooks.{EVENT}[1].matcher"] if warned else [])

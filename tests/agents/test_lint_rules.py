"""What ``hookctl doctor`` says of an agent's own hook file: only what is true of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.agents.windsurf import EVENTS
from hookd.installers.agent_doctor import lint_agent

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


@pytest.mark.parametrize("agent", [a.name for a in ADAPTERS if a.name != "claude"])
def test_a_file_hookd_wired_itself_is_clean_to_doctor(
    tmp_path: Path, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every agent's file as ``hookctl agents install`` writes it: doctor reads it (each
    adapter's own lint and the shared checks) and finds no error and nothing at any place
    in it — only what concerns the agent as a whole (its trust gate, said because hookd
    cannot see whether the user passed it)."""
    adapter = adapter_for(agent)
    home, project = tmp_path / "home", tmp_path / "proj"
    monkeypatch.setenv("HOME", str(home))  # the user's own files, as doctor finds them
    files = adapter.install_files("user", home, project)
    command = f"hookd-relay --agent {agent}"
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(adapter.wire_file(path, None, lambda spec: f"{command} {spec.native}"))
    found = lint_agent(adapter, home, project, scopes=("user",))
    assert [f for f in found if f.severity == "error" or f.where] == [], found
    said = "\n".join(f.message for f in found)
    for step in adapter.trust_steps("user") if files else []:
        assert step in said, (step, found)


@pytest.mark.parametrize(
    ("text", "holds_hooks"),
    [
        ("{}", False),
        ('{"hooks": {}}', False),
        ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}', True),
        ('{"hooks": {"Stop": [', True),  # does not parse: it may hold hooks, say the gate
    ],
)
def test_codex_s_trust_gate_is_said_for_every_file_that_may_hold_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, holds_hooks: bool
) -> None:
    """Codex skips hooks it has not trusted without a word: doctor says so for any hook
    file that holds (or, unparseable, may hold) hooks, and not for one that holds none."""
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(text)
    found = adapter_for("codex").lint(path, text)
    assert any("trusted no hook" in f.message for f in found) == holds_hooks, found

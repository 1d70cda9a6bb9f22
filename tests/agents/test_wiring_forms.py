"""hookd's own entries are known by every relay command the installer writes, in every agent's
file; a user's command that only looks like one is the user's.

``hookctl agents install`` wires each event to the compiled relay, or, without a C
compiler, to the Python relay run from its bytecode (``python -I -S -c "…import
relay…"``), with or without ``--socket``/``--fail-closed``.  Whichever it wrote, the
adapter must see its own entry (``is_wired``; ``read_hooks`` never hands it back as a
user's hook to move, which would make hookd call itself), for every agent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hookd.agents.base import Adapter, Scope
from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.installers.agent_install import Relay, apply_plan, plan_install

FORMS = {
    "compiled": Relay(binary="/opt/hookd/bin/hookd-relay-c"),
    "python": Relay(binary=None, python="/usr/bin/python3", script="/x/hookd_client/relay.py"),
    "socket-fail-closed": Relay(binary="/usr/local/bin/hookd-relay", socket="/run/h.sock"),
}
AGENTS = [a.name for a in ADAPTERS if a.name != "claude" and a.hook_files("user", Path("/h"), None)]


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("agent", AGENTS)
def test_hookd_s_own_entries_are_known_in_every_relay_form(
    tmp_path: Path, agent: str, form: str
) -> None:
    adapter, relay = adapter_for(agent), FORMS[form]
    closed = form == "socket-fail-closed"
    for path in adapter.install_files("user", tmp_path, None):
        path.parent.mkdir(parents=True, exist_ok=True)
        text = adapter.wire_file(
            path, None, lambda spec: relay.command(agent, spec.native, fail_closed=closed)
        )
        path.write_text(text)
        assert adapter.is_wired(text), (path, text)
        assert adapter.read_hooks(path).hooks == {}, (path, text)


def test_a_gemini_hook_that_only_looks_like_hookd_s_is_the_users(tmp_path: Path) -> None:
    """An ``--agent`` flag or a relay-like name of the user's own is not hookd's entry:
    ``read_hooks`` hands it over to be moved, beside hookd's own entry, which it does not."""
    gemini = adapter_for("gemini")
    ours = {"type": "command", "command": "hookd-relay --agent gemini BeforeTool"}
    for command in ("my-guard --agent strict", "hookd-relay-wrapper.sh", "echo import relay"):
        theirs = {"type": "command", "command": command}
        path = tmp_path / "settings.json"
        path.write_text(
            json.dumps({"hooks": {"BeforeTool": [{"hooks": [ours]}, {"hooks": [theirs]}]}})
        )
        moved = gemini.read_hooks(path).hooks
        assert [h["command"] for g in moved["PreToolUse"] for h in g["hooks"]] == [command]


REPLACING_PER_EVENT = {"factory"}
"""Agents whose hook files replace one another per event instead of adding up."""


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("agent", AGENTS)
def test_an_install_sends_each_event_to_hookd_once_across_all_the_agent_s_files(
    tmp_path: Path, agent: str, scope: Scope
) -> None:
    """An agent that reads several hook files and runs every one (Copilot's hooks/*.json and
    settings.json) must find hookd's entry for an event in exactly one of them, or each hook
    would run twice per event.  Droid merges its two files per event, ``hooks.json``'s groups
    *replacing* ``settings.json``'s (seen at 0.225.2): there each file holds the entry at
    most once, and the one in ``settings.json`` never runs beside the other."""
    adapter = adapter_for(agent)
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir()
    apply_plan(plan_install(adapter, scope, FORMS["compiled"], home=home, project=project))
    texts = [p.read_text() for p in adapter.hook_files(scope, home, project) if p.exists()]
    for spec in adapter.events:
        entry = re.compile(rf"--agent {re.escape(agent)} {re.escape(spec.native)}(?![\w-])")
        counts = [len(entry.findall(text)) for text in texts]
        if agent in REPLACING_PER_EVENT:
            assert max(counts) <= 1, spec.native
        else:
            assert sum(counts) <= 1, spec.native
    assert any("--agent" in text for text in texts)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=[a.name for a in ADAPTERS])
def test_each_scope_s_files_are_its_own(tmp_path: Path, adapter: Adapter) -> None:
    """A user install touches only files under the home, a project install only files
    under the project (none without one): a scope read the wrong way round would wire
    the user's agent from a repository, or a repository's agent from the user's home."""
    home, project = tmp_path / "home", tmp_path / "project"
    roots: list[tuple[Path, Scope]] = [(home, "user"), (project, "project")]
    for root, scope in roots:
        for files in (adapter.hook_files, adapter.install_files):
            paths = files(scope, home, project)
            assert all(p.is_relative_to(root) for p in paths), (adapter.name, scope, paths)
    for files in (adapter.hook_files, adapter.install_files):
        try:  # no project: no file, or an error saying one is needed (Gemini's)
            assert files("project", home, None) == [], adapter.name
        except ValueError as exc:
            assert "project" in str(exc), exc


def test_a_group_that_is_not_a_hook_group_is_left_out_with_its_place_said(
    tmp_path: Path,
) -> None:
    """In every agent's file that install moves hooks from, an entry under an event that
    is no hook group (a string, an object without a ``hooks`` list) is not moved, and
    install says which one: a hook the user meant to run is never dropped without a word."""
    from hookd.installers.agent_install import read_native

    checked = 0
    for adapter in ADAPTERS:
        home, project = tmp_path / adapter.name, tmp_path / adapter.name / "p"
        for path in dict.fromkeys(adapter.install_files("user", home, project)):
            path.parent.mkdir(parents=True, exist_ok=True)
            spec = adapter.events[0]
            good = {"hooks": [{"type": "command", "command": "guard.sh", "bash": "guard.sh"}]}
            for event in dict.fromkeys([spec.native, spec.canonical]):
                groups = {event: [good, "not a group", {"matcher": "Bash"}]}
                for shape in ({"hooks": groups}, groups):
                    path.write_text(json.dumps(shape))
                    try:
                        native = read_native(adapter, path)
                    except ValueError:
                        continue
                    if sum(len(g) for g in native.hooks.values()) != 1:
                        continue  # not a file this agent moves hooks from, in this shape
                    checked += 1
                    said = "\n".join(native.warnings)
                    for i in (1, 2):
                        assert f"{event}[{i}]" in said, (adapter.name, path.name, said)
    assert checked >= 5, checked

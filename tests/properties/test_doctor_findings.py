"""What ``hookctl doctor`` says of each agent's files and of hookd's config, over every agent.

Doctor exists for the hooks that fail without a word (``installers/agent_doctor.py``),
so each of its findings is a rule over a whole class, stated here for every agent
rather than for the one file a bug report had:

- every hook of every group whose type hookd's config has no such thing as (or that
  means something else in the agent) is said, at its own place — one such hook does not
  hide the next;
- a timeout is called a slip of unit exactly past the agent's bound: under a second for
  an agent that counts milliseconds, an hour or more for one that counts seconds;
- every hookd entry of a wired file is checked against hookd's config for
  ``--fail-closed``, at its own line, whatever precedes it on that line (an entry for an
  event the agent does not have, a file written on one line);
- a matcher in hookd's config naming a tool by some agent's native name is said once,
  naming Claude Code's name; Claude Code's own names never are.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from hookd.agents.base import Adapter, EventSpec
from hookd.agents.registry import ADAPTERS, adapter_for, names
from hookd.installers.agent_doctor import (
    HOOKD_HOOK_TYPES,
    fail_closed_findings,
    hookd_config_findings,
    lint_agent,
    lint_file,
)
from hookd.installers.agent_install import read_native


def _claude_shaped(
    adapter: Adapter, path: Path, handlers: list[dict[str, Any]], matcher: str = ""
) -> str | None:
    """A file at ``path`` holding one group of ``handlers`` under the agent's first event,
    in the first of Claude Code's shapes the agent reads hooks from (wrapped in ``hooks``,
    or the file being the ``hooks`` object itself); None when it moves none from there."""
    spec = adapter.events[0]
    events = dict.fromkeys([spec.native, spec.canonical])  # Copilot reads Claude's names too
    shapes = [{"hooks": {e: [{"matcher": matcher, "hooks": handlers}]}} for e in events]
    for shape in [*shapes, *(s["hooks"] for s in shapes)]:
        text = json.dumps(shape, indent=2) + "\n"
        path.write_text(text)
        try:
            native = read_native(adapter, path)
        except ValueError:
            continue
        if sum(len(g) for g in native.hooks.values()):
            return text
    return None


def _movers(tmp_path: Path) -> list[tuple[Adapter, Path]]:
    """Every agent with a hook file it moves Claude-shaped hooks from: (adapter, file)."""
    out = []
    for name in names():
        adapter = adapter_for(name)
        home, project = tmp_path / name / "home", tmp_path / name
        paths = [
            *adapter.hook_files("user", home, project),
            *adapter.install_files("user", home, project),
        ]
        for path in dict.fromkeys(paths):
            path.parent.mkdir(parents=True, exist_ok=True)
            probe = [{"type": "command", "command": "x", "bash": "x"}]
            if _claude_shaped(adapter, path, probe) is not None:
                out.append((adapter, path))
                break
    return out


def test_every_hook_of_a_type_hookd_lacks_is_said_at_its_place(tmp_path: Path) -> None:
    movers = _movers(tmp_path)
    assert len(movers) >= 5, [a.name for a, _ in movers]
    for adapter, path in movers:
        kinds = [*adapter.foreign_hook_types, "bogus", "command", "also-bogus", "http"]
        handlers = [{"type": k, "command": "x", "url": "http://127.0.0.1:1/"} for k in kinds]
        text = _claude_shaped(adapter, path, handlers)
        assert text is not None, adapter.name
        # What install would move (Gemini moves command hooks only): each of those
        # hooks that would not run as written through hookd is said.
        [(event, [moved])] = read_native(adapter, path).hooks.items()
        found = {f.where for f in lint_file(adapter, path, text) if f.where.endswith(".type")}
        expected = {
            f"{event}[0].hooks[{j}].type"
            for j, handler in enumerate(moved["hooks"])
            if handler["type"] in adapter.foreign_hook_types
            or handler["type"] not in HOOKD_HOOK_TYPES
        }
        assert found == expected, (adapter.name, found, expected)
        if len(moved["hooks"]) == len(kinds):
            assert len(expected) >= 2, adapter.name


def _slip(adapter: Adapter, seconds: float) -> bool:
    """The bound, on the timeout as install would move it (in seconds: Gemini's
    milliseconds converted, Qwen's ``1000`` or more read as milliseconds)."""
    return seconds < 1 if adapter.timeout_unit < 1 else seconds >= 3600


def test_a_timeout_is_a_slip_of_unit_exactly_past_its_agents_bound(tmp_path: Path) -> None:
    movers = _movers(tmp_path)
    units = {a.timeout_unit for a, _ in movers}
    assert any(u < 1 for u in units) and any(u >= 1 for u in units), units
    for adapter, path in movers:
        edges = [1, 999, 1000, 1001, 3599, 3600, 3601, 3600000, 7200000]
        for native in [0.5, 0.999, *edges]:
            # A hook without a timeout first: the group's next hook is still judged.
            untimed = {"type": "command", "command": "y"}
            handler = {"type": "command", "command": "x", "timeout": native}
            text = _claude_shaped(adapter, path, [untimed, handler])
            assert text is not None, adapter.name
            [(_, [moved])] = read_native(adapter, path).hooks.items()
            seconds = moved["hooks"][1]["timeout"]
            found = [f for f in lint_file(adapter, path, text) if f.where.endswith("].timeout")]
            assert bool(found) == _slip(adapter, seconds), (adapter.name, native, found)
            assert all(f.severity == "warning" for f in found), found


def _relay(adapter: Adapter, native: str, closed: bool) -> str:
    return f"hookd-relay --agent {adapter.name} {native}" + (" --fail-closed" if closed else "")


def _open_relay(adapter: Adapter, spec: EventSpec) -> str:
    return _relay(adapter, spec.native, False)


@pytest.mark.parametrize("name", names())
def test_every_entry_of_a_wired_file_is_checked_for_fail_closed_at_its_own_line(
    tmp_path: Path, name: str
) -> None:
    adapter = adapter_for(name)
    files = adapter.install_files("user", tmp_path / "home", tmp_path / "proj")
    canonical = sorted({s.canonical for s in adapter.events})
    closed = set(canonical[::2])
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        wired = adapter.wire_file(
            path, None, lambda spec: _relay(adapter, spec.native, spec.canonical in closed)
        )
        lines = wired.splitlines()
        entry = re.compile(rf"--agent {re.escape(name)} (\S+?)(?=[\s\\\"']|$)")
        natives = {s.native for s in adapter.events}
        at = {
            number: m[1]
            for number, line in enumerate(lines, 1)
            if (m := entry.search(line)) and m[1] in natives  # not a comment's `<hook>`
        }
        if not at:
            continue  # a file of the agent's that holds no hookd entry
        assert fail_closed_findings(adapter, path, wired, closed) == []
        found = fail_closed_findings(adapter, path, wired, set(canonical) - closed)
        assert {f.where: f.severity for f in found} == {
            f"line {n}": "info" if adapter.event_spec(e).canonical in closed else "warning"
            for n, e in at.items()
        }, (name, path, found)
        # One line (a file reformatted, or written so), an entry for an event the agent
        # does not have first on it: every entry after it is still checked.
        open_ = adapter.wire_file(path, None, lambda spec: _relay(adapter, spec.native, False))
        try:
            data = json.loads(open_)
        except json.JSONDecodeError:
            continue
        one_line = json.dumps(data).replace(
            f"--agent {name} ", f"--agent {name} NoSuchEvent; hookd-relay --agent {name} ", 1
        )
        found = fail_closed_findings(adapter, path, one_line, set(canonical))
        assert len(found) == len(at), (name, path, found)
        assert {f.where for f in found} == {"line 1"}, found


def test_a_native_tool_name_in_hookds_config_is_said_once_and_a_canonical_one_never(
    tmp_path: Path,
) -> None:
    canonical = {c for a in ADAPTERS for c in a.tools.values()}
    native = {n: c for a in ADAPTERS for n, c in a.tools.items() if n != c and n not in canonical}
    assert native, "no agent names a tool its own way"
    path = tmp_path / "hooks.json"
    matchers = sorted(native) + sorted(canonical)
    # A group without a matcher, or with one that is not a string, first: the scan goes on.
    groups = [{"hooks": []}, {"matcher": 7, "hooks": []}]
    groups += [{"matcher": m, "hooks": []} for m in matchers]
    path.write_text(json.dumps({"hooks": {"PreToolUse": groups}}))
    found = hookd_config_findings(path, ADAPTERS)
    said = {f.where: f for f in found}
    assert len(said) == len(found), found  # once each
    for i, matcher in enumerate(matchers):
        finding = said.get(f"hooks.PreToolUse[{i + 2}].matcher")
        if matcher in canonical:
            assert finding is None, (matcher, finding)
        else:
            assert finding is not None, matcher
            assert f"use {native[matcher]}" in finding.message, (matcher, finding.message)


def test_every_file_of_a_scope_is_linted_whatever_the_one_before_it_was(tmp_path: Path) -> None:
    """A file that cannot be read (a folder at its name), or is not there, is said (or
    passed over) and the scope's next file is still linted: here one that does not parse."""
    several = 0
    for name in names():
        adapter = adapter_for(name)
        home, project = tmp_path / name / "home", tmp_path / name / "project"
        (project / ".kiro" / "hooks").mkdir(parents=True)
        (project / ".kiro" / "hooks" / "zz-mine.json").write_text("{}")  # Kiro's second file
        (project / ".github" / "hooks").mkdir(parents=True)
        (project / ".github" / "hooks" / "zz-mine.json").write_text("{}")  # Copilot's
        files = adapter.hook_files("project", home, project)
        first, last = files[0] if files else None, files[-1] if files else None
        if first is None or last is None or first == last or last.suffix != ".json":
            continue  # one file, or scripts (Cline's): nothing that does not parse
        several += 1
        for before in ("folder", "missing"):
            if before == "folder":
                first.mkdir(parents=True, exist_ok=True)
            elif first.is_dir():
                first.rmdir()
            last.parent.mkdir(parents=True, exist_ok=True)
            last.write_text("{")
            found = [
                (f.path, f.severity)
                for f in lint_agent(adapter, home, project, ("project",))
                if "cannot" in f.message
            ]
            expected = [(str(last), "error")]
            if before == "folder":
                expected.append((str(first), "error"))
            assert sorted(found) == sorted(expected), (name, before, found)
    assert several >= 2, several


def _with_own_hook(data: Any) -> bool:
    """``data`` (a wired file's JSON) with one hook of the user's beside hookd's entry of
    its first event, in that file's shape; False when it has no such place."""
    hooks = data.get("hooks", data) if isinstance(data, dict) else None
    mine = {"type": "command", "command": "mine.sh", "bash": "mine.sh"}
    if isinstance(hooks, list) and hooks and isinstance(hooks[0], dict):  # Kiro's list
        hooks.append({"name": "mine", "trigger": hooks[0].get("trigger"), "action": mine})
        return True
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        if isinstance(groups, list) and groups and isinstance(groups[0], dict):
            nested = isinstance(groups[0].get("hooks"), list)
            groups.append({"hooks": [mine]} if nested else mine)
            return True
    return False


def test_the_users_own_hooks_beside_hookds_entries_are_said_exactly_when_there(
    tmp_path: Path,
) -> None:
    """A wired file that also holds hooks of the user's that install would move: they still
    run in the agent itself, beside hookd's entries (so a guard may run twice, or outside
    hookd's rules) — said with their count; a file as install wrote it, never."""
    said_for = []
    for name in names():
        adapter = adapter_for(name)
        for path in adapter.install_files("user", tmp_path / name, tmp_path / name / "p"):
            path.parent.mkdir(parents=True, exist_ok=True)
            wired = adapter.wire_file(path, None, functools.partial(_open_relay, adapter))
            path.write_text(wired)
            assert not [f for f in lint_file(adapter, path, wired) if "still run" in f.message]
            try:
                data = json.loads(wired)
            except json.JSONDecodeError:
                continue  # a plugin (opencode's, Kilo's) or a script (Cline's)
            if not _with_own_hook(data):
                continue
            text = json.dumps(data, indent=2)
            path.write_text(text)
            own = sum(len(g) for g in read_native(adapter, path).hooks.values())
            found = [f for f in lint_file(adapter, path, text) if "still run" in f.message]
            if adapter.is_wired(text) and own:
                said_for.append(name)
                assert [f.severity for f in found] == ["warning"], (name, found)
                assert f"{own} hook group(s)" in found[0].message, found
            else:
                assert found == [], (name, found)
    assert said_for, "no agent keeps its own hooks beside hookd's entries"


def test_a_matcher_in_an_agents_file_is_said_exactly_when_the_agent_calls_the_tool_otherwise(
    tmp_path: Path,
) -> None:
    """In an agent's own (Claude-shaped) file, a matcher naming Claude Code's tool that the
    agent calls by another name never matches there: said, naming the agent's names; a
    name the agent uses itself, one no agent has, or an MCP name, never."""
    movers = _movers(tmp_path)
    every = {n for a in ADAPTERS for n in [*a.tools, *a.tools.values()]}
    said = 0
    for adapter, path in movers:
        for name in sorted(every | {"NoSuchTool", "mcp__srv__echo"}):
            hook = [{"type": "command", "command": "x", "bash": "x"}]
            text = _claude_shaped(adapter, path, hook, matcher=name)
            assert text is not None, adapter.name
            found = [f for f in lint_file(adapter, path, text) if f.where.endswith(".matcher")]
            natives = adapter.native_tools(name)
            expected = bool(natives) and name not in adapter.tools
            assert len(found) == expected, (adapter.name, name, found)
            said += expected
            if expected and "never matches it there" in found[0].message:  # the shared check
                assert all(n in found[0].message for n in natives), found
    assert said, "no agent names a tool its own way"

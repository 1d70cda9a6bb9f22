"""The installers' rules, each stated over every agent, scope and event (issue 32).

``hookctl claude install`` and ``hookctl agents install <agent>`` through the real
command on real files in a private HOME, one property per test:

* the relay fails closed on exactly the events where hookd's config has a hook with
  ``onFailure: "block"`` (every agent, both scopes; and a config changed since is
  carried over by the next install), and Claude Code's hooks wait as long as the
  slowest hook plus a margin exactly where that is longer than Claude Code's default
  (every event, at the edges, http and mod transports);
* the bearer token is written literally only where the scope allows it, an
  environment reference (and a note saying so) everywhere else;
* each scope's hooks move into that scope's hookd config, and uninstalling one scope
  leaves every other scope's files byte for byte;
* the notes install prints are said exactly when they are true (a project's hooks
  need ``hookctl trust``; another file of the agent keeps hooks of its own);
* a new file is the user's alone, an existing one keeps its mode, and the backup is
  the file as it was before the *first* install, never overwritten by a later one;
* uninstall of an install that moved nothing does not read hookd's config at all
  (a broken one cannot stop it), and a record that is not this install's own — any
  field changed — is refused before anything is touched; uninstall takes out exactly
  what install put in (hooks, ``env`` entries, plugin folders), leaves what Claude Code
  cannot run or the user edited in hookd's config, and re-installing over an edited
  file keeps it an edit;
* what the user reads is what happened: the files written and removed, the dry run's
  diff, ``agents status``, a file the agent cannot parse named once, the relay wired
  only when it can run, and the user's lookalike handlers never taken for hookd's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.cli.hookctl import main as hookctl
from hookd.doors.mod_answer import MOD_EVENTS
from hookd.installers.agent_doctor import fail_closed_findings, lint_agent
from hookd.installers.agent_install import hookd_config_path
from hookd.installers.claude_settings import (
    BACKUP_SUFFIX,
    MOVED_SUFFIX,
    RELAY_EVENTS,
    is_bridge_handler,
    mod_dir,
    paths_for,
)
from hookd_client.events import EVENT_NAMES
from hookd_client.relay import deadline_for

NO_DAEMON = 3
"""``hookctl claude install``'s status when no daemon serves the door (none runs here)."""

AGENT_CASES = [
    (a.name, scope)
    for a in ADAPTERS
    if a.name != "claude"
    for scope in ("user", "project")
    if a.install_files(scope, Path("/home"), Path("/project"))
]
MOVERS = ["codex", "copilot", "factory", "goose", "qwen"]
"""Agents whose files hold hooks in Claude Code's shape: install moves them into hookd."""
CLAUDE_SCOPES = ("user", "project", "local")
CC_DEFAULT_TIMEOUT = {"UserPromptSubmit": 30, "PreModelSwitch": 30, "PostModelSwitch": 30}
"""Claude Code's own timeout per event (seconds); 600 for every other."""


def group(command: str) -> dict[str, Any]:
    return {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}


@pytest.fixture
def relay(tmp_path: Path) -> Path:
    """A compiled relay to wire (never run here): its path shows in every command."""
    path = tmp_path / "bin" / "hookd-relay-c"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def write(path: Path, data: Any, mode: int = 0o644) -> bytes:
    """``data`` as JSON at ``path``; ``{"hooks": …}`` is written as the agent's file holds
    its hooks — the events at the top level in a file that is the hooks object itself
    (Droid's ``~/.factory/hooks.json``, which ignores the wrapper)."""
    if _holds_events_at_top_level(path) and isinstance(data, dict) and set(data) == {"hooks"}:
        data = data["hooks"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4) + "\n")
    path.chmod(mode)
    return path.read_bytes()


def _holds_events_at_top_level(path: Path) -> bool:
    return any(
        path.name in getattr(a, "top_level_files", ()) and path.parent.name == f".{a.name}"
        for a in ADAPTERS
    )


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def agents(verb: str, agent: str, scope: str, project: Path, *extra: str) -> int:
    return hookctl(["agents", verb, agent, f"--{scope}", "--project-dir", str(project), *extra])


def claude(verb: str, scope: str, project: Path, *extra: str) -> int:
    code = hookctl(["claude", verb, f"--{scope}", "--project-dir", str(project), *extra])
    return 0 if verb == "install" and code == NO_DAEMON else code


def snapshot(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


# --- fail closed, and how long Claude Code waits ---------------------------------------------


def relay_argv(agent: str, files: list[Path]) -> dict[str, list[list[str]]]:
    """Every relay command in ``files``, per native event: the arguments after the event
    (a comment naming the command line, as opencode's plugin has, is not one)."""
    found: dict[str, list[list[str]]] = {}
    for path in files:
        lines = path.read_text().splitlines() if path.exists() else []
        text = "\n".join(line for line in lines if not line.lstrip().startswith("//"))
        for tail in re.findall(rf"--agent {re.escape(agent)} ([^\"'\n]*)", text):
            native, *flags = shlex.split(tail)
            found.setdefault(native, []).append(flags)
    return found


def _without_deadline(argv: list[str]) -> list[str]:
    """The relay's arguments but ``--timeout N``: the deadline install writes for an agent
    whose own hook timeout is fixed (Cline's), not a failure rule."""
    if "--timeout" not in argv:
        return argv
    at = argv.index("--timeout")
    return argv[:at] + argv[at + 2 :]


def block_config(events: list[str], blocked: set[str]) -> dict[str, Any]:
    """A hook on every event; on the ``blocked`` ones a second group whose second handler
    fails closed (any handler of any group decides), on the others ``continue``."""
    hooks: dict[str, Any] = {}
    for event in events:
        plain = {"hooks": [{"type": "command", "command": "a", "onFailure": "continue"}]}
        hooks[event] = [plain]
        if event in blocked:
            strict = {"type": "command", "command": "b", "onFailure": "block"}
            hooks[event].append({"hooks": [{"type": "command", "command": "c"}, strict]})
    return {"hooks": hooks}


@pytest.mark.parametrize(("agent", "scope"), AGENT_CASES, ids=[f"{a}-{s}" for a, s in AGENT_CASES])
def test_an_agents_relay_fails_closed_exactly_where_hookds_config_blocks(
    home: Path, project: Path, relay: Path, tmp_path: Path, agent: str, scope: str
) -> None:
    adapter = adapter_for(agent)
    canonical = sorted({s.canonical for s in adapter.events})
    config = hookd_config_path(scope, project)  # type: ignore[arg-type]
    sock = str(tmp_path / "none.sock")
    flags = ["--relay", str(relay), "--socket", sock]
    for blocked in (set(canonical[::2]), set(canonical)):  # then: the config changed since
        write(config, block_config(canonical, blocked))
        assert agents("install", agent, scope, project, *flags) == 0
        files = adapter.install_files(scope, home, project)  # type: ignore[arg-type]
        wired = relay_argv(agent, files)
        # every event reaches hookd (Copilot: through its native names only)
        assert set(wired) <= {s.native for s in adapter.events}
        assert {s.canonical for s in adapter.events if s.native in wired} == set(canonical)
        for spec in adapter.events:
            for argv in wired.get(spec.native, []):
                assert argv[:2] == ["--socket", sock], (spec.native, argv)
                expected = ["--fail-closed"] if spec.canonical in blocked else []
                assert _without_deadline(argv[2:]) == expected, (spec.native, argv)
        # hookctl doctor: nothing to say while the files match the config; once the config
        # asks the opposite, one finding per entry — fails open (warning) or closed (info).
        opposite = set(canonical) - blocked
        for path in files:
            text = path.read_text()
            assert fail_closed_findings(adapter, path, text, blocked) == []
            found = fail_closed_findings(adapter, path, text, opposite)
            entries = relay_argv(agent, [path])
            assert len(found) == sum(map(len, entries.values()))
            for finding in found:
                native = re.search(r"entry for (\S+) fails", finding.message)
                assert native is not None, finding
                canonical_event = adapter.event_spec(native[1]).canonical
                severity = "warning" if canonical_event in opposite else "info"
                assert finding.severity == severity and finding.path == str(path), finding
                assert finding.where.startswith("line "), finding
    assert agents("uninstall", agent, scope, project) == 0
    assert not any(f.exists() for f in adapter.install_files(scope, home, project))  # type: ignore[arg-type]


def _timeout_layout(shift: int) -> dict[str, tuple[bool, float | None]]:
    """Per event: fails closed?, and its slowest hook's timeout — none, or at either side
    of the edge where Claude Code's own default would give up first.  Six shifts give
    every event every combination."""
    out: dict[str, tuple[bool, float | None]] = {}
    for i, event in enumerate(EVENT_NAMES):
        k = (i + shift) % 6
        default = CC_DEFAULT_TIMEOUT.get(event, 600)
        out[event] = (k % 2 == 1, [None, default - 5, default - 4][k % 3])
    return out


@pytest.mark.parametrize("transport", ["http", "mod"])
@pytest.mark.parametrize("shift", range(6))
def test_claude_codes_hooks_fail_closed_and_wait_exactly_where_hookds_config_asks(
    home: Path, relay: Path, tmp_path: Path, transport: str, shift: int
) -> None:
    layout = _timeout_layout(shift)
    hooks: dict[str, Any] = {}
    for event, (strict, timeout) in layout.items():
        slow: dict[str, Any] = {"type": "command", "command": "b"}
        if timeout is not None:
            slow["timeout"] = timeout
        if strict:
            slow["onFailure"] = "block"
        hooks[event] = [{"hooks": [{"type": "command", "command": "a", "timeout": 1}, slow]}]
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": hooks})
    sock = str(tmp_path / "none.sock")
    extra = ["--transport", "mod", "--http-socket", "/run/h.sock"] if transport == "mod" else []
    assert claude("install", "user", tmp_path, "--relay", str(relay), "--socket", sock,
                  "--port", "47999", *extra) == 0  # fmt: skip
    settings = read(home / ".claude" / "settings.json")

    carried = {e for e in EVENT_NAMES if not (transport == "mod" and e in MOD_EVENTS)}
    assert set(settings["hooks"]) == carried
    for event in carried:
        strict, timeout = layout[event]
        default = CC_DEFAULT_TIMEOUT.get(event, 600)
        wait = timeout + 5 if timeout is not None and timeout + 5 > default else None
        [[handler]] = [g["hooks"] for g in settings["hooks"][event]]
        assert handler.get("timeout") == wait, event
        if event in RELAY_EVENTS or transport == "mod":
            expected = [event, "--socket", sock]
            expected += ["--fail-closed"] if strict else []
            expected += ["--timeout", f"{deadline_for(wait):g}"] if wait is not None else []
            assert handler["command"] == str(relay) and handler["args"] == expected, event
        else:
            assert handler["url"] == f"http://127.0.0.1:47999/hooks/{event}"
            assert handler.get("onFailure") == ("block" if strict else None), event
    closed = [e for e in EVENT_NAMES if e in MOD_EVENTS and layout[e][0]]
    env = settings.get("env", {})
    if transport == "mod" and closed:
        assert env["HOOKD_MOD_FAIL_CLOSED"] == ",".join(closed)
    else:
        assert "HOOKD_MOD_FAIL_CLOSED" not in env


# --- the token -----------------------------------------------------------------------------


@pytest.mark.parametrize("literal", [False, True])
@pytest.mark.parametrize("scope", CLAUDE_SCOPES)
def test_the_token_is_written_only_where_the_scope_allows_it(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], scope: str, literal: bool
) -> None:
    """A project's settings are committed: an environment reference there (unless asked
    for ``--literal-token``), said in a note; the user's and the local file hold the token
    itself, and are then the user's alone."""
    settings_path = paths_for(scope, project)[0]  # type: ignore[arg-type]
    write(settings_path, {"model": "opus"}, 0o644)
    extra = ["--literal-token"] if literal else []
    assert claude("install", scope, project, "--port", "47999", *extra) == 0
    out = capsys.readouterr().out
    token = (home / ".config" / "hookd" / "http-token").read_text().strip()
    by_reference = scope == "project" and not literal
    http = [
        g["hooks"][0] for e, gs in read(settings_path)["hooks"].items() if e not in RELAY_EVENTS
        for g in gs
    ]  # fmt: skip
    assert http and all(h["type"] == "http" for h in http)
    for handler in http:
        bearer = "$HOOKD_HTTP_TOKEN" if by_reference else token
        assert handler["headers"] == {"Authorization": f"Bearer {bearer}"}
        assert handler.get("allowedEnvVars") == (["HOOKD_HTTP_TOKEN"] if by_reference else None)
    in_project = [p for p, data in snapshot(project).items() if token.encode() in data]
    if by_reference:
        assert in_project == []
        assert mode(settings_path) == 0o644  # nothing secret in it: it keeps its mode
        assert "read the token from $HOOKD_HTTP_TOKEN" in out
    else:
        assert mode(settings_path) == 0o600
        assert "$HOOKD_HTTP_TOKEN" not in out
    # The record holds the text install wrote (the token with it): owner-only, always.
    assert mode(settings_path.with_name(settings_path.name + MOVED_SUFFIX)) == 0o600


# --- each scope its own files -----------------------------------------------------------------


def test_each_claude_scope_moves_into_its_own_config_and_uninstalls_alone(
    home: Path, project: Path
) -> None:
    originals = {}
    for scope in CLAUDE_SCOPES:
        settings_path = paths_for(scope, project)[0]  # type: ignore[arg-type]
        originals[scope] = write(settings_path, {"hooks": {"PreToolUse": [group(scope)]}})
        assert claude("install", scope, project, "--port", "47999") == 0
    for scope in CLAUDE_SCOPES:
        config = paths_for(scope, project)[1]  # type: ignore[arg-type]
        assert read(config)["hooks"] == {"PreToolUse": [group(scope)]}, scope
        assert mode(config) == 0o600  # created by the move: the user's alone
    for scope in CLAUDE_SCOPES:
        before = snapshot(home, project)
        assert claude("uninstall", scope, project) == 0
        settings_path, config = paths_for(scope, project)  # type: ignore[arg-type]
        assert settings_path.read_bytes() == originals[scope]
        assert not config.exists()
        after = snapshot(home, project)
        mine = {str(p) for p in (settings_path, config)} | {
            str(settings_path) + s for s in (BACKUP_SUFFIX, MOVED_SUFFIX)
        }
        assert {k: v for k, v in after.items() if k not in mine} == {
            k: v for k, v in before.items() if k not in mine
        }, scope


@pytest.mark.parametrize("agent", MOVERS)
def test_each_agent_scope_moves_into_its_own_config_and_uninstalls_alone(
    home: Path, project: Path, agent: str
) -> None:
    adapter = adapter_for(agent)
    originals = {}
    for scope in ("user", "project"):
        [target, *_] = adapter.install_files(scope, home, project)
        originals[scope] = (target, write(target, {"hooks": {"PreToolUse": [group(scope)]}}))
        assert agents("install", agent, scope, project, "--python-relay") == 0
    for scope in ("user", "project"):
        config = hookd_config_path(scope, project)  # type: ignore[arg-type]
        moved = read(config)["hooks"]["PreToolUse"]
        assert [h["command"] for g in moved for h in g["hooks"]] == [scope]
        assert mode(config) == 0o600  # created by the move: the user's alone
    for scope in ("user", "project"):
        target, original = originals[scope]
        other = {"user": project, "project": home}[scope]
        before = snapshot(other)
        assert agents("uninstall", agent, scope, project) == 0
        assert target.read_bytes() == original
        assert not hookd_config_path(scope, project).exists()  # type: ignore[arg-type]
        assert snapshot(other) == before, scope


# --- notes said when true, and only then ------------------------------------------------------


@pytest.mark.parametrize("own", [True, False])
@pytest.mark.parametrize("scope", CLAUDE_SCOPES)
def test_claude_install_says_a_projects_moved_hooks_need_trust(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], scope: str, own: bool
) -> None:
    settings_path = paths_for(scope, project)[0]  # type: ignore[arg-type]
    write(settings_path, {"hooks": {"PreToolUse": [group("mine")]}} if own else {})
    assert claude("install", scope, project, "--port", "47999") == 0
    said = f"hookctl trust {project}" in capsys.readouterr().out
    assert said == (scope != "user" and own)


@pytest.mark.parametrize("own", [True, False])
@pytest.mark.parametrize("agent", MOVERS)
def test_agent_install_says_a_projects_moved_hooks_need_trust(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str, own: bool
) -> None:
    for scope in ("user", "project"):
        [target, *_] = adapter_for(agent).install_files(scope, home, project)
        write(target, {"hooks": {"PreToolUse": [group("mine")]}} if own else {"hooks": {}})
        capsys.readouterr()
        assert agents("install", agent, scope, project, "--python-relay") == 0
        out = capsys.readouterr().out
        assert ("hookctl trust" in out) == (scope == "project" and own), (scope, out)
        assert ("moved 1 hook group(s)" in out) == own
        assert "were already in" not in out  # none was


def test_another_file_keeping_hooks_of_its_own_is_named_only_when_it_does(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Copilot also runs the ``hooks`` of ``~/.copilot/settings.json`` beside the hooks file
    install wires: install says so when there are some, and not otherwise.  (Droid's second
    file, ``settings.json``, is wired too: it is no longer such a file.)"""
    adapter = adapter_for("copilot")
    target, other = adapter.hook_files("user", home, project)
    assert other not in adapter.install_files("user", home, project)
    write(target, {"hooks": {}})
    for groups, said in (([], False), ([group("a"), group("b")], True)):
        write(other, {"model": "x", "hooks": {"PreToolUse": groups}})
        assert agents("install", "copilot", "user", project, "--python-relay") == 0
        out = capsys.readouterr().out
        assert (f"{other} keeps 2 hook group(s) of its own" in out) == said, out
        assert ("keeps 0 hook group" in out) is False
    # One it cannot read is said too, and does not stop the install.
    other.write_text("{\n")
    assert agents("install", "copilot", "user", project, "--python-relay") == 0
    assert f"not read: {other}: line 2" in capsys.readouterr().out


def test_uninstall_says_what_it_moved_back_and_what_it_leaves(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = adapter_for("qwen").install_files("user", home, project)[0]
    write(target, {"hooks": {"PreToolUse": [group("a"), group("b")], "Stop": [group("c")]}})
    config = home / ".config" / "hookd" / "hooks.json"
    assert agents("install", "qwen", "user", project, "--python-relay") == 0
    edited = read(config)
    edited["hooks"]["Stop"][0]["hooks"][0]["command"] = "c --edited"
    write(config, edited)
    capsys.readouterr()
    assert agents("uninstall", "qwen", "user", project) == 0
    out = capsys.readouterr().out
    assert f"moved 2 hook group(s) back out of {config}" in out
    assert "1 group(s) install moved are no longer in" in out
    assert read(config) == {"hooks": {"Stop": edited["hooks"]["Stop"]}}
    assert agents("uninstall", "qwen", "user", project) == 0
    assert "Qwen Code is not installed" in capsys.readouterr().out


# --- modes and backups ------------------------------------------------------------------------


@pytest.mark.parametrize("agent", [a for a in MOVERS if a != "factory"])
def test_an_existing_hookd_config_keeps_its_mode_and_the_backup_its_first_original(
    home: Path, project: Path, agent: str
) -> None:
    """(Not Droid: its wired ``hooks.json`` holds events only, so any edit there is a hook,
    which the next install moves.)"""
    [target, *_] = adapter_for(agent).install_files("user", home, project)
    original = write(target, {"hooks": {"PreToolUse": [group("mine")]}}, 0o640)
    config = home / ".config" / "hookd" / "hooks.json"
    write(config, {"hooks": {"Stop": [group("hookd's")]}}, 0o640)
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    for _ in range(2):
        assert agents("install", agent, "user", project, "--python-relay") == 0
        assert mode(config) == 0o640 and mode(target) == 0o640
        assert backup.read_bytes() == original and mode(backup) == 0o640
        assert agents("uninstall", agent, "user", project) == 0
        assert target.read_bytes() == original and mode(target) == 0o640
        assert read(config) == {"hooks": {"Stop": [group("hookd's")]}} and mode(config) == 0o640
    # The user edits the wired file and installs again: the backup is still the original.
    assert agents("install", agent, "user", project, "--python-relay") == 0
    edited = read(target)
    edited["theme"] = "dark"
    write(target, edited, 0o640)
    assert agents("install", agent, "user", project, "--python-relay") == 0
    assert backup.read_bytes() == original
    # ... and the edit is still an edit: uninstall refuses to restore over it unforced.
    assert read(target)["theme"] == "dark"
    assert agents("uninstall", agent, "user", project) == 1
    assert read(target)["theme"] == "dark"
    assert agents("uninstall", agent, "user", project, "--force") == 0
    assert target.read_bytes() == original


@pytest.mark.parametrize("scope", CLAUDE_SCOPES)
def test_claudes_backup_is_the_first_original_whatever_installs_follow(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], scope: str
) -> None:
    """The backup is the settings file's (hookd's config, written first, is not backed
    up in its place), owner-only, and never overwritten by a later install."""
    settings_path, config = paths_for(scope, project)  # type: ignore[arg-type]
    hookds = write(config, {"hooks": {"PreToolUse": [group("hookd's")]}}, 0o640)
    original = write(settings_path, {"model": "opus", "hooks": {"Stop": [group("x")]}}, 0o640)
    backup = settings_path.with_name(settings_path.name + BACKUP_SUFFIX)
    assert claude("install", scope, project, "--port", "47999") == 0
    assert backup.read_bytes() == original and mode(backup) == 0o600
    beside = [p.name for p in config.parent.iterdir() if p.name.startswith(config.name)]
    assert mode(config) == 0o640 and beside == [config.name]
    edited = read(settings_path)
    edited["theme"] = "dark"
    write(settings_path, edited, 0o640)
    assert claude("install", scope, project, "--port", "47998") == 0
    assert backup.read_bytes() == original
    # ... and the edit is still an edit: uninstall keeps it, the groups go back.
    capsys.readouterr()
    assert claude("uninstall", scope, project) == 0
    assert f"kept {backup}: {settings_path} as it was before install" in capsys.readouterr().out
    restored = {"model": "opus", "theme": "dark", "hooks": {"Stop": [group("x")]}}
    assert read(settings_path) == restored and backup.read_bytes() == original
    assert read(config) == json.loads(hookds) and mode(config) == 0o640


# --- uninstall reads only what it needs, and trusts no record it did not write ---------------


@pytest.mark.parametrize("broken", ['{"hooks": {', "[1, 2]"])
@pytest.mark.parametrize("scope", ["user", "project"])
def test_uninstall_of_an_install_that_moved_nothing_never_reads_hookds_config(
    home: Path, project: Path, scope: str, broken: str
) -> None:
    """Cursor's own hooks stay in its file: install adds nothing to hookd's config, so a
    config the user broke since cannot stop uninstall (and is left as it is)."""
    [target] = adapter_for("cursor").install_files(scope, home, project)  # type: ignore[arg-type]
    original = write(target, {"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}})
    assert agents("install", "cursor", scope, project, "--python-relay") == 0
    config = hookd_config_path(scope, project)  # type: ignore[arg-type]
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(broken)
    assert agents("uninstall", "cursor", scope, project) == 0
    assert target.read_bytes() == original and config.read_text() == broken


FORGED = {
    "agent": "cursor",
    "scope": "user",
    "hookd_config": "/etc/hookd/hooks.json",
    "original": 42,
    "surprise": True,
}
"""One field of a record changed at a time (the scope's value is swapped per case)."""


@pytest.mark.parametrize("field", sorted(FORGED))
@pytest.mark.parametrize("scope", ["user", "project"])
def test_a_record_with_any_field_not_this_installs_is_refused_and_nothing_touched(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], scope: str, field: str
) -> None:
    [target] = adapter_for("qwen").install_files(scope, home, project)  # type: ignore[arg-type]
    write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    assert agents("install", "qwen", scope, project, "--python-relay") == 0
    record = target.with_name(target.name + MOVED_SUFFIX)
    data = read(record)
    data[field] = {"scope": "project" if scope == "user" else "user"}.get(field, FORGED[field])
    write(record, data, 0o600)
    before = snapshot(home, project)
    capsys.readouterr()
    assert agents("uninstall", "qwen", scope, project) == 1
    assert str(record) in capsys.readouterr().err
    assert snapshot(home, project) == before


@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_a_record_naming_folders_outside_the_files_never_gets_them_removed(
    home: Path, project: Path, agent: str
) -> None:
    """``created_dirs`` is a record's word only for folders of its own files, inside the
    project: an empty folder of the user's it names stays."""
    if agent == "claude":
        target = paths_for("project", project)[0]
    else:
        [target] = adapter_for(agent).install_files("project", home, project)
    if agent == "claude":
        assert claude("install", "project", project, "--port", "47999") == 0
    else:
        assert agents("install", agent, "project", project, "--python-relay") == 0
    record = target.with_name(target.name + MOVED_SUFFIX)
    data = read(record)
    kept = [project / "docs" / "empty", home / "empty", project / ".git" / "hooks"]
    for folder in kept:
        folder.mkdir(parents=True)
    data["created_dirs"] = [*data["created_dirs"], *map(str, kept)]
    write(record, data, 0o600)
    if agent == "claude":
        assert claude("uninstall", "project", project) == 0
    else:
        assert agents("uninstall", agent, "project", project) == 0
    assert all(folder.is_dir() for folder in kept)
    assert not target.exists() and not target.parent.exists()  # its own folder: gone


# --- uninstall over an edit: exactly hookd's keys out, every one of the user's kept ------------


@pytest.mark.parametrize("transport", ["http", "mod"])
def test_uninstall_after_an_edit_takes_out_exactly_what_install_put_in(
    home: Path, tmp_path: Path, transport: str
) -> None:
    """The settings file edited since install: uninstall cannot give bytes back, so it
    takes out hookd's hooks and ``env`` entries (the mod's folder from the plugin list)
    and puts the moved groups back — the user's own keys, variables, plugin folders and
    hooks (a handler beside hookd's in one group included) all stay."""
    settings_path = home / ".claude" / "settings.json"
    mine = {"type": "command", "command": "~/bin/fmt.sh"}
    env = {"FOO": "1", "CLAUDE_CODE_PLUGIN_DIRS": "/opt/mine"}
    original: dict[str, Any] = {
        "model": "opus",
        "env": env,
        "hooks": {"PostToolUse": [group("lint")], "Stop": [{"hooks": [mine]}]},
    }
    write(settings_path, original)
    extra = ["--transport", "mod", "--http-socket", "/run/h.sock"] if transport == "mod" else []
    assert claude("install", "user", tmp_path, "--port", "47999", *extra) == 0
    edited = read(settings_path)
    edited["theme"] = "dark"
    edited["env"]["BAR"] = "2"
    added = {"type": "command", "command": "~/bin/notify.sh"}
    edited["hooks"]["Stop"][0]["hooks"].append(added)  # the user's, beside hookd's handler
    write(settings_path, edited)
    assert claude("uninstall", "user", tmp_path) == 0
    assert read(settings_path) == {
        **original,
        "theme": "dark",
        "env": {**env, "BAR": "2"},
        "hooks": {"Stop": [{"hooks": [added]}, {"hooks": [mine]}], "PostToolUse": [group("lint")]},
    }
    assert not (home / ".config" / "hookd" / "hooks.json").exists()


@pytest.mark.parametrize("config", [None, "{}\n", '{"hooks": []}\n', '{"hooks": null}\n'])
@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_uninstall_after_hookds_config_lost_its_hooks_gives_the_file_back(
    home: Path, tmp_path: Path, agent: str, config: str | None
) -> None:
    """The user emptied (or deleted) hookd's config after install moved hooks into it:
    nothing of install's is left there to take back, and the agent's file still comes
    back byte for byte — with the moved hooks, from the record."""
    if agent == "claude":
        target = home / ".claude" / "settings.json"
    else:
        [target] = adapter_for(agent).install_files("user", home, tmp_path)
    original = write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    extra = ["--port", "47999"] if agent == "claude" else ["--python-relay"]
    install = claude if agent == "claude" else lambda *a: agents(a[0], agent, *a[1:])
    assert install("install", "user", tmp_path, *extra) == 0
    hookd_config = home / ".config" / "hookd" / "hooks.json"
    if config is None:
        hookd_config.unlink()
    else:
        hookd_config.write_text(config)
    assert install("uninstall", "user", tmp_path) == 0
    assert target.read_bytes() == original
    assert (hookd_config.read_text() if hookd_config.exists() else None) == config


# --- hookd's own entries, and the user's that only look like them --------------------------

LOOKALIKES = [
    {"type": "http", "url": "http://127.0.0.1:8080/api/hooks"},
    {"type": "http", "url": "https://example.com/hooks/PreToolUse"},
    {"type": "http", "url": "http://127.0.0.1:47999/hooks/PreToolUse/extra"},
    {"type": "command", "command": "python3 -c 'import relay'"},
    {"type": "command", "command": "~/src/hookd_client-notes.sh"},
    {"type": "command", "command": "~/bin/guard.sh", "args": ["--relay"]},
    {"type": "prompt", "prompt": "is http://127.0.0.1:47999/hooks/Stop safe?"},
]
"""Handlers of the user's that share a word with hookd's entries: never taken for them."""


@pytest.mark.parametrize("transport", ["http", "mod"])
@pytest.mark.parametrize("relay_kind", ["compiled", "python"])
def test_every_entry_install_writes_is_hookds_and_no_lookalike_of_the_users_is(
    home: Path, relay: Path, tmp_path: Path, transport: str, relay_kind: str
) -> None:
    """Install moves every one of the user's handlers — the lookalikes too — into hookd's
    config and writes only entries uninstall recognises; uninstall gives all back."""
    settings_path = home / ".claude" / "settings.json"
    hooks = {"PreToolUse": [{"hooks": [h]} for h in LOOKALIKES]}
    original = write(settings_path, {"hooks": hooks})
    extra = ["--transport", "mod", "--http-socket", "/run/h.sock"] if transport == "mod" else []
    extra += ["--relay", str(relay)] if relay_kind == "compiled" else ["--python-relay"]
    assert claude("install", "user", tmp_path, "--port", "47999", *extra) == 0
    assert read(home / ".config" / "hookd" / "hooks.json")["hooks"] == hooks
    settings = read(settings_path)
    for event, groups in settings["hooks"].items():
        for handler in (h for g in groups for h in g["hooks"]):
            assert is_bridge_handler(handler), (event, handler)
    assert not any(is_bridge_handler(h) for h in LOOKALIKES)
    assert claude("uninstall", "user", tmp_path) == 0
    assert settings_path.read_bytes() == original


# --- a file the agent cannot parse --------------------------------------------------------

PARSED = [c for c in AGENT_CASES if c[0] not in ("cline", "opencode", "kilo")]
"""Agents whose hook files install parses (Cline's are scripts; opencode's and Kilo's a plugin
hookd writes whole)."""


DEEP = "[" * 100_000 + "]" * 100_000
"""Valid JSON nested deeper than the parser's recursion: an error, not a traceback."""


@pytest.mark.parametrize(
    "text", ["[1, 2]\n", "{\n", DEEP], ids=["not-an-object", "not-json", "too-deep"]
)
@pytest.mark.parametrize(("agent", "scope"), PARSED, ids=[f"{a}-{s}" for a, s in PARSED])
def test_a_file_the_agent_cannot_parse_is_named_once_and_nothing_is_written(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str, scope: str,
    text: str
) -> None:  # fmt: skip
    [target, *_] = adapter_for(agent).install_files(scope, home, project)  # type: ignore[arg-type]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    before = snapshot(home, project)
    capsys.readouterr()
    assert agents("install", agent, scope, project, "--python-relay") == 1
    err = capsys.readouterr().err
    assert err.count(str(target)) == 1, err
    # Every JSON file is read by the one reader (hookd/json_object.py): the same words.
    why = {
        "[1, 2]\n": "expected a JSON object at the top level, got an array",
        "{\n": "line 2 column 1: ",
        DEEP: "nested too deeply to read",
    }[text]
    assert f"{target}: {why}" in err, err
    assert snapshot(home, project) == before


# --- which relay is wired ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["beside", "installed"])
@pytest.mark.parametrize("kind", ["not-executable", "directory", "absent"])
def test_only_an_executable_file_is_wired_as_the_compiled_relay(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
    kind: str,
) -> None:
    """A relay that cannot run would make every wired hook fail (open): install wires the
    Python relay instead, and says why, wherever the compiled one was looked for."""
    from hookd.installers import claude_settings

    beside = tmp_path / "venv" / "bin"
    beside.mkdir(parents=True)
    monkeypatch.setattr("sys.executable", str(beside / "python3"))
    found = (beside if where == "beside" else tmp_path) / "hookd-relay-c"
    if kind == "not-executable":
        found.write_text("#!/bin/sh\n")
        found.chmod(0o644)
    elif kind == "directory":
        found.mkdir()
        found.chmod(0o755)
    installed = str(found) if where == "installed" else None
    monkeypatch.setattr(claude_settings, "_installed_script", lambda _name: installed)
    assert claude_settings.compiled_relay() is None
    assert claude("install", "user", tmp_path, "--port", "47999") == 0
    start = read(home / ".claude" / "settings.json")["hooks"]["SessionStart"][0]["hooks"][0]
    assert start["command"] == str(beside / "python3") and start["args"][:2] == ["-I", "-S"]
    assert "the compiled relay (hookd-relay-c) is not installed" in capsys.readouterr().out


# --- status ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("agent", "scope"), PARSED, ids=[f"{a}-{s}" for a, s in PARSED])
def test_status_says_of_each_file_exactly_what_it_is(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str, scope: str
) -> None:
    """No file, a file the agent cannot parse (no hooks counted: it runs none), a wired
    file with its record: each reported as it is, never as another."""
    [target, *_] = adapter_for(agent).install_files(scope, home, project)  # type: ignore[arg-type]

    def state() -> dict[str, Any]:
        capsys.readouterr()
        assert hookctl(["agents", "status", agent, "--json", "--project-dir", str(project)]) == 0
        [row] = json.loads(capsys.readouterr().out)
        [found] = [f for f in row["files"][scope] if f["path"] == str(target)]
        return {k: found[k] for k in ("exists", "wired", "own_groups", "recorded", "error")}

    assert state() == {
        "exists": False, "wired": False, "own_groups": 0, "recorded": False, "error": None
    }  # fmt: skip
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("[1, 2]\n")
    broken = state()
    assert broken.pop("error"), broken
    assert broken == {"exists": True, "wired": False, "own_groups": 0, "recorded": False}
    target.unlink()
    assert agents("install", agent, scope, project, "--python-relay") == 0
    assert state() == {
        "exists": True, "wired": True, "own_groups": 0, "recorded": True, "error": None
    }  # fmt: skip


def test_the_mod_install_takes_out_only_hookds_own_plugin_folders(
    home: Path, tmp_path: Path
) -> None:
    """``CLAUDE_CODE_PLUGIN_DIRS`` lists the user's plugins too: install and uninstall take
    out hookd's mod (this one, a copy of it, one at an older hookd's folder that is gone)
    and keep every folder of the user's — one named like hookd's included."""
    copy = tmp_path / "copy" / "claude_mod"
    (copy / ".claude-plugin").mkdir(parents=True)
    (copy / ".claude-plugin" / "plugin.json").write_text('{"name": "hookd"}')
    theirs = tmp_path / "theirs" / "doors" / "claude_mod"
    (theirs / ".claude-plugin").mkdir(parents=True)
    (theirs / ".claude-plugin" / "plugin.json").write_text('{"name": "mine"}')
    gone = ["/gone/hookd/bridge/claude_mod", "/gone/hookd/doors/claude_mod"]
    kept = ["/opt/mine", "/srv/claude_mod", "/gone/x/claude_mod/more", str(theirs)]
    dirs = [kept[0], gone[0], str(copy), kept[1], gone[1], kept[2], str(mod_dir()), kept[3]]
    settings_path = home / ".claude" / "settings.json"
    write(settings_path, {"env": {"CLAUDE_CODE_PLUGIN_DIRS": os.pathsep.join(dirs)}})
    mod = ["--transport", "mod", "--http-socket", "/run/h.sock"]
    assert claude("install", "user", tmp_path, *mod) == 0
    env = read(settings_path)["env"]
    assert env["CLAUDE_CODE_PLUGIN_DIRS"] == os.pathsep.join([*kept, str(mod_dir())])
    assert claude("install", "user", tmp_path, "--port", "47999") == 0  # back to http
    assert read(settings_path)["env"] == {"CLAUDE_CODE_PLUGIN_DIRS": os.pathsep.join(kept)}


# --- the dry run ------------------------------------------------------------------------------


@pytest.mark.parametrize("existed", [True, False])
@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_a_dry_run_shows_each_file_as_created_or_changed_and_writes_nothing(
    home: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
    existed: bool,
) -> None:
    """``--dry-run`` shows a file install would create against ``/dev/null`` and one it
    would change against itself, for the agent's file and hookd's config alike."""
    if agent == "claude":
        target, config = paths_for("project", project)
    else:
        [target] = adapter_for(agent).install_files("project", home, project)
        config = hookd_config_path("project", project)
    if existed:
        write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    before = snapshot(home, project)
    capsys.readouterr()
    if agent == "claude":
        assert claude("install", "project", project, "--dry-run") == 0
    else:
        assert agents("install", agent, "project", project, "--dry-run", "--python-relay") == 0
    out = capsys.readouterr().out.splitlines()
    old = str(target) if existed else "/dev/null"
    at = out.index(f"+++ {target}")
    assert out[at - 1] == f"--- {old}"
    if existed:  # its hooks would move into a new hookd config
        assert out[out.index(f"+++ {config}") - 1] == "--- /dev/null"
    assert snapshot(home, project) == before


@pytest.mark.parametrize("forged", [0o4755, 0o1777, -1, "0644", 0o644])
def test_a_records_original_mode_is_given_back_only_when_it_is_a_files_mode(
    home: Path, project: Path, forged: object
) -> None:
    """A project's record comes with the repository: the mode uninstall restores from it
    is a permission mode (0..0o777) or ignored — never setuid, setgid or sticky."""
    settings_path = paths_for("project", project)[0]
    write(settings_path, {"model": "opus"}, 0o640)
    assert claude("install", "project", project) == 0
    record = settings_path.with_name(settings_path.name + MOVED_SUFFIX)
    data = read(record)
    assert data["original_mode"] == 0o640
    data["original_mode"] = forged
    write(record, data, 0o600)
    current = mode(settings_path)
    assert claude("uninstall", "project", project) == 0
    assert read(settings_path) == {"model": "opus"}
    full = settings_path.stat().st_mode & 0o7777
    assert full == (forged if forged == 0o644 else current)


@pytest.mark.parametrize("agent", MOVERS)
def test_install_says_which_groups_moved_and_which_hookd_already_had(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    [target, *_] = adapter_for(agent).install_files("user", home, project)
    config = home / ".config" / "hookd" / "hooks.json"
    write(config, {"hooks": {"PreToolUse": [group("shared")]}})
    write(target, {"hooks": {"PreToolUse": [group("shared"), group("a"), group("b")]}})
    assert agents("install", agent, "user", project, "--python-relay") == 0
    out = capsys.readouterr().out
    assert f"moved 2 hook group(s) from {target} to {config}" in out
    assert f"1 hook group(s) of {target} were already in {config}" in out


@pytest.mark.parametrize("agent", MOVERS)
def test_a_record_that_does_not_say_whether_hookds_config_existed_never_removes_it(
    home: Path, project: Path, agent: str
) -> None:
    """A record written by a hookctl that did not yet record it: uninstall takes hookd's
    config for the user's (it may have been), so an emptied one stays, emptied."""
    [target, *_] = adapter_for(agent).install_files("user", home, project)
    config = home / ".config" / "hookd" / "hooks.json"
    write(config, {})
    write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    assert agents("install", agent, "user", project, "--python-relay") == 0
    record = target.with_name(target.name + MOVED_SUFFIX)
    data = read(record)
    assert data.pop("hookd_config_existed") is True
    write(record, data, 0o600)
    assert agents("uninstall", agent, "user", project) == 0
    assert read(config) == {}


NO_FILE = [
    (a.name, scope)
    for a in ADAPTERS
    if a.name != "claude"
    for scope in ("user", "project")
    if not a.install_files(scope, Path("/home"), Path("/project"))
]


@pytest.mark.parametrize("verb", ["install", "uninstall"])
@pytest.mark.parametrize(("agent", "scope"), NO_FILE, ids=[f"{a}-{s}" for a, s in NO_FILE])
def test_an_agent_without_a_hook_file_is_told_what_to_do_instead(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str, scope: str,
    verb: str
) -> None:  # fmt: skip
    adapter = adapter_for(agent)
    assert agents(verb, agent, scope, project) == 1
    err = capsys.readouterr().err
    steps = "; ".join(adapter.trust_steps(scope))  # type: ignore[arg-type]
    assert f"{adapter.title} has no {scope}-scope hook file to install into: {steps}" in err
    assert snapshot(home, project) == {}


@pytest.mark.parametrize("agent", MOVERS)
def test_uninstall_keeps_every_event_of_hookds_config_it_did_not_add_malformed_ones_too(
    home: Path, project: Path, agent: str
) -> None:
    """hookd's loader reports a malformed event (not a list); uninstall is no place to
    drop it — nor, past it, the user's other events."""
    [target, *_] = adapter_for(agent).install_files("user", home, project)
    config = home / ".config" / "hookd" / "hooks.json"
    theirs = {"Notification": "not a list", "Stop": [group("hookd's")]}
    write(config, {"hooks": theirs})
    write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    assert agents("install", agent, "user", project, "--python-relay") == 0
    assert agents("uninstall", agent, "user", project) == 0
    assert read(config) == {"hooks": theirs}


def test_uninstall_leaves_in_hookd_what_claude_code_cannot_run_and_says_so(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After an edit, uninstall moves back the groups Claude Code can run; a moved group
    only hookd understands (``sequential``) and one the user wrote into hookd's config
    stay there, with a note."""
    settings_path = home / ".claude" / "settings.json"
    ordered = {"sequential": True, "hooks": [group("a")["hooks"][0], group("b")["hooks"][0]]}
    write(settings_path, {"hooks": {"PostToolUse": [ordered, group("fmt")]}})
    assert claude("install", "user", tmp_path, "--port", "47999") == 0
    config = home / ".config" / "hookd" / "hooks.json"
    data = read(config)
    data["hooks"]["Stop"] = [group("hookd's own")]
    write(config, data)
    edited = read(settings_path)
    edited["theme"] = "dark"
    write(settings_path, edited)
    capsys.readouterr()
    assert claude("uninstall", "user", tmp_path) == 0
    assert f"kept 2 group(s) install did not move (or Claude Code cannot run) in {config}" in (
        capsys.readouterr().out
    )
    assert read(settings_path) == {"theme": "dark", "hooks": {"PostToolUse": [group("fmt")]}}
    assert read(config) == {"hooks": {"PostToolUse": [ordered], "Stop": [group("hookd's own")]}}


@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_install_and_uninstall_say_each_file_they_wrote_and_removed(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    """What the user reads is what happened: every file written or removed named, and
    "nothing to change" only when nothing was."""
    if agent == "claude":
        target, config = paths_for("project", project)
    else:
        [target] = adapter_for(agent).install_files("project", home, project)
        config = hookd_config_path("project", project)
    write(target, {"hooks": {"PreToolUse": [group("mine")]}})
    record = target.with_name(target.name + MOVED_SUFFIX)
    backup = target.with_name(target.name + BACKUP_SUFFIX)

    def run(verb: str) -> list[str]:
        capsys.readouterr()
        if agent == "claude":
            port = ["--port", "47999"] if verb == "install" else []
            assert claude(verb, "project", project, *port) == 0
        else:
            relay = ["--python-relay"] if verb == "install" else []
            assert agents(verb, agent, "project", project, *relay) == 0
        return [line for line in capsys.readouterr().out.splitlines()
                if line.startswith(("wrote ", "removed ", "nothing to change"))]  # fmt: skip

    assert sorted(run("install")) == sorted(f"wrote {p}" for p in (target, config, record))
    assert run("install") == ["nothing to change"]
    removed = sorted(f"removed {p}" for p in (config, record, backup))
    assert sorted(run("uninstall")) == sorted([f"wrote {target}", *removed])


def test_an_install_without_a_record_is_undone_from_its_backup(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An older hookctl kept only the backup: uninstall takes the moved groups from it —
    back into the settings file, out of hookd's config — and keeps the backup."""
    settings_path = home / ".claude" / "settings.json"
    hooks = {"PreToolUse": [group("guard")], "Stop": [group("notify")]}
    write(settings_path, {"model": "opus", "hooks": hooks})
    assert claude("install", "user", tmp_path, "--port", "47999") == 0
    (home / ".claude" / ("settings.json" + MOVED_SUFFIX)).unlink()
    config = home / ".config" / "hookd" / "hooks.json"
    data = read(config)
    data["hooks"]["Stop"].append(group("hookd's own"))
    write(config, data)
    capsys.readouterr()
    assert claude("uninstall", "user", tmp_path) == 0
    assert read(settings_path) == {"model": "opus", "hooks": hooks}
    assert read(config) == {"hooks": {"Stop": [group("hookd's own")]}}
    backup = home / ".claude" / ("settings.json" + BACKUP_SUFFIX)
    assert f"kept {backup}" in capsys.readouterr().out and backup.exists()


def test_a_moved_group_edited_in_hookd_stays_there_alone(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user edited a moved group in hookd's config: uninstall leaves it there (with
    a note) and does not also give the settings file its old version — it would run
    twice, once edited and once not."""
    settings_path = home / ".claude" / "settings.json"
    write(settings_path, {"hooks": {"PreToolUse": [group("guard")], "Stop": [group("ping")]}})
    assert claude("install", "user", tmp_path, "--port", "47999") == 0
    config = home / ".config" / "hookd" / "hooks.json"
    data = read(config)
    data["hooks"]["PreToolUse"] = [group("guard --strict")]
    write(config, data)
    capsys.readouterr()
    assert claude("uninstall", "user", tmp_path) == 0
    assert "1 group(s) install moved are no longer in" in capsys.readouterr().out
    assert read(settings_path) == {"hooks": {"Stop": [group("ping")]}}
    assert read(config) == {"hooks": {"PreToolUse": [group("guard --strict")]}}


@pytest.mark.parametrize("scope", CLAUDE_SCOPES)
def test_import_copies_into_its_own_scope_and_warns_they_now_run_twice(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], scope: str
) -> None:
    settings_path, config = paths_for(scope, project)  # type: ignore[arg-type]
    original = write(settings_path, {"hooks": {"PreToolUse": [group("guard")]}})
    capsys.readouterr()
    assert hookctl(["claude", "import", f"--{scope}", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert f"copied into {config}; while Claude Code also runs them from {settings_path}" in out
    assert read(config) == {"hooks": {"PreToolUse": [group("guard")]}}
    assert settings_path.read_bytes() == original
    write(settings_path, {"model": "opus"})  # nothing to copy: nothing said
    assert hookctl(["claude", "import", f"--{scope}", "--project-dir", str(project)]) == 0
    assert "copied into" not in capsys.readouterr().out


# --- hookctl doctor's lint of an agent's files -------------------------------------------------


def test_doctor_lints_every_file_of_every_scope_and_says_each_silent_failure_once(
    home: Path, project: Path
) -> None:
    """A missing file does not end the scan of the scope's other files; a matcher in
    Claude Code's words the agent never meets, an implausible timeout (and not a plausible
    one) and an unreadable file are each said once, at their place."""
    factory = adapter_for("factory")
    hooks_json, settings = factory.hook_files("user", home, project)
    assert not hooks_json.exists()
    plain = {"hooks": [{"type": "command", "command": "ok", "timeout": 5}]}
    slow = {"matcher": "Bash", "hooks": [{"type": "command", "command": "x", "timeout": 5000}]}
    write(settings, {"hooks": {"PreToolUse": [plain, slow]}})
    found = {(f.severity, f.where) for f in lint_agent(factory, home, project, ("user",))}
    assert found == {
        ("warning", "PreToolUse[1].hooks[0].timeout"),
        ("warning", "hooks.PreToolUse[1].matcher"),
    }, found
    # A file that cannot be read (a folder at its name) is an error naming it.
    cursor = adapter_for("cursor")
    [unreadable] = cursor.install_files("project", home, project)
    unreadable.mkdir(parents=True)
    found_cursor = [(f.severity, f.path, f.message) for f in lint_agent(cursor, home, project)]
    assert [(s, p) for s, p, m in found_cursor if "cannot read it" in m] == [
        ("error", str(unreadable))
    ]

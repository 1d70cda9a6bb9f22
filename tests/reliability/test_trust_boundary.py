"""Trust is decided on where the loader *found* a file, never on where a symlink leads.

A repository carries symlinks (git stores them): ``.claude/hooks.json ->
../../assets/h.json``, a ``.claude`` that points elsewhere, a plugin or skill
directory linked out.  Issue 28's red team ran all seven variants it tried without
``hookctl trust``.  :func:`test_every_link_leaving_a_project_is_still_the_projects`
enumerates the whole class through one real daemon — every file kind a project
holds × every place on its path a link can sit (the file, each directory above it)
× absolute and relative links, link chains and hard links × where the link lands (an untrusted
place, a *trusted* directory) — and checks the hook's side effect: held back while
the project is untrusted, run once it is trusted (unpinned, then pinned), held back
again when a pinned link's target changes behind it, even with its size and mtime
restored.  The other tests: a pin covers skills, a digest notices a ``cp -p`` edit,
a skill name cannot walk out of the skill directories, and the legitimate setups
that must keep working.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from hookd.daemon import trust as trust_module
from hookd.daemon.trust import TrustStore
from hookd_client.client import Client
from reliability.helpers import event
from reliability.test_trust import hookctl, state


@dataclass(frozen=True)
class Kind:
    """A file a project can hold that brings hooks: where it sits in the project."""

    name: str
    rel: str

    @property
    def skill(self) -> bool:
        return self.rel.endswith("SKILL.md")


KINDS = (
    Kind("hooks", ".claude/hooks.json"),
    Kind("local", ".claude/hooks.local.json"),
    Kind("settings", ".claude/settings.json"),  # read with claude_settings on
    Kind("settings-local", ".claude/settings.local.json"),
    Kind("plugin", ".claude/plugins/p/hooks.json"),
    Kind("skill", ".claude/skills/s/SKILL.md"),
)


@dataclass(frozen=True)
class Variant:
    kind: Kind
    depth: int
    """Which component of ``kind.rel`` is the link (1: ``.claude``; the last: the file)."""
    how: str
    """``abs``, ``rel``, ``chain`` (the file links into the project, that link out) or
    ``hard`` (the file is a hard link: no link to see, only where it was found)."""
    lands: str
    """``away`` (an untrusted directory outside any project) or ``trusted`` (a trusted one)."""

    @property
    def id(self) -> str:
        return f"{self.kind.name}-d{self.depth}-{self.how}-{self.lands}"

    @property
    def tag(self) -> str:
        return "RUN" + self.id.replace("-", "_")


def _variants() -> Iterator[Variant]:
    for kind in KINDS:
        parts = kind.rel.split("/")
        for lands in ("away", "trusted"):
            for depth in range(1, len(parts) + 1):
                for how in ("abs", "rel"):
                    yield Variant(kind, depth, how, lands)
            yield Variant(kind, len(parts), "chain", lands)
            yield Variant(kind, len(parts), "hard", lands)


VARIANTS = tuple(_variants())

HOOK_COMMAND = "touch {marker} && printf '%s' '{output}'"


def _content(kind: Kind, tag: str, marker: Path) -> str:
    output = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                "additionalContext": tag}})  # fmt: skip
    command = HOOK_COMMAND.format(marker=marker, output=output)
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}
    if not kind.skill:
        return json.dumps({"hooks": {"PreToolUse": [group]}})
    # JSON is YAML: the frontmatter's hooks are the same group.
    return f"---\nname: s\ndescription: d\nhooks: {json.dumps({'PreToolUse': [group]})}\n---\nx\n"


def _link(link: Path, target: Path, relative: bool) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent) if relative else target)


def _plant(v: Variant, project: Path, landing: Path, marker: Path) -> Path:
    """Build ``v`` in ``project`` with the bytes in ``landing``; returns the real file."""
    parts = v.kind.rel.split("/")
    project.mkdir(parents=True)
    if v.how == "chain":
        # .claude/…/file -> ../…/hop (inside the project) -> <landing>/hop2 -> <landing>/real
        real = landing / "real"
        real.parent.mkdir(parents=True)
        real.write_text(_content(v.kind, v.tag, marker))
        _link(landing / "hop2", real, relative=False)
        _link(project / "hop", landing / "hop2", relative=False)
        _link(project / v.kind.rel, project / "hop", relative=True)
        return real
    if v.how == "hard":
        real = landing / parts[-1]
        real.parent.mkdir(parents=True)
        real.write_text(_content(v.kind, v.tag, marker))
        (project / v.kind.rel).parent.mkdir(parents=True, exist_ok=True)
        os.link(real, project / v.kind.rel)
        return real
    real = landing.joinpath(*parts[v.depth - 1 :])
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text(_content(v.kind, v.tag, marker))
    _link(project.joinpath(*parts[: v.depth]), landing / parts[v.depth - 1], v.how == "rel")
    return real


@dataclass
class Planted:
    variant: Variant
    project: Path
    landing: Path
    real: Path
    marker: Path


def _fire(sock: Path, project: Path, session: str, skill: bool) -> list[str]:
    with Client(sock) as client:
        if skill:
            invoke = event(cwd=str(project), session_id=session, tool_name="Skill")
            invoke["tool_input"] = {"skill": "s"}
            client.fire("PreToolUse", invoke)
        raw = event(cwd=str(project), session_id=session)
        return client.fire("PreToolUse", raw).result.additional_context


def _runs(sock: Path, planted: list[Planted], phase: str) -> dict[str, bool]:
    """variant id → did its hook run (its context came back *and* its marker appeared)."""
    out: dict[str, bool] = {}
    for p in planted:
        contexts = _fire(sock, p.project, f"{p.variant.id}-{phase}", p.variant.kind.skill)
        ran = p.variant.tag in contexts
        assert ran == p.marker.exists(), (p.variant.id, contexts)
        out[p.variant.id] = ran
        p.marker.unlink(missing_ok=True)
    return out


async def _claude_settings_daemon(daemon_factory: Any, monkeypatch: Any, home: Path) -> Any:
    # claude_settings reads ~/.claude/settings.json as a user file: keep it off the real home.
    monkeypatch.setenv("HOME", str(home))
    return await daemon_factory(require_trust=True, claude_settings=True)


async def test_every_link_leaving_a_project_is_still_the_projects(
    daemon_factory: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    assert len({v.id for v in VARIANTS}) == len(VARIANTS) == 88
    handle = await _claude_settings_daemon(daemon_factory, monkeypatch, tmp_path)
    base = handle.root / "t"
    planted = []
    for v in VARIANTS:
        landing = base / v.lands / v.id
        project = base / "projects" / v.id
        marker = base / "ran" / v.id
        marker.parent.mkdir(parents=True, exist_ok=True)
        planted.append(Planted(v, project, landing, _plant(v, project, landing, marker), marker))
    store = TrustStore(handle.daemon.settings.state_path() / "trust.json")
    store.trust(str(base / "trusted"), handle.daemon.layout)
    handle.daemon.reload()
    sock = handle.socket

    untrusted = await trio.to_thread.run_sync(_runs, sock, planted, "untrusted")
    assert [name for name, ran in untrusted.items() if ran] == []

    # Trusting the projects (unpinned) runs every one: a link inside a trusted project is fine.
    store.trust(str(base / "projects"), handle.daemon.layout)
    trusted = await trio.to_thread.run_sync(_runs, sock, planted, "trusted")
    assert [name for name, ran in trusted.items() if not ran] == []

    # The opposite direction: a directory a trusted project links to is not trusted by it.
    away_claude = [p for p in planted if p.variant.lands == "away" and p.variant.depth == 1]
    away_claude = [p for p in away_claude if p.variant.how == "abs" and not p.variant.kind.skill]
    as_projects = [Planted(p.variant, p.landing, p.landing, p.real, p.marker) for p in away_claude]
    landed = await trio.to_thread.run_sync(_runs, sock, as_projects, "landing")
    assert [name for name, ran in landed.items() if ran] == []

    # Pinned, each project on its own: runs; then its bytes change behind the link with size
    # and mtime restored (cp -p, rsync -t --inplace): held back.
    store.untrust(str(base / "projects"))
    for p in planted:
        store.trust(str(p.project), handle.daemon.layout, pin=True)
    handle.daemon.reload()
    pinned = await trio.to_thread.run_sync(_runs, sock, planted, "pinned")
    assert [name for name, ran in pinned.items() if not ran] == []
    for p in planted:
        _same_size_edit(p.real)
    handle.daemon.reload()
    edited = await trio.to_thread.run_sync(_runs, sock, planted, "edited")
    assert [name for name, ran in edited.items() if ran] == []


def _same_size_edit(path: Path) -> None:
    """Change the bytes, keep the size, put the mtime back (what ``cp -p`` leaves)."""
    st = path.stat()
    text = path.read_text()
    path.write_text(text.replace("RUN", "EVL", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


# --- a pin covers what the project held, and nothing it gains later ----------------------


async def test_every_file_kind_a_pinned_project_gains_later_is_held_back(
    daemon_factory: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    """A repository pinned with only ``.claude/hooks.json`` later gains (a ``git pull``)
    a file of every other kind, plain or linked to a trusted directory: none of their
    hooks runs unasked, although the pin covered the project's hooks a moment before."""
    handle = await _claude_settings_daemon(daemon_factory, monkeypatch, tmp_path)
    base = handle.root / "g"
    store = TrustStore(handle.daemon.settings.state_path() / "trust.json")
    store.trust(str(base / "trusted"), handle.daemon.layout)
    planted: list[Planted] = []
    for kind in KINDS[1:]:
        for how in ("plain", "abs"):
            v = Variant(kind, len(kind.rel.split("/")), how, "trusted")
            project = base / "projects" / v.id
            marker = base / "ran" / v.id
            marker.parent.mkdir(parents=True, exist_ok=True)
            first = base / "ran" / f"{v.id}-first"
            (project / ".claude").mkdir(parents=True)
            (project / ".claude" / "hooks.json").write_text(_content(KINDS[0], "FIRST", first))
            store.trust(str(project), handle.daemon.layout, pin=True)
            planted.append(Planted(v, project, base / "trusted" / v.id, project / kind.rel, marker))
    handle.daemon.reload()
    for p in planted:
        contexts = await trio.to_thread.run_sync(_fire, handle.socket, p.project, "pin", False)
        assert contexts == ["FIRST"], (p.variant.id, contexts)
    for p in planted:  # the pull
        content = _content(p.variant.kind, p.variant.tag, p.marker)
        if p.variant.how == "plain":
            p.real.parent.mkdir(parents=True, exist_ok=True)
            p.real.write_text(content)
        else:
            p.landing.mkdir(parents=True)
            (p.landing / "f").write_text(content)
            _link(p.real, p.landing / "f", relative=False)
    handle.daemon.reload()
    ran = await trio.to_thread.run_sync(_runs, handle.socket, planted, "pulled")
    assert [name for name, did in ran.items() if did] == []


# --- a pin covers skills ----------------------------------------------------------------


async def test_a_pin_covers_the_projects_skills(daemon_factory: Any) -> None:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    (project / ".claude" / "hooks.json").write_text(_content(KINDS[0], "HOOKS", project / "h"))
    skills = project / ".claude" / "skills"
    old = skills / "old" / "SKILL.md"
    old.parent.mkdir(parents=True)
    old.write_text(_content(KINDS[-1], "OLD", project / "old-ran").replace("name: s", "name: old"))
    handle.daemon.reload()
    done = hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert done.returncode == 0, done.stderr
    sessions = iter(range(1000))

    def invoke(name: str | None) -> list[str]:
        session = f"s{next(sessions)}"
        with Client(handle.socket) as client:
            if name is not None:
                raw = event(cwd=str(project), session_id=session, tool_name="Skill")
                raw["tool_input"] = {"skill": name}
                client.fire("PreToolUse", raw)
            raw = event(cwd=str(project), session_id=session)
            return sorted(client.fire("PreToolUse", raw).result.additional_context)

    async def held_back() -> None:
        """The watcher sees the skill change and the pin stops holding for every hook."""
        with trio.fail_after(30):
            while await trio.to_thread.run_sync(invoke, None):
                await trio.sleep(0.05)

    assert await trio.to_thread.run_sync(invoke, "old") == ["HOOKS", "OLD"]
    # A `git pull` brings a new skill with a PreToolUse hook: the pin no longer holds.
    new = skills / "new" / "SKILL.md"
    new.parent.mkdir()
    new.write_text(_content(KINDS[-1], "NEW", project / "new-ran").replace("name: s", "name: new"))
    # The skill is checked afresh when invoked (the project's other hooks stop once the
    # watcher has seen the change: below).
    assert "NEW" not in await trio.to_thread.run_sync(invoke, "new")
    assert not (project / "new-ran").exists()
    await held_back()
    assert await trio.to_thread.run_sync(invoke, "old") == []
    listing = hookctl(handle, "trust", "--list", "--state-dir", state(handle))
    assert "changed since they were trusted" in listing.stdout
    done = hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert ".claude/skills/new/SKILL.md" in done.stdout  # the pin lists what it covers
    assert ".claude/skills/old/SKILL.md" in done.stdout
    assert await trio.to_thread.run_sync(invoke, "new") == ["HOOKS", "NEW"]
    # An edited skill needs re-trust too.
    new.write_text(new.read_text().replace("NEW", "MOD"))
    assert "MOD" not in await trio.to_thread.run_sync(invoke, "new")
    await held_back()
    assert await trio.to_thread.run_sync(invoke, "new") == []


# --- a digest notices an edit that restores size and mtime --------------------------------


async def test_a_pinned_file_edited_with_its_mtime_restored_is_not_trusted(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    hooks = project / ".claude" / "hooks.json"
    hooks.write_text(_content(KINDS[0], "RUN_PINNED", project / "ran"))
    handle.daemon.reload()
    store = TrustStore(handle.daemon.settings.state_path() / "trust.json")
    store.trust(str(project), handle.daemon.layout, pin=True)
    gate = handle.daemon.trust
    real = os.path.realpath(hooks)
    # Wait until the daemon holds the file's digest in its cache (a file written a moment ago
    # is re-read each time, however its stat looks): the edit below must beat the cache.
    with trio.fail_after(30):
        while not (gate.verdict(str(project)).trusted and real in trust_module._hash_cache):
            await trio.sleep(0.05)
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "a", False) == [
        "RUN_PINNED"
    ]
    _same_size_edit(hooks)
    handle.daemon.reload()
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "b", False) == []
    assert "changed since they were trusted" in gate.verdict(str(project)).reason


# --- a skill's name is one path component -------------------------------------------------


async def test_a_skill_name_cannot_walk_out_of_the_skill_directories(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    outside = handle.root / "elsewhere" / "evil" / "SKILL.md"
    outside.parent.mkdir(parents=True)
    # No frontmatter name: the directory's name is the skill's, so a path "names" it.
    outside.write_text(_content(KINDS[-1], "EVIL", handle.root / "ran").replace("name: s\n", ""))
    (handle.home / ".claude" / "skills").mkdir(parents=True)

    def invoke(name: str) -> list[str]:
        with Client(handle.socket) as client:
            raw = event(cwd=str(project), session_id=name, tool_name="Skill")
            raw["tool_input"] = {"skill": name}
            client.fire("PreToolUse", raw)
        return _fire(handle.socket, project, name, False)

    for skills in (handle.home / ".claude" / "skills", project / ".claude" / "skills"):
        walk = os.path.relpath(outside.parent, skills)  # ../../elsewhere/evil
        assert await trio.to_thread.run_sync(invoke, walk) == []
    assert not (handle.root / "ran").exists()


# --- legitimate setups keep working -------------------------------------------------------


async def test_a_project_reached_through_a_symlinked_path_keeps_its_trust(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    real = handle.root / "data" / "homes" / "u"
    project = real / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "hooks.json").write_text(_content(KINDS[0], "PROJ", handle.root / "r"))
    (handle.root / "homes").symlink_to(handle.root / "data" / "homes")  # /home -> /data/home
    via_link = handle.root / "homes" / "u" / "proj"
    hookctl(handle, "trust", str(via_link), "--state-dir", state(handle))
    for cwd in (via_link, project):
        assert await trio.to_thread.run_sync(_fire, handle.socket, cwd, str(cwd), False) == ["PROJ"]


async def test_the_users_own_links_into_a_checkout_stay_the_users(
    daemon_factory: Any,
) -> None:
    """~/.claude linked into a dotfiles checkout: its plugins and skills are the user's, also
    while the agent works in that (untrusted) checkout."""
    handle = await daemon_factory(require_trust=True)
    dotfiles = handle.root / "dotfiles"
    plugin = dotfiles / "claude" / "plugins" / "mine" / "hooks.json"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(_content(KINDS[4], "MINE", handle.root / "mine-ran"))
    (handle.home / ".claude").symlink_to(dotfiles / "claude")
    handle.daemon.reload()
    for cwd in (dotfiles, handle.project("other")):
        assert await trio.to_thread.run_sync(_fire, handle.socket, cwd, str(cwd), False) == ["MINE"]


async def test_an_edit_behind_a_link_breaks_the_pin_without_a_reload(daemon_factory: Any) -> None:
    """``.claude/hooks.json -> ../assets/h.json``: the watcher watches where the file really
    is, so a ``git pull`` that edits ``assets/h.json`` is seen like an edit of the file."""
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    real = project / "assets" / "h.json"
    real.parent.mkdir()
    real.write_text(_content(KINDS[0], "RUN_LINKED", project / "ran"))
    (project / ".claude" / "hooks.json").symlink_to("../assets/h.json")
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "0", False) == []
    # Once the watcher has seen a file created in .claude, it watches this project's places.
    local = project / ".claude" / "hooks.local.json"
    local.write_text("{}")
    with trio.fail_after(30):
        while not any(s.path == str(local) and s.exists for s in handle.daemon.registry.sources()):
            await trio.sleep(0.05)
    done = hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert "-> assets/h.json" in done.stdout, done.stdout
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "a", False) == [
        "RUN_LINKED"
    ]
    real.write_text(real.read_text().replace("RUN", "EVL"))
    with trio.fail_after(30):
        while await trio.to_thread.run_sync(_fire, handle.socket, project, "b", False):
            await trio.sleep(0.05)


async def test_a_hook_file_leading_to_a_device_or_fifo_does_not_stall_the_daemon(
    daemon_factory: Any,
) -> None:
    """``.claude/hooks.json -> /dev/zero`` (git carries the link) and a link to a FIFO: read
    as they are, the first would eat the daemon's memory and the second block it, before
    trust is even asked.  Each is an error on its file; the user's hooks keep running."""
    handle = await daemon_factory(require_trust=True)
    handle.user_config.write_text(_content(KINDS[0], "USER", handle.root / "user-ran"))
    project = handle.project("repo")
    fifo = handle.root / "fifo"
    os.mkfifo(fifo)
    (project / ".claude" / "hooks.json").symlink_to("/dev/zero")
    (project / ".claude" / "hooks.local.json").symlink_to(fifo)
    handle.daemon.reload()
    with trio.fail_after(30):
        contexts = await trio.to_thread.run_sync(_fire, handle.socket, project, "a", False)
    assert contexts == ["USER"]
    problems = {s.path: s.errors for s in handle.daemon.registry.sources() if s.errors}
    assert "a character device, not a regular file" in str(
        problems[str(project / ".claude" / "hooks.json")]
    )
    assert "a FIFO, not a regular file" in str(
        problems[str(project / ".claude" / "hooks.local.json")]
    )
    store = TrustStore(handle.daemon.settings.state_path() / "trust.json")
    store.trust(str(project), handle.daemon.layout, pin=True)  # hashes neither, says so
    assert store.entries()[0].files == [
        ".claude/hooks.json -> /dev/zero",
        f".claude/hooks.local.json -> {fifo}",
    ]


def test_hookctl_trust_names_hook_files_that_lead_outside(tmp_path: Path) -> None:
    """Plain trust takes whatever a link leads to later; ``hookctl trust`` says so."""
    import subprocess
    import sys

    project, away = tmp_path / "repo", tmp_path / "away" / "h.json"
    (project / ".claude").mkdir(parents=True)
    away.parent.mkdir()
    away.write_text(_content(KINDS[0], "AWAY", tmp_path / "ran"))
    (project / ".claude" / "hooks.json").symlink_to(away)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_STATE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookctl", "trust", str(project)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f".claude/hooks.json -> {away} leads outside {project}" in done.stderr
    assert "hookctl trust --pin would notice" in done.stderr


async def test_a_pin_is_checked_against_the_bytes_that_run(daemon_factory: Any) -> None:
    """A file swapped after a reload and swapped back before the next event: the generation
    holds the swapped-in bytes, and those are what the pin is checked against, not the
    disk's (no watcher here, so nothing reloads behind the test's back)."""
    handle = await daemon_factory(require_trust=True, watch=False)
    project = handle.project("repo")
    hooks = project / ".claude" / "hooks.json"
    reviewed = _content(KINDS[0], "RUN_REVIEWED", project / "ran")
    hooks.write_text(reviewed)
    handle.daemon.reload()
    hookctl(handle, "trust", "--pin", str(project), "--state-dir", state(handle))
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "a", False) == [
        "RUN_REVIEWED"
    ]
    hooks.write_text(_content(KINDS[0], "RUN_SWAPPED", project / "ran"))
    handle.daemon.reload()
    hooks.write_text(reviewed)  # back before any event asked
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "b", False) == []
    # A plugin added and removed again the same way.
    handle.daemon.reload()
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "c", False) == [
        "RUN_REVIEWED"
    ]
    plugin = project / ".claude" / "plugins" / "p" / "hooks.json"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(_content(KINDS[4], "RUN_PLUGIN", project / "ran"))
    handle.daemon.reload()
    plugin.unlink()
    assert await trio.to_thread.run_sync(_fire, handle.socket, project, "d", False) == []


async def test_the_project_is_claude_project_dir_and_its_links_are_its_own(
    daemon_factory: Any,
) -> None:
    """The agent's ``CLAUDE_PROJECT_DIR`` names the project (the cwd may be anywhere, even a
    trusted directory); its ``.claude`` linked to that trusted directory is still its own."""
    handle = await daemon_factory(require_trust=True)
    trusted = handle.project("trusted")
    (trusted / ".claude" / "hooks.json").write_text(_content(KINDS[0], "T", handle.root / "t"))
    repo = handle.root / "repo"
    repo.mkdir()
    (repo / ".claude").symlink_to(trusted / ".claude")
    hookctl(handle, "trust", str(trusted), "--state-dir", state(handle))
    pipeline = handle.daemon.pipeline

    def prepare(cwd: Path, project: Path, session: str) -> tuple[int, int]:
        raw = event(cwd=str(cwd), session_id=session)
        prepared = pipeline.prepare("PreToolUse", raw, env={"CLAUDE_PROJECT_DIR": str(project)})
        return len(prepared.plan.hooks), prepared.held_back

    assert prepare(trusted, repo, "a") == (0, 1)
    assert prepare(repo, trusted, "b") == (1, 0)  # the trusted project, from any cwd

"""What a repository (or anything else) plants where the installers write (issue 28.2/10/12a).

Table-driven over every agent × scope ``hookctl claude install`` and ``hookctl
agents install <agent>`` support, through the real command on real files in a
private HOME: a symlink at each predictable name (the temporary file of the
agent's file, of its backup, of its install record, of hookd's config), an
install record the project carries, the agent's file or its directory as a
symlink (dotfiles at user scope, leading out of the project at project scope),
and ``install`` then ``uninstall`` giving every byte back (issue 31.7).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hookd.agents.registry import ADAPTERS, adapter_for
from hookd.cli.hookctl import main as hookctl
from hookd.installers.claude_settings import BACKUP_SUFFIX, MOVED_SUFFIX, paths_for

SCOPES = {"claude": ("user", "project", "local")}
CASES = [("claude", scope) for scope in SCOPES["claude"]] + [
    (a.name, scope)
    for a in ADAPTERS
    if a.name != "claude"
    for scope in ("user", "project")
    if a.install_files(scope, Path("/home"), Path("/project"))
]
"""Every agent and scope an installer supports (Claude Code's three, the others' two)."""
IDS = [f"{agent}-{scope}" for agent, scope in CASES]
PROJECT_CASES = [c for c in CASES if c[1] != "user"]
USER_CASES = [c for c in CASES if c[1] == "user"]

CLAUDE_ORIGINAL = (
    '{\n    "model": "opus",\n    "theme": "dunkel – ä",\n    "hooks": {"PreToolUse": '
    '[{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}]}\n}'
)
"""Not what json.dumps would write (indent 4, one line folded, no final newline)."""
USER_GROUP = {"matcher": "Write", "hooks": [{"type": "command", "command": "~/bin/fmt.sh"}]}


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file the user can write, outside everything the installers own."""
    path = tmp_path / "victim" / "precious.txt"
    path.parent.mkdir()
    path.write_text("the user's own file\n")
    path.chmod(0o644)
    return path


NO_DAEMON = 3
"""``hookctl claude install``'s exit status when the daemon that should serve the door is down."""


def install(agent: str, scope: str, project: Path, *extra: str) -> int:
    where = [f"--{scope}", "--project-dir", str(project), "--python-relay", *extra]
    if agent == "claude":
        code = hookctl(["claude", "install", *where])
        # 3: written, but no daemon serves the door it wired (these tests start none).
        return 0 if code == NO_DAEMON else code
    return hookctl(["agents", "install", agent, *where])


def uninstall(agent: str, scope: str, project: Path) -> int:
    where = [f"--{scope}", "--project-dir", str(project)]
    if agent == "claude":
        return hookctl(["claude", "uninstall", *where])
    return hookctl(["agents", "uninstall", agent, *where])


def agent_file(agent: str, scope: str, home: Path, project: Path) -> Path:
    if agent == "claude":
        return paths_for(scope, project)[0]  # type: ignore[arg-type]
    return adapter_for(agent).install_files(scope, home, project)[0]  # type: ignore[arg-type]


def hookd_config(agent: str, scope: str, project: Path) -> Path:
    if agent == "claude":
        return paths_for(scope, project)[1]  # type: ignore[arg-type]
    return paths_for("user" if scope == "user" else "project", project)[1]


def original(agent: str) -> str | None:
    """A file the agent's adapter reads (None: Cline, whose own scripts install leaves alone)."""
    if agent == "claude":
        return CLAUDE_ORIGINAL
    return None if agent == "cline" else '{ "note": "mine" }\n'


def tree(root: Path) -> dict[str, tuple[bool, bytes | str]]:
    """Every entry under ``root``: links by their target, files by their bytes."""
    out: dict[str, tuple[bool, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            out[str(path.relative_to(root))] = (True, os.readlink(path))
        elif path.is_file():
            out[str(path.relative_to(root))] = (False, path.read_bytes())
    return out


# --- the predictable temporary name (28.2) -------------------------------------------------

SPOTS = ["file", "backup", "record", "hookd-config"]


def _spot_cases() -> list[tuple[str, str, str]]:
    out = []
    for agent, scope in CASES:
        for spot in SPOTS:
            if spot == "backup" and original(agent) is None:
                continue  # nothing to back up
            if spot == "hookd-config" and agent != "claude":
                continue  # only Claude Code's file here holds hooks that move
            out.append((agent, scope, spot))
    return out


@pytest.mark.parametrize(("agent", "scope", "spot"), _spot_cases(),
                         ids=[f"{a}-{s}-{p}" for a, s, p in _spot_cases()])  # fmt: skip
def test_a_symlink_at_a_temporary_name_is_never_written_through(
    home: Path, project: Path, victim: Path, agent: str, scope: str, spot: str
) -> None:
    target = agent_file(agent, scope, home, project)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = original(agent)
    if text is not None:
        target.write_text(text)
    written = {
        "file": target,
        "backup": target.with_name(target.name + BACKUP_SUFFIX),
        "record": target.with_name(target.name + MOVED_SUFFIX),
        "hookd-config": hookd_config(agent, scope, project),
    }[spot]
    written.parent.mkdir(parents=True, exist_ok=True)
    planted = written.with_name(f".{written.name}.hookd-tmp")
    planted.symlink_to(victim)

    assert install(agent, scope, project) == 0
    assert victim.read_text() == "the user's own file\n"
    assert victim.stat().st_mode & 0o777 == 0o644  # not chmodded through the link either
    assert written.is_file() and not written.is_symlink()
    assert planted.is_symlink()  # left alone: hookd's temporary files have other names
    assert not [p for p in written.parent.iterdir() if p.name.endswith(".hookd-tmp") and
                p != planted]  # fmt: skip


# --- an install record the repository carries (28.10) ----------------------------------------


@pytest.mark.parametrize("form", ["file", "symlink"])
@pytest.mark.parametrize(
    ("agent", "scope"),
    [c for c in PROJECT_CASES if c[0] != "claude"],
    ids=[f"{a}-{s}" for a, s in PROJECT_CASES if a != "claude"],
)
def test_a_projects_install_record_cannot_touch_the_users_config(
    home: Path,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
    scope: str,
    form: str,
) -> None:
    """A record naming ``~/.config/hookd/hooks.json`` (and groups the user has there) used
    to make ``uninstall --project`` strip that file or delete it."""
    users = home / ".config" / "hookd" / "hooks.json"
    users.parent.mkdir(parents=True)
    users.write_text(json.dumps({"hooks": {"PreToolUse": [USER_GROUP]}}))
    before = users.read_bytes()
    target = agent_file(agent, scope, home, project)
    assert install(agent, scope, project) == 0
    record = target.with_name(target.name + MOVED_SUFFIX)
    forged = json.loads(record.read_text())
    forged.update(hookd_config=str(users), hookd_config_existed=False,
                  added={"PreToolUse": [USER_GROUP]})  # fmt: skip
    record.write_text(json.dumps(forged))
    if form == "symlink":
        elsewhere = tmp_path / "elsewhere.json"
        record.rename(elsewhere)
        record.symlink_to(elsewhere)
    capsys.readouterr()

    assert uninstall(agent, scope, project) == 1
    err = capsys.readouterr().err
    assert str(record) in err and ("refused" in err or "symlink" in err)
    assert users.read_bytes() == before


# --- the agent's file or its directory is a symlink (28.12a) ----------------------------------


@pytest.mark.parametrize(("agent", "scope"), USER_CASES, ids=[f"{a}-{s}" for a, s in USER_CASES])
def test_a_users_dotfile_link_is_kept_and_its_target_edited_and_given_back(
    home: Path, project: Path, agent: str, scope: str
) -> None:
    target = agent_file(agent, scope, home, project)
    dotfile = home / "dotfiles" / f"{agent}-{target.name}"
    dotfile.parent.mkdir()
    text = original(agent)
    if text is not None:
        dotfile.write_text(text)
        dotfile.chmod(0o640)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(dotfile)

    assert install(agent, scope, project) == 0
    assert target.is_symlink() and os.readlink(target) == str(dotfile)
    assert dotfile.read_text() != text  # the link's target is what got wired
    assert sorted(p.name for p in dotfile.parent.iterdir()) == [dotfile.name]  # no litter

    assert uninstall(agent, scope, project) == 0
    assert target.is_symlink() and os.readlink(target) == str(dotfile)
    if text is None:
        assert not dotfile.exists()
    else:
        assert dotfile.read_text() == text and dotfile.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("dry_run", [False, True], ids=["", "dry-run"])
@pytest.mark.parametrize("via", ["file", "directory"])
@pytest.mark.parametrize(
    ("agent", "scope"), PROJECT_CASES, ids=[f"{a}-{s}" for a, s in PROJECT_CASES]
)
def test_a_projects_file_leading_outside_the_project_is_refused(
    home: Path,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
    scope: str,
    via: str,
    dry_run: bool,
) -> None:
    """Install and its dry run alike (the dry run must not promise what install refuses)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = agent_file(agent, scope, home, project)
    text = original(agent)
    if via == "file":
        if text is not None:  # Cline: a dangling link (its own script there it leaves alone)
            (outside / target.name).write_text(text)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(outside / target.name)
    else:
        target.parent.parent.mkdir(parents=True, exist_ok=True)
        target.parent.symlink_to(outside, target_is_directory=True)
    before = tree(outside), tree(project)
    capsys.readouterr()

    assert install(agent, scope, project, *(["--dry-run"] if dry_run else [])) == 1
    err = capsys.readouterr().err
    assert "outside the project" in err and str(project) in err
    assert (tree(outside), tree(project)) == before
    assert not (home / ".config" / "hookd" / "hooks.json").exists()


# --- install then uninstall: every byte back, nothing left (31.7) ------------------------------

HOOKD_OWN = {".config/hookd/http-token", ".config/hookd/hookd.toml", ".config/hookd", ".config"}
"""What ``hookctl claude install`` keeps on purpose: the token and the port it serves."""


def _round_trips() -> list[tuple[str, str, bool]]:
    """Claude Code's installer with and without a file; the others from no file (with one,
    tests/installers/test_agent_install.py and the gemini tests already check every byte)."""
    return [(a, s, e) for a, s in CASES for e in (True, False) if not e or a == "claude"]


@pytest.mark.parametrize(("agent", "scope", "existed"), _round_trips(),
                         ids=[f"{a}-{s}-{'file' if e else 'no-file'}"
                              for a, s, e in _round_trips()])  # fmt: skip
def test_install_then_uninstall_leaves_every_byte_as_it_was(
    home: Path, project: Path, agent: str, scope: str, existed: bool
) -> None:
    """The agent's file byte for byte and with its mode (or absent again), and no backup,
    record, hookd config or folder of install's left (Claude Code's installer too)."""
    target = agent_file(agent, scope, home, project)
    text = original(agent)
    if existed and text is not None:
        target.parent.mkdir(parents=True)
        target.write_text(text)
        target.chmod(0o644)

    def files() -> dict[str, object]:
        seen = {f"home/{k}": v for k, v in tree(home).items() if k not in HOOKD_OWN}
        seen |= {f"project/{k}": v for k, v in tree(project).items()}
        folders = [p for p in (*home.rglob("*"), *project.rglob("*")) if p.is_dir()]
        return {**seen, "folders": sorted(str(p) for p in folders if str(p) not in
                                          {str(home / d) for d in HOOKD_OWN})}  # fmt: skip

    before = files()
    assert install(agent, scope, project) == 0
    assert files() != before
    assert uninstall(agent, scope, project) == 0
    assert files() == before
    if existed and text is not None:
        assert target.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("dry_run", [False, True], ids=["", "dry-run"])
def test_the_literal_token_is_not_written_through_a_link_inside_the_project(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], dry_run: bool
) -> None:
    """``--local`` writes the token itself: a link to a committed file of the project
    (inside it, so allowed for other files) would put the token into that file."""
    committed = project / "package.json"
    committed.write_text('{"name": "app"}\n')
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.symlink_to(Path("..") / "package.json")
    capsys.readouterr()
    assert install("claude", "local", project, *(["--dry-run"] if dry_run else [])) == 1
    assert "would hold hookd's token" in capsys.readouterr().err
    assert committed.read_text() == '{"name": "app"}\n' and local.is_symlink()


# --- a link planted at the name of a file only hookd writes ----------------------------------


def _backup_cases() -> list[tuple[str, str]]:
    """Every agent and scope with a file to back up (Claude Code's three scopes too)."""
    return [(a, s) for a, s in CASES if original(a) is not None]


@pytest.mark.parametrize(("agent", "scope"), _backup_cases(),
                         ids=[f"{a}-{s}" for a, s in _backup_cases()])  # fmt: skip
def test_a_link_at_the_backups_own_name_is_replaced_not_followed(
    home: Path, project: Path, agent: str, scope: str
) -> None:
    """The repository carries a link where install will put its backup, pointing at one
    of the project's own files (at user scope: a link at that name to one of the user's
    files): the backup replaces the link; the file keeps its bytes."""
    target = agent_file(agent, scope, home, project)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(original(agent) or "")
    kept = (home if scope == "user" else project) / "README.md"
    kept.write_text("the project's own file\n")
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    backup.symlink_to(kept)

    assert install(agent, scope, project) == 0
    assert kept.read_text() == "the project's own file\n"
    assert backup.is_file() and not backup.is_symlink()
    assert backup.read_text() == original(agent)


@pytest.mark.parametrize(("agent", "scope"), _backup_cases(),
                         ids=[f"{a}-{s}" for a, s in _backup_cases()])  # fmt: skip
def test_a_backup_already_there_is_never_overwritten(
    home: Path, project: Path, agent: str, scope: str
) -> None:
    """A regular file at the backup's name (an earlier install's first original, whose
    record was lost) is kept byte for byte by install: the first original stays."""
    target = agent_file(agent, scope, home, project)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(original(agent) or "")
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    backup.write_text("the first original\n")
    assert install(agent, scope, project) == 0
    assert backup.read_text() == "the first original\n"


@pytest.mark.parametrize(
    ("agent", "scope"), PROJECT_CASES, ids=[f"{a}-{s}" for a, s in PROJECT_CASES]
)
def test_a_projects_hookd_config_leading_outside_the_project_is_refused_unread(
    home: Path,
    project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
    scope: str,
) -> None:
    """hookd's config of the project decides the wiring (``--fail-closed``) and receives
    the moved hooks: a link there to a file outside is refused before it is read, even
    when install would not write it — and by uninstall, which takes hooks back out of it."""
    outside = tmp_path / "outside" / "hooks.json"
    outside.parent.mkdir()
    strict = {"type": "command", "command": "x", "onFailure": "block"}
    outside.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [strict]}]}}))
    config = hookd_config(agent, scope, project)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.symlink_to(outside)
    before = tree(project), outside.read_bytes()
    capsys.readouterr()
    assert install(agent, scope, project) == 1
    err = capsys.readouterr().err
    assert "outside the project" in err and str(config) in err
    assert (tree(project), outside.read_bytes()) == before
    # The same link planted after an install: uninstall refuses it unread too (it would
    # take hookd's groups back out of the file the link leads to).
    config.unlink()
    assert install(agent, scope, project) == 0
    config.unlink(missing_ok=True)
    config.symlink_to(outside)
    before = tree(project), outside.read_bytes()
    capsys.readouterr()
    assert uninstall(agent, scope, project) == 1
    err = capsys.readouterr().err
    assert "outside the project" in err and str(config) in err
    assert (tree(project), outside.read_bytes()) == before

"""hookd's other writers against a symlink planted at a name they write (issue 28.2's audit).

The installers have their own table (tests/installers/test_install_planted_paths.py);
these are the rest, each through its real code on real files: the trust store
and the async journal (rewritten through a temporary file), the audit log and
the journal (appended to), ``hookd.toml`` (``hookctl claude install`` sets the
http port), and ``hookctl systemd install``'s unit files.  A link there must
never lead a write (or a chmod) into the file it names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookd.cli.hookctl import main as hookctl
from hookd.daemon.async_store import JOURNAL, AsyncStore
from hookd.daemon.audit import AuditLog
from hookd_client.results import FireResult

NO_DAEMON = 3
"""``hookctl claude install``: written, but no daemon serves the door (none runs here)."""


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim" / "precious.txt"
    path.parent.mkdir()
    path.write_text("the user's own file\n")
    path.chmod(0o644)
    return path


def untouched(victim: Path) -> bool:
    return victim.read_text() == "the user's own file\n" and victim.stat().st_mode & 0o777 == 0o644


@pytest.fixture
def home(private_home: Path) -> Path:
    return private_home


def test_the_trust_store_is_not_written_through_a_link_at_its_temporary_name(
    home: Path, tmp_path: Path, victim: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "trust.tmp").symlink_to(victim)
    project = tmp_path / "project"
    project.mkdir()
    assert hookctl(["trust", str(project), "--state-dir", str(state)]) == 0
    assert untouched(victim)
    assert str(project) in (state / "trust.json").read_text()


def test_the_async_journal_is_not_rewritten_through_a_link_at_its_temporary_name(
    tmp_path: Path, victim: Path
) -> None:
    (tmp_path / JOURNAL).with_suffix(".tmp").symlink_to(victim)
    store = AsyncStore(tmp_path)
    assert store.load("restarted") == []
    store.close()
    assert untouched(victim)


def test_the_async_journal_and_the_audit_log_refuse_a_link_at_their_name(
    tmp_path: Path, victim: Path
) -> None:
    """Appending through a link would put hook output into the file it names: refused
    (the audit log counts the failure and keeps serving, as for any write error)."""
    (tmp_path / JOURNAL).symlink_to(victim)
    with pytest.raises(OSError):
        AsyncStore(tmp_path).dropped(["x"])
    audit_dir = tmp_path / "audit"
    audit_dir.mkdir()
    (audit_dir / "audit.jsonl").symlink_to(victim)
    log = AuditLog(audit_dir)
    log.event(log.begin("Stop", {}, "s", "/p", "test"), FireResult(event="Stop"))
    log.close()
    assert log.failed > 0
    assert untouched(victim)


def test_hookd_toml_is_not_written_through_a_link_at_its_temporary_name(
    home: Path, victim: Path
) -> None:
    config = home / ".config" / "hookd"
    config.mkdir(parents=True)
    (config / ".hookd.toml.hookd-tmp").symlink_to(victim)
    assert hookctl(["claude", "install", "--port", "47998", "--python-relay"]) == NO_DAEMON
    assert untouched(victim)
    assert (config / "hookd.toml").read_text().startswith("http_port = 47998")


def test_hookd_toml_linked_from_dotfiles_stays_a_link(home: Path) -> None:
    dotfile = home / "dotfiles" / "hookd.toml"
    dotfile.parent.mkdir()
    dotfile.write_text("log_level = 'info'\n")
    config = home / ".config" / "hookd"
    config.mkdir(parents=True)
    (config / "hookd.toml").symlink_to(dotfile)
    assert hookctl(["claude", "install", "--port", "47998", "--python-relay"]) == NO_DAEMON
    assert (config / "hookd.toml").is_symlink()
    assert dotfile.read_text().startswith("http_port = 47998")


def test_systemd_install_replaces_a_link_at_a_units_name_instead_of_writing_through_it(
    home: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "hookd.service").symlink_to(victim)
    assert hookctl(["systemd", "install", "--no-enable"]) == 0
    assert untouched(victim)
    service = units / "hookd.service"
    assert service.is_file() and not service.is_symlink()
    assert "ExecStart=" in service.read_text() and service.stat().st_mode & 0o777 == 0o644

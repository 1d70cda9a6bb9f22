"""Property tests of the trust store and the pin, from the side of a repository that wants
its hooks to run unasked.

Three rules, each over every case the store and a project can hold:

- **Which entry covers a directory**: its own entry (pinned or not), else the nearest
  *unpinned* ancestor's — never a pinned ancestor's, a sibling's that shares a prefix
  (``/src/app`` does not cover ``/src/app-evil``), a descendant's; and an entry as an older
  hookd or a hand edit wrote it (fields missing) means what the format's defaults say: no
  ``pinned`` is unpinned, a ``pinned`` entry without its fingerprint trusts nothing.  Whatever
  the store said before — a verdict asked a moment ago, a store deleted, damaged or
  rewritten — the answer is the store's as it is now.
- **A pin notices every change** of a file that can bring hooks into the project, of every
  kind: created, edited (size and mtime restored), deleted, made a link to the same bytes,
  re-pointed to another file with the same bytes, replaced by something unreadable; it
  lists exactly the files present (a link as ``name -> target``); and files that bring no
  hooks (a hook's script, a README) change nothing.
- **A digest is never served stale**: a file whose ctime is recent is hashed each time
  (two writes within one timestamp tick leave the same stat behind).

Real stores on a real file system, real ``SourceLayout``\\ s; no daemon needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookd.config.model import HookConfig
from hookd.config.sources import SourceLayout
from hookd.daemon import trust as trust_module
from hookd.daemon.trust import TrustGate, TrustStore, canonical, project_fingerprint

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LAYOUT = SourceLayout(policy=(), user=(), claude_settings=True)


@contextmanager
def _scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hkts"))
    try:
        yield Path(canonical(path))
    finally:
        shutil.rmtree(path, ignore_errors=True)


# --- which entry covers a directory ---------------------------------------------------

# Names that share prefixes: a string test in place of a path test would be caught.
_NAMES = ("app", "app-evil", "ap", "b")
_DIRS = st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3).map(tuple)
_ENTRY = st.fixed_dictionaries(
    {
        "pinned": st.sampled_from(["omitted", False, True]),
        "fingerprint": st.sampled_from(["omitted", "right", "wrong"]),
    }
)


def _expected(entries: dict[tuple[str, ...], dict[str, Any]], query: tuple[str, ...]) -> bool:
    """The rule, stated plainly: is ``query`` trusted by these entries?"""
    entry = entries.get(query)
    if entry is None:
        ancestors = [query[:n] for n in range(len(query) - 1, -1, -1)]
        unpinned = [a for a in ancestors if a in entries and entries[a]["pinned"] is not True]
        return bool(unpinned)
    if entry["pinned"] is not True:
        return True
    return bool(entry["fingerprint"] == "right")


def _write_store(
    path: Path, base: Path, entries: dict[tuple[str, ...], dict[str, Any]], right: str
) -> None:
    """The store as an older hookd or a hand edit leaves it: fields only where given."""
    out = []
    for rel, spec in sorted(entries.items()):
        entry: dict[str, Any] = {"path": str(base.joinpath(*rel)), "trusted_at": 1.0}
        if spec["pinned"] != "omitted":
            entry["pinned"] = spec["pinned"]
        if spec["fingerprint"] != "omitted":
            entry["fingerprint"] = right if spec["fingerprint"] == "right" else "0" * 64
        out.append(entry)
    tmp = path.with_name("trust.json.new")
    tmp.write_text(json.dumps({"entries": out}))
    os.replace(tmp, path)


@FAST
@given(
    entries=st.dictionaries(_DIRS | st.just(()), _ENTRY, max_size=5),
    queries=st.lists(_DIRS, min_size=1, max_size=4),
)
def test_a_directory_is_trusted_by_its_own_entry_or_an_unpinned_ancestors_only(
    entries: dict[tuple[str, ...], dict[str, Any]], queries: list[tuple[str, ...]]
) -> None:
    with _scratch() as root:
        base = root / "src"
        store_path = root / "state" / "trust.json"
        store_path.parent.mkdir()
        gate = TrustGate(TrustStore(store_path), LAYOUT)
        for query in queries:
            base.joinpath(*query).mkdir(parents=True, exist_ok=True)
        # Every directory here is empty: its pin is the fingerprint of no files at all.
        right = project_fingerprint(LAYOUT, str(base / "empty"))[0]
        _write_store(store_path, base, entries, right)
        for query in queries:
            project = str(base.joinpath(*query))
            want = _expected(entries, query)
            assert gate.verdict(project).trusted is want, (query, entries)
            config = HookConfig(generation=len(query))
            assert gate.verdict(project, config).trusted is want, (query, entries)
            covering = gate.store.lookup(project)
            assert (covering is not None) is (query in entries or _expected(entries, query))


_STATES = ("unpinned", "pinned-right", "pinned-wrong", "deleted", "damaged", "other", "parent")


@FAST
@given(states=st.lists(st.sampled_from(_STATES), min_size=1, max_size=8))
def test_the_store_as_it_is_now_decides_whatever_was_asked_before(states: list[str]) -> None:
    """The daemon keeps one gate and asks it on every event (the verdict memoised per config
    generation): after every change of the store — rewritten, deleted, damaged, an entry
    pinned, moved to a parent or to another directory — the next answer is the new store's."""
    with _scratch() as root:
        project = root / "src" / "app"
        project.mkdir(parents=True)
        store_path = root / "state" / "trust.json"
        store_path.parent.mkdir()
        gate = TrustGate(TrustStore(store_path), LAYOUT)
        right = project_fingerprint(LAYOUT, str(project))[0]
        config = HookConfig(generation=7)
        kept = []  # earlier versions stay open: their inodes are not reused for the next
        for state in states:
            if store_path.exists():
                kept.append(store_path.open("rb"))
            want = state in ("unpinned", "pinned-right", "parent")
            if state == "deleted":
                store_path.unlink(missing_ok=True)
            elif state == "damaged":
                store_path.write_text('{"entries": [{"path": 1}]}')
            else:
                where = {"other": ("src", "app-evil"), "parent": ("src",)}.get(
                    state, ("src", "app")
                )
                pinned = state.startswith("pinned")
                spec = {
                    "pinned": pinned,
                    "fingerprint": "right" if state != "pinned-wrong" else "wrong",
                }
                entries = {where: spec}
                _write_store(store_path, root, entries, right)
            assert gate.verdict(str(project), config).trusted is want, (states, state)
            assert gate.verdict(str(project)).trusted is want, (states, state)
        for f in kept:
            f.close()


# --- a pin notices every change of a file that brings hooks ---------------------------

KINDS = (
    ".claude/hooks.json",
    ".claude/hooks.local.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/plugins/p/hooks.json",
    ".claude/skills/s/SKILL.md",
)
HOOKS = '{"hooks": {}}\n'
OTHER = '{"hooks":{}}\n\n'  # the same size, other bytes


def _create(f: Path, away: Path) -> None:
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(HOOKS)


def _edit_keeping_size_and_mtime(f: Path, away: Path) -> None:
    st_ = f.stat()
    f.write_text(OTHER)
    os.utime(f, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    assert (f.stat().st_size, f.stat().st_mtime_ns) == (st_.st_size, st_.st_mtime_ns)


def _delete(f: Path, away: Path) -> None:
    f.unlink()


def _link_to_the_same_bytes(f: Path, away: Path) -> None:
    (away / "a.json").write_text(f.read_text())
    f.unlink()
    f.symlink_to(away / "a.json")


def _repoint_to_the_same_bytes(f: Path, away: Path) -> None:
    (away / "b.json").write_text((away / "a.json").read_text())
    f.unlink()
    f.symlink_to(away / "b.json")


def _make_unreadable(f: Path, away: Path) -> None:
    f.unlink(missing_ok=True)
    f.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(f)


def _make_a_link_loop(f: Path, away: Path) -> None:
    f.unlink(missing_ok=True)
    f.parent.mkdir(parents=True, exist_ok=True)
    f.symlink_to(f.name)  # stat: ELOOP, not "absent"


CHANGES: dict[str, tuple[str, Callable[[Path, Path], None]]] = {
    # name: (what the file is before, the change)
    "created": ("absent", _create),
    "edited": ("file", _edit_keeping_size_and_mtime),
    "deleted": ("file", _delete),
    "linked": ("file", _link_to_the_same_bytes),
    "repointed": ("link", _repoint_to_the_same_bytes),
    "unreadable": ("absent", _make_unreadable),
    "unreadable-was-file": ("file", _make_unreadable),
    "looped": ("absent", _make_a_link_loop),
}


def _listed(project: Path, away: Path) -> list[str]:
    """What the pin should list: every file present, a link as ``name -> target``."""
    out = []
    for rel in sorted(KINDS):
        f = project / rel
        if not (f.exists() or f.is_symlink() or stat.S_ISFIFO(_lmode(f))):
            continue
        real = os.path.realpath(f)
        out.append(f"{rel} -> {real}" if real != str(f) else rel)
    return sorted(out)


def _lmode(f: Path) -> int:
    try:
        return f.lstat().st_mode
    except FileNotFoundError:
        return 0


# A link loop where a plugin or skill would be is not found by their directory scan (nor
# loaded): no file there, nothing to pin.
_CASES = [
    (change, kind)
    for change in sorted(CHANGES)
    for kind in KINDS
    if not (change == "looped" and ("/plugins/" in kind or "/skills/" in kind))
]


@pytest.mark.parametrize(("change", "kind"), _CASES)
def test_a_pin_notices_every_change_of_every_file_that_brings_hooks(
    kind: str, change: str, tmp_path: Path
) -> None:
    before, act = CHANGES[change]
    root = Path(canonical(tmp_path))
    project, away = root / "repo", root / "away"
    away.mkdir()
    (project / ".claude" / "hooks").mkdir(parents=True)
    others = [k for k in KINDS if k != kind][:2]  # a few other files present all along
    for rel in others:
        _create(project / rel, away)
    target = project / kind
    if before == "file":
        _create(target, away)
    elif before == "link":
        _create(target, away)
        _link_to_the_same_bytes(target, away)
    store_path = root / "state" / "trust.json"
    store = TrustStore(store_path)
    gate = TrustGate(store, LAYOUT)
    entry = store.trust(str(project), LAYOUT, pin=True)
    assert sorted(entry.files) == _listed(project, away)
    assert gate.verdict(str(project)).trusted

    # What brings no hooks changes nothing: a hook's script, a README, another skill file.
    (project / ".claude" / "hooks" / "guard.sh").write_text("exit 0\n")
    (project / "README.md").write_text("hello\n")
    assert project_fingerprint(LAYOUT, str(project))[0] == entry.fingerprint
    assert gate.verdict(str(project)).trusted

    act(target, away)
    assert project_fingerprint(LAYOUT, str(project))[0] != entry.fingerprint, change
    verdict = gate.verdict(str(project))
    assert not verdict.trusted and "changed since they were trusted" in verdict.reason
    # Pinned again, it lists what is there now, and holds.
    again = store.trust(str(project), LAYOUT, pin=True)
    assert sorted(again.files) == _listed(project, away)
    assert gate.verdict(str(project)).trusted


# --- a digest is never served stale ------------------------------------------------------


def test_a_file_written_a_moment_ago_is_hashed_afresh_each_time(tmp_path: Path) -> None:
    """Two writes within one timestamp tick can leave the same (size, mtime, ctime): while a
    file's ctime is recent its digest is not cached, so each asks reads the bytes there now."""
    f = tmp_path / "hooks.json"
    path = os.path.realpath(f)
    for text in (HOOKS, OTHER, HOOKS, OTHER):
        st_ = f.stat() if f.exists() else None
        f.write_text(text)
        if st_ is not None:
            os.utime(f, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        digest = trust_module._file_digest(path)
        assert digest == hashlib.sha256(text.encode()).hexdigest()
        if time.time_ns() - f.stat().st_ctime_ns < trust_module._RACY_NS:
            assert path not in trust_module._hash_cache


# --- the store's own files ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["trust.json", "trust.lock"])
@pytest.mark.parametrize("victim_exists", [True, False])
def test_a_link_planted_at_a_name_the_store_keeps_never_leads_a_write(
    name: str, victim_exists: bool, tmp_path: Path
) -> None:
    """``hookctl trust`` and ``untrust`` write the store and open its lock by name in the
    state directory: a symlink planted at either name leads no write, no new file and no
    mode change to where it points (refused, or the link replaced), and the store stays
    the user's alone (0600 in a 0700 directory)."""
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    victim = tmp_path / "victim" / "precious"
    victim.parent.mkdir()
    if victim_exists:
        victim.write_text("the user's own file\n")
        victim.chmod(0o644)
    (state_dir / name).symlink_to(victim)
    project = tmp_path / "proj"
    project.mkdir()
    store = TrustStore(state_dir / "trust.json")
    for act in (lambda: store.trust(str(project), LAYOUT), lambda: store.untrust(str(project))):
        try:
            act()
        except OSError:
            pass  # refused: fail closed
        if victim_exists:
            assert victim.read_text() == "the user's own file\n"
            assert stat.S_IMODE(victim.stat().st_mode) == 0o644
        else:
            assert not victim.exists()
    for kept in state_dir.iterdir():
        if not kept.is_symlink():
            assert stat.S_IMODE(kept.stat().st_mode) == 0o600, kept


def _flock_waiters(lock: Path) -> int:
    """How many processes or threads wait for an flock on ``lock`` (``/proc/locks``: ``->``)."""
    st_ = lock.stat()
    inode = f"{os.major(st_.st_dev):02x}:{os.minor(st_.st_dev):02x}:{st_.st_ino}"
    lines = Path("/proc/locks").read_text().splitlines()
    return sum(1 for line in lines if "->" in line and "FLOCK" in line and inode in line)


def test_two_writers_of_the_store_never_lose_each_others_entries(tmp_path: Path) -> None:
    """``hookctl trust`` in two terminals at once: each reads, edits and writes the store
    under its lock, so the second one's entry is added to the first one's, never written
    over it.  Here the first writer holds the lock; the second waits for it (seen in
    ``/proc/locks``), the first writes its entry and lets go, and both entries are kept."""
    import fcntl
    import threading

    state_dir = tmp_path / "state"
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    store = TrustStore(state_dir / "trust.json")
    store.trust(str(first), LAYOUT)
    store.untrust(str(first))  # the store and its lock exist; no entry
    lock = state_dir / "trust.lock"
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    done = threading.Thread(target=lambda: TrustStore(state_dir / "trust.json").trust(
        str(second), LAYOUT))  # fmt: skip
    try:
        done.start()
        deadline = time.monotonic() + 30
        while _flock_waiters(lock) == 0:
            assert time.monotonic() < deadline, "the second writer never waited for the lock"
            assert done.is_alive(), "the second writer wrote without the lock"
            time.sleep(0.01)
        entries = {"entries": [{"path": str(Path(canonical(first))), "trusted_at": 1.0}]}
        (state_dir / "trust.json").write_text(json.dumps(entries))  # the first writer's
    finally:
        os.close(fd)  # lets go of the lock
        done.join(30)
    assert sorted(e.path for e in store.entries()) == sorted([canonical(first), canonical(second)])

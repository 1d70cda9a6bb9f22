"""Workspace trust: a repository's own hooks do not run until its directory is trusted.

A committed ``.claude/hooks.json`` is arbitrary code execution for anyone
whose agent opens the repository (reference §10.4).  Claude Code gates it
behind the interactive trust dialog but runs it unasked in ``-p``/SDK runs;
a daemon that serves every agent of the user, batch ones included, must not
run unknown project hooks silently.  So hooks found among the project's
files — the project, local and project-plugin scopes, and the project's
skills — run only once the directory is trusted (``hookctl trust DIR``).
*Found* is the word: trust is decided on where the loader found a file,
never on where a symlink on its path leads (:func:`needs_trust`).  Policy,
user and user-plugin hooks, and hooks a client registered for its own
session, need no trust: the user or the agent put them there.

Trust can be **pinned** (``hookctl trust --pin DIR``, Codex-style): the entry
records a hash of every file that can bring hooks into the project, and any
change to them — an edit, a new ``hooks.local.json``, a new plugin or skill,
a link re-pointed — makes the project untrusted again until it is
re-trusted.  An unpinned entry trusts the directory and
every directory below it; a pinned one covers exactly its directory.

An untrusted project's *settings* are ignored too, not only its hooks: its
``disableAllHooks`` could otherwise switch off the user's own guard hooks and
its HTTP allowlists could widen the user's.  Policy switches
(``allowManagedHooksOnly``, policy ``disableAllHooks``) hold everywhere.

The store is one JSON file under the state dir (mode 0600), written
atomically under a lock by ``hookctl`` and re-read by the daemon whenever
its stat changes, so a ``hookctl trust`` takes effect on the next event
without a restart.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec
import structlog

from hookd.config.files import read_source_file
from hookd.config.loader import build_config, load_source
from hookd.config.model import GroupSpec, HookConfig, HookSpec
from hookd.config.sources import SourceLayout
from hookd.safe_files import write_atomically

__all__ = [
    "TrustEntry",
    "TrustGate",
    "TrustStore",
    "UntrustedProject",
    "Verdict",
    "needs_trust",
    "project_fingerprint",
]

log = structlog.get_logger("hookd.trust")


class TrustEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    path: str
    """The trusted directory (absolute, symlinks resolved)."""
    trusted_at: float
    pinned: bool = False
    fingerprint: str | None = None
    """Pinned entries: :func:`project_fingerprint` at trust time."""
    files: list[str] = msgspec.field(default_factory=list)
    """Pinned entries: the files present that the fingerprint covers (relative to ``path``;
    ``name -> target`` for one reached through a symlink)."""


class _TrustFile(msgspec.Struct, kw_only=True):
    version: int = 1
    entries: list[TrustEntry] = msgspec.field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Verdict:
    trusted: bool
    reason: str
    """Why: which entry trusts it, or what is missing."""


@functools.lru_cache(maxsize=4096)
def _canonical(directory: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(directory)))


def canonical(directory: str | os.PathLike[str]) -> str:
    """The real path of ``directory``.

    Memoised: it is asked for on every event, and a realpath walk (an
    ``lstat`` per component) was half of a no-hook event's cost.  A project
    directory that becomes a symlink to elsewhere while the daemon runs is
    seen after a restart.
    """
    return _canonical(os.fspath(directory))


def needs_trust(spec: HookSpec) -> bool:
    """A hook needs trust when it was found among a project's files.

    Decided on where the loader *found* the file (``HookSpec.project_dir``), never
    on where a symlink leads: a repository can carry ``.claude/hooks.json ->
    ../../elsewhere.json`` or a ``.claude`` that links to a trusted directory, and
    its hooks are its own either way.  Conversely a user-scope file (a user plugin,
    ``~/.config/hookd/hooks.json``) that the user linked into some checkout stays the
    user's.  The project root itself is resolved (``canonical``) when the store is
    asked, so a project reached through a symlinked path (``/home -> /data/home``)
    keeps its trust.
    """
    return spec.project_dir is not None


# --- fingerprints ------------------------------------------------------------------

_hash_cache: dict[str, tuple[tuple[int, ...], str]] = {}

_RACY_NS = 2_000_000_000
"""A digest is not cached while its file's ctime is this recent: two writes within one
timestamp tick leave the same stat behind (git's "racy clean" problem)."""


def _stat_key(st: os.stat_result) -> tuple[int, ...]:
    """Everything a content change moves: ``ctime`` included, which no unprivileged
    process can set back (``cp -p`` / ``rsync -t`` restore the mtime, not the ctime)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _file_digest(path: str) -> str | None:
    """sha256 of a file's bytes, cached by its stat: events stat, not read.

    None when it is absent; ``"unreadable"`` when it is there but cannot be read as
    a hook file (a link to ``/dev/zero``, a FIFO: :func:`read_source_file`), which
    must not compare equal to an absent one."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:  # a link loop, a directory on the way we may not search: as the loader
        return "unreadable"
    key = _stat_key(st)
    cached = _hash_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        digest = hashlib.sha256(read_source_file(path)).hexdigest()
    except FileNotFoundError:
        return None
    except OSError:
        return "unreadable"
    if time.time_ns() - st.st_ctime_ns > _RACY_NS:
        if len(_hash_cache) > 4096:
            _hash_cache.clear()
        _hash_cache[path] = (key, digest)
    return digest


def _shown(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it is inside, else absolute."""
    inside = path == root or path.startswith(root.rstrip("/") + "/")
    return os.path.relpath(path, root) if inside else path


def project_fingerprint(
    layout: SourceLayout, project: str, loaded: Mapping[str, str | None] | None = None
) -> tuple[str, list[str]]:
    """One hash over every file that can bring hooks into the project (absent ones count
    as absent): its hook files, its plugins' and its skills' (``SKILL.md``).

    Returns the hash and the files present, relative to the project.  Adding a
    file changes the hash as much as editing one: a new ``hooks.local.json``, a new
    plugin or a new skill with a hook in it must need re-trust too.  A file reached
    through a symlink (itself or a directory on its path) is named where it was
    found, and where it leads is part of the hash: re-pointing the link is a change
    even when the bytes behind it are the same.

    ``loaded``: the digests of the bytes a config generation was built from
    (``HookConfig.project_digests``, by path relative to the project).  They stand in
    for the disk's, and every file they name counts even when it is gone from the
    disk: what is checked is what runs, so a file swapped back after a reload (or a
    plugin removed again) cannot pass the check for the bytes that were loaded.
    """
    root = canonical(project)
    lines: list[str] = []
    present: list[str] = []
    found = {os.path.normpath(spec.path) for spec in layout.project_sources(root)}
    found.update(os.path.normpath(path) for path in layout.project_skill_files(root))
    if loaded is not None:
        found.update(os.path.normpath(os.path.join(root, rel)) for rel in loaded)
    for lexical in sorted(found):
        rel = os.path.relpath(lexical, root)
        real = os.path.realpath(lexical)
        digest = loaded[rel] if loaded is not None and rel in loaded else _file_digest(real)
        line, name = f"{rel}\0{digest or '-'}", rel
        if real != lexical:
            line += f"\0{_shown(real, root)}"
            name = f"{rel} -> {_shown(real, root)}"
        lines.append(line + "\n")
        if digest is not None:
            present.append(name)
    return hashlib.sha256("".join(lines).encode()).hexdigest(), present


# --- the store -------------------------------------------------------------------


class TrustStore:
    """The trusted directories, persisted in ``<state>/trust.json`` (0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stat: tuple[int, ...] | None = None
        self._entries: dict[str, TrustEntry] = {}
        self.version = 0
        """Goes up whenever the entries change: what callers key their own caches on."""

    # reading (daemon and CLI)

    def refresh(self) -> None:
        """Re-read the file when it changed on disk (one ``stat`` when it did not)."""
        if self._stat is None and not self._entries and not os.access(self.path, os.F_OK):
            # Still no store (most users never trust a directory): asked without the
            # exception a stat of a missing file raises, a good part of its cost.
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._stat is not None or self._entries:
                self._stat, self._entries = None, {}
                self.version += 1
            return
        key = _stat_key(st)
        if key == self._stat:
            return
        self._entries = {e.path: e for e in self._read()}
        self._stat = key
        self.version += 1

    def _read(self) -> list[TrustEntry]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        try:
            return msgspec.json.decode(data, type=_TrustFile).entries
        except msgspec.DecodeError as exc:
            # A damaged store trusts nothing (fail closed) and says so.
            log.error(
                "trust store unreadable: trusting nothing", file=str(self.path), error=str(exc)
            )
            return []

    def entries(self) -> list[TrustEntry]:
        self.refresh()
        return sorted(self._entries.values(), key=lambda e: e.path)

    def lookup(self, project: str) -> TrustEntry | None:
        """The entry that covers ``project``: its own, or an unpinned ancestor's."""
        self.refresh()
        root = canonical(project)
        exact = self._entries.get(root)
        if exact is not None:
            return exact
        parent = os.path.dirname(root)
        while True:
            entry = self._entries.get(parent)
            if entry is not None and not entry.pinned:
                return entry
            up = os.path.dirname(parent)
            if up == parent:
                return None
            parent = up

    # writing (hookctl)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, TrustEntry]]:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock_path = self.path.with_suffix(".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            entries = {e.path: e for e in self._read()}
            yield entries
            body = msgspec.json.format(
                msgspec.json.encode(
                    _TrustFile(entries=sorted(entries.values(), key=lambda e: e.path))
                )
            )
            write_atomically(self.path, body + b"\n", 0o600)
        finally:
            os.close(fd)
        self._stat = None

    def trust(self, directory: str, layout: SourceLayout, *, pin: bool = False) -> TrustEntry:
        root = canonical(directory)
        fingerprint: str | None = None
        files: list[str] = []
        if pin:
            fingerprint, files = project_fingerprint(layout, root)
        entry = TrustEntry(
            path=root, trusted_at=time.time(), pinned=pin, fingerprint=fingerprint, files=files
        )
        with self._locked() as entries:
            entries[root] = entry
        return entry

    def untrust(self, directory: str) -> bool:
        root = canonical(directory)
        with self._locked() as entries:
            return entries.pop(root, None) is not None


# --- the daemon's gate -------------------------------------------------------------


class UntrustedProject(msgspec.Struct, kw_only=True):
    """What ``hookctl status`` shows for a project whose hooks are held back."""

    project: str
    reason: str
    hooks: list[str]
    """``event: hook (source)`` for every hook that does not run."""


def _global_config(layout: SourceLayout) -> HookConfig:
    return build_config([load_source(s) for s in layout.global_sources()])


_NOT_REQUIRED = Verdict(True, "trust is not required (require_trust = false)")


class TrustGate:
    """Applies trust to a project's config before the engine sees it.

    ``apply`` is called once per event: it costs a ``stat`` of the store (and,
    for pinned entries, of the project's hook files); the filtered config is
    cached per (config generation, verdict).
    """

    def __init__(self, store: TrustStore, layout: SourceLayout, *, required: bool = True) -> None:
        self.store = store
        self.layout = layout
        self.required = required
        self._cache: dict[str, tuple[HookConfig, Verdict, HookConfig]] = {}
        self._pins: dict[str, tuple[object, str | None]] = {}
        self._globals: tuple[int, HookConfig] | None = None
        self._verdicts: dict[tuple[str, int], tuple[int, Verdict]] = {}

    def verdict(
        self,
        project: str,
        config: HookConfig | None = None,
        *,
        read: Mapping[str, str | None] | None = None,
    ) -> Verdict:
        """Is ``project`` trusted?

        ``config``: the generation the caller is about to run.  A pinned project is
        then checked against the bytes that generation was built from (its
        ``project_digests``), and only once per generation (every edit of a hook file
        makes a new one; so does a change of the project's skills); the answer is
        memoised until the store or the generation changes: this runs on every
        event.  Without a config the files on disk are checked, afresh, but for the
        ones in ``read``: the digests (``LoadedSource.digest``, by path relative to
        the project) of files the caller read and is about to use — an invoked
        skill's ``SKILL.md``."""
        if not self.required:
            return _NOT_REQUIRED
        if config is None:
            return self._verdict(project, None, read)
        self.store.refresh()
        key = (project, config.generation)
        cached = self._verdicts.get(key)
        if cached is not None and cached[0] == self.store.version:
            return cached[1]
        verdict = self._verdict(project, config, None)
        if len(self._verdicts) > 4096:
            self._verdicts.clear()
        self._verdicts[key] = (self.store.version, verdict)
        return verdict

    def _verdict(
        self, project: str, config: HookConfig | None, read: Mapping[str, str | None] | None
    ) -> Verdict:
        entry = self.store.lookup(project)
        if entry is None:
            return Verdict(False, f"{canonical(project)} is not trusted (hookctl trust DIR)")
        if entry.pinned:
            generation = config.generation if config is not None else None
            key = (entry.path, entry.fingerprint, generation)
            if config is None or self._pins.get(entry.path, (None, None))[0] != key:
                loaded = dict(config.project_digests) if config is not None else read
                current = project_fingerprint(self.layout, entry.path, loaded)[0]
                self._pins[entry.path] = (key, current)
            if self._pins[entry.path][1] != entry.fingerprint:
                return Verdict(
                    False,
                    f"the hook files of {entry.path} changed since they were trusted "
                    "(re-trust with hookctl trust --pin)",
                )
            return Verdict(True, f"trusted (pinned) at {entry.path}")
        return Verdict(True, f"trusted via {entry.path}")

    def apply(self, config: HookConfig, project: str) -> HookConfig:
        """``config`` without the project's hooks and settings when ``project`` is untrusted."""
        verdict = self.verdict(project, config)
        if verdict.trusted:
            return config
        cached = self._cache.get(project)
        if cached is not None and cached[0] is config and cached[1] == verdict:
            return cached[2]
        filtered = self._filtered(config, project)
        if len(self._cache) > 1024:
            self._cache.clear()
        self._cache[project] = (config, verdict, filtered)
        return filtered

    def held_back(self, config: HookConfig, project: str) -> tuple[Verdict, list[HookSpec]]:
        verdict = self.verdict(project)
        if verdict.trusted:
            return verdict, []
        return verdict, [s for s in config.all_hooks() if needs_trust(s)]

    def report(self, configs: dict[str, HookConfig]) -> list[UntrustedProject]:
        out = []
        for project, config in sorted(configs.items()):
            verdict, specs = self.held_back(config, project)
            if specs:
                out.append(
                    UntrustedProject(
                        project=project,
                        reason=verdict.reason,
                        hooks=[f"{s.event}: {s.ref().name} ({s.source})" for s in specs],
                    )
                )
        return out

    def _filtered(self, config: HookConfig, project: str) -> HookConfig:
        groups: dict[str, tuple[GroupSpec, ...]] = {}
        for event, event_groups in config.groups.items():
            kept = []
            for group in event_groups:
                hooks = tuple(h for h in group.hooks if not needs_trust(h))
                if hooks:
                    kept.append(replace(group, hooks=hooks))
            if kept:
                groups[event] = tuple(kept)
        base = self._global_settings(config.generation)
        return replace(
            config,
            groups=groups,
            disable_all_hooks=base.disable_all_hooks,
            allowed_http_hook_urls=base.allowed_http_hook_urls,
            http_hook_allowed_env_vars=base.http_hook_allowed_env_vars,
            # The project's statusLine/fileSuggestion commands are project code too.
            status_line=base.status_line,
            file_suggestion=base.file_suggestion,
            project_trusted=False,
        )

    def _global_settings(self, generation: int) -> HookConfig:
        """The user/policy scalars alone, re-read once per config generation."""
        if self._globals is None or self._globals[0] != generation:
            self._globals = (generation, _global_config(self.layout))
        return self._globals[1]

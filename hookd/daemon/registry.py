"""The live configuration: every source file, its last good version, and generations.

A *generation* is one immutable :class:`HookConfig` per project.  Reloading
never edits a generation: it reads the sources again, keeps for each file its
**last good version** when the new text is invalid (the errors are recorded
and shown in status), builds new configs, and swaps them in with one
assignment.  An event that already started keeps the config object it was
handed, so it finishes on the generation it started with.

Projects are loaded when a session first needs them and dropped when no
session has used them for ``project_idle_seconds``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import structlog

from hookd.config.loader import (
    LoadedSource,
    applied,
    build_config,
    load_source,
    parse_source_text,
)
from hookd.config.model import ConfigError, GroupSpec, HookConfig, Scope
from hookd.config.sources import SourceLayout, SourceSpec

__all__ = ["ConfigRegistry", "SourceStatus", "session_groups"]

log = structlog.get_logger("hookd.registry")


class SourceStatus(msgspec.Struct, kw_only=True, omit_defaults=True):
    path: str
    scope: str
    exists: bool
    hooks: int = 0
    errors: list[str] = msgspec.field(default_factory=list)
    stale: bool = False
    """True when the file on disk is invalid and its last good version is in force."""
    not_applied: bool = False
    """True when the file is invalid and has no good version: it contributes nothing."""
    warnings: list[str] = msgspec.field(default_factory=list)
    """Mistakes that load but probably do not do what was meant (loader docstring)."""


@dataclass
class _FileState:
    active: LoadedSource
    digest: str
    errors: tuple[ConfigError, ...] = ()
    stale: bool = False
    warnings: tuple[ConfigError, ...] = ()


@dataclass
class _Project:
    specs: list[SourceSpec]
    skills: tuple[tuple[str, ...], ...] = ()
    """:func:`_skills_stamp` when last read: a changed skill makes a new generation, so a
    pinned trust (whose fingerprint covers skills) is checked again at once."""
    behind_links: frozenset[Path] = frozenset()
    """Where the source files a symlink leads to really are, as of the last read: watched
    too (an edit there is an edit of the project's file).  Kept here, not worked out on
    every ``watch_paths`` (the watcher asks twice a second)."""
    last_used: float = field(default_factory=time.monotonic)

    def read_links(self) -> None:
        real = {Path(os.path.realpath(spec.path)) for spec in self.specs}
        self.behind_links = frozenset(real - {spec.path for spec in self.specs})


def _skills_stamp(layout: SourceLayout, project: str) -> tuple[tuple[str, ...], ...]:
    """Where each of the project's ``SKILL.md`` files leads and its stat (ctime included:
    any write moves it).  Skills are not hook sources (they apply when invoked), but
    they are files a repository brings hooks in by."""
    stamp = []
    for path in layout.project_skill_files(project):
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        stamp.append((str(path), real, *map(str, key)))
    return tuple(stamp)


class ConfigRegistry:
    def __init__(self, layout: SourceLayout, project_idle_seconds: float) -> None:
        self.layout = layout
        self.project_idle_seconds = project_idle_seconds
        self.generation = 0
        self._files: dict[Path, _FileState] = {}
        self._global: list[SourceSpec] = []
        self._projects: dict[str, _Project] = {}
        self._configs: dict[str, HookConfig] = {}
        self.reloaded_at = time.time()
        self.reload()

    # --- reading -----------------------------------------------------------------

    def config_for(self, project: str, *, use: bool = True) -> HookConfig:
        """The current generation for ``project`` (loading the project on first use).

        ``use=False`` looks without counting as use, so reporting (``status``) does
        not keep an idle project loaded.
        """
        entry = self._projects.get(project)
        if entry is None:
            entry = _Project(
                self.layout.project_sources(project), _skills_stamp(self.layout, project)
            )
            entry.read_links()
            self._projects[project] = entry
            for spec in entry.specs:
                self._refresh_file(spec)
            self._configs.pop(project, None)
        if use:
            entry.last_used = time.monotonic()
        config = self._configs.get(project)
        if config is None:
            config = self._build(project)
            self._configs[project] = config
        return config

    def projects(self) -> list[str]:
        return sorted(self._projects)

    def watch_paths(self) -> list[Path]:
        """Every source file, plugin directory and project skill directory in use, and
        where a project's linked source file really is (an edit behind a symlink is an
        edit of the project's file)."""
        paths = {s.path for s in self._global}
        for p in self.layout.plugin_dirs:
            if "{project}" not in p:
                paths.add(Path(p).expanduser())
        for project, entry in self._projects.items():
            paths.update(s.path for s in entry.specs)
            paths.update(entry.behind_links)
            for p in (*self.layout.plugin_dirs, *self.layout.skill_dirs):
                if "{project}" in p:
                    paths.add(Path(p.replace("{project}", project)).expanduser())
        return sorted(paths)

    def sources(self) -> list[SourceStatus]:
        out = []
        for path, state in sorted(self._files.items()):
            live = applied(state.active)
            out.append(
                SourceStatus(
                    path=str(path),
                    scope=state.active.spec.scope.label,
                    exists=state.active.exists or state.stale,
                    hooks=sum(len(g.hooks) for _, _, g in live.groups),
                    errors=[str(e) for e in state.errors],
                    stale=state.stale,
                    not_applied=live is not state.active,
                    warnings=[str(w) for w in state.warnings],
                )
            )
        return out

    def errors(self) -> list[str]:
        return [str(e) for state in self._files.values() for e in state.errors]

    def warnings(self) -> list[str]:
        return [str(w) for state in self._files.values() for w in state.warnings]

    # --- reloading ---------------------------------------------------------------

    def reload(self) -> bool:
        """Re-read every source; returns True when a new generation was made."""
        changed = False
        self._global = self.layout.global_sources()
        wanted: set[Path] = set()
        for spec in self._global:
            wanted.add(spec.path)
            changed |= self._refresh_file(spec)
        for project, entry in self._projects.items():
            entry.specs = self.layout.project_sources(project)
            entry.read_links()
            for spec in entry.specs:
                wanted.add(spec.path)
                changed |= self._refresh_file(spec)
            skills = _skills_stamp(self.layout, project)
            if skills != entry.skills:
                entry.skills = skills
                changed = True
        for path in [p for p in self._files if p not in wanted]:
            del self._files[path]  # e.g. a plugin directory that was removed
            changed = True
        if changed or self.generation == 0:
            self.generation += 1
            self._configs.clear()
            self.reloaded_at = time.time()
            log.info("config generation", generation=self.generation, errors=len(self.errors()))
        return changed

    def drop_idle_projects(self, in_use: Iterable[str]) -> list[str]:
        busy = set(in_use)
        now = time.monotonic()
        dropped = [
            p
            for p, e in self._projects.items()
            if p not in busy and now - e.last_used > self.project_idle_seconds
        ]
        for project in dropped:
            entry = self._projects.pop(project)
            self._configs.pop(project, None)
            shared = {s.path for s in self._global}
            for other in self._projects.values():
                shared.update(s.path for s in other.specs)
            for spec in entry.specs:
                if spec.path not in shared:
                    self._files.pop(spec.path, None)
        return dropped

    def _refresh_file(self, spec: SourceSpec) -> bool:
        """Load one file; keep its last good version when the new one is invalid."""
        fresh = load_source(spec)
        digest = fresh.digest or ""
        state = self._files.get(spec.path)
        if state is not None and state.digest == digest and state.active.spec == spec:
            return False
        if fresh.errors and state is not None and state.active.exists and not state.active.errors:
            # An invalid edit: the last good version stays live (loader.applied).
            if not state.stale:
                log.warning(
                    "invalid config edit kept out",
                    file=str(spec.path),
                    errors=[str(e) for e in fresh.errors],
                )
            state.errors = fresh.errors
            state.warnings = fresh.warnings
            state.stale = True
            state.digest = digest
            return False
        if fresh.errors:
            log.warning(
                "invalid config file not applied",
                file=str(spec.path),
                errors=[str(e) for e in fresh.errors],
            )
        self._files[spec.path] = _FileState(
            fresh, digest, fresh.errors, stale=False, warnings=fresh.warnings
        )
        return True

    def _build(self, project: str) -> HookConfig:
        specs = [*self._global, *self._projects[project].specs]
        loaded = []
        for spec in specs:
            state = self._files.get(spec.path)
            if state is not None:
                loaded.append(applied(state.active))
        config = build_config(loaded, self.generation)
        errors = tuple(e for spec in specs for e in self._errors_of(spec.path))
        return _with_errors(config, errors)

    def _errors_of(self, path: Path) -> tuple[ConfigError, ...]:
        state = self._files.get(path)
        return state.errors if state is not None else ()


def _with_errors(config: HookConfig, errors: tuple[ConfigError, ...]) -> HookConfig:
    from dataclasses import replace

    return replace(config, errors=errors)


def session_groups(
    source: str, scope: Scope, hooks: dict[str, Any]
) -> tuple[list[GroupSpec], list[ConfigError]]:
    """Validate session-registered hooks (settings-shaped) into groups, exactly like a file."""
    skill_root = str(Path(source).parent) if scope is Scope.SKILL else None
    spec = SourceSpec(Path(source), scope, skill_root=skill_root)
    loaded = parse_source_text(spec, msgspec.json.encode({"hooks": hooks}).decode())
    config = build_config([loaded])
    groups = [g for groups in config.groups.values() for g in groups]
    return groups, list(loaded.errors)

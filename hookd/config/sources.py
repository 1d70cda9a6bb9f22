"""Where hook configuration lives: hookd's default sources, per scope.

Every location is configurable (``SourceLayout``); the defaults are:

========  =====================================================================
policy    ``/etc/hookd/policy.json``
user      ``~/.config/hookd/hooks.json`` and ``~/.config/hookd/hooks.toml``
project   ``<project>/.claude/hooks.json``
local     ``<project>/.claude/hooks.local.json``
plugin    ``<project>/.claude/plugins/*/hooks.json``, ``~/.claude/plugins/*/hooks.json``
skill     ``<project>/.claude/skills/*/SKILL.md``, ``~/.claude/skills/*/SKILL.md`` — only
          while invoked (:mod:`hookd.config.skills`)
========  =====================================================================

With ``claude_settings`` on, the hooks inside Claude Code's own settings files
are read too (for agents that are not Claude Code but share its config).

Every file :meth:`SourceLayout.project_sources` lists carries the project it was
found in (``SourceSpec.project_dir``): trust is decided on that, never on where a
symlink on the file's path leads (hookd/daemon/trust.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hookd.config.model import Scope

__all__ = ["SourceLayout", "SourceSpec"]

SourceKind = Literal["settings", "toml", "skill"]


@dataclass(frozen=True, slots=True)
class SourceSpec:
    path: Path
    scope: Scope
    kind: SourceKind = "settings"
    plugin_root: str | None = None
    skill_root: str | None = None
    order: int = 0
    """Position within its scope, so merging is deterministic."""
    project_dir: str | None = None
    """The project directory among whose files this one was *found* (None: a global
    source).  Such a file is project code and needs the project trusted wherever its
    bytes really live: a symlinked ``.claude/hooks.json``, ``.claude`` or plugin
    directory is judged by the place the loader found it, not by the link's target
    (hookd/daemon/trust.py)."""


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


@dataclass(frozen=True, kw_only=True)
class SourceLayout:
    """The file locations for each scope; ``{project}`` stands for the project dir.

    ``policy``, ``user`` and ``claude_settings`` are the daemon's settings
    (``policy_files``, ``user_files``, ``claude_settings``), so they have no
    defaults here: ``hookd.daemon.options.source_layout`` builds a layout from
    them.  The rest is where Claude Code keeps project, local, plugin and skill
    hooks.
    """

    policy: tuple[str, ...]
    user: tuple[str, ...]
    claude_settings: bool
    project: tuple[str, ...] = ("{project}/.claude/hooks.json",)
    local: tuple[str, ...] = ("{project}/.claude/hooks.local.json",)
    plugin_dirs: tuple[str, ...] = ("{project}/.claude/plugins", "~/.claude/plugins")
    extra: tuple[tuple[str, Scope], ...] = field(default=())
    skill_dirs: tuple[str, ...] = ("{project}/.claude/skills", "~/.claude/skills")
    """Where skills (``<name>/SKILL.md``) are found, in lookup order (config/skills.py)."""

    def skill_roots(self, project: str) -> list[tuple[Path, bool]]:
        """Each skill directory, in lookup order, with whether it belongs to the project
        (a ``{project}`` template: its skills are project code)."""
        return [(_fill(d, project), "{project}" in d) for d in self.skill_dirs]

    def project_skill_files(self, project: str) -> list[Path]:
        """Every ``<name>/SKILL.md`` in the project's skill directories: files that can bring
        hooks into the project (a pinned trust's fingerprint covers them)."""
        files: list[Path] = []
        for base, in_project in self.skill_roots(project):
            if in_project and base.is_dir():
                files.extend(sorted(base.glob("*/SKILL.md")))
        return files

    def user_files(self) -> tuple[str, ...]:
        if self.user:
            return self.user
        home = _config_home() / "hookd"
        return (str(home / "hooks.json"), str(home / "hooks.toml"))

    def global_sources(self) -> list[SourceSpec]:
        """Sources that do not depend on a project: policy, user, user plugins."""
        specs: list[SourceSpec] = []
        for i, p in enumerate(self.policy):
            specs.append(SourceSpec(Path(p), Scope.POLICY, order=i))
        if self.claude_settings:
            specs.append(
                SourceSpec(
                    Path("/etc/claude-code/managed-settings.json"),
                    Scope.POLICY,
                    order=len(self.policy),
                )
            )
        for i, p in enumerate(self.user_files()):
            path = Path(p).expanduser()
            specs.append(SourceSpec(path, Scope.USER, kind=_kind(path), order=i))
        if self.claude_settings:
            specs.append(
                SourceSpec(
                    Path("~/.claude/settings.json").expanduser(),
                    Scope.USER,
                    order=len(self.user_files()),
                )
            )
        for i, (p, scope) in enumerate(self.extra):
            path = Path(p).expanduser()
            specs.append(SourceSpec(path, scope, kind=_kind(path), order=100 + i))
        specs.extend(self._plugins(None))
        return specs

    def project_sources(self, project: str) -> list[SourceSpec]:
        """Sources inside one project directory."""
        specs: list[SourceSpec] = []
        for i, p in enumerate(self.project):
            path = _fill(p, project)
            specs.append(
                SourceSpec(path, Scope.PROJECT, kind=_kind(path), order=i, project_dir=project)
            )
        for i, p in enumerate(self.local):
            path = _fill(p, project)
            specs.append(
                SourceSpec(path, Scope.LOCAL, kind=_kind(path), order=i, project_dir=project)
            )
        if self.claude_settings:
            base = Path(project) / ".claude"
            for name, scope in (
                ("settings.json", Scope.PROJECT),
                ("settings.local.json", Scope.LOCAL),
            ):
                specs.append(SourceSpec(base / name, scope, order=50, project_dir=project))
        specs.extend(self._plugins(project))
        return specs

    def _plugins(self, project: str | None) -> list[SourceSpec]:
        specs: list[SourceSpec] = []
        for i, d in enumerate(self.plugin_dirs):
            if ("{project}" in d) != (project is not None):
                continue
            base = _fill(d, project or "")
            if not base.is_dir():
                continue
            for j, hooks in enumerate(sorted(base.glob("*/hooks.json"))):
                root = str(hooks.parent)
                specs.append(
                    SourceSpec(
                        hooks,
                        Scope.PLUGIN,
                        plugin_root=root,
                        order=i * 1000 + j,
                        project_dir=project,
                    )
                )
        return specs


def _kind(path: Path) -> Literal["settings", "toml", "skill"]:
    if path.suffix == ".toml":
        return "toml"
    if path.name == "SKILL.md" or path.suffix == ".md":
        return "skill"
    return "settings"


def _fill(template: str, project: str) -> Path:
    return Path(template.replace("{project}", project)).expanduser()

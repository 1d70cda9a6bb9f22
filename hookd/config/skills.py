"""Skills: find a skill's ``SKILL.md`` by name and turn its frontmatter hooks into session hooks.

A skill's hooks are not always on.  As in Claude Code, they are registered when
the skill is invoked — the agent's ``Skill`` tool (a PreToolUse with
``tool_name: "Skill"`` and ``tool_input.skill`` naming it) — and stay for the
rest of that session, in the ``skill`` scope; a client can remove them earlier
with ``clear_session_hooks(session_id, source=<the SKILL.md path>)``.

Skills live in ``<dir>/<name>/SKILL.md`` under the layout's ``skill_dirs``:
the project's ``.claude/skills`` and the user's ``~/.claude/skills`` (project
first: a project skill shadows a user skill of the same name, as Claude Code
shows project skills first).  The name is the frontmatter's ``name`` when it
has one, else the directory's name.  The file is read on every invocation, so
an edited skill applies from its next use without a reload.

A skill found in a project skill directory is project code (:class:`FoundSkill`
says which), whatever a symlink on its path leads to; the caller asks for trust.
The name comes from the model's tool call, so it must be one path component:
``../../elsewhere`` would otherwise name a ``SKILL.md`` outside every skill
directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hookd.config.files import read_source_file
from hookd.config.loader import LoadedSource, applied, build_config, load_source
from hookd.config.model import GroupSpec, Scope
from hookd.config.sources import SourceLayout, SourceSpec

__all__ = ["FoundSkill", "find_skill", "invoked_skill", "load_skill"]


def invoked_skill(tool_input: Mapping[str, Any]) -> str | None:
    """The skill a ``Skill`` tool call invokes: ``skill`` (or the older ``command``),
    without a leading ``/``; a plugin's ``plugin:name`` is looked up as given."""
    for key in ("skill", "command"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().lstrip("/")
    return None


def _frontmatter_name(path: Path) -> str | None:
    try:
        text = read_source_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


@dataclass(frozen=True, slots=True)
class FoundSkill:
    path: Path
    """The ``SKILL.md`` as found (not resolved: a symlink on its path is not followed here)."""
    in_project: bool
    """Found in one of the project's skill directories: project code, which needs the project
    trusted — decided on where it was found, whatever a symlink on its path points to."""


def _plain_name(short: str) -> bool:
    """A skill name is one path component: ``../../elsewhere`` or ``a/b`` would look outside
    the skill directories (the name comes from the model's tool call)."""
    return bool(short) and short not in (".", "..") and "/" not in short and "\0" not in short


def find_skill(layout: SourceLayout, project: str, name: str) -> FoundSkill | None:
    """The ``SKILL.md`` of skill ``name`` for ``project``, or None."""
    short = name.rpartition(":")[2]
    if not _plain_name(short):
        return None
    for directory, in_project in layout.skill_roots(project):
        direct = directory / short / "SKILL.md"
        if direct.is_file() and _frontmatter_name(direct) in (None, name, short):
            return FoundSkill(direct, in_project)
        if not directory.is_dir():
            continue
        for candidate in sorted(directory.glob("*/SKILL.md")):
            if _frontmatter_name(candidate) in (name, short):
                return FoundSkill(candidate, in_project)
    return None


def load_skill(path: Path) -> tuple[LoadedSource, list[GroupSpec]]:
    """The skill's frontmatter hooks as skill-scope groups (none when the file has an error:
    the same whole-or-nothing rule as every hook file)."""
    loaded = load_source(SourceSpec(path, Scope.SKILL, kind="skill", skill_root=str(path.parent)))
    config = build_config([applied(loaded)])
    return loaded, [g for groups in config.groups.values() for g in groups]

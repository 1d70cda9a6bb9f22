"""One-shot configuration: read every source for a project now and build a config.

The daemon keeps sources loaded and watched (:mod:`hookd.daemon.registry`);
the one-shot CLI and tests just call :func:`load_config`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hookd.config.loader import (
    LoadedSource,
    applied,
    build_config,
    load_source,
    parse_source_text,
)
from hookd.config.model import HookConfig, Scope
from hookd.config.sources import SourceLayout, SourceSpec, _kind

__all__ = ["explicit_sources", "load_config", "load_named_settings", "named_settings_problems"]


def explicit_sources(
    values: Sequence[str], scope: Scope = Scope.LOCAL, order: int = 0
) -> list[SourceSpec]:
    """``--settings`` values: files, in the order given (inline JSON is handled by the caller)."""
    return [
        SourceSpec(Path(v).expanduser(), scope, kind=_kind(Path(v)), order=order + i)
        for i, v in enumerate(values)
    ]


def load_config(
    layout: SourceLayout | None,
    project: str | None,
    settings: Sequence[str] = (),
    *,
    named: Sequence[LoadedSource] = (),
) -> HookConfig:
    """Load the layout's sources for ``project`` (if a layout is given) plus ``settings``.

    A ``settings`` value that starts with ``{`` is inline JSON, as with
    Claude Code's ``--settings``.  ``named`` are sources already loaded by
    :func:`load_named_settings` (so a caller can check them first).
    """
    loaded = []
    if layout is not None:
        specs = layout.global_sources()
        if project:
            specs += layout.project_sources(project)
        loaded = [applied(load_source(s)) for s in specs]
    return build_config([*loaded, *load_named_settings(settings), *named])


def load_named_settings(settings: Sequence[str]) -> list[LoadedSource]:
    """``--settings`` values, loaded: files by path, values starting with ``{`` as inline JSON."""
    loaded = []
    for i, value in enumerate(settings):
        if value.lstrip().startswith("{"):
            spec = SourceSpec(Path(f"<--settings #{i + 1}>"), Scope.LOCAL, order=1000 + i)
            loaded.append(parse_source_text(spec, value))
        else:
            loaded.append(load_source(explicit_sources([value], order=1000 + i)[0]))
    return loaded


def named_settings_problems(loaded: Sequence[LoadedSource]) -> list[str]:
    """Why sources the user *named* cannot be trusted to hold the hooks they meant.

    A default source that is absent is normal (most users have no policy
    file); a file named on the command line that is absent, unreadable or
    broken means the caller would test nothing, so a testing tool must refuse
    rather than report "allowed".
    """
    problems: list[str] = []
    for source in loaded:
        if not source.exists:
            problems.append(f"{source.spec.path}: no such file")
        problems.extend(str(error) for error in source.errors)
    return problems

"""One-shot configuration: read every source for a project now and build a config.

The daemon keeps sources loaded and watched (:mod:`hookd.daemon.registry`);
the one-shot CLI and tests just call :func:`load_config`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hookd.config.loader import build_config, load_source, parse_source_text
from hookd.config.model import HookConfig, Scope
from hookd.config.sources import SourceLayout, SourceSpec, _kind

__all__ = ["explicit_sources", "load_config"]


def explicit_sources(values: Sequence[str], scope: Scope = Scope.LOCAL) -> list[SourceSpec]:
    """``--settings`` values: files, in the order given (inline JSON is handled by the caller)."""
    return [
        SourceSpec(Path(v).expanduser(), scope, kind=_kind(Path(v)), order=i)
        for i, v in enumerate(values)
    ]


def load_config(
    layout: SourceLayout | None,
    project: str | None,
    settings: Sequence[str] = (),
) -> HookConfig:
    """Load the layout's sources for ``project`` (if a layout is given) plus ``settings``.

    A ``settings`` value that starts with ``{`` is inline JSON, as with
    Claude Code's ``--settings``.
    """
    loaded = []
    if layout is not None:
        specs = layout.global_sources()
        if project:
            specs += layout.project_sources(project)
        loaded = [load_source(s) for s in specs]
    for i, value in enumerate(settings):
        if value.lstrip().startswith("{"):
            spec = SourceSpec(Path(f"<--settings #{i + 1}>"), Scope.LOCAL, order=1000 + i)
            loaded.append(parse_source_text(spec, value))
        else:
            loaded.append(load_source(explicit_sources([value])[0]))
    return build_config(loaded)

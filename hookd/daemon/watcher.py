"""Watch every config source and reload when one changes (watchfiles).

The watcher's only job is "did a relevant file change?" (uvicorn's
``WatchFilesReload``); the registry decides what the change means.

Editors save in different ways — in place, by writing a temp file and
renaming it over the original, by deleting and recreating — so the watcher
watches *directories*, not files: the source's own directory when it
exists, otherwise the nearest existing ancestor (non-recursively), so that a
``.claude/`` created later is noticed too.  When the set of directories
changes (a new project, a directory created), the watch restarts and
everything is re-read once, so an edit made between the two watches is not
lost.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import structlog
import trio
from watchfiles import Change, awatch

from hookd.daemon.registry import ConfigRegistry

__all__ = ["watch_sources"]

log = structlog.get_logger("hookd.watcher")


class _Reloader(Protocol):
    def reload(self) -> bool: ...


def _roots(paths: list[Path]) -> tuple[frozenset[Path], frozenset[Path]]:
    """(directories watched recursively, directories watched flat).

    A source file needs only its own directory watched, flat: an in-place save,
    a rename over it and its creation all happen there.  Only plugin
    directories (``plugins/*/hooks.json``) are watched recursively.  Keeping
    recursive watches narrow matters: a recursive watch over, say, a directory
    that also holds the daemon's state would wake the watcher on every audit
    line the daemon writes.  A directory that does not exist yet is covered by
    its nearest existing ancestor, flat, until it appears.
    """
    deep: set[Path] = set()
    flat: set[Path] = set()
    for path in paths:
        is_dir_source = path.suffix == "" and not path.name.endswith(".json")
        target = path if is_dir_source else path.parent
        if target.is_dir():
            (deep if is_dir_source else flat).add(target)
            continue
        ancestor = target.parent
        while not ancestor.is_dir() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        flat.add(ancestor)
    return frozenset(deep), frozenset(flat - deep)


def _relevant(changed: str, wanted: list[Path]) -> bool:
    path = Path(changed)
    for target in wanted:
        if path == target or target.is_relative_to(path) or path.is_relative_to(target):
            return True
    return False


async def _watch(
    roots: frozenset[Path],
    recursive: bool,
    wanted: list[Path],
    debounce_ms: int,
    reloader: _Reloader,
    stop: trio.Event,
) -> None:
    if not roots:
        await stop.wait()
        return
    async for changes in awatch(
        *roots,
        recursive=recursive,
        debounce=debounce_ms,
        step=10,
        stop_event=stop,
        watch_filter=lambda _change, path: _relevant(path, wanted),
        rust_timeout=1000,
        yield_on_timeout=False,
    ):
        log.debug("config files changed", changes=sorted({p for _, p in changes}))
        reloader.reload()
        if any(c == Change.added for c, _ in changes):
            stop.set()  # a new file or directory may need new watch roots


async def _watch_for_new_roots(
    wanted: Callable[[], list[Path]],
    roots: tuple[frozenset[Path], frozenset[Path]],
    stop: trio.Event,
) -> None:
    while not stop.is_set():
        await trio.sleep(0.5)
        if _roots(wanted()) != roots:
            stop.set()


async def watch_sources(
    registry: ConfigRegistry,
    debounce_ms: int,
    reloader: _Reloader,
    *,
    also: tuple[Path, ...] = (),
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Watch the registry's sources and ``also`` (the daemon's ``hookd.toml``, whose
    ``http_port`` a reload applies); any relevant change reloads."""
    started = False

    def watched() -> list[Path]:
        return [*registry.watch_paths(), *also]

    while True:
        wanted = watched()
        deep, flat = _roots(wanted)
        log.debug("watching", deep=sorted(map(str, deep)), flat=sorted(map(str, flat)))
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch, deep, True, wanted, debounce_ms, reloader, stop)
            nursery.start_soon(_watch, flat, False, wanted, debounce_ms, reloader, stop)
            nursery.start_soon(_watch_for_new_roots, watched, (deep, flat), stop)
            # awatch needs a moment to install its watches before edits are seen.
            await trio.sleep(0.05)
            if not started:
                started = True
                task_status.started()
            else:
                # Between the old watch and this one, a new project's files were read
                # without a watch on them: re-read once so no edit in that gap is lost.
                reloader.reload()
            try:
                await stop.wait()
            finally:
                # Also on cancellation: awatch's thread only returns when it sees the
                # stop event, and a cancelled nursery would otherwise wait for it
                # (up to rust_timeout) before the daemon can stop.
                stop.set()
                nursery.cancel_scope.cancel()

"""One configuration's hooks, indexed for the question every event asks: which run?

A configuration generation is immutable, so everything about a hook that does
not depend on the event is worked out once per generation instead of once per
event: each group's compiled matcher and each hook's parsed ``if`` rule, which
of its hooks the scope switches allow (``disableAllHooks``,
``allowManagedHooksOnly``), each hook's dedup key and ``once`` identity.  And
which groups a tool name matches is remembered per (event, tool): a config with
a hundred groups for other tools costs an event one dictionary lookup, not a
hundred matcher tests (``bench/`` row 10).  The memo of Bash commands the
``if`` rules split lives here too, so it goes with the generation.

What stays per event is what depends on it: ``if`` rules (the command or path),
``once`` (the session) and deduplication among the chosen hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hookd.config.matching import (
    IfMemo,
    IfRule,
    Matcher,
    compile_if_rule,
    compile_matcher,
    dedup_key,
)
from hookd.config.model import GroupSpec, HookConfig, HookSpec

__all__ = ["IndexedGroup", "SelectionIndex", "index_for", "indexed_group"]

_MATCH_MEMO = 1024
"""(event, tool) answers kept per index; queries of non-tool events (a file name for
FileChanged, say) are unbounded, so the memo is cleared when it is full."""


@dataclass(frozen=True, slots=True)
class Candidate:
    spec: HookSpec
    rule: IfRule | None
    """The handler's ``if`` rule, parsed here, checked per event."""
    once_id: str | None
    """``hook_id`` for a ``once`` hook (per-session memory), else None."""
    key: tuple[Any, ...] | None
    """Claude Code's dedup key; None: never deduplicated."""


@dataclass(frozen=True, slots=True)
class IndexedGroup:
    group: GroupSpec
    matcher: Matcher
    candidates: tuple[Candidate, ...]
    """The group's hooks that the configuration's scope switches let run."""


def indexed_group(config: HookConfig, group: GroupSpec, event: str) -> IndexedGroup:
    return IndexedGroup(
        group,
        compile_matcher(group.matcher, event),
        tuple(
            Candidate(
                spec,
                compile_if_rule(spec.handler.if_) if spec.handler.if_ is not None else None,
                spec.hook_id if spec.handler.once else None,
                dedup_key(spec),
            )
            for spec in group.hooks
            if config.scope_allowed(spec.scope)
        ),
    )


class SelectionIndex:
    def __init__(self, config: HookConfig) -> None:
        self._config = config
        self._groups: dict[str, tuple[IndexedGroup, ...]] = {}
        self._matching: dict[tuple[str, tuple[str, ...]], tuple[IndexedGroup, ...]] = {}
        self.if_memo = IfMemo()
        """Bash commands split and judged by this generation's ``if`` rules."""

    def groups(self, event: str) -> tuple[IndexedGroup, ...]:
        found = self._groups.get(event)
        if found is None:
            found = self._groups[event] = tuple(
                indexed_group(self._config, g, event) for g in self._config.groups_for(event)
            )
        return found

    def matching(self, event: str, candidates: tuple[str, ...]) -> tuple[IndexedGroup, ...]:
        """The event's groups whose matcher accepts one of ``candidates`` (a tool's names)."""
        key = (event, candidates)
        found = self._matching.get(key)
        if found is None:
            if len(self._matching) >= _MATCH_MEMO:
                self._matching.clear()
            found = self._matching[key] = tuple(
                g for g in self.groups(event) if g.matcher.matches(candidates)
            )
        return found


def index_for(config: HookConfig) -> SelectionIndex:
    """The index of ``config``: built on first use, kept in (and dropped with) the config."""
    index = config.derived.get("selection")
    if index is None:
        index = config.derived["selection"] = SelectionIndex(config)
    assert isinstance(index, SelectionIndex)
    return index

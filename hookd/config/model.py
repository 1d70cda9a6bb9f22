"""The validated, immutable configuration the engine runs on.

The loader builds one :class:`HookConfig` per *generation*; the engine never
mutates it.  An event keeps the generation it started with even when a reload
swaps in a newer one, because it holds a reference to this object and nothing
else.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field

import msgspec

from hookd.config.schema import CommandSetting, Handler, handler_label
from hookd_client.results import HookRef

SESSION_END_BUDGET = 1.5
"""Seconds all SessionEnd hooks share unless a settings file's hook asks for more
(reference §1.4; the rule is ``hookd.config.timeouts.session_end_budget``)."""

__all__ = ["ConfigError", "GroupSpec", "HookConfig", "HookSpec", "Scope"]


class Scope(enum.IntEnum):
    """Configuration scopes, highest precedence first; hooks merge in this order."""

    POLICY = 0
    USER = 1
    PROJECT = 2
    LOCAL = 3
    PLUGIN = 4
    SESSION = 5
    SKILL = 6

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class ConfigError:
    """One problem in one file: where (file, line when known, JSON path) and what."""

    file: str
    message: str
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.path:
            where = f"{where}: {self.path}"
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One handler, resolved: its event, group, effective timeout and origin."""

    event: str
    matcher: str | None
    handler: Handler
    scope: Scope
    source: str
    group_index: int
    hook_index: int
    group_timeout: float | None = None
    plugin_root: str | None = None
    skill_root: str | None = None
    project_dir: str | None = None
    """Found among this project's files (``SourceSpec.project_dir``): project code, run only
    once the project is trusted, wherever a symlink on its path leads."""
    hook_id: str = field(init=False, repr=False, compare=False)
    """Who this hook is, by content: its file, event, matcher and handler.

    Used for ``once`` and the circuit breaker, so it must survive reloads: a
    position (group 2, hook 1) would move when a hook is inserted above it,
    handing one hook's ``once`` or failure count to another.  Computed once
    here (a hash of the encoded handler) rather than on every run.
    """
    label: str = field(init=False, repr=False, compare=False)
    """:func:`handler_label` of the handler, for status, logs and run records."""
    _ref: HookRef = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha1(msgspec.json.encode(self.handler)).hexdigest()[:12]
        hook_id = f"{self.source}#{self.event}#{self.matcher or '*'}#{digest}"
        object.__setattr__(self, "hook_id", hook_id)
        object.__setattr__(self, "label", handler_label(self.handler))
        object.__setattr__(
            self,
            "_ref",
            HookRef(
                name=self.label,
                type=type(self.handler).__struct_config__.tag,  # type: ignore[arg-type]
                scope=self.scope.label,
                source=self.source,
                event=self.event,
                matcher=self.matcher,
                group=self.group_index,
                index=self.hook_index,
            ),
        )

    @property
    def timeout(self) -> float | None:
        return self.handler.timeout if self.handler.timeout is not None else self.group_timeout

    def ref(self) -> HookRef:
        """Where this hook came from (made once at load: it is on every run's record)."""
        return self._ref


@dataclass(frozen=True, slots=True)
class GroupSpec:
    event: str
    matcher: str | None
    hooks: tuple[HookSpec, ...]
    sequential: bool = False


@dataclass(frozen=True)
class HookConfig:
    """Everything the engine needs for one generation."""

    groups: dict[str, tuple[GroupSpec, ...]] = field(default_factory=dict)
    disable_all_hooks: bool = False
    """True when a non-policy source disables hooks: only policy hooks run."""
    policy_disables_all: bool = False
    """True when policy disables hooks: nothing from settings files runs."""
    allow_managed_hooks_only: bool = False
    allowed_http_hook_urls: tuple[str, ...] | None = None
    http_hook_allowed_env_vars: tuple[str, ...] | None = None
    errors: tuple[ConfigError, ...] = ()
    sources: tuple[str, ...] = ()
    project_digests: tuple[tuple[str, str | None], ...] = ()
    """(path relative to the project, ``LoadedSource.digest``) of each project file this
    generation was built from: what a pinned trust is checked against."""
    generation: int = 0
    session_end_budget: float = SESSION_END_BUDGET
    """What all SessionEnd hooks share (``hookd.config.timeouts.session_end_budget``)."""
    status_line: CommandSetting | None = None
    """``statusLine`` of the highest-precedence file that sets it."""
    file_suggestion: CommandSetting | None = None
    project_trusted: bool = True
    """False when the trust gate removed an untrusted project's hooks and settings: handlers
    must then not reach into the project directory either (python hooks' module lookup)."""
    derived: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)
    """What others work out once per generation and keep with it (the engine's selection
    index).  Not an init field, so ``dataclasses.replace`` gives a copy an empty one."""

    def groups_for(self, event: str) -> tuple[GroupSpec, ...]:
        return self.groups.get(event, ())

    def all_hooks(self) -> list[HookSpec]:
        return [h for groups in self.groups.values() for g in groups for h in g.hooks]

    def scope_allowed(self, scope: Scope) -> bool:
        """``disableAllHooks`` / ``allowManagedHooksOnly`` (reference §10.1).

        Session hooks (registered by a client, like Claude Code's SDK callbacks)
        always run: the agent that registered them asked for them explicitly.
        """
        if scope is Scope.SESSION:
            return True
        if scope is Scope.POLICY:
            return not self.policy_disables_all
        if self.policy_disables_all or self.disable_all_hooks:
            return False
        return not self.allow_managed_hooks_only

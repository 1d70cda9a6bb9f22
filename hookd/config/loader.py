"""Read hook configuration files and build a validated :class:`HookConfig`.

Three formats reach the same model:

* Claude Code settings JSON (``{"hooks": {Event: [group, …]}, …}``), also used
  by hookd's own ``hooks.json`` files and plugins' ``hooks.json``;
* the seeds' TOML (``[[hooks]]`` tables with ``event``, ``tool_matcher``,
  ``[hooks.shell]`` / ``[hooks.webhook]``);
* skill frontmatter: the ``hooks:`` key of a ``SKILL.md`` YAML header.

Errors never raise: each one is recorded with file, line (when the parser
knows it) and JSON path.  The loader itself keeps a file's valid groups (so
``hookctl validate`` can count them), but what *runs* follows one rule, the
same in the daemon and in ``hookctl fire --local`` (:func:`applied`): a file
with any error is not applied at all — the daemon keeps the file's last good
version, a file that never loaded cleanly contributes nothing.  A security
policy split over several groups is never half applied.

*Warnings* are mistakes that load but almost certainly do not do what was
meant (a header's ``$VAR`` that is not in ``allowedEnvVars`` and so is sent
empty); they are reported everywhere errors are, and change nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec
import yaml

from hookd.config.files import read_source_file
from hookd.config.handler_check import handler_problems, misspelt_keys
from hookd.config.json_lines import line_of_path, value_lines
from hookd.config.matching import compile_matcher
from hookd.config.model import ConfigError, GroupSpec, HookConfig, HookSpec, Scope
from hookd.config.schema import (
    AgentHandler,
    CommandHandler,
    CommandSetting,
    HttpHandler,
    MatcherGroup,
    PromptHandler,
    SettingsFile,
)
from hookd.config.sources import SourceSpec
from hookd.config.timeouts import session_end_budget
from hookd_client.events import EVENTS

__all__ = ["LoadedSource", "applied", "build_config", "load_source", "parse_source_text"]

# Reference §1.5: which events accept prompt / agent / http handlers.
_LLM_EVENTS = frozenset(
    {
        "PreToolUse",
        "PermissionRequest",
        "PermissionDenied",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Stop",
        "SubagentStop",
        "TaskCreated",
        "TaskCompleted",
        "TeammateIdle",
    }
)
_NO_HTTP_EVENTS = frozenset({"SessionStart", "Setup"})

# Precedence of scalar settings outside policy (reference §10.1), highest first.
_SCALAR_RANK = {Scope.LOCAL: 0, Scope.PROJECT: 1, Scope.USER: 2}


@dataclass(frozen=True)
class LoadedSource:
    """One file, parsed: its groups (only the valid ones) and its errors."""

    spec: SourceSpec
    exists: bool
    groups: tuple[tuple[str, int, MatcherGroup], ...] = ()
    settings: SettingsFile = field(default_factory=SettingsFile)
    errors: tuple[ConfigError, ...] = ()
    warnings: tuple[ConfigError, ...] = ()
    """Loads, but probably not as meant: a header ``$VAR`` that will be sent empty, an
    event name no agent sends (``PreToolUSe``)."""
    fatal: bool = False
    """The whole file could not be read (syntax error): nothing from it applies."""
    digest: str | None = None
    """sha256 of the bytes parsed (None: absent; ``"unreadable"``: there but not readable as
    a config file).  A pinned trust is checked against the bytes that run, not against the
    disk a moment later (hookd/daemon/trust.py)."""

    @property
    def ok(self) -> bool:
        return not self.errors


def applied(source: LoadedSource) -> LoadedSource:
    """What of ``source`` runs: all of it, or — when it has any error — nothing.

    The one reload rule (docs/configuration.md, "One rule for invalid files"): a
    file is applied whole or not at all.  Skipping only the bad group would half
    apply a policy — a broken ``deny`` group next to a working ``allow`` group
    would turn a guard into an open door — so the daemon keeps the file's last
    good version instead, and a file with no good version contributes nothing.
    """
    if not source.errors:
        return source
    return LoadedSource(
        spec=source.spec,
        exists=source.exists,
        errors=source.errors,
        fatal=True,
        digest=source.digest,
    )


def load_source(spec: SourceSpec) -> LoadedSource:
    """Read and parse one source file; a missing file is simply empty."""
    digest = "unreadable"
    try:
        data = read_source_file(spec.path)
        digest = hashlib.sha256(data).hexdigest()
        text = data.decode("utf-8")
    except FileNotFoundError:
        return LoadedSource(spec=spec, exists=False)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        # ValueError: a NUL byte in the path (Python refuses it before the system call).
        err = ConfigError(str(spec.path), f"cannot read file: {exc}")
        return LoadedSource(spec=spec, exists=True, errors=(err,), fatal=True, digest=digest)
    return replace(parse_source_text(spec, text), digest=digest)


def parse_source_text(spec: SourceSpec, text: str) -> LoadedSource:
    file = str(spec.path)
    try:
        if spec.kind == "toml":
            document = _toml_to_settings(file, text)
        elif spec.kind == "skill":
            document = _skill_frontmatter(file, text)
        else:
            document = _parse_json(file, text)
    except _SyntaxProblem as problem:
        return LoadedSource(spec=spec, exists=True, errors=(problem.error,), fatal=True)

    errors: list[ConfigError] = []
    if not isinstance(document, dict):
        errors.append(ConfigError(file, "expected a JSON object at the top level", "$"))
        return LoadedSource(spec=spec, exists=True, errors=tuple(errors), fatal=True)
    try:
        settings = msgspec.convert(document, SettingsFile, strict=True)
    except msgspec.ValidationError as exc:
        errors = _with_lines(spec, text, [_validation_error(file, exc, "$")])
        return LoadedSource(spec=spec, exists=True, errors=tuple(errors), fatal=True)

    groups: list[tuple[str, int, MatcherGroup]] = []
    warnings: list[ConfigError] = []
    for event, entries in settings.hooks.items():
        base = f"$.hooks.{event}"
        if not isinstance(entries, list):
            errors.append(ConfigError(file, "expected an array of matcher groups", base))
            continue
        for index, entry in enumerate(entries):
            where = f"{base}[{index}]"
            try:
                group = msgspec.convert(entry, MatcherGroup, strict=True)
            except msgspec.ValidationError as exc:
                errors.extend(_group_errors(file, entry, exc, where))
                continue
            misplaced = _check_handler_types(event, group)
            if misplaced is not None:
                errors.append(
                    ConfigError(file, misplaced[1], f"{where}.hooks[{misplaced[0]}].type")
                )
                continue
            # Reference §5.1: an invalid regex matches nothing; the group stays
            # (it is harmless) but the mistake is reported where it was made.
            bad_matcher = compile_matcher(group.matcher, event).error
            if bad_matcher is not None:
                errors.append(ConfigError(file, bad_matcher, f"{where}.matcher"))
            groups.append((event, index, group))
            warnings.extend(_unsubstituted_vars(file, where, group))
            warnings.extend(_misspelt_keys(file, where, entry))
    return LoadedSource(
        spec=spec,
        exists=True,
        groups=tuple(groups),
        settings=settings,
        errors=tuple(_with_lines(spec, text, errors)),
        warnings=tuple(
            _with_lines(spec, text, [*_unknown_events(file, settings.hooks), *warnings])
        ),
    )


_HEADER_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _misspelt_keys(file: str, where: str, entry: dict[str, Any]) -> list[ConfigError]:
    """A valid group's handlers' unknown keys that resemble known ones (``timout``)."""
    return [
        ConfigError(file, message, f"{where}.hooks[{index}]{path}")
        for index, handler in enumerate(entry["hooks"])
        for path, message in misspelt_keys(handler)
    ]


def _unsubstituted_vars(file: str, where: str, group: MatcherGroup) -> list[ConfigError]:
    r"""Header ``$VAR``\ s that are not in the hook's ``allowedEnvVars``: Claude Code (and
    hookd) send them as empty strings, so ``Bearer $TOKEN`` goes out as ``Bearer ``."""
    found = []
    for i, handler in enumerate(group.hooks):
        if not isinstance(handler, HttpHandler):
            continue
        allowed = set(handler.allowedEnvVars)
        for name, value in handler.headers.items():
            for match in _HEADER_VAR.finditer(value):
                var = match.group(1) or match.group(2)
                if var not in allowed:
                    found.append(
                        ConfigError(
                            file,
                            f"${var} is not in this hook's allowedEnvVars, so it is sent as an "
                            f'empty string; add "allowedEnvVars": ["{var}"] to substitute it',
                            f"{where}.hooks[{i}].headers.{name}",
                        )
                    )
    return found


def _unknown_events(file: str, hooks: dict[str, Any]) -> list[ConfigError]:
    """Event names no agent sends, with the known name they most resemble.

    Unknown names stay valid (a newer Claude Code may send them, and hookd
    passes them on), so this is advice, not an error.
    """
    by_lower = {name.lower(): name for name in EVENTS}
    found = []
    for event in hooks:
        if event in EVENTS:
            continue
        close = [by_lower[event.lower()]] if event.lower() in by_lower else []
        close = close or difflib.get_close_matches(event, list(EVENTS), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        message = f"unknown event {event!r}{hint}: its hooks run only if an agent sends it"
        found.append(ConfigError(file, message, f"$.hooks.{event}"))
    return found


def _group_errors(
    file: str, entry: Any, exc: msgspec.ValidationError, where: str
) -> list[ConfigError]:
    """Every problem in one bad matcher group, not only the first msgspec met.

    msgspec stops at the first error; checking the group's own fields and each
    handler separately finds the rest, so one ``validate`` run shows them all.
    """
    if not isinstance(entry, dict) or not isinstance(entry.get("hooks"), list):
        return [_validation_error(file, exc, where)]
    found: list[ConfigError] = []
    try:
        msgspec.convert({**entry, "hooks": []}, MatcherGroup, strict=True)
    except msgspec.ValidationError as group_exc:
        found.append(_validation_error(file, group_exc, where))
    for index, handler in enumerate(entry["hooks"]):
        found.extend(
            ConfigError(file, message, f"{where}.hooks[{index}]{path}")
            for path, message in handler_problems(handler)
        )
    return found or [_validation_error(file, exc, where)]


def _with_lines(spec: SourceSpec, text: str, errors: list[ConfigError]) -> list[ConfigError]:
    """Give JSON errors the line their path points at (worked out only when there are any)."""
    if spec.kind != "settings" or not any(e.path and e.line is None for e in errors):
        return errors
    try:
        lines = value_lines(text)
    except (ValueError, RecursionError):  # nesting deeper than Python's stack: no lines
        return errors
    return [
        replace(e, line=line_of_path(lines, e.path)) if e.path and e.line is None else e
        for e in errors
    ]


def _check_handler_types(event: str, group: MatcherGroup) -> tuple[int, str] | None:
    for i, handler in enumerate(group.hooks):
        if isinstance(handler, PromptHandler | AgentHandler) and event in EVENTS:
            if event not in _LLM_EVENTS:
                kind = "prompt" if isinstance(handler, PromptHandler) else "agent"
                return i, f"{event} does not accept `{kind}` hooks (only command-style hooks)"
        if isinstance(handler, HttpHandler) and event in _NO_HTTP_EVENTS:
            return i, f"{event} does not accept `http` hooks (Claude Code skips them there)"
        if isinstance(handler, CommandHandler) and handler.async_ and handler.onFailure == "block":
            return i, '`onFailure: "block"` has no effect on an async hook; remove one of them'
    return None


class _SyntaxProblem(Exception):
    def __init__(self, error: ConfigError) -> None:
        super().__init__(str(error))
        self.error = error


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, max(0, offset)) + 1


def _parse_json(file: str, text: str) -> Any:
    if not text.strip():
        return {}
    try:
        return msgspec.json.decode(text.encode())
    except msgspec.DecodeError as exc:
        message = str(exc)
        match = re.search(r"\(byte (\d+)\)", message)
        if match:
            line: int | None = _line_of(text, int(match.group(1)))
        elif "truncated" in message:
            # msgspec names no offset when the text ends early: the error is at its end.
            line = _line_of(text, len(text.rstrip()))
            message = f"{message}: the file ends before the JSON does (an unclosed {{ or [?)"
        else:
            line = None
        raise _SyntaxProblem(ConfigError(file, message, line=line)) from None


def _validation_error(file: str, exc: msgspec.ValidationError, prefix: str) -> ConfigError:
    """Turn msgspec's ``… - at `$.hooks[0].timeout``` into a path rooted at ``prefix``."""
    message = str(exc)
    path = prefix
    match = re.search(r" - at `\$(.*)`$", message)
    if match:
        message = message[: match.start()]
        path = prefix + match.group(1)
    return ConfigError(file, message, path)


_TOML_LINE = re.compile(r"at line (\d+)")


def _toml_to_settings(file: str, text: str) -> dict[str, Any]:
    """Translate the seeds' ``[[hooks]]`` TOML into the settings shape.

    Each ``[[hooks]]`` table becomes one matcher group holding one handler, so
    errors can still be reported per table (``$.hooks.<Event>[i]``) — and the
    table's position in the file is kept in the message.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        raise _SyntaxProblem(
            ConfigError(file, str(exc), line=int(match.group(1)) if match else None)
        ) from None
    tables = data.get("hooks", [])
    settings: dict[str, Any] = {k: v for k, v in data.items() if k != "hooks"}
    hooks: dict[str, list[Any]] = {}
    if not isinstance(tables, list):
        raise _SyntaxProblem(ConfigError(file, "`hooks` must be an array of tables ([[hooks]])"))
    for position, table in enumerate(tables):
        if not isinstance(table, dict) or not isinstance(table.get("event"), str):
            raise _SyntaxProblem(
                ConfigError(
                    file, "every [[hooks]] table needs a string `event`", f"hooks[{position}]"
                )
            )
        handler: dict[str, Any] = {}
        if isinstance(table.get("shell"), dict):
            handler = {"type": "command", **table["shell"]}
        elif isinstance(table.get("webhook"), dict):
            handler = {"type": "http", **table["webhook"]}
        else:
            for kind in ("command", "http", "prompt", "agent", "python"):
                if isinstance(table.get(kind), dict):
                    handler = {"type": kind, **table[kind]}
                    break
        for key, target in (
            ("name", "name"),
            ("once", "once"),
            ("timeout_sec", "timeout"),
            ("on_failure", "onFailure"),
            ("if", "if"),
        ):
            if key in table:
                handler[target] = table[key]
        group: dict[str, Any] = {"hooks": [handler]}
        if "tool_matcher" in table:
            group["matcher"] = table["tool_matcher"]
        elif "matcher" in table:
            group["matcher"] = table["matcher"]
        if table.get("sequential"):
            group["sequential"] = True
        hooks.setdefault(table["event"], []).append(group)
    settings["hooks"] = hooks
    return settings


def _skill_frontmatter(file: str, text: str) -> dict[str, Any]:
    """The ``hooks:`` of a SKILL.md YAML frontmatter block (between ``---`` lines)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise _SyntaxProblem(
            ConfigError(file, "frontmatter is not closed by a `---` line")
        ) from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        raise _SyntaxProblem(ConfigError(file, f"YAML frontmatter: {exc}", line=line)) from None
    if not isinstance(meta, dict):
        raise _SyntaxProblem(ConfigError(file, "frontmatter must be a mapping", line=2))
    hooks = meta.get("hooks") or {}
    return {"hooks": hooks}


class _Scalars:
    """The settings-wide keys of every source, merged as Claude Code does (reference §10.1).

    ``disableAllHooks`` takes the value of the highest-precedence file that sets it
    (policy apart); only a policy file can set ``allowManagedHooksOnly``; the HTTP
    allowlists are unions; ``statusLine``/``fileSuggestion`` come from the
    highest-precedence file that sets them.
    """

    def __init__(self) -> None:
        self.disable: bool | None = None
        self.disable_rank = len(_SCALAR_RANK)
        self.policy_disable = False
        self.managed_only = False
        self.urls: list[str] | None = None
        self.env_vars: list[str] | None = None
        self.commands: dict[str, tuple[int, CommandSetting]] = {}

    def add(self, source: LoadedSource) -> None:
        settings = source.settings
        scope = source.spec.scope
        self._add_commands(scope, settings)
        if settings.disableAllHooks is not None:
            self._add_disable(scope, settings.disableAllHooks)
        if scope is Scope.POLICY and settings.allowManagedHooksOnly:
            self.managed_only = True
        if settings.allowedHttpHookUrls is not None:
            self.urls = [*(self.urls or []), *settings.allowedHttpHookUrls]
        if settings.httpHookAllowedEnvVars is not None:
            self.env_vars = [*(self.env_vars or []), *settings.httpHookAllowedEnvVars]

    def _add_commands(self, scope: Scope, settings: SettingsFile) -> None:
        rank = -1 if scope is Scope.POLICY else _SCALAR_RANK.get(scope, len(_SCALAR_RANK))
        for key, value in (
            ("statusLine", settings.statusLine),
            ("fileSuggestion", settings.fileSuggestion),
        ):
            if value is not None and (key not in self.commands or rank < self.commands[key][0]):
                self.commands[key] = (rank, value)

    def _add_disable(self, scope: Scope, value: bool) -> None:
        if scope is Scope.POLICY:
            self.policy_disable = value
            return
        # Reference §10.1: scalar keys follow local > project > user, so a
        # project's `false` overrides a user's `true` — the reverse of the
        # order hooks merge in.  Among equals, the first file wins.
        rank = _SCALAR_RANK.get(scope, len(_SCALAR_RANK))
        if self.disable is None or rank < self.disable_rank:
            self.disable, self.disable_rank = value, rank

    def command(self, key: str) -> CommandSetting | None:
        found = self.commands.get(key)
        return found[1] if found is not None else None


def _group_specs(source: LoadedSource) -> Iterable[GroupSpec]:
    """One source's matcher groups, each hook a :class:`HookSpec` that knows where it came from."""
    scope = source.spec.scope
    for event, index, group in source.groups:
        specs = tuple(
            HookSpec(
                event=event,
                matcher=group.matcher,
                handler=handler,
                scope=scope,
                source=str(source.spec.path),
                group_index=index,
                hook_index=i,
                group_timeout=group.timeout,
                plugin_root=source.spec.plugin_root,
                skill_root=source.spec.skill_root,
                project_dir=source.spec.project_dir,
            )
            for i, handler in enumerate(group.hooks)
        )
        yield GroupSpec(
            event=event, matcher=group.matcher, hooks=specs, sequential=group.sequential
        )


def build_config(
    loaded: Sequence[LoadedSource],
    generation: int = 0,
    extra_errors: Iterable[ConfigError] = (),
) -> HookConfig:
    """Merge sources into one config: hooks concatenate in scope order (policy first);
    the settings-wide keys merge by :class:`_Scalars`' rules."""
    ordered = sorted(loaded, key=lambda s: (s.spec.scope, s.spec.order))
    per_event: dict[str, list[GroupSpec]] = {}
    errors: list[ConfigError] = list(extra_errors)
    scalars = _Scalars()
    for source in ordered:
        errors.extend(source.errors)
        scalars.add(source)
        for group in _group_specs(source):
            per_event.setdefault(group.event, []).append(group)
    return HookConfig(
        groups={event: tuple(groups) for event, groups in per_event.items()},
        disable_all_hooks=bool(scalars.disable),
        policy_disables_all=scalars.policy_disable,
        allow_managed_hooks_only=scalars.managed_only,
        allowed_http_hook_urls=tuple(scalars.urls) if scalars.urls is not None else None,
        http_hook_allowed_env_vars=(
            tuple(scalars.env_vars) if scalars.env_vars is not None else None
        ),
        errors=tuple(errors),
        sources=tuple(str(s.spec.path) for s in ordered),
        project_digests=tuple(
            (os.path.relpath(s.spec.path, s.spec.project_dir), s.digest)
            for s in ordered
            if s.spec.project_dir is not None
        ),
        generation=generation,
        session_end_budget=session_end_budget(
            spec for group in per_event.get("SessionEnd", ()) for spec in group.hooks
        ),
        status_line=scalars.command("statusLine"),
        file_suggestion=scalars.command("fileSuggestion"),
    )

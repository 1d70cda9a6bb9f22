"""Lint every agent's hook files for the ways hooks fail without a word (``hookctl doctor``).

An agent that cannot parse its hook file, has hooks switched off, skips a
hook it does not trust, reads ``30`` as thirty milliseconds or never meets a
matcher's tool name says nothing: the hook simply never runs, and a guard
that never runs looks exactly like a guard that never had to deny.  This
module finds those, per agent and file, as :class:`~hookd.agents.base.Finding`:

* what every agent shares, through the adapter contract — a file the agent
  cannot parse (it drops *all* of it), a timeout that is implausible in the
  agent's unit, a matcher written with Claude Code's tool name for an agent
  that calls the tool something else, the user's own hooks still running
  natively beside hookd's entry;
* what only the agent knows — :meth:`Adapter.lint` (Gemini's
  ``hooksConfig.enabled: false``, Cursor's missing ``version``, Qwen's
  ``disableAllHooks`` …);
* in hookd's own config: a matcher using an agent's *native* tool name, which
  never matches there (hookd matches Claude Code's names, for every agent).

The daemon-side questions (is the project trusted by hookd, what each agent
does with each configured hook) are the CLI's to add: they need the daemon's
settings and the capability report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from hookd.agents.base import Adapter, Finding, Scope
from hookd.agents.cc_dialect import ClaudeDialectAdapter
from hookd.config.schema import Handler
from hookd.installers.agent_install import read_native

__all__ = ["fail_closed_findings", "hookd_config_findings", "lint_agent", "lint_file"]

Severity = Literal["error", "warning", "info"]

_PLAIN = re.compile(r"^[A-Za-z0-9_]+$")


def lint_agent(
    adapter: Adapter,
    home: Path,
    project: Path | None,
    scopes: Sequence[Scope] = ("user", "project"),
) -> list[Finding]:
    """Every finding in ``adapter``'s existing hook files of ``scopes``."""
    out: list[Finding] = []
    for scope in scopes:
        for path in adapter.hook_files(scope, home, project):
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except OSError as exc:
                out.append(_finding("error", f"{adapter.title} cannot read it: {exc}", path))
                continue
            out.extend(lint_file(adapter, path, text))
            if _is_wired(adapter, text):
                # The agent's own gate: hookd cannot see whether the user passed it, so it
                # is said (an agent that skips untrusted hooks says nothing itself).
                out.extend(
                    _finding("info", f"before {adapter.title} runs hookd's entries: {step}", path)
                    for step in adapter.trust_steps(scope)
                )
    return out


def lint_file(adapter: Adapter, path: Path, text: str) -> list[Finding]:
    try:
        native = read_native(adapter, path)
    except ValueError as exc:
        message = str(exc).removeprefix(f"{path}: ")
        return [
            _finding(
                "error",
                f"{adapter.title} cannot parse this file and runs none of its hooks: {message}",
                path,
            )
        ]
    out: list[Finding] = []
    try:
        out.extend(adapter.lint(path, text))
    except ValueError as exc:
        out.append(_finding("error", f"{adapter.title}: {exc}", path))
    # The generic checks, unless the adapter's own lint already judged the same thing.
    said = {f.where for f in out}
    if not any(w.endswith(".timeout") for w in said):
        out.extend(_timeouts(adapter, path, native.hooks))
    out.extend(f for f in _native_matchers(adapter, path, text) if f.where not in said)
    out.extend(_unmovable_types(adapter, path, native.hooks))
    wired = _is_wired(adapter, text)
    own = sum(len(g) for g in native.hooks.values())
    if wired and own:
        out.append(
            _finding(
                "warning",
                f"{own} hook group(s) of the file's own still run in {adapter.title} itself "
                f"beside hookd's entries; `hookctl agents install {adapter.name}` moves them "
                "into hookd's config",
                path,
            )
        )
    return out


HOOKD_HOOK_TYPES = frozenset(
    str(msgspec.inspect.type_info(h).tag)  # type: ignore[attr-defined]
    for h in Handler.__args__
)
"""The hook types hookd's config holds (``command``, ``http``, ``prompt``, ``agent``, …)."""


def _unmovable_types(
    adapter: Adapter, path: Path, hooks: dict[str, list[dict[str, Any]]]
) -> Iterator[Finding]:
    """A hook of a type hookd's config has no such thing as: ``agents install`` cannot
    move it into hookd — moved, the group would not load there (a config error) — so it
    must be rewritten first, or it runs only in the agent, not through hookd."""
    for event, groups in hooks.items():
        for i, group in enumerate(groups):
            for j, handler in enumerate(group.get("hooks") or []):
                kind = handler.get("type", "command") if isinstance(handler, dict) else None
                where = f"{event}[{i}].hooks[{j}].type"
                meaning = adapter.foreign_hook_types.get(str(kind))
                if meaning is not None:
                    yield _finding(
                        "warning",
                        f"a hook of type {kind!r} means something else in {adapter.title}: "
                        f"{meaning}; `hookctl agents install {adapter.name}` would move it into "
                        "hookd's config and change what it does — rewrite it as a command hook "
                        "first, or keep it in the agent's own format",
                        path,
                        where,
                    )
                    continue
                if kind in HOOKD_HOOK_TYPES:
                    continue
                yield _finding(
                    "warning",
                    f"a hook of type {kind!r}: hookd's config has no such hook type "
                    f"({', '.join(sorted(HOOKD_HOOK_TYPES))}), so `hookctl agents install "
                    f"{adapter.name}` cannot move it into hookd (moved, hookd's config would "
                    f"refuse the group): it runs only in {adapter.title} itself; rewrite it "
                    "as one of those types before installing",
                    path,
                    where,
                )


def _is_wired(adapter: Adapter, text: str) -> bool:
    try:
        return adapter.is_wired(text)
    except ValueError:
        return False


def _timeouts(
    adapter: Adapter, path: Path, hooks: dict[str, list[dict[str, Any]]]
) -> Iterator[Finding]:
    """A timeout that reads as a slip of unit once converted to seconds."""
    unit = adapter.timeout_unit
    for event, groups in hooks.items():
        for i, group in enumerate(groups):
            for j, handler in enumerate(group.get("hooks") or []):
                seconds = handler.get("timeout") if isinstance(handler, dict) else None
                if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
                    continue
                native = seconds / unit
                where = f"{event}[{i}].hooks[{j}].timeout"
                if unit < 1 and seconds < 1:
                    yield _finding(
                        "warning",
                        f"timeout {native:g} is in milliseconds for {adapter.title} "
                        f"({seconds:g} s): the hook is killed almost at once; seconds were "
                        f"probably meant ({native * 1000:g})",
                        path,
                        where,
                    )
                elif unit >= 1 and seconds >= 3600:
                    yield _finding(
                        "warning",
                        f"timeout {native:g} is in seconds for {adapter.title} "
                        f"({seconds / 3600:.1f} hours): milliseconds were probably meant",
                        path,
                        where,
                    )


def _native_matchers(adapter: Adapter, path: Path, text: str) -> Iterator[Finding]:
    """In a Claude-shaped file, a matcher naming Claude Code's tool the agent calls otherwise."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return
    # Droid's hooks.json is the ``hooks`` object itself, its keys the events.
    top = isinstance(adapter, ClaudeDialectAdapter) and path.name in adapter.top_level_files
    hooks = data if top else data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            matcher = group.get("matcher") if isinstance(group, dict) else None
            if not isinstance(matcher, str):
                continue
            for name in _names(matcher):
                natives = adapter.native_tools(name)
                if natives and name not in adapter.tools:
                    yield _finding(
                        "warning",
                        f"{adapter.title} calls {name} {' or '.join(natives)}: the matcher "
                        f"{matcher!r} never matches it there",
                        path,
                        f"{'' if top else 'hooks.'}{event}[{i}].matcher",
                    )


def _names(matcher: str) -> list[str]:
    parts = matcher.split("|")
    return parts if all(_PLAIN.match(p) for p in parts) else []


def fail_closed_findings(
    adapter: Adapter, path: Path, text: str, fail_closed: set[str]
) -> list[Finding]:
    """hookd's entries whose ``--fail-closed`` no longer matches hookd's config.

    ``install`` writes ``--fail-closed`` on an event's entry when one of its hooks
    says ``onFailure: "block"``; a hook given that later leaves the entry failing
    open — with hookd down, the call goes ahead although the hook asked otherwise,
    and nothing says so.  ``fail_closed``: the canonical events that ask for it."""
    out: list[Finding] = []
    pattern = re.compile(rf"--agent {re.escape(adapter.name)} (\S+?)(?=[\s\\\"']|$)")
    for number, line in enumerate(text.splitlines(), 1):
        for match in pattern.finditer(line):
            native = match.group(1)
            try:
                canonical = adapter.event_spec(native).canonical
            except ValueError:
                continue
            closed = "--fail-closed" in line
            if canonical in fail_closed and not closed:
                out.append(
                    _finding(
                        "warning",
                        f"a {canonical} hook in hookd's config says onFailure: block, but "
                        f"{adapter.title}'s entry for {native} fails open when hookd is down: "
                        f"run `hookctl agents install {adapter.name}` again",
                        path,
                        f"line {number}",
                    )
                )
            elif closed and canonical not in fail_closed:
                out.append(
                    _finding(
                        "info",
                        f"{adapter.title}'s entry for {native} fails closed though no {canonical} "
                        "hook asks for it any more: with hookd down, it blocks",
                        path,
                        f"line {number}",
                    )
                )
    return out


def hookd_config_findings(path: Path, adapters: Iterable[Adapter]) -> list[Finding]:
    """hookd's config: a matcher naming a tool by one agent's native name never matches,
    because every agent's tool names reach hookd in Claude Code's words."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.strip() else {}
    except (OSError, json.JSONDecodeError):
        return []  # hookd's loader (hookctl validate / status) reports these, with lines
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return []
    native: dict[str, tuple[str, str]] = {}
    canonical: set[str] = set()
    for adapter in adapters:
        canonical.update(adapter.tools.values())
        for name, mapped in adapter.tools.items():
            if name != mapped:
                native.setdefault(name, (mapped, adapter.title))
    out: list[Finding] = []
    for event, groups in hooks.items():
        for i, group in enumerate(groups if isinstance(groups, list) else []):
            matcher = group.get("matcher") if isinstance(group, dict) else None
            if not isinstance(matcher, str):
                continue
            where = f"hooks.{event}[{i}].matcher"
            for name in _names(matcher):
                if name in native and name not in canonical:
                    mapped, title = native[name]
                    out.append(
                        _finding(
                            "warning",
                            f"{name!r} is {title}'s name for {mapped}: hookd matches Claude "
                            f"Code's names for every agent, so this never matches; use {mapped}",
                            path,
                            where,
                        )
                    )
            for name in _exact_names(matcher):
                if name not in canonical and name not in native:
                    out.extend(
                        _native_mcp_name(name, adapters, path, f"hooks.{event}[{i}].matcher")
                    )
    return out


_EXACT = re.compile(r"^[A-Za-z0-9_-]+$")
"""A matcher part hookd's matcher language reads as an exact tool name (config/matching.py)."""


def _exact_names(matcher: str) -> list[str]:
    parts = [p.strip() for p in matcher.split("|")]
    return parts if all(_EXACT.match(p) for p in parts) else []


def _native_mcp_name(
    name: str, adapters: Iterable[Adapter], path: Path, where: str
) -> Iterator[Finding]:
    """A matcher in hookd's config naming an MCP tool the way one agent does (Copilot's
    ``srv-echo``, Gemini's ``mcp_srv_echo``): it matches under that agent only (the name
    is one of the tool's candidates there), so the guard misses every other agent."""
    if name.startswith("mcp__"):
        return
    for adapter in adapters:
        mcp = adapter.mcp_tool(name) if not adapter.mcp.is_claude else None
        if mcp is not None and name not in adapter.tools:
            yield _finding(
                "warning",
                f"{name!r} is {adapter.title}'s name for the MCP tool {mcp.name}: it matches"
                f" only under {adapter.title}; write {mcp.name} (Claude Code's name) to guard"
                " it for every agent",
                path,
                where,
            )
            return


def _finding(severity: Severity, message: str, path: Path, where: str = "") -> Finding:
    return Finding(severity=severity, message=message, path=str(path), where=where)

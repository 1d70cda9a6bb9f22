"""The matcher language of the configuration: matchers, ``if`` rules and dedup keys.

Matchers (reference §5.1 and the observed table): absent, ``""`` and ``"*"``
match everything; a matcher made only of ``[A-Za-z0-9_|, -]`` is an exact name
or a ``|``/``,`` list of names; anything else is an *unanchored* regex search.
Matching is case-sensitive and an invalid regex matches nothing (it is
reported when the config loads).

It lives with the configuration language because it *is* part of it: the
loader compiles matchers to report bad ones, and the engine's per-generation
selection index (``hookd/engine/selection.py``) keeps the compiled matchers and
``if`` rules, and an :class:`IfMemo`, with the generation they were built
from.  Nothing here keeps a module-global cache.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from hookd.config.model import HookSpec
from hookd.config.schema import (
    AgentHandler,
    CallbackHandler,
    CommandHandler,
    HttpHandler,
    McpToolHandler,
    PromptHandler,
    PythonHandler,
)
from hookd_client.events import TOOL_EVENTS

__all__ = [
    "IfMemo",
    "IfRule",
    "Matcher",
    "compile_if_rule",
    "compile_matcher",
    "dedup_key",
    "glob_regex",
    "if_rule_matches",
    "tool_aliases",
]

_EXACT_CHARS = re.compile(r"^[A-Za-z0-9_|, -]+$")
_NARROW_EXACT_CHARS = re.compile(r"^[A-Za-z0-9_|]+$")
_NARROW_EVENTS = frozenset({"FileChanged", "StopFailure"})
_MODEL_SUFFIX = re.compile(r"\[[12]m\]$")

# Legacy names that tool matchers still accept (reference §2.2): alias -> tool.
_TOOL_ALIASES = {
    "Task": "Agent",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
    "ListPeers": "ListAgents",
    "Brief": "SendUserMessage",
    "ListMcpResources": "ListMcpResourcesTool",
    "ReadMcpResource": "ReadMcpResourceTool",
    "ProposeGoal": "SetGoal",
}


_NAMES_OF: dict[str, tuple[str, ...]] = {
    target: (target, *(alias for alias, t in _TOOL_ALIASES.items() if t == target))
    for target in _TOOL_ALIASES.values()
}
"""Each aliased tool's names, worked out once from the fixed table above."""


def tool_aliases(tool: str) -> tuple[str, ...]:
    """The tool's own name followed by every legacy name that refers to it."""
    return _NAMES_OF.get(tool) or (tool,)


@dataclass(frozen=True, slots=True)
class Matcher:
    source: str | None
    names: frozenset[str] | None = None
    regex: re.Pattern[str] | None = None
    error: str | None = None

    def matches(self, candidates: Iterable[str]) -> bool:
        if self.error is not None:
            return False
        if self.names is not None:
            return any(c in self.names for c in candidates)
        if self.regex is not None:
            return any(self.regex.search(c) for c in candidates)
        return True


def compile_matcher(matcher: str | None, event: str = "") -> Matcher:
    if matcher is None or matcher in ("", "*"):
        return Matcher(matcher)
    text = matcher
    if event in ("PreModelSwitch", "PostModelSwitch"):
        text = _MODEL_SUFFIX.sub("", text)
    narrow = event in _NARROW_EVENTS
    exact_chars = _NARROW_EXACT_CHARS if narrow else _EXACT_CHARS
    if exact_chars.match(text.strip() or "x"):
        parts = re.split(r"\|" if narrow else r"[|,]", text)
        return Matcher(matcher, names=frozenset(p.strip() for p in parts if p.strip()))
    try:
        return Matcher(matcher, regex=re.compile(text))
    except re.error as exc:
        return Matcher(matcher, error=f"invalid regex {matcher!r}: {exc}")


# --- `if` permission rules ---------------------------------------------------

_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.S)
_FILE_TOOLS = frozenset({"Edit", "Write", "Read", "MultiEdit", "NotebookEdit"})
_SPLIT_COMMANDS = re.compile(r"&&|\|\||;|\||\n")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")


@dataclass(frozen=True, slots=True)
class IfRule:
    """A handler's ``if`` rule, parsed once per configuration generation (§5.2)."""

    source: str
    tool: str | None
    """The tool it names; None when the rule cannot be understood (the hook runs)."""
    pattern: str | None


def compile_if_rule(rule: str) -> IfRule:
    """``Tool(pattern)`` → :class:`IfRule`."""
    match = _RULE.match(rule)
    if match is None:
        return IfRule(rule, None, None)
    return IfRule(rule, match.group(1), match.group(2))


class IfMemo:
    """Answers about Bash commands, kept with one configuration generation.

    Every ``if`` rule of an event asks about the same command, and
    ``shlex.split`` costs ~20 µs, so without a memo 100 Bash rules cost 2 ms.
    Only commands up to :data:`_CACHEABLE` characters are kept, and each table
    is emptied when full: bounded, and dropped with the generation.
    """

    __slots__ = ("_split", "_verdicts")

    def __init__(self) -> None:
        self._split: dict[str, tuple[tuple[str, str | None], ...]] = {}
        self._verdicts: dict[tuple[str, str], bool] = {}

    def bash_subcommands(self, command: str) -> tuple[tuple[str, str | None], ...]:
        found = self._split.get(command)
        if found is None:
            if len(self._split) >= _MEMO_LIMIT:
                self._split.clear()
            found = self._split[command] = _split_bash(command)
        return found

    def bash_rule(self, pattern: str, command: str) -> bool:
        key = (pattern, command)
        found = self._verdicts.get(key)
        if found is None:
            if len(self._verdicts) >= _MEMO_LIMIT:
                self._verdicts.clear()
            found = self._verdicts[key] = _bash_rule(pattern, command, self)
        return found


def if_rule_matches(
    rule: IfRule,
    event: str,
    tool_name: str,
    tool_input: Any,
    cwd: str,
    memo: IfMemo | None = None,
) -> bool:
    """Claude Code's per-handler ``if`` filter (reference §5.2).

    Off tool events a hook with ``if`` never runs.  Where the rule cannot be
    understood the hook runs (Claude Code fails open here too: ``if`` is a
    filter for performance, not a security boundary).
    """
    if event not in TOOL_EVENTS:
        return False
    if rule.tool is None:
        return True
    pattern = rule.pattern
    if rule.tool not in tool_aliases(tool_name):
        return False
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    inputs = tool_input if isinstance(tool_input, dict) else {}
    if tool_name in ("Bash", "PowerShell"):
        command = inputs.get("command")
        if not isinstance(command, str):
            return True
        if memo is not None and len(command) <= _CACHEABLE:
            return memo.bash_rule(pattern, command)
        return _bash_rule(pattern, command, None)
    if tool_name in _FILE_TOOLS:
        path = inputs.get("file_path") or inputs.get("notebook_path")
        return _path_rule(pattern, path, cwd) if isinstance(path, str) else True
    if tool_name == "WebFetch" and pattern.startswith("domain:"):
        return _domain_rule(pattern, inputs.get("url"))
    text = msgspec.json.encode(inputs).decode()
    return fnmatch.fnmatchcase(text, f"*{pattern}*")


def _domain_rule(pattern: str, url: Any) -> bool:
    if not isinstance(url, str):
        return True
    host = re.sub(r"^[a-z]+://", "", url).split("/", 1)[0].split(":", 1)[0]
    return fnmatch.fnmatchcase(host.lower(), pattern[len("domain:") :].strip().lower())


_CACHEABLE = 4096
"""Commands up to this length are memoised (:class:`IfMemo`): a bounded table of short
strings cannot grow the daemon's memory much."""

_MEMO_LIMIT = 4096
"""Entries per :class:`IfMemo` table before it is emptied."""


def _bash_rule(pattern: str, command: str, memo: IfMemo | None) -> bool:
    pattern = pattern.strip()
    if pattern.endswith(":*"):  # legacy prefix form, `npm run test:*`
        pattern = pattern[:-2] + "*"
    subcommands = (
        memo.bash_subcommands(command)
        if memo is not None and len(command) <= _CACHEABLE
        else _split_bash(command)
    )
    for sub, joined in subcommands:
        if joined is None:
            return True  # unparseable: the hook runs
        if not joined:
            continue
        if fnmatch.fnmatchcase(joined, pattern):
            return True
        if ("$(" in sub or "$" in sub) and len(pattern.split()) > 1:
            return True
    return False


def _split_bash(command: str) -> tuple[tuple[str, str | None], ...]:
    """Each subcommand with its words joined (env assignments dropped; None: unparseable)."""
    subcommands = [c.strip() for c in _SPLIT_COMMANDS.split(command) if c.strip()]
    inner = re.findall(r"\$\(([^()]*)\)|`([^`]*)`", command)
    subcommands += [a or b for a, b in inner if (a or b).strip()]
    out: list[tuple[str, str | None]] = []
    for sub in subcommands:
        try:
            words = shlex.split(sub)
        except ValueError:
            out.append((sub, None))
            continue
        while words and _ENV_ASSIGN.match(words[0]):
            words.pop(0)
        out.append((sub, " ".join(words)))
    return tuple(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``**/`` any directories, ``**`` anything, ``*`` within one name, ``?`` one char.

    Use with ``fullmatch``.  Shared by ``if`` path rules and the agent hook's tools.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _path_rule(pattern: str, path: str, cwd: str) -> bool:
    pattern = pattern.strip()
    if pattern.startswith("~/"):
        pattern = os.path.expanduser("~") + pattern[1:]
    elif pattern.startswith("//"):
        pattern = pattern[1:]
    elif not pattern.startswith("/") and not pattern.startswith("**"):
        pattern = os.path.join(cwd, pattern)
    elif pattern.startswith("**"):
        pattern = "/" + pattern
    if pattern.endswith("/"):
        pattern += "**"
    return glob_regex(pattern).fullmatch(os.path.normpath(path)) is not None


# --- dedup ---------------------------------------------------------------------


def dedup_key(spec: HookSpec) -> tuple[Any, ...] | None:
    """Claude Code's identity key (reference §6); None means "never deduplicated".

    The scope prefix keeps a plugin's or a skill's copy apart from the same
    handler in a settings file.  Client callbacks are never deduplicated.
    """
    prefix = spec.plugin_root or spec.skill_root or ""
    handler = spec.handler
    rule = handler.if_
    match handler:
        case CommandHandler():
            if handler.async_ or handler.asyncRewake:
                return None
            args = msgspec.json.encode(handler.args).decode() if handler.args is not None else ""
            return (prefix, "command", handler.shell or "", handler.command, args, rule)
        case HttpHandler():
            return (prefix, "http", handler.url, rule)
        case McpToolHandler():
            return (
                prefix,
                "mcp_tool",
                handler.server,
                handler.tool,
                msgspec.json.encode(handler.input).decode(),
                rule,
            )
        case PromptHandler() | AgentHandler():
            return (prefix, type(handler).__name__, handler.prompt, rule)
        case PythonHandler():
            return (prefix, "python", handler.callable, rule)
        case CallbackHandler():
            return None
    return None

"""The ``agent`` handler: a verifier that may read the project before answering ``{ok, reason}``.

Reference §9.  A loop on the Messages API: the model gets the hook's prompt
(``$ARGUMENTS`` rendered as for prompt hooks) and three read-only tools —
``Read``, ``Grep``, ``Glob`` — and may call them for at most
:attr:`AgentRunner.max_turns` model turns (50, as Claude Code).  Its final
text must hold the verdict object; ``ok: false`` maps like a prompt hook with
``continueOnBlock: true`` and without ``impossible``.

Confinement: every path a tool touches is resolved (``realpath``, so symlinks
are followed *before* the check) and must lie inside the project directory.
A path outside — absolute, ``..``, or a symlink pointing out — is refused with
a tool error the model sees; a directory walk skips such entries and never
follows directory symlinks (no loops).  Tools run in worker threads so a big
``Grep`` cannot stall the daemon's event loop; walks are bounded in files
visited and results returned.

The tools do not fire hooks, and the verifier has no write tool at all.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import trio

from hookd.config.matching import glob_regex
from hookd.config.schema import AgentHandler
from hookd.handlers.base import HandlerResult, Invocation, failed_with
from hookd.handlers.messages_api import MessagesApiError, MessagesClient, text_of
from hookd.handlers.prompt import (
    Verdict,
    VerdictError,
    parse_verdict,
    render_prompt,
    verdict_output,
)

__all__ = ["TOOLS", "AgentRunner", "ProjectTools", "ToolError"]

AGENT_SYSTEM_PROMPT = (
    "You are a verification agent inside an AI coding agent. You are given an instruction and "
    "the JSON input of one hook event. Use the Read, Grep and Glob tools to inspect the project "
    "as needed, then decide whether the condition in the instruction is met. End with exactly "
    'one JSON object as your final answer: {"ok": true} or {"ok": false, "reason": "<why, '
    'addressed to the agent>"}.'
)

TOOLS: list[dict[str, Any]] = [
    {
        "name": "Read",
        "description": "Read a text file of the project, with line numbers.",
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "offset": {"type": "integer", "description": "first line (1-based)"},
                "limit": {"type": "integer", "description": "number of lines"},
            },
            "required": ["file_path"],
        },
    },
    {
        "name": "Grep",
        "description": "Search file contents with a regular expression; prints path:line:text.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "file or directory (default: project)"},
                "glob": {"type": "string", "description": "only files matching this glob"},
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List project files matching a glob such as `**/*.py`.",
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": "string", "description": "directory (default: project)"},
            },
            "required": ["pattern"],
        },
    },
]

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
MAX_RESULTS = 200
MAX_FILES_VISITED = 20_000
MAX_GREP_FILE_BYTES = 1024 * 1024


class ToolError(Exception):
    """A tool call the verifier made that cannot be served (shown to it as an error)."""


class ProjectTools:
    """Read/Grep/Glob confined to one directory tree."""

    def __init__(self, root: str) -> None:
        self.root = Path(os.path.realpath(root))

    def inside(self, real: Path) -> bool:
        return real == self.root or self.root in real.parents

    def confine(self, path: str | None) -> Path:
        if not path:
            return self.root
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        real = Path(os.path.realpath(candidate))
        if not self.inside(real):
            raise ToolError(f"{path}: outside the project directory; access refused")
        return real

    def relative(self, real: Path) -> str:
        return str(real.relative_to(self.root)) if real != self.root else "."

    def _walk(self, base: Path) -> Iterator[Path]:
        """Files under ``base`` whose real path stays inside the project (bounded)."""
        if base.is_file():
            yield base
            return
        visited = 0
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted(filenames):
                visited += 1
                if visited > MAX_FILES_VISITED:
                    return
                path = Path(dirpath) / name
                real = Path(os.path.realpath(path))
                if self.inside(real) and real.is_file():
                    yield path

    def read(self, file_path: str, offset: int | None = None, limit: int | None = None) -> str:
        real = self.confine(file_path)
        if not real.is_file():
            raise ToolError(f"{file_path}: no such file")
        with real.open("rb") as fh:
            data = fh.read(MAX_READ_BYTES)
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = max((offset or 1) - 1, 0)
        count = min(limit or MAX_READ_LINES, MAX_READ_LINES)
        shown = lines[start : start + count]
        return "\n".join(f"{start + n + 1:6}\t{line}" for n, line in enumerate(shown))

    def glob(self, pattern: str, path: str | None = None) -> str:
        if pattern.startswith("/") or ".." in Path(pattern).parts:
            raise ToolError(
                f"{pattern}: outside the project directory; a glob pattern must be relative "
                "and free of `..`"
            )
        base = self.confine(path)
        regex = glob_regex(pattern)
        found: list[str] = []
        for file in self._walk(base):
            if regex.fullmatch(str(file.relative_to(base))):
                found.append(self.relative(Path(os.path.realpath(file.parent)) / file.name))
                if len(found) >= MAX_RESULTS:
                    break
        return "\n".join(found) if found else "No files found"

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None) -> str:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        base = self.confine(path)
        name_filter = glob_regex(glob) if glob else None
        matches: list[str] = []
        for file in self._walk(base):
            if name_filter is not None:
                rel = str(file.relative_to(base)) if file != base else file.name
                if not (name_filter.fullmatch(rel) or name_filter.fullmatch(file.name)):
                    continue
            with file.open("rb") as fh:
                data = fh.read(MAX_GREP_FILE_BYTES)
            if b"\0" in data:
                continue
            shown = self.relative(Path(os.path.realpath(file.parent)) / file.name)
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if regex.search(line):
                    matches.append(f"{shown}:{number}:{line[:500]}")
                    if len(matches) >= MAX_RESULTS:
                        return "\n".join(matches)
        return "\n".join(matches) if matches else "No matches found"

    def call(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool call; bad arguments and refusals raise :class:`ToolError`."""
        table: dict[str, Callable[..., str]] = {
            "Read": self.read,
            "Grep": self.grep,
            "Glob": self.glob,
        }
        fn = table.get(name)
        if fn is None:
            raise ToolError(f"unknown tool {name!r}; available: Read, Grep, Glob")
        try:
            return fn(**args)
        except TypeError as exc:
            raise ToolError(f"bad arguments for {name}: {exc}") from None
        except OSError as exc:
            raise ToolError(f"{name}: {exc.strerror or exc}") from None


def final_verdict(text: str) -> Verdict:
    """The verdict object in the verifier's final text (prose around it is tolerated)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise VerdictError(f"agent's final answer holds no JSON verdict: {text.strip()[:200]}")
    verdict = parse_verdict(text[start : end + 1])
    verdict.impossible = False  # agent hooks have no `impossible` (reference §9)
    return verdict


class AgentRunner:
    def __init__(self, client: MessagesClient, default_model: str, max_turns: int) -> None:
        self.client = client
        self.default_model = default_model
        self.max_turns = max_turns

    async def run(self, handler: AgentHandler, inv: Invocation) -> HandlerResult:
        with trio.move_on_after(inv.timeout) as deadline:
            try:
                verdict, transcript = await self._loop(handler, inv)
            except (MessagesApiError, VerdictError) as exc:
                return failed_with(str(exc), exc)
        if deadline.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        if verdict is None:
            return HandlerResult(
                exit_code=None,
                stdout=transcript,
                failure=f"agent hook gave no verdict within {self.max_turns} turns",
            )
        output = verdict_output(inv.event_name, verdict, continue_on_block=True)
        return HandlerResult(exit_code=0, stdout=transcript, json_output=output)

    async def _loop(self, handler: AgentHandler, inv: Invocation) -> tuple[Verdict | None, str]:
        tools = ProjectTools(inv.project_dir)
        arguments = inv.stdin.decode("utf-8").rstrip("\n")
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": render_prompt(handler.prompt, arguments)}
        ]
        log_lines: list[str] = []
        for _ in range(self.max_turns):
            message = await self.client.create(
                env=inv.env,
                model=handler.model or self.default_model,
                system=AGENT_SYSTEM_PROMPT,
                messages=messages,
                tools=TOOLS,
            )
            content = message["content"]
            uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not uses:
                text = text_of(message)
                log_lines.append(text)
                return final_verdict(text), "\n".join(log_lines)
            messages.append({"role": "assistant", "content": content})
            results: list[dict[str, Any]] = []
            for use in uses:
                name = str(use.get("name"))
                given = use.get("input")
                args: dict[str, Any] = given if isinstance(given, dict) else {}
                log_lines.append(f"tool {name} {args}")
                try:
                    output = await trio.to_thread.run_sync(
                        tools.call, name, args, abandon_on_cancel=True
                    )
                    is_error = False
                except ToolError as exc:
                    output, is_error = str(exc), True
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.get("id"),
                        "content": output,
                        "is_error": is_error,
                    }
                )
            messages.append({"role": "user", "content": results})
        return None, "\n".join(log_lines)

"""What two runs of the CLI are compared on, and the normalisations between them.

Each normalisation removes a difference that is *expected* between a run with
hooks native and one through hookd, and nothing else (docs/claude-code.md
lists them):

1. Paths of the run's temporary directory (``HOME``, project) → ``<RUN>``,
   and the session id → ``<SESSION>``: two runs, two directories, two sessions.
2. ``hook blocking error from command: "<x>"`` → ``"<cmd>"``: Claude Code names
   the hook that blocked; natively that is the user's command, through hookd
   it is the http hook's URL.
3. ``UserPromptSubmit hook success: `` → ``UserPromptSubmit hook additional
   context: ``: an http hook cannot answer plain text, so plain stdout that is
   context arrives as additionalContext and Claude Code labels it so.
4. The lines of one ``hook additional context:`` paragraph are sorted: Claude
   Code joins several hooks' contexts in *completion* order (a race), hookd in
   configuration order (deterministic).
5. ``Stop hook feedback:\n[<x>]: `` → ``[<cmd>]``: for an exit-2 Stop block
   Claude Code names the hook in brackets; natively the user's command,
   through hookd the relay's (hookd answers a Stop made of exit-2 blocks
   with exit 2 itself, as a JSON block would add a system message).
   Likewise ``Compaction blocked by PreCompact hook: [<x>]: ``: Claude Code
   names the hook of every PreCompact block; through hookd the http hook's URL.
6. The date: ``Today's date is 2026-11-23.`` (and the ``The UTC date is …``
   forms) → ``<DATE>``, and Claude Code's ``The date has changed. Today's date
   is now …`` reminder is dropped: the native and the hookd run of a scenario
   may straddle midnight, and then only the later one carries that reminder.
7. Consecutive ``<Event>:<Tool> hook blocking error from command:`` paragraphs
   are sorted: natively Claude Code writes one per blocking hook in
   *completion* order (a race between parallel hooks), hookd in configuration
   order (deterministic); each paragraph's text is still compared.
8. A sub-agent's hand-back (the Agent tool's result): its ``agentId`` →
   ``<AGENT>`` wherever it appears and ``duration_ms: N`` → ``<MS>``: a new id
   and a wall-clock duration in every run.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

from e2e.harness import ClaudeRun

__all__ = ["comparable", "diff", "normalise_text"]

_COMMAND_LABEL = re.compile(r'from command: "(?:[^"\\]|\\.)*"')
_FEEDBACK_LABEL = re.compile(
    r"(Stop hook feedback:\n|Compaction blocked by PreCompact hook: )\[[^\]\n]*\]: "
)
_DATE = re.compile(r"((?:Today's date is|The UTC date is)(?: now)?) [^.\n]+\.")
_DATE_CHANGED = re.compile(
    r"(?:<system-reminder>\s*)?The date has changed\. Today's date is now [^.\n]+\."
    r"[^\n]*?the user's own clock shows it\.(?:\s*</system-reminder>)?\s*"
)
_AGENT_ID = re.compile(r"agentId: ([0-9a-f]{8,})")
_DURATION = re.compile(r"duration_ms: \d+")
_BLOCKING_PARAGRAPH = re.compile(r"^\S+ hook blocking error from command: ")
_CONTEXT_PARAGRAPH = re.compile(r"(hook additional context: )([^\n]*(?:\n(?!\n)[^\n]*)*)")


def _sort_lines(match: re.Match[str]) -> str:
    return match.group(1) + "\n".join(sorted(match.group(2).split("\n")))


def normalise_text(text: str, run_dir: Path, session_id: str | None) -> str:
    text = _DATE.sub(r"\1 <DATE>.", _DATE_CHANGED.sub("", text))
    text = text.replace(str(run_dir), "<RUN>")
    if session_id:
        text = text.replace(session_id, "<SESSION>")
    for agent_id in set(_AGENT_ID.findall(text)):
        text = text.replace(agent_id, "<AGENT>")
    text = _DURATION.sub("duration_ms: <MS>", text)
    text = _COMMAND_LABEL.sub('from command: "<cmd>"', text)
    text = _FEEDBACK_LABEL.sub(r"\1[<cmd>]: ", text)
    text = text.replace(
        "UserPromptSubmit hook success: ", "UserPromptSubmit hook additional context: "
    )
    text = _sort_blocking_paragraphs(text)
    return _CONTEXT_PARAGRAPH.sub(_sort_lines, text)


def _sort_blocking_paragraphs(text: str) -> str:
    """Sort each run of adjacent blocking-error paragraphs (normalisation 7)."""
    if "hook blocking error from command: " not in text:
        return text
    parts = text.split("\n\n")
    out: list[str] = []
    run: list[str] = []
    for part in [*parts, None]:
        if part is not None and _BLOCKING_PARAGRAPH.match(part):
            run.append(part)
            continue
        out.extend(sorted(run))
        run = []
        if part is not None:
            out.append(part)
    return "\n\n".join(out)


def _walk(value: Any, run_dir: Path, session_id: str | None) -> Any:
    if isinstance(value, str):
        return normalise_text(value, run_dir, session_id)
    if isinstance(value, list):
        return [_walk(v, run_dir, session_id) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, run_dir, session_id) for k, v in value.items()}
    return value


def _without_date_change(messages: list[Any]) -> list[Any]:
    """The request's messages minus Claude Code's "The date has changed" reminder.

    The reminder is a meta user message of its own, merged into a neighbouring
    user turn as one more content block; a block (or message) that held only the
    reminder is dropped rather than left empty, so both runs keep one shape.
    """
    kept = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            blocks = [
                block
                for block in content
                if not (
                    isinstance(block, dict)
                    and block.get("type") == "text"
                    and isinstance(block.get("text"), str)
                    and _DATE_CHANGED.search(block["text"])
                    and not _DATE_CHANGED.sub("", block["text"]).strip()
                )
            ]
            if not blocks and content:
                continue
            message = {**message, "content": blocks}
        elif isinstance(content, str) and _DATE_CHANGED.search(content):
            if not _DATE_CHANGED.sub("", content).strip():
                continue
        kept.append(message)
    return kept


def _files(project: Path) -> dict[str, str]:
    out = {}
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project)
        if rel.parts[0] == ".claude" or not path.is_file():
            continue
        out[str(rel)] = path.read_text(encoding="utf-8", errors="replace")
    return out


def comparable(run: ClaudeRun, run_dir: Path, project: Path) -> dict[str, Any]:
    """The parts of a run that must be equal with and without hookd."""
    result = run.result
    session = result.get("session_id")
    data = {
        "requests": [_without_date_change(r.get("messages", [])) for r in run.requests],
        "sides": [
            [_without_date_change(r.get("messages", [])) for r in side] for side in run.sides
        ],
        "result": {
            k: result.get(k)
            for k in (
                "subtype",
                "is_error",
                "result",
                "terminal_reason",
                "num_turns",
                "stop_reason",
            )
        },
        "permission_denials": [
            {"tool_name": d.get("tool_name"), "tool_use_id": d.get("tool_use_id")}
            for d in result.get("permission_denials", [])
        ],
        "exit_code": run.exit_code,
        "files": _files(project),
    }
    normalised: dict[str, Any] = _walk(data, run_dir, session)
    return normalised


def _lines(value: Any) -> Any:
    """Multi-line strings as lists of lines, so a diff points at the line that differs."""
    if isinstance(value, str) and "\n" in value:
        return value.split("\n")
    if isinstance(value, list):
        return [_lines(v) for v in value]
    if isinstance(value, dict):
        return {k: _lines(v) for k, v in value.items()}
    return value


def diff(a: Any, b: Any, limit: int = 120) -> str:
    """A unified diff of two comparable runs (native left, hookd right), cut at ``limit`` lines."""
    left = json.dumps(_lines(a), indent=1, sort_keys=True).splitlines()
    right = json.dumps(_lines(b), indent=1, sort_keys=True).splitlines()
    lines = list(difflib.unified_diff(left, right, "native", "hookd", lineterm="", n=2))
    more = f"\n… {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join(lines[:limit]) + more

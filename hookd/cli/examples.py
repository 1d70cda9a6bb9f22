"""An example input for every event: what ``hookctl example EVENT`` prints and
what ``hookctl fire`` puts under a partial ``--input``.

The fields are the ones Claude Code 2.1.330 always sends for the event, in its
order (tests/data/cc-fixtures holds real captures): ``permission_mode`` only on
the events that carry it, none of the fields it sends only sometimes (a
SessionStart's ``model``).  That is what makes ``hookctl fire`` a faithful
bridge: it fills only the example's fields an input lacks
(:func:`fill_input`), so a real agent input — which has them all — reaches
the hooks as the agent sent it, key order included, while
``{"tool_input": {"command": "rm -rf /"}}`` is still enough to fire a
PreToolUse.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import uuid
from typing import Any

__all__ = [
    "EXAMPLE_FIELDS",
    "cmd_example",
    "example_input",
    "fill_input",
    "fire_session_id",
    "is_hookctl_session",
    "unknown_event",
]

_BASH = {"command": "echo hello", "description": "print hello"}

EXAMPLE_FIELDS: dict[str, dict[str, Any]] = {
    "PreToolUse": {"tool_name": "Bash", "tool_input": _BASH, "tool_use_id": "toolu_example"},
    "PostToolUse": {
        "tool_name": "Bash",
        "tool_input": _BASH,
        "tool_response": {"stdout": "hello\n", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_example",
    },
    "PostToolUseFailure": {
        "tool_name": "Bash",
        "tool_input": {"command": "false"},
        "tool_use_id": "toolu_example",
        "error": "Exit code 1",
    },
    "PostToolBatch": {
        "tool_calls": [{"tool_name": "Bash", "tool_input": _BASH, "tool_use_id": "toolu_example"}]
    },
    "Notification": {
        "message": "Claude needs your permission to use Bash",
        "notification_type": "permission_prompt",
    },
    "UserPromptSubmit": {"prompt": "Fix the failing test"},
    "UserPromptExpansion": {
        "expansion_type": "slash_command",
        "command_name": "review",
        "command_args": "",
        "prompt": "/review",
    },
    "SessionStart": {"source": "startup"},
    "SessionEnd": {"reason": "other"},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
    "StopFailure": {"error": "rate_limit", "error_details": "429 Too Many Requests"},
    "SubagentStart": {"agent_id": "agent_example", "agent_type": "general-purpose"},
    "SubagentStop": {
        "agent_id": "agent_example",
        "agent_type": "general-purpose",
        "stop_hook_active": False,
        "agent_transcript_path": "",
    },
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "PostCompact": {"trigger": "manual", "compact_summary": "Summary of the conversation."},
    "PreModelSwitch": {"from_model": "claude-sonnet-4-5", "to_model": "claude-opus-4-1"},
    "PostModelSwitch": {"from_model": "claude-sonnet-4-5", "to_model": "claude-opus-4-1"},
    "PermissionRequest": {"tool_name": "Bash", "tool_input": _BASH},
    "PermissionDenied": {
        "tool_name": "Bash",
        "tool_input": _BASH,
        "tool_use_id": "toolu_example",
        "reason": "denied by the user",
    },
    "Setup": {"trigger": "init"},
    "TeammateIdle": {"teammate_name": "reviewer", "team_name": "example"},
    "TaskCreated": {"task_id": "1", "task_subject": "Write tests"},
    "TaskCompleted": {"task_id": "1", "task_subject": "Write tests"},
    "Elicitation": {
        "mcp_server_name": "example",
        "message": "Which branch?",
        "mode": "form",
        "elicitation_id": "elicit_example",
        "requested_schema": {"type": "object", "properties": {"branch": {"type": "string"}}},
    },
    "ElicitationResult": {
        "mcp_server_name": "example",
        "elicitation_id": "elicit_example",
        "action": "accept",
        "content": {"branch": "main"},
    },
    "ConfigChange": {"source": "project_settings", "file_path": ".claude/settings.json"},
    "WorktreeCreate": {"name": "feature-x"},
    "WorktreeRemove": {"worktree_path": "/tmp/worktrees/feature-x"},
    "InstructionsLoaded": {
        "file_path": "CLAUDE.md",
        "memory_type": "Project",
        "load_reason": "session_start",
    },
    "CwdChanged": {"old_cwd": "/tmp", "new_cwd": "/tmp/sub"},
    "FileChanged": {"file_path": "src/main.py", "event": "change"},
    "DirectoryAdded": {"directory": "/tmp/extra", "source": "cli"},
    "MessageDisplay": {"index": 0, "final": True, "delta": "Hello"},
}


_WITHOUT_PERMISSION_MODE = frozenset(
    {
        "ConfigChange",
        "CwdChanged",
        "InstructionsLoaded",
        "MessageDisplay",
        "PostCompact",
        "PreCompact",
        "SessionEnd",
        "SessionStart",
        "SubagentStart",
    }
)
"""Events Claude Code 2.1.330 sends without ``permission_mode`` (observed per event)."""


def example_input(event: str, cwd: str | None = None) -> dict[str, Any]:
    """A complete input for ``event``: what Claude Code always sends for it, in its order
    (unknown events get the common fields only)."""
    common: dict[str, Any] = {
        "session_id": "hookctl",
        "transcript_path": "",
        "cwd": cwd or os.getcwd(),
    }
    if event not in _WITHOUT_PERMISSION_MODE:
        common["permission_mode"] = "default"
    return {**common, "hook_event_name": event, **EXAMPLE_FIELDS.get(event, {})}


def fire_session_id() -> str:
    """A session id for one ``hookctl fire`` (``hookctl-`` and 12 hex digits).

    One per invocation, not a fixed ``hookctl``: the daemon keeps a known session's
    project, so a fixed id would judge every later fire by the first one's directory.
    The daemon forgets the session after the event (``Fire.once``)."""
    return f"hookctl-{uuid.uuid4().hex[:12]}"


def is_hookctl_session(session_id: object) -> bool:
    """A session id hookctl made — a filled one, or the example's ``hookctl`` saved with
    ``hookctl example EVENT > event.json`` — rather than an agent's: a one-shot session.

    An agent's own id (``hookctl fire --format claude`` as a command hook, a recorded
    input) names a real session: its ``once`` hooks, Stop-block count and skill hooks
    must carry over from event to event, so the daemon keeps it."""
    return isinstance(session_id, str) and session_id.startswith("hookctl")


def fill_input(given: dict[str, Any], event: str) -> tuple[dict[str, Any], list[str]]:
    """``given`` with the example's fields it lacks, and the names of those filled.

    A complete input (an agent's real one) comes back as it is — the same object,
    key order included: hooks must receive what the agent sent.  A partial one gets
    each missing field at the example's place for it: before the first given field
    that follows it in the example, so ``{"tool_input": …}`` reads like an agent's
    input.  A filled ``session_id`` is a fresh one (:func:`fire_session_id`).
    """
    example = example_input(event)
    missing = [key for key in example if key not in given]
    if not missing:
        return given, []
    if "session_id" in missing:
        example["session_id"] = fire_session_id()
    rank = {key: i for i, key in enumerate(example)}
    pending = list(missing)
    filled: dict[str, Any] = {}
    for key, value in given.items():
        while key in rank and pending and rank[pending[0]] < rank[key]:
            name = pending.pop(0)
            filled[name] = example[name]
        filled[key] = value
    for name in pending:
        filled[name] = example[name]
    return filled, missing


def unknown_event(event: str) -> str | None:
    """Why ``event`` is not an event hookd knows, with the name it most resembles
    (None when it is one)."""
    if event in EXAMPLE_FIELDS:
        return None
    by_lower = {name.lower(): name for name in EXAMPLE_FIELDS}
    close = [by_lower[event.lower()]] if event.lower() in by_lower else []
    close = close or difflib.get_close_matches(event, list(EXAMPLE_FIELDS), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown event {event!r}{hint}; `hookctl example` lists the events"


def cmd_example(args: Any) -> int:
    """``hookctl example [EVENT]``: the example input as JSON, or the list of events."""
    if args.event is None:
        print("\n".join(EXAMPLE_FIELDS))
        return 0
    problem = unknown_event(args.event)
    if problem is not None:
        print(f"hookctl example: {problem}", file=sys.stderr)
        return 1
    print(json.dumps(example_input(args.event), indent=2))
    return 0

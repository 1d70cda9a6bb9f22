"""An example input for every event: what ``hookctl example EVENT`` prints and
what ``hookctl fire`` puts under a partial ``--input``.

The fields are the ones Claude Code sends (see tests/data/cc-fixtures for
real captures); session, cwd and event name are filled for the caller, so
``hookctl fire PreToolUse`` works with no input at all and
``{"tool_input": {"command": "rm -rf /"}}`` is a complete one.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from typing import Any

__all__ = ["EXAMPLE_FIELDS", "cmd_example", "example_input"]

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
    "SessionStart": {"source": "startup", "model": "claude-sonnet-4-5"},
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
    "MessageDisplay": {"delta": "Hello", "index": 0, "final": True},
}


def example_input(event: str, cwd: str | None = None) -> dict[str, Any]:
    """A complete input for ``event`` (unknown events get the common fields only)."""
    return {
        "session_id": "hookctl",
        "transcript_path": "",
        "cwd": cwd or os.getcwd(),
        "hook_event_name": event,
        "permission_mode": "default",
        **EXAMPLE_FIELDS.get(event, {}),
    }


def cmd_example(args: Any) -> int:
    """``hookctl example [EVENT]``: the example input as JSON, or the list of events."""
    if args.event is None:
        print("\n".join(EXAMPLE_FIELDS))
        return 0
    if args.event not in EXAMPLE_FIELDS:
        close = difflib.get_close_matches(args.event, list(EXAMPLE_FIELDS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        print(f"hookctl example: unknown event {args.event!r}{hint}", file=sys.stderr)
        return 1
    print(json.dumps(example_input(args.event), indent=2))
    return 0

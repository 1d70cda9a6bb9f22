"""The hooks of the Agent SDK e2e scenarios, written once for both runs.

Natively they are Python callbacks in the SDK app (:mod:`agents.sdk_app`); through
hookd the *same* decisions come from command hooks in the user's
``~/.config/hookd/hooks.json`` that run ``python -m agents.sdk_hook SCENARIO``
(:mod:`agents.sdk_hook`), so the two runs differ only in the door.  Each decision
is the JSON a Claude Code hook prints; ``{}`` is "no opinion".
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["REASONS", "SCENARIOS", "SETTINGS_ONLY", "SLEEP", "Scenario", "command_hooks", "decide"]

REASONS = {
    "deny": "NO-RM-RF-HERE",
    "rewrite": "echo REWRITTEN-BY-HOOK",
    "context_bash": "BASH-MATCHED-CONTEXT",
    "context_write": "WRITE-MATCHED-CONTEXT",
    "stop": "KEEP-GOING-FROM-STOP-HOOK",
    "prompt_block": "PROMPT-BLOCKED-BY-HOOK",
    "session_context": "SESSION-START-CONTEXT",
}

SETTINGS_ONLY = ("SessionStart", "SessionEnd")
"""Events the SDK has no callback for: natively a settings-file command hook is the only way."""


SLEEP = 60.0
"""How long the ``sleep`` hook would take: far past its 2 s timeout."""


class Scenario(TypedDict):
    hooks: dict[str, list[tuple[str | None, str, float | None]]]
    """event → (matcher, hook name for :func:`decide`, timeout) per matcher group."""
    turns: list[list[dict[str, Any]]]
    """The fake model's turns (content blocks)."""


def _bash(command: str) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": "Running it."},
        {"type": "tool_use", "name": "Bash", "input": {"command": command, "description": "x"}},
    ]


_DONE = [{"type": "text", "text": "All done."}]

SCENARIOS: dict[str, Scenario] = {
    "bash_deny": {
        "hooks": {"PreToolUse": [("Bash", "deny", None)]},
        "turns": [_bash("rm -rf build && echo RM-RAN"), _DONE],
    },
    "input_rewrite": {
        "hooks": {"PreToolUse": [("Bash", "rewrite", None)]},
        "turns": [_bash("echo ORIGINAL-COMMAND"), _DONE],
    },
    "context_and_matcher": {
        "hooks": {
            "PostToolUse": [("Bash", "context_bash", None), ("Write|Edit", "context_write", None)]
        },
        "turns": [_bash("echo TOOL-RAN"), _DONE],
    },
    "stop_continuation": {
        "hooks": {"Stop": [(None, "stop", None)]},
        "turns": [[{"type": "text", "text": "First answer."}], _DONE],
    },
    "prompt_block": {
        "hooks": {"UserPromptSubmit": [(None, "prompt_block", None)]},
        "turns": [_DONE],
    },
    "session_start": {
        "hooks": {"SessionStart": [(None, "session_context", None)]},
        "turns": [_DONE],
    },
    "timeout": {
        "hooks": {"PreToolUse": [("Bash", "sleep", 2.0)]},
        "turns": [_bash("echo RAN-AFTER-TIMEOUT"), _DONE],
    },
    "env_probe": {
        "hooks": {"PreToolUse": [("Bash", "env_probe", None)]},
        "turns": [_bash("echo ENV-PROBE-RAN"), _DONE],
    },
}
"""Each scenario: the hooks, and the model's script.  A matcher on Bash is in every
PreToolUse scenario; ``context_and_matcher`` also has one that must not match."""


def command_hooks(
    scenario: str, python: str, events: tuple[str, ...] | None = None, *, for_hookd: bool
) -> dict[str, Any]:
    """The scenario's hooks as command hooks (``python -m agents.sdk_hook HOOK``) in a
    settings ``hooks`` object: hookd's config, or natively the SDK's ``settings=`` for the
    events it has no callback for."""
    hooks: dict[str, Any] = {}
    for event, groups in SCENARIOS[scenario]["hooks"].items():
        if events is not None and event not in events:
            continue
        hooks[event] = []
        for matcher, hook, timeout in groups:
            handler: dict[str, Any] = {
                "type": "command",
                "command": python,
                "args": ["-m", "agents.sdk_hook", hook],
            }
            if timeout is not None:
                handler["timeout"] = timeout
            if hook == "sleep" and for_hookd:
                # An SDK callback that does not answer in time denies the call (a check that
                # did not answer is not a check that passed); a command hook's timeout is a
                # non-blocking error unless it says onFailure: "block".
                handler["onFailure"] = "block"
            group: dict[str, Any] = {"hooks": [handler]}
            if matcher is not None:
                group["matcher"] = matcher
            hooks[event].append(group)
    return hooks


def _command(hook_input: dict[str, Any]) -> str:
    tool_input = hook_input.get("tool_input") or {}
    return str(tool_input.get("command", ""))


def decide(hook: str, hook_input: dict[str, Any]) -> dict[str, Any]:
    """What hook ``hook`` answers for ``hook_input``."""
    event = hook_input.get("hook_event_name")
    if hook == "deny" and "rm -rf" in _command(hook_input):
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": REASONS["deny"],
            }
        }
    if hook == "rewrite":
        rewritten = {**hook_input["tool_input"], "command": REASONS["rewrite"]}
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "allow",
                "updatedInput": rewritten,
            }
        }
    if hook in ("context_bash", "context_write", "session_context"):
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": REASONS[hook]}}
    if hook == "stop" and not hook_input.get("stop_hook_active"):
        return {"decision": "block", "reason": REASONS["stop"]}
    if hook == "prompt_block":
        return {"decision": "block", "reason": REASONS["prompt_block"]}
    return {}

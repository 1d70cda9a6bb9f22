"""Skills: a project's or the user's SKILL.md hooks apply to a session once the agent invokes
the skill (the Skill tool), and not before, nor in other sessions, nor untrusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd_client.client import Client
from reliability.helpers import event
from reliability.test_trust import hookctl, state

CONTEXT_JSON = (
    '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","additionalContext":"{context}"}}}}'
)
SKILL = """\
---
name: {name}
description: be careful with the shell
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: "printf '%s' '$JSON'"
---
Check every command twice.
"""


def _skill(directory: Path, name: str, context: str) -> Path:
    path = directory / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    text = SKILL.format(name=name).replace(
        "$JSON", CONTEXT_JSON.format(context=context).replace('"', '\\"')
    )
    path.write_text(text)
    return path


def _fire(handle: Any, project: Path, session: str, **changes: Any) -> list[str]:
    with Client(handle.socket) as client:
        raw = event(cwd=str(project), session_id=session, **changes)
        return client.fire("PreToolUse", raw).result.additional_context


def _invoke(handle: Any, project: Path, session: str, skill: str) -> None:
    _fire(handle, project, session, tool_name="Skill", tool_input={"skill": skill})


async def test_a_project_skill_applies_once_invoked_in_its_session(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = handle.project()
    _skill(project / ".claude" / "skills", "careful", "SKILL-CAREFUL")
    _skill(handle.home / ".claude" / "skills", "mine", "SKILL-USER")

    def run() -> tuple[list[str], list[str], list[str], list[str]]:
        before = _fire(handle, project, "A")
        _invoke(handle, project, "A", "careful")
        after = _fire(handle, project, "A")
        other = _fire(handle, project, "B")
        _invoke(handle, project, "B", "/mine")
        user = _fire(handle, project, "B")
        return before, after, other, user

    before, after, other, user = await trio.to_thread.run_sync(run)
    assert before == []
    assert after == ["SKILL-CAREFUL"]
    assert other == []  # another session has not invoked it
    assert user == ["SKILL-USER"]


async def test_an_untrusted_projects_skill_does_not_apply(daemon_factory: Any) -> None:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    marker = project / "skill-ran"
    path = _skill(project / ".claude" / "skills", "careful", "SKILL-CAREFUL")
    path.write_text(path.read_text().replace("printf", f"touch {marker}; printf"))

    def run() -> list[str]:
        _invoke(handle, project, "A", "careful")
        return _fire(handle, project, "A")

    assert await trio.to_thread.run_sync(run) == []
    assert not marker.exists()
    hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert await trio.to_thread.run_sync(run) == ["SKILL-CAREFUL"]
    assert marker.exists()


async def test_hookctl_hooks_lists_a_sessions_skill_hooks(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = handle.project()
    _skill(project / ".claude" / "skills", "careful", "SKILL-CAREFUL")
    await trio.to_thread.run_sync(lambda: _invoke(handle, project, "A", "careful"))
    out = await trio.to_thread.run_sync(
        lambda: hookctl(handle, "hooks", "--cwd", str(project), "--session", "A")
    )
    [row] = [line for line in out.stdout.splitlines() if " skill " in line]
    assert "SKILL.md" in row and "not run" not in row

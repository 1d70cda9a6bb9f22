"""Two rules of the event pipeline that its mutation run found unstated (issue 32).

- A fire reply says the trust gate held hooks back exactly when it did: with the
  count of the hooks held back, for an untrusted project with matching hooks; never
  for a trusted one, nor for one whose hooks do not match the event.
- A one-shot fire (``Fire.once``: ``hookctl fire``, a test harness) leaves no session
  behind, whether hooks ran for it or not; a normal fire keeps its session.

A real daemon on its socket; the trust store written as ``hookctl trust`` writes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from hookd.daemon.trust import TrustStore
from hookd_client.client import Client
from reliability.helpers import event


def _project(handle: Any, name: str, event_name: str, hooks: int) -> Path:
    project: Path = handle.project(name)
    guards = [{"type": "command", "command": f"true {n}"} for n in range(hooks)]  # not deduped
    groups = [{"matcher": "Bash", "hooks": guards}] if hooks else []
    text = json.dumps({"hooks": {event_name: groups}})
    (project / ".claude" / "hooks.json").write_text(text)
    return project


async def test_a_reply_names_the_held_back_hooks_exactly_when_some_were(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory(require_trust=True)
    untrusted = _project(handle, "untrusted", "PreToolUse", 2)
    elsewhere = _project(handle, "other-event", "PostToolUse", 1)
    trusted = _project(handle, "trusted", "PreToolUse", 2)
    TrustStore(handle.daemon.settings.state_path() / "trust.json").trust(
        str(trusted), handle.daemon.layout
    )
    handle.daemon.reload()

    def fire(project: Path, session: str) -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(cwd=str(project), session_id=session))

    held = await trio.to_thread.run_sync(fire, untrusted, "s-untrusted")
    assert held.held_back is not None and held.held_back.hooks == 2, held
    assert held.held_back.project == str(untrusted) and "hookctl trust" in held.held_back.reason
    assert held.result.hooks == []
    for project, session in ((trusted, "s-trusted"), (elsewhere, "s-elsewhere")):
        reply = await trio.to_thread.run_sync(fire, project, session)
        assert reply.held_back is None, (project, reply.held_back)
    assert len((await trio.to_thread.run_sync(fire, trusted, "s-t2")).result.hooks) == 2


async def test_a_one_shot_fire_leaves_no_session_behind(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    project = _project(handle, "p", "PreToolUse", 1)
    handle.daemon.reload()

    def fire(session: str, event_name: str, once: bool) -> None:
        raw = event(cwd=str(project), session_id=session)
        if event_name != "PreToolUse":
            raw = {k: raw[k] for k in ("session_id", "transcript_path", "cwd")}
            raw.update(hook_event_name=event_name, prompt="hello")
        with Client(handle.socket) as client:
            client.fire(event_name, raw, once=once)

    for event_name in ("PreToolUse", "UserPromptSubmit"):  # hooks run / none match
        await trio.to_thread.run_sync(fire, f"once-{event_name}", event_name, True)
        await trio.to_thread.run_sync(fire, f"kept-{event_name}", event_name, False)
    sessions = {s.session_id for s in handle.daemon.sessions.all()}
    assert sessions == {"kept-PreToolUse", "kept-UserPromptSubmit"}, sessions

"""The running view (``hookctl status``) lists each run of a hook, not each hook.

One hook firing for two sessions at once is two runs: both are listed while
they run, and each leaves the view when it ends.  (A HookRef is one object per
hook, made at load, so the view cannot be keyed by it.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from hookd_client.trio_client import open_client
from support.daemon import configure
from support.events import fixture_event as event


async def test_one_hook_running_for_two_sessions_is_two_running_hooks(
    daemon_factory: Any, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    waits = f"while [ ! -e {go} ]; do sleep 0.01; done"
    handle = await daemon_factory()
    configure(
        handle,
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": waits, "timeout": 60}]}
            ]
        },
    )
    activity = handle.daemon.activity
    replies: list[Any] = []

    async def fire(client: Any, session: str) -> None:
        raw = event(session_id=session, cwd=str(handle.project()))
        replies.append(await client.fire("PreToolUse", raw))

    async with (
        open_client(handle.socket, connect=True) as one,
        open_client(handle.socket, connect=True) as two,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(fire, one, "s-one")
        nursery.start_soon(fire, two, "s-two")
        # A hook is listed from its "started" on; its pid once its process has started
        # (a start waits a scheduler pass, or a worker thread: hookd/handlers/spawn.py).
        with trio.fail_after(30):
            while sum(r.pid is not None for r in activity.running_hooks()) < 2:
                await trio.sleep(0.01)
        running = activity.running_hooks()
        assert sorted(r.session_id for r in running) == ["s-one", "s-two"]
        assert all(r.pid is not None for r in running)
        go.touch()
    assert [r.result.hooks[0].outcome for r in replies] == ["success", "success"]
    assert activity.running_hooks() == []

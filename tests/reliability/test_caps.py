"""Python hook return values are capped like command output; no reply frame exceeds max_frame.

Issue 14, item 4: a python hook returning 300 MB took the daemon to 965 MB
and a 100 MB ``systemMessage`` became a 105 MB reply frame — 7× the daemon's
own ``max_frame``.  Now the worker sends at most ``output_cap`` bytes of the
value (marked ``truncated``, read like a command's capped stdout), and a reply
that would still be larger than ``max_frame`` is replaced by a ``too_large``
error naming the request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from hookd_client.client import Client, DaemonError
from reliability.helpers import event, rss_kb
from support.daemon import configure

MIB = 1024 * 1024


async def setup(daemon_factory: Any, tmp_path: Path, body: str, **settings: Any) -> Any:
    module = tmp_path / "big_hook.py"
    module.write_text(f"def hook(payload):\n    {body}\n")
    handle = await daemon_factory(**settings)
    hooks = [{"type": "python", "callable": f"{module}:hook"}]
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]})
    return handle


async def fire(sock: Path) -> Any:
    def run() -> Any:
        with Client(sock, timeout=120) as client:
            return client.fire("PreToolUse", event())

    return await trio.to_thread.run_sync(run)


async def test_a_huge_python_return_value_is_capped_and_marked_truncated(
    daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await setup(
        daemon_factory, tmp_path, "return 'x' * (64 * 1024 * 1024)", output_cap=MIB
    )
    before = rss_kb()
    reply = await fire(handle.socket)
    grown = rss_kb() - before
    (run,) = reply.result.hooks
    assert run.outcome == "success", run
    assert run.truncated
    assert len(run.stdout) == MIB
    assert grown < 32 * 1024, f"daemon RSS grew by {grown} kB for a 64 MB return value"


async def test_a_huge_system_message_is_capped_to_plain_text(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Capped JSON is no longer JSON: read as plain text, exactly like a command's."""
    handle = await setup(
        daemon_factory,
        tmp_path,
        "return {'systemMessage': 'y' * (8 * 1024 * 1024)}",
        output_cap=MIB,
    )
    reply = await fire(handle.socket)
    (run,) = reply.result.hooks
    assert run.truncated and len(run.stdout) == MIB
    assert reply.result.system_messages == []


async def test_no_reply_frame_exceeds_max_frame(daemon_factory: Any, tmp_path: Path) -> None:
    handle = await setup(
        daemon_factory,
        tmp_path,
        "return {'systemMessage': 'z' * (3 * 1024 * 1024)}",
        output_cap=8 * MIB,
        max_frame=2 * MIB,
    )
    with pytest.raises(DaemonError) as info:
        await fire(handle.socket)
    assert info.value.code == "too_large"
    assert "max_frame" in str(info.value)

    # The daemon serves on.
    def status() -> Any:
        with Client(handle.socket) as client:
            return client.status()

    assert (await trio.to_thread.run_sync(status))["faults"] == []

"""The shared http client (and httpx itself) exists only once an http hook needs it.

An idle daemon without http, prompt or agent hooks should not carry httpx's
~2.5 MB; the first http hook makes the client, and the daemon closes it.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from hookd_client.trio_client import open_client
from support.daemon import DaemonHandle, configure
from support.events import fixture_event as event
from support.fake_http import refused_port


def test_the_daemon_modules_do_not_import_httpx() -> None:
    code = "import sys, hookd.daemon.server; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_the_client_is_made_by_the_first_http_hook(daemon_factory: Any) -> None:
    handle: DaemonHandle = await daemon_factory()
    assert handle.daemon.handlers is not None
    shared = handle.daemon.handlers.http_client
    project = str(handle.project())
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]})
    async with open_client(handle.socket, connect=True) as client:
        await client.fire("PreToolUse", event(session_id="s-lazy-http", cwd=project))
        assert not shared.started
        with refused_port() as port:
            url = f"http://127.0.0.1:{port}/hook"
            configure(handle, {"PreToolUse": [{"hooks": [{"type": "http", "url": url}]}]})
            reply = await client.fire("PreToolUse", event(session_id="s-lazy-http", cwd=project))
    (run,) = reply.result.hooks
    assert run.outcome == "non_blocking_error" and "ConnectError" in (run.error or "")
    assert shared.started

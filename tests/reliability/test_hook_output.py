"""Hook output that breaks a JSON parser is read the way Claude Code reads invalid JSON (item 7).

Claude Code decodes a hook's stdout as UTF-8 with replacement characters and
then tries ``JSON.parse``; output that starts with ``{`` and ends with ``}``
but does not parse is the one-line error "looks like a JSON object but is not
valid JSON" (reference §4.1, 2.1.248).  Invalid UTF-8 inside the braces
therefore parses (with U+FFFD in place of the bad bytes), and JSON nested
deeper than any parser goes is "not valid JSON" — never a
``handler error: ExceptionGroup(… UnicodeDecodeError …)``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure

DEEP = 100_000


async def fire_with(daemon_factory: Any, command: str) -> Any:
    handle = await daemon_factory()
    hooks = [{"type": "command", "command": command}]
    groups = [{"matcher": "Bash", "hooks": hooks}]
    configure(handle, {"PreToolUse": groups})

    def run() -> Any:
        with Client(handle.socket, timeout=60) as client:
            return client.fire("PreToolUse", event())

    return (await trio.to_thread.run_sync(run)).result


async def test_invalid_utf8_inside_a_json_object_is_replaced_and_parsed(
    daemon_factory: Any,
) -> None:
    result = await fire_with(
        daemon_factory, r"""printf '{"systemMessage": "bad \377\376 bytes"}'"""
    )
    (run,) = result.hooks
    assert run.outcome == "success", run
    assert result.system_messages == ["bad \ufffd\ufffd bytes"]


async def test_json_nested_100k_deep_is_not_valid_json(daemon_factory: Any, tmp_path: Path) -> None:
    script = tmp_path / "deep.py"
    script.write_text(
        f"import sys\nsys.stdout.write('{{\"a\": ' + '[' * {DEEP} + ']' * {DEEP} + '}}')\n"
    )
    result = await fire_with(daemon_factory, f"{sys.executable} {script}")
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error", run
    assert run.error is not None and "handler error" not in run.error
    assert run.error.startswith("hook output looks like a JSON object but is not valid JSON")
    assert "\n" not in run.error


async def test_lone_surrogates_from_a_python_hook_are_not_a_handler_error(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """A python hook returning text with a lone surrogate (not encodable as UTF-8)."""
    module = tmp_path / "surrogate_hook.py"
    module.write_text('def hook(payload):\n    return \'{"systemMessage": "x\\udcff"}\'\n')
    handle = await daemon_factory()
    hooks = [{"type": "python", "callable": f"{module}:hook"}]
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]})

    def run() -> Any:
        with Client(handle.socket, timeout=60) as client:
            return client.fire("PreToolUse", event())

    result = (await trio.to_thread.run_sync(run)).result
    (hook_run,) = result.hooks
    assert "handler error" not in (hook_run.error or ""), hook_run

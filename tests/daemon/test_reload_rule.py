"""One rule for invalid files, the same in the daemon and in ``hookctl fire --local``.

A file with any error is not applied at all: the daemon keeps its last good
version, and a file that never loaded cleanly contributes nothing.  Also here:
truncated JSON names its line, and a header ``$VAR`` that will be sent empty is
flagged at load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from cli.helpers import CC_FIXTURES, hookctl
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure

GOOD = {
    "matcher": "Bash",
    "hooks": [
        {
            "type": "command",
            "command": 'printf \'%s\' \'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
            '"additionalContext":"GOOD-GROUP"}}\'',
        }
    ],
}
BAD = {"matcher": "Bash", "hooks": [{"type": "command", "timeout": -1, "command": "true"}]}
HALF_VALID = {"PreToolUse": [GOOD, BAD]}


def _write_half_valid(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": HALF_VALID}))


async def test_the_daemon_runs_nothing_from_a_file_with_an_invalid_group(
    daemon_factory: Any,
) -> None:
    handle = await daemon_factory()
    configure(handle, HALF_VALID)
    project = handle.project()

    def fire_and_status() -> tuple[Any, dict[str, Any]]:
        with Client(handle.socket) as client:
            reply = client.fire("PreToolUse", event(cwd=str(project)))
            return reply.result, client.status()

    result, status = await trio.to_thread.run_sync(fire_and_status)
    assert result.additional_context == []
    [source] = [s for s in status["sources"] if s["path"] == str(handle.user_config)]
    assert source["not_applied"] is True and source.get("hooks", 0) == 0
    assert any("PreToolUse[1]" in e for e in source["errors"])
    text = await trio.to_thread.run_sync(
        lambda: hookctl("--socket", str(handle.socket), "status").stdout
    )
    assert "invalid (not applied)" in text

    # Fixed: the whole file applies; broken again: the whole last good version stays.
    configure(handle, {"PreToolUse": [GOOD]})
    result, _ = await trio.to_thread.run_sync(fire_and_status)
    assert result.additional_context == ["GOOD-GROUP"]
    configure(handle, HALF_VALID)
    result, status = await trio.to_thread.run_sync(fire_and_status)
    assert result.additional_context == ["GOOD-GROUP"]
    [source] = [s for s in status["sources"] if s["path"] == str(handle.user_config)]
    assert source["stale"] is True


def test_fire_local_applies_the_same_rule_to_the_default_sources(tmp_path: Path) -> None:
    config_home = tmp_path / "config"
    _write_half_valid(config_home / "hookd" / "hooks.json")
    done = hookctl(
        "fire", "PreToolUse", "--local", "--input", str(CC_FIXTURES / "PreToolUse-Bash.json"),
        env={"XDG_CONFIG_HOME": str(config_home), "XDG_STATE_HOME": str(tmp_path / "state")},
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "additional_context" not in json.loads(done.stdout)
    assert "PreToolUse[1]" in done.stderr


def test_truncated_json_is_reported_with_its_line(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.json"
    hooks.write_text('{"hooks": {\n  "PreToolUse": [\n    {"hooks": [\n')
    done = hookctl("validate", str(hooks))
    assert done.returncode == 1
    assert f"{hooks}:3: " in done.stdout and "truncated" in done.stdout


WEBHOOK = """\
[[hooks]]
event = "PostToolUse"
tool_matcher = "Write|Edit"
[hooks.webhook]
url = "http://127.0.0.1:8080/notify"
headers = { Authorization = "Bearer $TOKEN" }
"""


async def test_a_header_variable_that_will_be_sent_empty_is_flagged(
    daemon_factory: Any, tmp_path: Path
) -> None:
    toml = tmp_path / "hooks.toml"
    toml.write_text(WEBHOOK)
    done = hookctl("validate", str(toml))
    assert done.returncode == 0, done.stdout  # it loads; it just will not do what it says
    assert "warning: " in done.stdout
    assert "headers.Authorization: $TOKEN is not in this hook's allowedEnvVars" in done.stdout
    fixed = tmp_path / "fixed.toml"
    fixed.write_text(WEBHOOK + 'allowedEnvVars = ["TOKEN"]\n')
    assert "warning" not in hookctl("validate", str(fixed)).stdout

    handle = await daemon_factory()
    webhook = {"type": "http", "url": "http://127.0.0.1:9/x", "headers": {"X-Key": "${KEY}"}}
    configure(handle, {"PostToolUse": [{"hooks": [webhook]}]})
    text = await trio.to_thread.run_sync(
        lambda: hookctl("--socket", str(handle.socket), "status").stdout
    )
    assert "config warnings:" in text and "headers.X-Key: $KEY is not in" in text

"""Workspace trust covers every command a project's files can start, not only its hooks.

An untrusted repository can ship a ``statusLine`` or ``fileSuggestion`` command,
or a python module a user-level python hook would import from the project
directory.  None of them may run before ``hookctl trust``; each test checks the
command's side effect (a marker file), not only the reply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from hookd_client.client import Client
from reliability.helpers import event
from reliability.test_trust import hookctl, state
from support.daemon import configure


def _marker_command(marker: Path, text: str) -> str:
    return f"touch {marker} && echo {text}"


async def _untrusted(daemon_factory: Any) -> tuple[Any, Path]:
    handle = await daemon_factory(require_trust=True)
    project = handle.project("repo")
    return handle, project


def _status_and_suggest(sock: Path, project: Path) -> tuple[str | None, list[str]]:
    with Client(sock) as client:
        line = client.status_line(str(project), {"session_id": "s", "cwd": str(project)})
        paths = client.file_suggestion(str(project), "src")
    return line, paths


async def test_an_untrusted_projects_status_commands_do_not_run(daemon_factory: Any) -> None:
    handle, project = await _untrusted(daemon_factory)
    marker_line, marker_files = project / "line-ran", project / "files-ran"
    (project / ".claude" / "hooks.json").write_text(
        json.dumps(
            {
                "statusLine": {"type": "command", "command": _marker_command(marker_line, "PROJ")},
                "fileSuggestion": {
                    "type": "command",
                    "command": _marker_command(marker_files, "proj/file.py"),
                },
            }
        )
    )
    handle.daemon.reload()
    line, paths = await trio.to_thread.run_sync(_status_and_suggest, handle.socket, project)
    assert (line, paths) == (None, [])
    assert not marker_line.exists() and not marker_files.exists()
    # hookctl statusline (the path the report used) runs nothing either.
    out = await trio.to_thread.run_sync(
        lambda: hookctl(handle, "statusline", "--cwd", str(project))
    )
    assert "PROJ" not in out.stdout and not marker_line.exists()

    done = hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    assert done.returncode == 0, done.stderr
    line, paths = await trio.to_thread.run_sync(_status_and_suggest, handle.socket, project)
    assert (line, paths) == ("PROJ", ["proj/file.py"])
    assert marker_line.exists() and marker_files.exists()


async def test_the_users_status_line_stays_in_an_untrusted_project(daemon_factory: Any) -> None:
    handle, project = await _untrusted(daemon_factory)
    handle.user_config.write_text(
        json.dumps({"statusLine": {"type": "command", "command": "echo USER"}})
    )
    marker = project / "line-ran"
    (project / ".claude" / "hooks.local.json").write_text(
        json.dumps({"statusLine": {"type": "command", "command": _marker_command(marker, "P")}})
    )
    handle.daemon.reload()
    line, _ = await trio.to_thread.run_sync(_status_and_suggest, handle.socket, project)
    assert line == "USER" and not marker.exists()


PY_HOOK = """\
import pathlib
pathlib.Path({marker!r}).write_text("imported")

def hook(event):
    return {{"systemMessage": "FROM-PROJECT-MODULE"}}
"""


async def test_a_user_python_hook_does_not_import_from_an_untrusted_project(
    daemon_factory: Any,
) -> None:
    handle, project = await _untrusted(daemon_factory)
    marker = project / "module-ran"
    (project / "i21_projmod.py").write_text(PY_HOOK.format(marker=str(marker)))
    (project / "i21_projfile.py").write_text(PY_HOOK.format(marker=str(marker)))
    configure(
        handle,
        {
            "PreToolUse": [
                {"hooks": [{"type": "python", "callable": "i21_projmod:hook"}]},
                {"hooks": [{"type": "python", "callable": "i21_projfile.py:hook"}]},
            ]
        },
    )

    def fire() -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", event(cwd=str(project), session_id="py")).result

    result = await trio.to_thread.run_sync(fire)
    assert not marker.exists()
    assert [r.outcome for r in result.hooks] == ["non_blocking_error"] * 2
    assert all("not trusted" in (r.error or "") for r in result.hooks), result.hooks

    hookctl(handle, "trust", str(project), "--state-dir", state(handle))
    result = await trio.to_thread.run_sync(fire)
    assert result.system_messages == ["FROM-PROJECT-MODULE"] * 2
    assert marker.exists()


def test_hookctl_fire_local_holds_back_an_untrusted_projects_hooks(tmp_path: Path) -> None:
    """``hookctl fire --local`` reads the default sources — the project's own included."""
    import os
    import subprocess
    import sys

    project = tmp_path / "repo"
    (project / ".claude").mkdir(parents=True)
    marker = project / "hook-ran"
    (project / ".claude" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]
                }
            }
        )
    )
    (tmp_path / "event.json").write_text(json.dumps(event(cwd=str(project))))
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "HOME": str(tmp_path),
    }
    env.pop("CLAUDE_PROJECT_DIR", None)

    def fire() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "hookd.cli.hookctl",
                "fire",
                "PreToolUse",
                "--local",
                "--input",
                str(tmp_path / "event.json"),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            cwd=project,
        )

    done = fire()
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "held back" in done.stderr and "not trusted" in done.stderr
    trusted = subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookctl", "trust", str(project)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert trusted.returncode == 0, trusted.stderr
    assert fire().returncode == 0 and marker.exists()

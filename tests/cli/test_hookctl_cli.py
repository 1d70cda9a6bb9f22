"""hookctl as a command-line tool: help, version, examples, exit codes, colour, start-up."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hookd.cli.examples import EXAMPLE_FIELDS, example_input
from hookd.cli.hookctl import COMMANDS, build_parser
from hookd.cli.style import Style
from hookd_client.events import EVENT_NAMES, decode_event

from .helpers import ROOT, cli_env, hookctl

GUARD = "grep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; } || exit 0"
DENY_RM = json.dumps(
    {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": GUARD}]}]
        }
    }
)


def test_every_event_has_an_example_that_decodes() -> None:
    assert set(EXAMPLE_FIELDS) == set(EVENT_NAMES)
    for event in EVENT_NAMES:
        decode_event(example_input(event), event)


def test_example_prints_json_and_suggests_names() -> None:
    done = hookctl("example", "PreToolUse")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Bash"
    wrong = hookctl("example", "PreToolUSe")
    assert wrong.returncode == 1
    assert "did you mean PreToolUse?" in wrong.stderr


def test_partial_input_is_filled_from_the_example_and_blocked_exits_4(tmp_path: Path) -> None:
    partial = tmp_path / "event.json"
    partial.write_text('{"tool_input": {"command": "rm -rf /"}}')
    done = hookctl(
        "fire", "PreToolUse", "--local", "--settings", DENY_RM, "--input", str(partial),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    result = json.loads(done.stdout)  # not a terminal: the whole result as JSON
    assert result["decision"] == "deny"
    allowed = hookctl("fire", "PreToolUse", "--local", "--settings", DENY_RM, cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr


def test_text_summary(tmp_path: Path) -> None:
    partial = tmp_path / "event.json"
    partial.write_text('{"tool_input": {"command": "rm -rf /"}}')
    done = hookctl(
        "--color", "never", "fire", "PreToolUse", "--local", "--settings", DENY_RM,
        "--input", str(partial), "--format", "text", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 4
    lines = done.stdout.splitlines()
    assert lines[0] == "PreToolUse: deny  (1 hook)"
    assert lines[1].startswith("  reason: ") and lines[1].endswith("no rm -rf")
    assert "blocking  exit=2" in lines[2]
    assert "\033[" not in done.stdout


def test_input_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"a": \n')
    for path, message in (
        (tmp_path / "missing.json", "no such file"),
        (tmp_path / "bad.json", "bad.json:2: not JSON: Expecting value"),
    ):
        done = hookctl("fire", "PreToolUse", "--local", "--input", str(path), cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_version_and_help_for_every_command() -> None:
    version = hookctl("--version")
    assert version.returncode == 0 and version.stdout.startswith("hookctl ")
    full = build_parser(full=True)
    for name in COMMANDS:
        help_text = hookctl(name, "--help")
        assert help_text.returncode == 0, (name, help_text.stderr)
        assert "``" not in help_text.stdout and ":class:" not in help_text.stdout
    # Every option of every subcommand says what it does.
    subparsers = next(a for a in full._actions if a.dest == "command")
    for name, sub in subparsers.choices.items():  # type: ignore[union-attr]
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"hookctl {name} {action.option_strings[0]} has no help"


def test_no_color_and_not_a_tty_mean_plain(monkeypatch: object) -> None:
    class Tty:
        def isatty(self) -> bool:
            return True

    import os

    os.environ.pop("NO_COLOR", None)
    assert Style.for_stream(Tty()).enabled is (os.environ.get("TERM") != "dumb")  # type: ignore[arg-type]
    os.environ["NO_COLOR"] = "1"
    try:
        assert Style.for_stream(Tty()).enabled is False  # type: ignore[arg-type]
        assert Style.for_stream(Tty(), "always").enabled is True  # type: ignore[arg-type]
    finally:
        del os.environ["NO_COLOR"]


def test_remote_commands_do_not_import_trio_or_the_engine() -> None:
    """`hookctl status` should start about as fast as the blocking client: it imports
    only the client's modules (checked by module, not by a clock)."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['hookctl', '--socket', '/nonexistent/sock', 'status']\n"
        "try:\n"
        "    runpy.run_module('hookd.cli.hookctl', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in ('trio', 'httpx', 'hookd.engine', 'hookd.daemon', 'structlog',"
        " 'hookd.config') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=cli_env(), capture_output=True, text=True, cwd=ROOT
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_hookd_serve_help_shows_each_settings_docstring() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookd_main", "serve", "--help"],
        env={**cli_env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0
    assert "Largest frame accepted from a client, in bytes. (default: 16777216)" in done.stdout
    assert "``" not in done.stdout
    from hookd.cli.hookd_main import setting_docs
    from hookd.daemon.settings import DaemonSettings

    assert set(setting_docs()) == set(DaemonSettings.__struct_fields__)
    version = subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookd_main", "--version"],
        env=cli_env(),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert version.stdout.startswith("hookd ")


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield prefix + name, child
                yield from _subcommands(child, f"{prefix}{name} ")


def test_every_subcommand_has_a_description() -> None:
    """`hookctl hooks --help` showed only usage and options: no word of what it does."""
    missing = [name for name, sub in _subcommands(build_parser(full=True)) if not sub.description]
    assert missing == []
    for args in (["hooks"], ["reload"], ["claude", "install"]):  # lazily built parsers too
        done = hookctl(*args, "--help")
        assert done.returncode == 0, done.stderr
        description = done.stdout.split("\n\n")[1]
        assert description[0].isupper() and not description.startswith(("options", "positional"))


def test_trust_without_a_directory_trusts_the_current_one(tmp_path: Path) -> None:
    """`hookctl trust` with no DIR listed the store and trusted nothing; `.` is what a user
    standing in the project means.  Listing is `--list`."""
    project, state = tmp_path / "proj", tmp_path / "state"
    project.mkdir()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = hookctl("trust", "--state-dir", str(state), cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"trusted {project} (")
    listing = hookctl("trust", "--list", "--state-dir", str(state), cwd=tmp_path, env=env)
    assert listing.returncode == 0 and listing.stdout.startswith(f"{project}  [dir+subdirs]")

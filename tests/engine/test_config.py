"""Configuration: every error names its file and JSON path (and line, for syntax
errors); a bad group is skipped while the rest loads; the TOML and SKILL.md
formats; scope order and the disable switches; ``hookctl validate``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hookd.config.assemble import explicit_sources
from hookd.config.loader import build_config, load_source
from hookd.config.model import HookConfig, Scope
from hookd.config.schema import CommandHandler, HttpHandler
from hookd.config.sources import SourceSpec, _kind
from hookd.engine.engine import SessionState
from hookd_client.events import decode_event

from .vectors import CC_FIXTURES, DATA, ROOT, clean_env, command_engine

CONFIGS = DATA / "configs"
ERRORS = CONFIGS / "errors"
SCOPES = CONFIGS / "scopes"
FORMATS = CONFIGS / "formats"


def errors_of(name: str) -> list[str]:
    loaded = load_source(explicit_sources([str(ERRORS / name)])[0])
    return [str(e) for e in loaded.errors]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bad_syntax.json", ["bad_syntax.json:4: JSON is malformed"]),
        ("bad.toml", ["bad.toml:3: "]),
        (
            "wrong_types.json",
            [
                "wrong_types.json: $.hooks.PreToolUse[0].hooks[0].timeout: Expected `float | null`",
                "wrong_types.json: $.hooks.PreToolUse[1].matcher: Expected `str | null`, got `int`",
                "wrong_types.json: $.hooks.PreToolUse[2].hooks: Expected `array`, got `object`",
                "wrong_types.json: $.hooks.Stop: expected an array of matcher groups",
            ],
        ),
        ("unknown_type.json", ["unknown_type.json: $.hooks.PreToolUse[0].hooks[0].type: Invalid"]),
        (
            "missing_command.json",
            [
                "missing_command.json: $.hooks.PostToolUse[0].hooks[0]: "
                "Object missing required field `command`"
            ],
        ),
        ("negative_timeout.json", ["negative_timeout.json: $.hooks.Stop[0].hooks[0].timeout: "]),
        (
            "prompt_on_sessionstart.json",
            [
                "prompt_on_sessionstart.json: $.hooks.SessionStart[0].hooks[0].type: SessionStart "
                "does not accept `prompt`"
            ],
        ),
        (
            "http_on_sessionstart.json",
            [
                "http_on_sessionstart.json: $.hooks.SessionStart[0].hooks[0].type: SessionStart "
                "does not accept `http`"
            ],
        ),
    ],
)
def test_error_names_file_and_path(name: str, expected: list[str]) -> None:
    got = errors_of(name)
    assert len(got) == len(expected), got
    for fragment, error in zip(expected, got, strict=True):
        # Every JSON error names its line too (file:line: path: message).
        assert re.match(rf"{re.escape(str(ERRORS))}/[\w.]+:\d+: ", error), error
        without_line = re.sub(r":\d+: ", ": ", error, count=1)
        assert fragment in error or fragment in without_line, (fragment, error)


def test_bad_group_is_skipped_good_groups_load() -> None:
    loaded = load_source(explicit_sources([str(ERRORS / "partial.json")])[0])
    assert len(loaded.errors) == 2
    commands = [
        (event, h.command)
        for event, _, group in loaded.groups
        for h in group.hooks
        if isinstance(h, CommandHandler)
    ]
    assert commands == [
        ("PreToolUse", "echo good-1"),
        ("PreToolUse", "echo good-2"),
        ("Stop", "echo good-4"),
    ]
    # The group index in error paths and hook ids is the one in the file.
    assert [index for _, index, _ in loaded.groups] == [0, 2, 1]


def test_bad_file_does_not_stop_other_files() -> None:
    config = build_config(
        [
            load_source(SourceSpec(ERRORS / "bad_syntax.json", Scope.USER)),
            load_source(SourceSpec(ERRORS / "good.json", Scope.PROJECT)),
        ]
    )
    assert len(config.errors) == 1
    assert len(config.all_hooks()) == 2


def test_toml_format() -> None:
    loaded = load_source(SourceSpec(FORMATS / "hooks.toml", Scope.USER, kind="toml"))
    assert loaded.errors == ()
    by_event = {event: group for event, _, group in loaded.groups}
    shell = by_event["PreToolUse"].hooks[0]
    assert by_event["PreToolUse"].matcher == "Bash"
    assert isinstance(shell, CommandHandler)
    assert (shell.name, shell.timeout, shell.command) == ("no-rm", 7, "echo toml-shell")
    assert (shell.pass_context, shell.parse_result) == (False, False)
    once = by_event["UserPromptSubmit"].hooks[0]
    assert once.once is True and once.name == "remember"
    webhook = by_event["PostToolUse"].hooks[0]
    assert isinstance(webhook, HttpHandler)
    assert by_event["PostToolUse"].matcher == "Write|Edit"
    assert (webhook.url, webhook.method) == ("http://127.0.0.1:9/notify", "PUT")
    assert webhook.headers == {"Authorization": "Bearer $TOKEN"}


async def test_toml_pass_context_and_parse_result(tmp_path: Path) -> None:
    """``pass_context = false``: empty stdin; ``parse_result = false``: stdout is not read."""
    toml = tmp_path / "hooks.toml"
    toml.write_text(
        "[[hooks]]\n"
        'event = "PreToolUse"\n'
        "[hooks.shell]\n"
        'command = "wc -c > stdin-bytes; echo \'{\\"decision\\": \\"block\\"}\'"\n'
        "pass_context = false\n"
        "parse_result = false\n"
    )
    config = build_config([load_source(SourceSpec(toml, Scope.USER, kind="toml"))])
    assert config.errors == ()
    raw = json.loads((CC_FIXTURES / "PreToolUse-Bash.json").read_text())
    raw["cwd"] = str(tmp_path)
    result = await command_engine().fire(config, decode_event(raw), env=clean_env())
    assert result.decision is None
    assert (tmp_path / "stdin-bytes").read_text().strip() == "0"


def test_skill_frontmatter() -> None:
    path = FORMATS / "skill" / "SKILL.md"
    assert _kind(path) == "skill"
    loaded = load_source(SourceSpec(path, Scope.SKILL, kind="skill", skill_root=str(path.parent)))
    assert loaded.errors == ()
    groups = {event: group for event, _, group in loaded.groups}
    assert groups["PreToolUse"].matcher == "Write|Edit"
    assert groups["PreToolUse"].hooks[0].once is True
    assert groups["Stop"].hooks[0].timeout == 3


def test_skill_frontmatter_syntax_error_has_line() -> None:
    path = FORMATS / "bad-skill" / "SKILL.md"
    loaded = load_source(SourceSpec(path, Scope.SKILL, kind="skill"))
    (error,) = loaded.errors
    assert error.file == str(path)
    assert error.line is not None
    assert str(error).startswith(f"{path}:{error.line}: YAML frontmatter")


# --- scopes ---------------------------------------------------------------------------

ALL_SCOPES = {
    Scope.POLICY: "policy",
    Scope.USER: "user",
    Scope.PROJECT: "project",
    Scope.LOCAL: "local",
    Scope.PLUGIN: "plugin",
    Scope.SESSION: "session",
    Scope.SKILL: "skill",
}


def scoped(extra: dict[Scope, str] | None = None) -> HookConfig:
    """One source per scope, given in reverse order, plus flag files."""
    loaded = []
    for scope, name in reversed(list(ALL_SCOPES.items())):
        root = str(SCOPES) if scope is Scope.PLUGIN else None
        loaded.append(load_source(SourceSpec(SCOPES / f"{name}.json", scope, plugin_root=root)))
    for i, (scope, flag) in enumerate((extra or {}).items()):
        loaded.append(load_source(SourceSpec(SCOPES / flag, scope, order=10 + i)))
    config = build_config(loaded)
    assert config.errors == ()
    return config


async def ran(config: HookConfig, tmp_path: Path) -> list[str]:
    raw = json.loads((CC_FIXTURES / "UserPromptSubmit.json").read_text())
    raw["cwd"] = str(tmp_path)
    result = await command_engine().fire(
        config, decode_event(raw), session=SessionState(), env=clean_env()
    )
    return result.system_messages


async def test_scope_merge_order(tmp_path: Path) -> None:
    """policy > user > project > local > plugin > session > skill, whatever the load order."""
    assert await ran(scoped(), tmp_path) == list(ALL_SCOPES.values())


async def test_non_policy_disable_keeps_policy_and_session(tmp_path: Path) -> None:
    """§10.1: outside managed settings disableAllHooks spares managed hooks
    (and hooks a client registered for its session)."""
    got = await ran(scoped({Scope.USER: "disable_true.json"}), tmp_path)
    assert got == ["policy", "session"]


async def test_project_false_overrides_user_true(tmp_path: Path) -> None:
    """§10.1: scalar precedence is local > project > user."""
    config = scoped({Scope.USER: "disable_true.json", Scope.PROJECT: "disable_false.json"})
    assert await ran(config, tmp_path) == list(ALL_SCOPES.values())
    config = scoped({Scope.PROJECT: "disable_false.json", Scope.LOCAL: "disable_true.json"})
    assert await ran(config, tmp_path) == ["policy", "session"]


async def test_policy_disable_disables_everything(tmp_path: Path) -> None:
    """§10.1: only managed disableAllHooks disables everything (SDK/session hooks still run)."""
    got = await ran(scoped({Scope.POLICY: "disable_true.json"}), tmp_path)
    assert got == ["session"]


async def test_allow_managed_hooks_only(tmp_path: Path) -> None:
    got = await ran(scoped({Scope.POLICY: "managed_only.json"}), tmp_path)
    assert got == ["policy", "session"]


async def test_allow_managed_hooks_only_ignored_outside_policy(tmp_path: Path) -> None:
    got = await ran(scoped({Scope.USER: "managed_only.json"}), tmp_path)
    assert got == list(ALL_SCOPES.values())


# --- hookctl validate -------------------------------------------------------------------


def validate(*files: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "client")])
    return subprocess.run(
        [sys.executable, "-m", "hookd.cli.hookctl", "validate", *map(str, files)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_validate_ok() -> None:
    proc = validate(ERRORS / "good.json", FORMATS / "hooks.toml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        f"{ERRORS / 'good.json'}: ok (2 hooks)",
        f"{FORMATS / 'hooks.toml'}: ok (3 hooks)",
    ]


def test_validate_reports_every_error_and_exits_1() -> None:
    proc = validate(ERRORS / "good.json", ERRORS / "wrong_types.json", ERRORS / "missing.json")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{ERRORS / 'good.json'}: ok (2 hooks)"
    at = re.compile(rf"{re.escape(str(ERRORS / 'wrong_types.json'))}:(\d+): \$\.hooks\.")
    assert [m.group(1) for line in lines if (m := at.match(line))] == ["4", "5", "6", "8"]
    assert lines[-1] == f"{ERRORS / 'missing.json'}: no such file"

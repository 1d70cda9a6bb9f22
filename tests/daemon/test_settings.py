"""Daemon settings: defaults ← hookd.toml ← flags, one flag per setting, clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookd.cli.hookd_main import build_parser
from hookd.daemon.settings import DaemonSettings, SettingsError, load_settings


def overrides(argv: list[str]) -> dict[str, Any]:
    args = build_parser().parse_args(["serve", *argv])
    return {name: getattr(args, name) for name in DaemonSettings.__struct_fields__}


def test_every_setting_has_a_flag() -> None:
    serve_help = build_parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr,index]
    flags = {opt for action in serve_help._actions for opt in action.option_strings}
    for name in DaemonSettings.__struct_fields__:
        flag = "--" + name.replace("_", "-")
        assert flag in flags or flag.removesuffix("s") in flags, name


def test_flags_override_the_file_which_overrides_defaults(tmp_path: Path) -> None:
    config = tmp_path / "hookd.toml"
    config.write_text('send_queue = 10\nshutdown_grace = 3.5\naudit = false\nlog_level = "debug"\n')
    settings = load_settings(
        config, overrides(["--send-queue", "7", "--policy-file", "a", "--policy-file", "b"])
    )
    assert settings.send_queue == 7  # flag beats file
    assert settings.shutdown_grace == 3.5  # file beats default
    assert settings.audit is False
    assert settings.log_level == "debug"
    assert settings.policy_files == ["a", "b"]
    assert settings.kill_grace == DaemonSettings().kill_grace  # default


def test_boolean_flags_both_ways(tmp_path: Path) -> None:
    missing = tmp_path / "none.toml"
    assert load_settings(missing, overrides(["--no-watch"])).watch is False
    assert load_settings(missing, overrides(["--require-trust"])).require_trust is True
    assert load_settings(missing, overrides([])).watch is True


def test_bad_settings_file_names_the_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "hookd.toml"
    config.write_text('send_queue = "many"\n')
    with pytest.raises(SettingsError, match=r"hookd.toml.*send_queue"):
        load_settings(config, {})
    config.write_text("no_such_setting = 1\n")
    with pytest.raises(SettingsError, match="no_such_setting"):
        load_settings(config, {})

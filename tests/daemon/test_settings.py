"""Daemon settings: defaults ← hookd.toml ← flags, one flag per setting, clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookd.cli.hookd_main import build_parser
from hookd.daemon.async_runner import AsyncLimits
from hookd.daemon.options import command_runner, engine_settings, handler_options
from hookd.daemon.settings import DaemonSettings, SettingsError, load_settings, source_layout


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


def test_every_part_takes_its_values_from_the_settings(tmp_path: Path) -> None:
    """One home for each default: the parts' option objects are built from DaemonSettings
    (hookd/daemon/options.py), so a changed setting reaches every part that uses it."""
    settings = DaemonSettings(
        output_cap=1234,
        kill_grace=0.3,
        pipe_grace=0.4,
        command_without_shell=False,
        stop_block_cap=3,
        messages_api_base_url="http://127.0.0.1:9",
        default_model="model-x",
        prompt_max_tokens=77,
        agent_max_turns=5,
        http_hook_body_cap=999,
        http_hook_max_connections=7,
        python_workers=3,
        python_workers_per_session=2,
        python_warm_workers=0,
    )
    runner = command_runner(settings)
    assert (runner.output_cap, runner.kill_grace, runner.pipe_grace, runner.direct) == (
        1234,
        0.3,
        0.4,
        False,
    )
    engine = engine_settings(settings, state=tmp_path)
    assert engine.stop_block_cap == 3
    assert (engine.spill_dir, engine.env_file_dir) == (
        str(tmp_path / "spill"),
        str(tmp_path / "env"),
    )
    options = handler_options(settings)
    assert (
        options.messages_api_base_url,
        options.default_model,
        options.max_tokens,
        options.agent_max_turns,
        options.http_body_cap,
        options.http_max_connections,
        options.python_workers,
        options.python_workers_per_session,
        options.python_warm_workers,
        options.kill_grace,
        options.output_cap,
    ) == ("http://127.0.0.1:9", "model-x", 77, 5, 999, 7, 3, 2, 0, 0.3, 1234)


def test_async_limits_come_from_the_settings() -> None:
    settings = DaemonSettings(
        async_max_running=9,
        async_max_running_per_session=4,
        async_max_queued_per_session=3,
        async_retention_seconds=12.5,
        async_retention_per_session=6,
        async_housekeeping_seconds=2.0,
        async_keep_delivered=11,
    )
    limits = AsyncLimits.from_settings(settings)
    assert (
        limits.max_running,
        limits.max_running_per_session,
        limits.max_queued_per_session,
        limits.retention_seconds,
        limits.retention_per_session,
        limits.housekeeping_seconds,
        limits.keep_delivered,
    ) == (9, 4, 3, 12.5, 6, 2.0, 11)


def test_the_source_layout_comes_from_the_settings() -> None:
    layout = source_layout(
        DaemonSettings(policy_files=["/p.json"], user_files=["/u.json"], claude_settings=True)
    )
    assert (layout.policy, layout.user, layout.claude_settings) == (
        ("/p.json",),
        ("/u.json",),
        True,
    )

"""python hooks: run in warm, killable worker processes; reloaded when their file changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import trio

from handlers.rig import HANDLER_DATA, Rig
from handlers.scripted_server import ScriptedServer
from hookd.config.model import HookConfig
from hookd.daemon.options import command_runner, engine_settings, handler_options
from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import Engine
from hookd.handlers.registry import open_handlers
from hookd_client.results import FireResult
from support.processes import alive

HOOKS = HANDLER_DATA / "pyhooks"
BASIC = HOOKS / "basic.py"
PRE = "PreToolUse-Bash.json"


def pre_config(rig: Rig, callable_: str, timeout: float = 10) -> HookConfig:
    return rig.config("python-pretool.json", CALLABLE=callable_, TIMEOUT=str(timeout))


async def test_dict_answer_denies(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:deny_bash"), PRE)
    assert result.decision == "deny"
    assert result.reason == "PY-DENY Bash: echo from-sub"


@pytest.mark.parametrize(
    ("function", "message"),
    [("returns_output", "PY-STRUCT PreToolUse"), ("returns_json_text", "PY-JSON-TEXT")],
)
async def test_hook_output_struct_and_json_text(rig: Rig, function: str, message: str) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:{function}"), PRE)
    assert result.system_messages == [message]


async def test_none_is_success_without_output(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:returns_none"), PRE)
    (run,) = result.hooks
    assert run.outcome == "success" and run.output is None
    assert result.decision is None and not result.errors


async def test_plain_text_is_context_on_user_prompt_submit(rig: Rig) -> None:
    config = rig.config("python-ups.json", CALLABLE=f"{BASIC}:returns_text")
    result = await rig.fire(config, "UserPromptSubmit.json")
    assert result.plain_context == ["PY-PLAIN-CONTEXT"]


async def test_async_function(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:async_context"), PRE)
    assert result.additional_context == ["PY-ASYNC-CTX"]


async def test_relative_file_path_resolves_against_the_project(rig: Rig) -> None:
    shutil.copy(BASIC, rig.project / "hooks_here.py")
    result = await rig.fire(pre_config(rig, "hooks_here.py:deny_bash"), PRE)
    assert result.decision == "deny"


async def test_raising_function_is_a_non_blocking_error_with_its_text(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:raises"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error == "ValueError: PY-HOOK-BROKE"
    assert "Traceback" in run.stderr
    assert result.decision is None


async def test_raising_function_blocks_with_on_failure_block(rig: Rig) -> None:
    config = rig.config("python-onfailure.json", CALLABLE=f"{BASIC}:raises")
    result = await rig.fire(config, PRE)
    assert result.decision == "deny"


@pytest.mark.parametrize(
    ("reference", "error"),
    [
        (f"{BASIC}:returns_bad", "python hook returned int"),
        (f"{BASIC}:returns_unencodable", "non-JSON data"),
        (f"{BASIC}:no_such_function", "has no attribute"),
        (f"{HOOKS}/missing.py:hook", "no such file"),
        ("no_such_module_hookd_test:hook", "no module named"),
        ("just-a-name", "expected `module:function`"),
    ],
)
async def test_bad_references_and_answers_are_errors(rig: Rig, reference: str, error: str) -> None:
    result = await rig.fire(pre_config(rig, reference), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and error in run.error


async def test_print_does_not_corrupt_the_answer(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:prints"), PRE)
    assert result.system_messages == ["PY-AFTER-PRINT"]


async def test_no_process_per_call(rig: Rig) -> None:
    config = pre_config(rig, f"{BASIC}:worker_pid")
    pids = set()
    for _ in range(5):
        result = await rig.fire(config, PRE)
        pids.add(result.system_messages[0])
    assert len(pids) == 1
    assert rig.handlers.pool.spawned == 1


async def _fire_hang_and_probe(rig: Rig, function: str) -> tuple[FireResult, FireResult]:
    """Fire a hanging hook (3 s timeout) and, while it hangs, a quick one."""
    hang = pre_config(rig, f"{BASIC}:{function}", timeout=3)
    quick = pre_config(rig, f"{BASIC}:returns_output")
    results: dict[str, FireResult] = {}
    hang_done_when_quick_was = True

    async def fire_hang() -> None:
        results["hang"] = await rig.fire(hang, PRE)

    async def fire_quick() -> None:
        nonlocal hang_done_when_quick_was
        with trio.fail_after(20):  # the hanging call holds the warm worker
            while rig.handlers.pool.busy < 1:
                await trio.sleep(0.005)
        results["quick"] = await rig.fire(quick, PRE)
        hang_done_when_quick_was = "hang" in results

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fire_hang)
        nursery.start_soon(fire_quick)
    assert not hang_done_when_quick_was  # answered while the other still hung
    return results["hang"], results["quick"]


@pytest.mark.parametrize("function", ["hangs", "async_hangs", "spins"])
async def test_hung_or_spinning_hook_is_killed_and_replaced(rig: Rig, function: str) -> None:
    pool = rig.handlers.pool
    await rig.fire(pre_config(rig, f"{BASIC}:returns_none"), PRE)  # the first worker starts
    (first_worker,) = pool.pids()
    hung, quick = await _fire_hang_and_probe(rig, function)
    (run,) = hung.hooks
    assert run.outcome == "cancelled" and run.timed_out
    assert hung.decision is None
    # Other hooks kept working while the first one hung.
    assert quick.system_messages == ["PY-STRUCT PreToolUse"]
    # The hung worker is gone; a fresh one serves the next call.
    assert first_worker not in pool.pids()
    assert not alive(first_worker)
    after = await rig.fire(pre_config(rig, f"{BASIC}:returns_output"), PRE)
    assert after.system_messages == ["PY-STRUCT PreToolUse"]


async def test_file_edited_while_running_is_reloaded(rig: Rig) -> None:
    path = rig.tmp / "editable.py"
    shutil.copy(HOOKS / "editable_v1.py", path)
    config = pre_config(rig, f"{path}:hook")
    results: list[FireResult] = []

    async def fire() -> None:
        results.append(await rig.fire(config, PRE))

    started = Path(f"{path}.started")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(fire)
        await _wait_for_file(started)  # v1 is now running inside the worker
        before = path.stat().st_mtime_ns
        shutil.copy(HOOKS / "editable_v2.py", path)
        # Same size, same second: only the nanosecond mtime differs, and coarse
        # filesystem clocks may not even move it; a real edit is never this fast.
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))
        Path(f"{path}.go").touch()
    assert results[0].system_messages == ["EDITABLE-V1"]
    second = await rig.fire(config, PRE)
    assert second.system_messages == ["EDITABLE-V2"]


async def test_module_reference_is_reloaded_but_not_its_imports(rig: Rig) -> None:
    shutil.copytree(HOOKS / "pyhookspkg", rig.project / "pyhookspkg")
    config = pre_config(rig, "pyhookspkg.checks:check")
    first = await rig.fire(config, PRE)
    assert first.system_messages == ["<PKG-V1>"]
    checks = rig.project / "pyhookspkg" / "checks.py"
    before = checks.stat().st_mtime_ns
    checks.write_text(checks.read_text().replace("PKG-V1", "PKG-V2"))
    os.utime(checks, ns=(before + 1_000_000, before + 1_000_000))
    second = await rig.fire(config, PRE)
    assert second.system_messages == ["<PKG-V2>"]


async def _wait_for_file(path: Path, timeout: float = 30.0) -> None:
    with trio.fail_after(timeout):
        while not path.exists():
            await trio.sleep(0.005)


async def test_syntax_error_after_edit_is_reported_then_fixed(rig: Rig) -> None:
    path = rig.tmp / "editable.py"
    Path(f"{path}.go").touch()  # the editable hooks need not wait here
    shutil.copy(HOOKS / "editable_v2.py", path)
    config = pre_config(rig, f"{path}:hook")
    assert (await rig.fire(config, PRE)).system_messages == ["EDITABLE-V2"]
    path.write_text("def hook(event:\n")
    broken = await rig.fire(config, PRE)
    assert broken.hooks[0].outcome == "non_blocking_error"
    assert "SyntaxError" in (broken.hooks[0].error or "")
    path.write_text('def hook(event):\n    return {"systemMessage": "FIXED"}\n')
    os.utime(path, ns=(path.stat().st_mtime_ns + 2_000_000,) * 2)
    assert (await rig.fire(config, PRE)).system_messages == ["FIXED"]


# --- stop functions (seed 004) -------------------------------------------------


def stop_config(rig: Rig, function: str, toml: bool = False) -> HookConfig:
    name = "python-stop.toml" if toml else "python-stop.json"
    return rig.config(name, CALLABLE=f"{HOOKS / 'stopfns.py'}:{function}")


def transcript(name: str) -> str:
    return str(HANDLER_DATA / "transcripts" / name)


async def test_stop_function_blocks_with_reason(rig: Rig) -> None:
    result = await rig.fire(
        stop_config(rig, "require_tests"),
        "Stop.json",
        transcript_path=transcript("without-tests.jsonl"),
    )
    assert result.decision == "block"
    assert result.reason == "Run the tests before stopping (2 entries read)"


async def test_stop_function_allows_stopping(rig: Rig) -> None:
    result = await rig.fire(
        stop_config(rig, "require_tests", toml=True),
        "Stop.json",
        transcript_path=transcript("with-tests.jsonl"),
    )
    assert result.decision is None
    assert result.hooks[0].outcome == "success"
    assert result.hooks[0].hook.name == "tests-before-stop"


async def test_subagent_stop_reads_the_agent_transcript(rig: Rig) -> None:
    result = await rig.fire(
        stop_config(rig, "require_tests"),
        "SubagentStop.json",
        transcript_path=transcript("without-tests.jsonl"),
        agent_transcript_path=transcript("with-tests.jsonl"),
    )
    assert result.decision is None


async def test_stop_function_plain_false_uses_a_default_reason(rig: Rig) -> None:
    result = await rig.fire(
        stop_config(rig, "plain_false"),
        "Stop.json",
        transcript_path=transcript("with-tests.jsonl"),
    )
    assert result.decision == "block"
    assert result.reason == "a stop function asked to continue"


async def test_stop_function_wrong_return_type_is_an_error(rig: Rig) -> None:
    result = await rig.fire(
        stop_config(rig, "wrong_type"),
        "Stop.json",
        transcript_path=transcript("with-tests.jsonl"),
    )
    assert result.hooks[0].outcome == "non_blocking_error"
    assert result.decision is None


async def test_stop_function_on_another_event_is_refused(rig: Rig) -> None:
    result = await rig.fire(stop_config(rig, "require_tests"), PRE)
    assert result.hooks[0].outcome == "non_blocking_error"
    assert "only runs on Stop/SubagentStop" in (result.hooks[0].error or "")


async def test_missing_transcript_is_an_error_not_an_allow(rig: Rig, tmp_path: Path) -> None:
    result = await rig.fire(
        stop_config(rig, "require_tests"),
        "Stop.json",
        transcript_path=str(tmp_path / "nope.jsonl"),
    )
    assert result.hooks[0].outcome == "non_blocking_error"
    assert "FileNotFoundError" in (result.hooks[0].error or "")


async def test_worker_that_dies_mid_call_is_an_error_and_replaced(rig: Rig) -> None:
    result = await rig.fire(pre_config(rig, f"{BASIC}:exits"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error == "python worker exited before answering"
    after = await rig.fire(pre_config(rig, f"{BASIC}:returns_output"), PRE)
    assert after.system_messages == ["PY-STRUCT PreToolUse"]


async def test_missing_interpreter_is_a_failure_not_a_crash(
    tmp_path: Path, server: ScriptedServer
) -> None:
    settings = DaemonSettings(python_warm_workers=0)
    options = handler_options(settings, python_executable=str(tmp_path / "no-python"))
    async with open_handlers(options, command_runner(settings)) as handlers:
        engine = Engine(
            handlers.table, engine_settings(settings, spill_dir=str(tmp_path / "spill"))
        )
        rig = Rig(engine, handlers, server, tmp_path, tmp_path)
        result = await rig.fire(pre_config(rig, f"{BASIC}:returns_none"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert "cannot start a python worker" in (run.error or "")


async def test_calls_beyond_the_pool_size_wait_for_a_worker(rig: Rig) -> None:
    config = pre_config(rig, f"{BASIC}:worker_pid")
    results: list[FireResult] = []

    async def fire() -> None:
        results.append(await rig.fire(config, PRE))

    async with trio.open_nursery() as nursery:
        for _ in range(6):
            nursery.start_soon(fire)
    assert len(results) == 6
    pids = {r.system_messages[0] for r in results}
    assert 1 <= len(pids) <= rig.handlers.pool.size == 2

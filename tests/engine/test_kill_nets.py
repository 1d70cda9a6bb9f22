"""Each of hookd's kill nets on its own (hookd/handlers/process.py ``kill_tree``).

The nets cover for each other: the group kill, the ``HOOKD_RUN_ID`` scan, the
TERM-then-KILL order and the SIGCONT for stopped processes.  A hook that needs
several of them passes with any one missing, so each test here uses a hook
(tests/data/hooks/killnets.py) that only one net can handle as promised:

- a group member that ignores TERM and carries no marker dies only by the
  group's KILL;
- a ``setsid`` grandchild is outside the group: only the marker scan finds it,
  and it must be sent TERM (its handler leaves a file) before any KILL;
- a stopped hook cannot act on TERM until SIGCONT resumes it: its handler runs
  within the grace instead of the process being KILLed later.

The fourth net, the KILL of marked processes, is the only one that reaches a
``setsid`` grandchild ignoring TERM: test_runtime's ``forker.py`` needs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import trio

from hookd_client.results import FireResult
from support.processes import alive

from .vectors import HOOKS, PY, fire_prepared, prepare

KILLNETS = HOOKS / "killnets.py"


async def _fire(tmp_path: Path, mode: str) -> FireResult:
    out = tmp_path / "out"
    out.mkdir()
    hook = {"type": "command", "command": f"{PY} -I -S {KILLNETS} {mode} {out}", "timeout": 1}
    vector = {
        "input": "PreToolUse-Bash",
        "settings": {"hooks": {"PreToolUse": [{"hooks": [hook]}]}},
    }
    return await fire_prepared(prepare(vector, tmp_path))


def _pid(tmp_path: Path, role: str) -> int:
    return int((tmp_path / "out" / f"{role}.pid").read_text())


async def _gone(pid: int) -> bool:
    """True once ``pid`` has ended.  SIGKILL lands when the process is next scheduled,
    and an orphan's zombie waits for init; a survivor is still here after 10 s."""
    with trio.move_on_after(10):
        while alive(pid):
            await trio.sleep(0.01)
        return True
    return False


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


async def test_a_group_member_without_marker_that_ignores_term_dies_by_the_group_kill(
    tmp_path: Path,
) -> None:
    result = await _fire(tmp_path, "group")
    child = _pid(tmp_path, "child")
    try:
        (run,) = result.hooks
        assert run.timed_out and run.outcome == "cancelled"
        assert (tmp_path / "out" / "hook.ready").exists()
        assert await _gone(child), "a TERM-ignoring group member without a marker survived"
    finally:
        _kill(child)


async def test_a_setsid_grandchild_is_found_by_its_marker_and_gets_term_first(
    tmp_path: Path,
) -> None:
    result = await _fire(tmp_path, "setsid")
    grandchild = _pid(tmp_path, "grandchild")
    try:
        (run,) = result.hooks
        assert run.timed_out
        assert await _gone(grandchild), "the setsid grandchild survived"
        assert (tmp_path / "out" / "grandchild.term").read_text() == "TERM", (
            "the grandchild was killed without being sent TERM first"
        )
    finally:
        _kill(grandchild)


async def test_a_stopped_hook_is_resumed_so_that_it_dies_by_term(tmp_path: Path) -> None:
    result = await _fire(tmp_path, "stopped")
    hook = _pid(tmp_path, "hook")
    try:
        (run,) = result.hooks
        assert run.timed_out
        assert not alive(hook)  # the direct child is always reaped before the run ends
        assert (tmp_path / "out" / "hook.term").read_text() == "TERM", (
            "the stopped hook never ran its TERM handler: it was not resumed"
        )
    finally:
        _kill(hook)

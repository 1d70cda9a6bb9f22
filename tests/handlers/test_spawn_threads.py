"""Hooks that start together start in worker threads (hookd/handlers/spawn.py, ``start_hook``).

Every test holds the worker threads at a gate placed right after the start returns
(the child has ``exec``ed and may already have exited, its parent thread not back
on the loop yet): the window in which the loop keeps running while a child of ours
exists that nobody has registered.  The gate wraps hookd.handlers.spawn's one
starting function (``_popen``), and stops only calls made off the loop thread; every start
but the first of a batch is sent off the loop by taking any two starts as close
together (``_SAME_PASS``), so the batch is deterministic however loaded the box is.

- the subreaper's sweeps, forced while the children wait at the gate, must not
  reap a hook that already exited (a reaped pid turns ``exit 7`` into 0: the
  hook's own wait sees ``ECHILD``);
- a cancellation while the starts are off the loop still kills and reaps every
  process of those runs (the starts still queued in a held call too), and leaves no
  descriptor behind;
- an event's hooks really start off the loop, and another session's event is
  answered while they are held;
- with the choice left to hookd (no forced ``_SAME_PASS``), every hook of a
  three-hook event starts off the loop, the first one too, and a lone hook on it;
- the starts of one pass share the worker-thread calls (eight: four calls of two,
  none waiting for a thread), and one that fails there fails alone;
- a start cancelled while its pass forms is never made when alone, and made and
  killed when another task took the pass;
- a hook's input is in its pipe, to EOF, while its start is still in the thread.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import hookd.handlers.spawn as spawn_module
from hookd.handlers.process import ProcessResult, run_process_capped
from hookd.subreaper import SUBREAPER
from hookd_client.client import Client
from reliability.helpers import event, processes_with
from support.daemon import configure

WAIT = 30.0
"""Failure timeout of every wait for an observable event."""


class Gate:
    """Holds starts made off ``loop_thread`` whose argv mentions ``token``."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.loop_thread = threading.get_ident()
        self.held: list[int] = []
        """Pids whose start returned in a worker thread and waits at the gate."""
        self.on_loop: list[int] = []
        self.open = threading.Event()

    def start_function(self) -> Callable[..., Any]:
        gate = self
        start = spawn_module._popen

        def gated(argv: Sequence[str], *args: Any) -> Any:
            child = start(argv, *args)
            if not any(gate.token in str(a) for a in argv):
                return child
            if threading.get_ident() == gate.loop_thread:
                gate.on_loop.append(child.pid)
                return child
            gate.held.append(child.pid)
            gate.open.wait(WAIT)
            return child

        return gated

    async def until_held(self, count: int) -> list[int]:
        with trio.fail_after(WAIT):
            while len(self.held) < count:
                await trio.sleep(0.01)
        return list(self.held)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate(uuid.uuid4().hex)
    monkeypatch.setattr(spawn_module, "_popen", held.start_function())
    monkeypatch.setattr(spawn_module, "_SAME_PASS", 1e9)
    try:
        yield held
    finally:
        held.open.set()  # never leave a worker thread waiting


@pytest.fixture
def plain_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """The gate, with the choice between loop and thread left as hookd makes it."""
    held = Gate(uuid.uuid4().hex)
    monkeypatch.setattr(spawn_module, "_popen", held.start_function())
    try:
        yield held
    finally:
        held.open.set()


@pytest.fixture
def subreaper() -> Iterator[None]:
    assert SUBREAPER.enable()
    try:
        yield
    finally:
        SUBREAPER.disable()


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


async def _until(predicate: Any) -> None:
    with trio.fail_after(WAIT):
        while not predicate():
            await trio.sleep(0.01)


async def _run(argv: list[str], run_id: str, results: dict[str, ProcessResult]) -> None:
    results[run_id] = await run_process_capped(
        argv,
        stdin=b"{}",
        cwd=None,
        env=dict(os.environ),
        timeout=WAIT,
        output_cap=1 << 16,
        kill_grace=0.2,
        pipe_grace=0.2,
        run_id=run_id,
    )


async def test_sweeps_while_starts_are_off_the_loop_reap_no_hook_that_already_exited(
    gate: Gate, subreaper: None
) -> None:
    results: dict[str, ProcessResult] = {}
    async with trio.open_nursery() as nursery:
        # Another hook running, as in a busy daemon: the sweep has a live run to look at.
        keeper = f"keeper-{gate.token}"
        nursery.start_soon(_run, ["sleep", "60"], keeper, {})
        await _until(lambda: keeper in SUBREAPER.runs)
        burst = [f"burst-{gate.token}-{k}" for k in range(4)]
        for run_id in burst:
            nursery.start_soon(_run, ["sh", "-c", f"exit 7 # {gate.token}"], run_id, results)
        try:
            held = await gate.until_held(4)
            # Every held child has exited: a zombie that nobody has registered yet.
            await _until(lambda: all(_state(pid) == "Z" for pid in held))
            reaped = SUBREAPER.reaped
            SUBREAPER.sweep()
            SUBREAPER.sweep()
            assert SUBREAPER.reaped == reaped, "a sweep reaped a hook still starting"
            assert all(_state(pid) == "Z" for pid in held)
        finally:
            gate.open.set()
        await _until(lambda: len(results) == 4)
        nursery.cancel_scope.cancel()
    assert [results[r].returncode for r in burst] == [7, 7, 7, 7]
    assert SUBREAPER.starts_in_flight == 0
    assert not set(held) & SUBREAPER.own


async def test_a_kill_while_a_start_is_off_the_loop_spares_the_starting_hook(
    gate: Gate, subreaper: None
) -> None:
    """Another run's kill looks for the orphans it left among the daemon's unregistered
    children; a starting hook that already dropped its marker (``exec env -i``) must
    not be taken for one: it still holds the pipes its start announced."""
    results: dict[str, ProcessResult] = {}
    victim = f"victim-{gate.token}"
    starting = f"starting-{gate.token}"
    command = f"sleep 60 # {gate.token}"
    async with trio.open_nursery() as nursery:
        try:
            victim_scope = trio.CancelScope()
            nursery.start_soon(_cancellable, ["sleep", "60"], victim, results, victim_scope)
            await _until(lambda: victim in SUBREAPER.runs)
            nursery.start_soon(_run, ["env", "-i", "sh", "-c", command], starting, results)
            (pid,) = await gate.until_held(1)
            await _until(lambda: _cmdline(pid)[:1] not in ([], ["env"]))  # env -i has run
            assert processes_with(f"HOOKD_RUN_ID={starting}") == []  # no marker left
            victim_scope.cancel()
            await _until(lambda: victim in results)
            assert _state(pid) not in (None, "Z"), "another run's kill took a starting hook"
        finally:
            gate.open.set()
        await _until(lambda: starting in SUBREAPER.runs)
        nursery.cancel_scope.cancel()
    assert _state(pid) is None


async def _cancellable(
    argv: list[str], run_id: str, results: dict[str, ProcessResult], scope: trio.CancelScope
) -> None:
    with scope:
        await _run(argv, run_id, {})
    results[run_id] = ProcessResult(None, b"", b"", False, False, None)


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def test_a_cancellation_during_a_burst_of_starts_leaves_no_process_and_no_descriptor(
    gate: Gate, subreaper: None
) -> None:
    fds_before = _open_fds()
    # Eight starts of one pass: four worker-thread calls of two, the first start of each
    # held with its child running, the second behind it in the same call — carried out
    # after the cancellation, and then killed like the others.
    burst = [f"cancel-{gate.token}-{k}" for k in range(8)]
    results: dict[str, ProcessResult] = {}
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            for run_id in burst:
                argv = ["sh", "-c", f"sleep 60 & sleep 60 # {gate.token}"]
                nursery.start_soon(_run, argv, run_id, results)
            held = await gate.until_held(4)
            await _until(lambda: sum(len(processes_with(f"HOOKD_RUN_ID={r}")) for r in burst) >= 8)
            scope.cancel()
            gate.open.set()
    assert scope.cancelled_caught and results == {}
    left = [pid for r in burst for pid in processes_with(f"HOOKD_RUN_ID={r}")]
    assert left == [], "a process of a cancelled start survived"
    assert all(_state(pid) is None for pid in held), "a cancelled start was not reaped"
    assert SUBREAPER.starts_in_flight == 0
    assert not set(held) & SUBREAPER.own
    assert not any(r in SUBREAPER.runs for r in burst)
    assert _open_fds() <= fds_before, "a cancelled start left a descriptor open"


async def test_an_events_hooks_start_off_the_loop_and_other_sessions_are_served_meanwhile(
    gate: Gate, daemon_factory: Any, tmp_path: Path
) -> None:
    handle = await daemon_factory()
    started = tmp_path / "started"
    started.mkdir()
    hooks = [
        {"type": "command", "command": f"touch {started}/{k}; exit 0 # {gate.token}"}
        for k in range(3)
    ]
    configure(handle, {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]})

    def fire(session: str, name: str) -> Any:
        with Client(handle.socket, timeout=120) as client:
            return client.fire(name.split("-")[0], event(name, session_id=session))

    async with trio.open_nursery() as nursery:
        replies: list[Any] = []

        async def burst() -> None:
            replies.append(await trio.to_thread.run_sync(fire, "burst-session", "PreToolUse-Bash"))

        nursery.start_soon(burst)
        await gate.until_held(3)
        # Each hook has started (it records so) while its thread is still held.
        await _until(lambda: len(os.listdir(started)) == 3)
        # The loop is free: another session's event is answered meanwhile.
        other = await trio.to_thread.run_sync(fire, "other-session", "Stop")
        assert other.result is not None and not replies
        gate.open.set()
    (reply,) = replies
    assert [run.outcome for run in reply.result.hooks] == ["success"] * 3
    assert gate.on_loop == []


async def test_every_hook_of_an_event_starts_off_the_loop_and_a_lone_hook_on_it(
    plain_gate: Gate, daemon_factory: Any, tmp_path: Path
) -> None:
    """The hooks of one event all arrive before any of them chooses: not even the first
    waits for its child's ``exec`` on the loop, holding the others back; a lone hook
    stays on the loop (no trip to a thread)."""
    gate = plain_gate
    handle = await daemon_factory()
    three = [{"type": "command", "command": f"exit 0 # {gate.token} {k}"} for k in range(3)]
    one = [{"type": "command", "command": f"exit 0 # {gate.token} lone"}]
    configure(
        handle,
        {
            "PreToolUse": [{"matcher": "Bash", "hooks": three}],
            "Stop": [{"hooks": one}],
        },
    )

    def fire(name: str) -> Any:
        with Client(handle.socket, timeout=120) as client:
            return client.fire(name.split("-")[0], event(name, session_id="s"))

    lone = await trio.to_thread.run_sync(fire, "Stop")
    assert [run.outcome for run in lone.result.hooks] == ["success"]
    assert len(gate.on_loop) == 1 and gate.held == []
    async with trio.open_nursery() as nursery:
        replies: list[Any] = []

        async def burst() -> None:
            replies.append(await trio.to_thread.run_sync(fire, "PreToolUse-Bash"))

        nursery.start_soon(burst)
        await gate.until_held(3)
        gate.open.set()
    (reply,) = replies
    assert [run.outcome for run in reply.result.hooks] == ["success"] * 3
    assert len(gate.on_loop) == 1, "a hook of the three-hook event started on the loop"


async def test_the_starts_of_one_pass_share_the_worker_thread_calls(
    gate: Gate, subreaper: None
) -> None:
    """Eight starts asked for in one scheduler pass go out as four worker-thread calls of
    two: while the first start of each call is held, no start waits for a thread (each
    trip to a thread and back costs the daemon more CPU than the start itself); every
    child is still its own hook's, exit status and all."""
    burst = [f"share-{gate.token}-{k}" for k in range(8)]
    results: dict[str, ProcessResult] = {}
    async with trio.open_nursery() as nursery:
        for k, run_id in enumerate(burst):
            nursery.start_soon(_run, ["sh", "-c", f"exit {k} # {gate.token}"], run_id, results)
        try:
            await gate.until_held(4)
            threads = spawn_module._STARTS.get().threads.statistics()
            assert (threads.borrowed_tokens, threads.tasks_waiting) == (4, 0)
        finally:
            gate.open.set()
    assert [results[r].returncode for r in burst] == list(range(8))
    assert SUBREAPER.starts_in_flight == 0


async def test_passes_that_find_the_threads_busy_never_wait_for_each_other(
    gate: Gate, subreaper: None
) -> None:
    """A pass holds its worker threads until its last call is back, so it must never wait
    for more while holding some: three passes — two starts held in the threads, then four,
    then four more — all finish once the gate opens (a pass that took the two free threads
    and waited for a third, beside one that waited for its first, would wait for each
    other for ever)."""
    results: dict[str, ProcessResult] = {}
    passes = [[f"busy-{gate.token}-{p}-{k}" for k in range(n)] for p, n in enumerate((2, 4, 4))]
    everything = [run_id for runs in passes for run_id in runs]
    async with trio.open_nursery() as nursery:
        held = 0
        for runs in passes:
            for run_id in runs:
                nursery.start_soon(_run, ["sh", "-c", f"exit 0 # {gate.token}"], run_id, results)
            await trio.testing.wait_all_tasks_blocked()
            if runs is passes[0]:
                held = len(await gate.until_held(2))
        assert held == 2
        gate.open.set()
        with trio.move_on_after(WAIT):
            while len(results) < len(everything):
                await trio.sleep(0.01)
        stuck = len(results) < len(everything)
        if stuck:  # let the stuck passes finish, so that the test fails rather than hangs
            spawn_module._STARTS.get().threads.total_tokens = 100
    assert not stuck, "passes waited for each other's worker threads"
    assert [results[r].returncode for r in everything] == [0] * len(everything)
    assert SUBREAPER.starts_in_flight == 0


async def test_a_start_that_fails_in_a_shared_call_fails_alone(gate: Gate, subreaper: None) -> None:
    """A program that cannot be started fails its own hook with the error a lone start
    gives; the starts made in the same worker-thread calls run as usual, and no
    descriptor is left behind."""
    fds_before = _open_fds()
    results: dict[str, ProcessResult] = {}

    async def run(argv: list[str], run_id: str, cwd: str | None = None) -> None:
        results[run_id] = await run_process_capped(
            argv, stdin=b"{}", cwd=cwd, env=dict(os.environ), timeout=WAIT,
            output_cap=1 << 16, kill_grace=0.2, pipe_grace=0.2, run_id=run_id,
        )  # fmt: skip

    gate.open.set()  # nothing to hold: only the sharing matters here
    async with trio.open_nursery() as nursery:
        for k in range(7):
            nursery.start_soon(run, ["sh", "-c", f"echo {k} # {gate.token}"], f"ok{k}")
        nursery.start_soon(run, [f"/nonexistent/{gate.token}"], "missing")
    assert [results[f"ok{k}"].stdout for k in range(7)] == [f"{k}\n".encode() for k in range(7)]
    missing = results["missing"]
    assert missing.pid is None and isinstance(missing.spawn_exc, FileNotFoundError)
    assert missing.spawn_exc.filename == f"/nonexistent/{gate.token}"
    assert SUBREAPER.starts_in_flight == 0
    assert _open_fds() <= fds_before


async def test_a_start_cancelled_while_its_pass_forms_is_never_made_or_is_killed(
    subreaper: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A start whose caller is cancelled before its pass is taken: alone in its pass, it is
    never made; with another start in the pass, that other task takes both (trio delivers
    the cancellation one pass later), so it is made — and killed at its caller's next
    checkpoint.  Either way no process of it survives, the other hook runs as usual, no
    start stays announced and no descriptor is left."""
    made: list[str] = []
    real = spawn_module._popen

    def recording(argv: Sequence[str], *args: Any) -> Any:
        made.append(" ".join(argv))
        return real(argv, *args)

    monkeypatch.setattr(spawn_module, "_popen", recording)
    token = uuid.uuid4().hex
    fds_before = _open_fds()
    for k, with_other in enumerate([False, True] * 3):
        victim, other = f"victim-{token}-{k}", f"other-{token}-{k}"
        results: dict[str, ProcessResult] = {}
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                argv = ["sh", "-c", f"sleep 60 # {victim}"]
                nursery.start_soon(_run, argv, victim, {})
                if with_other:
                    other_argv = ["sh", "-c", f"exit 3 # {other}"]
                    nursery.start_soon(_shielded_run, other_argv, other, results)
                scope.cancel()  # before either task runs: both ask for their start in one pass
        assert scope.cancelled_caught
        assert any(victim in argv for argv in made) is with_other
        assert processes_with(f"HOOKD_RUN_ID={victim}") == []
        assert SUBREAPER.starts_in_flight == 0 and victim not in SUBREAPER.runs
        if with_other:
            assert results[other].returncode == 3
    assert _open_fds() <= fds_before


async def _shielded_run(argv: list[str], run_id: str, results: dict[str, ProcessResult]) -> None:
    with trio.CancelScope(shield=True):
        await _run(argv, run_id, results)


async def test_a_hooks_input_is_in_its_pipe_while_its_start_is_still_off_the_loop(
    gate: Gate, subreaper: None, tmp_path: Path
) -> None:
    """The input is written into the hook's stdin while the worker thread makes the start,
    and our end closed: the hook reads all of it, to EOF, while its start is still held in
    the thread — it does not wait for the other starts of its pass, nor for the loop."""
    got = tmp_path / "got"
    argv = ["sh", "-c", f'cat > "$0.part" && mv "$0.part" "$0" # {gate.token}', str(got)]
    results: dict[str, ProcessResult] = {}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_run, argv, "prefilled", results)
        try:
            await gate.until_held(1)
            await _until(got.exists)
            assert not results, "the start came back before the input was read"
        finally:
            gate.open.set()
    assert got.read_bytes() == b"{}"
    assert results["prefilled"].returncode == 0

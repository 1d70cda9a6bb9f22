"""Warm Python: an unchanged ``python3 hook.py`` run warm is byte-identical to a cold run.

Every probe below is a real script run through the real engine twice — once with warm
Python off (the interpreter started for the event, as an agent would start it) and once
from a warm spare (``launch == "warm"``) — and stdout, stderr, exit code and outcome must
be the same bytes. The probes print what the issue lists a hook must not be able to tell
apart: argv, ``sys.orig_argv``, ``sys.path[0]``, ``__file__`` and the rest of a fresh
``__main__``, ``sys.flags`` under ``-u``/``-I``/``-W``, signal dispositions and mask, the
stdio objects, environment and cwd, every way to exit, ``atexit``, non-daemon threads,
the warnings format, a sibling module, and a sibling named like a preloaded module.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from hookd.config.loader import build_config, load_source
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
from hookd.daemon.options import command_runner, engine_settings
from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import Engine
from hookd.handlers import warm_python
from hookd.handlers.registry import handler_table
from hookd.handlers.warm_python import Spare, plan
from hookd_client.events import decode_event
from hookd_client.results import HookRun
from support.daemon import configure

PYTHON = os.path.realpath(sys.executable)
"""A real CPython binary (the suite's own interpreter, behind the venv's link)."""

PROBE_COMMON = """\
import json, os, signal, sys
def show(label, value):
    print(label, json.dumps(value, sort_keys=True, default=repr))
"""

PROBES: dict[str, str] = {
    "identity": PROBE_COMMON
    + """\
import __main__
show("argv", sys.argv)
show("orig_argv", sys.orig_argv)
show("path0", sys.path[0])
show("path", sys.path)
show("file", __file__)
show("main_keys", list(globals())[:9])
show("main_is_module", __main__.__dict__ is globals())
show("spec_cached", [__spec__, __cached__, __name__, __package__, __doc__])
show("loader", [type(__loader__).__name__, __loader__.name, __loader__.path])
show("annotations", __annotations__)
show("executable", [sys.executable, sys.prefix, sys.base_prefix])
show("flags", list(sys.flags))
show("cwd", os.getcwd())
skip = ("HOOKD_RUN_ID", "HOOK_INPUT_FILE")
show("env", sorted((k, v) for k, v in os.environ.items() if k not in skip))
show("modules_json", "json" in sys.modules)
""",
    # Not through a launcher: bash (a pyenv shim) and uv pass the environment on in an
    # order of their own, which a warm start does not reproduce (docs/configuration.md).
    "environ_order": PROBE_COMMON
    + """\
import subprocess
show("env_order", list(os.environ))
inherited = subprocess.run(["env"], capture_output=True, text=True).stdout.splitlines()
show("child_env_order", [line.partition("=")[0] for line in inherited])  # the C environ
""",
    "signals": PROBE_COMMON
    + """\
show("handlers", {s.name: repr(signal.getsignal(s)) for s in signal.Signals
                  if s not in (signal.SIGKILL, signal.SIGSTOP)})
show("mask", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
""",
    "stdio": PROBE_COMMON
    + """\
for name in ("stdin", "stdout", "stderr"):
    s = getattr(sys, name)
    show(name, [s.encoding, s.errors, s.line_buffering, s.write_through, s.isatty(),
                type(s.buffer).__name__, s.name, s is getattr(sys, "__" + name + "__")])
show("stdin_data", json.load(sys.stdin)["hook_event_name"])
""",
    "exit3": "print('out'); import sys; sys.exit(3)\n",
    "exit_message": "print('out'); import sys; sys.exit('a message')\n",
    "exit_none": "raise SystemExit(None)\n",
    "exit_wraps": "import sys; sys.exit(256 + 7)\n",
    "exit_bool": "import sys; sys.exit(True)\n",
    "uncaught": """\
def inner():
    try:
        {}["missing"]
    except KeyError as exc:
        raise ValueError("wrapped") from exc
def outer():
    inner()
print("before")
outer()
""",
    "interrupt": "print('before', flush=True)\nraise KeyboardInterrupt\n",
    "os_exit": "import os\nprint('lost in the buffer')\nos._exit(5)\n",
    "atexit_thread_del": """\
import atexit, threading, time
class Loud:
    def __del__(self):
        print("del ran")
keep = Loud()
atexit.register(lambda: print("atexit ran"))
def late():
    time.sleep(0.05)
    print("thread ran")
threading.Thread(target=late).start()
print("main ended")
""",
    "warnings": (
        "import warnings\nwarnings.warn('careful')\nwarnings.warn('gone', DeprecationWarning)\n"
    ),
    "sibling": "import helper_mod\nprint(helper_mod.VALUE)\n",
    "shadow": "import json\nprint(json.MARK)\n",
    "syntax_error": "def broken(:\n    pass\n",
    "compile_warning": "assert (1, 'always true')\nprint('ran')\n",
    "policy": """\
import json, re, sys
data = json.load(sys.stdin)
if re.search(r"rm -rf", data["tool_input"]["command"]):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "deny", "permissionDecisionReason": "no rm -rf"}}))
""",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    hooks = root / "hooks"
    hooks.mkdir(parents=True)
    for name, text in PROBES.items():
        (hooks / f"{name}.py").write_text(text)
    (hooks / "helper_mod.py").write_text("VALUE = 'sibling imported'\n")
    shadow = root / "shadowing"
    shadow.mkdir()
    (shadow / "shadow.py").write_text(PROBES["shadow"])
    (shadow / "json.py").write_text("MARK = 'the local json, not the standard one'\n")
    return root


class Pair:
    """A warm engine and a cold one over the same hooks."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.warm_runner = command_runner(DaemonSettings(kill_grace=0.2), warm=True)
        cold = command_runner(DaemonSettings(kill_grace=0.2, warm_python=False), warm=True)
        assert self.warm_runner.warm is not None and cold.warm is None
        settings = engine_settings(DaemonSettings(), state=tmp / "state")
        self.warm = Engine(handler_table(self.warm_runner), settings)
        self.cold = Engine(handler_table(cold), settings)

    def close(self) -> None:
        assert self.warm_runner.warm is not None
        self.warm_runner.warm.close()

    async def fire(
        self, engine: Engine, command: str, cwd: Path, env: dict[str, str], timeout: int = 30
    ) -> HookRun:
        [run] = await self.fire_all(engine, [command], cwd, env, timeout)
        return run

    async def fire_all(
        self,
        engine: Engine,
        commands: list[str],
        cwd: Path,
        env: dict[str, str],
        timeout: int = 30,
    ) -> list[HookRun]:
        """One event whose hooks are these commands (started together, as every event's)."""
        settings = self.tmp / "hooks.json"
        hooks = [{"type": "command", "command": c, "timeout": timeout} for c in commands]
        settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": hooks}]}}))
        config = build_config([load_source(SourceSpec(settings, Scope.USER))])
        event = decode_event(
            {
                "session_id": "warm-probe",
                "transcript_path": "/dev/null",
                "cwd": str(cwd),
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "rm -rf /tmp/nothing"},
            }
        )
        result = await engine.fire(config, event, env=env)
        return list(result.hooks)

    async def warm_run(self, command: str, cwd: Path, env: dict[str, str]) -> HookRun:
        """Fire until a spare was ready (the first run starts it): the warm run."""
        with trio.fail_after(30):
            while True:
                run = await self.fire(self.warm, command, cwd, env)
                if run.launch == "warm":
                    return run
                assert run.launch is not None and run.launch.startswith("cold: ")
                await trio.sleep(0.01)  # let the spare's start-up run


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[Pair]:
    """The engines, with the warm pool's own task running as in the daemon
    (``refill_when_idle``: replacements started when idle, reported runs reaped)."""
    engines = Pair(tmp_path)
    pool = engines.warm_runner.warm
    assert pool is not None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.refill_when_idle)
            await trio.testing.wait_all_tasks_blocked()  # it runs: spares get exit reports
            yield engines
            nursery.cancel_scope.cancel()
    finally:
        engines.close()


@pytest.fixture
async def bare_pair(tmp_path: Path) -> AsyncIterator[Pair]:
    """The engines without the pool's task (a test that runs it itself, or not at all)."""
    engines = Pair(tmp_path)
    try:
        yield engines
    finally:
        engines.close()


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": f"{os.path.dirname(PYTHON)}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "AGENT_VALUE": "from the agent",
    }


def _comparable(run: HookRun) -> tuple[Any, ...]:
    return run.outcome, run.exit_code, run.stdout, run.stderr, run.output, run.block_message


async def _same(pair: Pair, command: str, cwd: Path, env: dict[str, str]) -> HookRun:
    cold = await pair.fire(pair.cold, command, cwd, env)
    assert cold.launch == "cold: warm Python is off (warm_python = false)"
    warm = await pair.warm_run(command, cwd, env)
    if _comparable(warm) != _comparable(cold):
        import difflib

        diff = difflib.unified_diff(
            (cold.stdout + cold.stderr).splitlines(), (warm.stdout + warm.stderr).splitlines()
        )
        print("\n".join(diff))
    assert _comparable(warm) == _comparable(cold)
    return warm


@pytest.mark.parametrize("probe", sorted(set(PROBES) - {"shadow"}))
async def test_a_warm_run_is_byte_identical_to_a_cold_one(
    pair: Pair, project: Path, tmp_path: Path, probe: str
) -> None:
    await _same(pair, f"python3 hooks/{probe}.py an-argument", project, _env(tmp_path))


@pytest.mark.parametrize(
    "flags", ["-u", "-I", "-E -s", "-B -O", "-W error::UserWarning", "-Wignore", "-S", "-P"]
)
@pytest.mark.parametrize("probe", ["identity", "stdio", "warnings", "sibling"])
async def test_interpreter_flags_are_the_cold_runs(
    pair: Pair, project: Path, tmp_path: Path, flags: str, probe: str
) -> None:
    await _same(pair, f"{PYTHON} {flags} hooks/{probe}.py", project, _env(tmp_path))


async def test_quoted_and_expanded_words_run_warm(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """Quoted words, ``~`` and plain ``$NAME`` values need no shell (direct_exec.py): the
    hook still runs warm, with the argv the shell would have given it."""
    env = {**_env(tmp_path), "HOOKS": "hooks"}
    command = """python3 $HOOKS/'identity.py' 'a b' '' "$AGENT_VALUE"x ~/y"""
    run = await _same(pair, command, project, env)
    argv = ["hooks/identity.py", "a b", "", "from the agentx", f"{tmp_path}/y"]
    assert f"argv {json.dumps(argv)}\n" in run.stdout


async def test_a_sibling_named_like_a_preloaded_module_is_imported(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    run = await _same(pair, "python3 shadowing/shadow.py", project, _env(tmp_path))
    assert run.stdout == "the local json, not the standard one\n"


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    "shebang",
    ["#!/usr/bin/env python3", f"#!{PYTHON}", f"#!{PYTHON} -u", "#!/usr/bin/env -S python3 -u"],
)
async def test_a_script_with_a_python_shebang_runs_warm(
    pair: Pair, project: Path, tmp_path: Path, shebang: str
) -> None:
    _executable(project / "hooks" / "shebang.py", shebang + "\n" + PROBES["identity"])
    await _same(pair, "./hooks/shebang.py x", project, _env(tmp_path))
    await _same(pair, f"{project}/hooks/shebang.py y", tmp_path, _env(tmp_path))


async def test_a_virtual_environments_interpreter_is_its_own(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    proc = await trio.run_process([PYTHON, "-m", "venv", "--without-pip", str(venv)])
    assert proc.returncode == 0
    run = await _same(pair, f"{venv}/bin/python hooks/identity.py", project, _env(tmp_path))
    assert f'"{venv}"' in run.stdout  # sys.prefix is the venv's


async def test_the_first_run_is_cold_and_says_why(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    run = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, _env(tmp_path))
    assert run.launch == "cold: first run of this interpreter here: its warm spare is starting"
    assert run.exit_code == 3


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("python3 hooks/exit3.py | cat", "cold: the command needs a shell"),
        ("python3 -c 'print(1)'", "cold: interpreter option '-c' is not one a warm start"),
        ("python3 -c pass", "cold: interpreter option '-c' is not one a warm start reproduces"),
        ("python3 -m json.tool", "cold: interpreter option '-m' is not one a warm start"),
        ("python3 -X dev hooks/exit3.py", "cold: interpreter option '-X'"),
        ("python3 -uB hooks/exit3.py", "cold: interpreter option '-uB'"),
        ("cat", "cold: not a Python command"),
        ("python3 hooks/missing.py", "cold: script hooks/missing.py not found"),
        ("python3 hooks", "cold: script hooks is not a regular file"),
    ],
)
async def test_what_stays_cold_says_why(
    pair: Pair, project: Path, tmp_path: Path, command: str, why: str
) -> None:
    run = await pair.fire(pair.warm, command, project, _env(tmp_path))
    assert run.launch is not None and run.launch.startswith(why)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("#!/usr/bin/env -S FOO=1 python3", "not a plain `env python3` line"),
        ("#!/usr/bin/env -i python3", "not a plain `env python3` line"),
        ("#!/usr/bin/env -S python3 '-u'", "not a plain `env python3` line"),
        ("#!/usr/bin/env -S python3 -u -B", "not a command a warm start reproduces"),
        ("#!/usr/bin/env -S python3 -X dev", "not a command a warm start reproduces"),
        ("#!/usr/bin/env -S python3 -d", "argument '-d' is not one a warm start reproduces"),
        ("#!/usr/bin/env -S node", "not a CPython interpreter"),
        ("#!/usr/bin/env -S uv run --script --quiet", "not a command a warm start reproduces"),
    ],
)
def test_an_env_line_warm_starts_cannot_reproduce_stays_cold(
    tmp_path: Path, line: str, why: str
) -> None:
    script = _executable(tmp_path / "hook.py", line + "\nprint(1)\n")
    target = plan([str(script)], _env(tmp_path), str(tmp_path))
    assert isinstance(target, str) and why in target


def test_a_launcher_script_is_not_an_interpreter(tmp_path: Path) -> None:
    shim = _executable(tmp_path / "python3", '#!/bin/sh\nexec /usr/bin/python3 "$@"\n')
    (tmp_path / "x.py").write_text("pass\n")
    why = plan(["python3", "x.py"], {"PATH": str(tmp_path)}, str(tmp_path))
    assert isinstance(why, str) and "launcher script" in why
    assert shim.exists()


@pytest.mark.parametrize("how", ["rewritten", "replaced"])
def test_a_program_that_becomes_a_python_script_is_planned_anew(tmp_path: Path, how: str) -> None:
    """A program found to be no Python script is remembered (its PATH lookup is skipped on
    later hooks), but only while it is the same file: rewritten in place or replaced by
    another file, it is planned again at once."""
    interpreter = os.path.realpath(sys.executable)
    env = {"PATH": str(tmp_path)}
    hook = _executable(tmp_path / "guard", "#!/bin/sh\nexit 0\n")
    assert (
        plan(["guard"], env, str(tmp_path)) == "#!/bin/sh: not a CPython interpreter hookd can find"
    )
    assert (
        plan(["guard"], env, str(tmp_path)) == "#!/bin/sh: not a CPython interpreter hookd can find"
    )
    python_hook = f"#!{interpreter}\nimport sys\n"
    if how == "rewritten":
        hook.write_text(python_hook)
    else:
        _executable(tmp_path / "guard.new", python_hook).rename(hook)
    target = plan(["guard"], env, str(tmp_path))
    assert isinstance(target, warm_python.WarmTarget), target
    assert target.script == str(hook)


async def test_a_warm_runs_timeout_kills_its_whole_tree(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    _executable(
        project / "hooks" / "tree.py",
        f"""\
import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "300"], start_new_session=True)
with open({str(pids)!r}, "a") as fh:
    fh.write(f"{{os.getpid()}} {{child.pid}}\\n")
print("started", flush=True)
time.sleep(300)
""",
    )
    env = _env(tmp_path)
    with trio.fail_after(60):
        while True:
            run = await pair.fire(pair.warm, "python3 hooks/tree.py", project, env, timeout=1)
            assert run.timed_out
            if run.launch == "warm":
                break
    for line in pids.read_text().splitlines():
        for pid in map(int, line.split()):
            assert not _alive(pid), f"{pid} outlived its run"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_nothing_of_one_warm_run_reaches_the_next(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    _executable(
        project / "hooks" / "stateful.py",
        "import json\nprint(getattr(json, 'SEEN', 'fresh'))\njson.SEEN = 'polluted'\n",
    )
    env = _env(tmp_path)
    first = await pair.warm_run("python3 hooks/stateful.py", project, env)
    second = await pair.warm_run("python3 hooks/stateful.py", project, env)
    assert first.stdout == second.stdout == "fresh\n"


async def test_a_spare_that_died_while_idle_is_replaced(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path)
    await pair.warm_run("python3 hooks/exit3.py", project, env)  # leaves a new spare behind
    await _spare_ready(pair)
    # Every spare of the pool: on a busy machine the first run may have found its spare
    # still starting, and the interpreter then keeps a second one.
    pool = pair.warm_runner.warm
    assert pool is not None
    spares = [*pool.spares.values(), *pool.seconds.values()]
    spares += [spare for crowd in pool.crowd.values() for spare in crowd]
    for spare in spares:
        os.kill(spare.process.pid, 9)
    with trio.fail_after(30):
        while any(spare.state() != "gone" for spare in spares):
            await trio.sleep(0.01)
    run = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
    assert run.launch == "cold: its warm spare had exited: a new one is starting"
    assert run.exit_code == 3
    assert (await pair.warm_run("python3 hooks/exit3.py", project, env)).exit_code == 3


async def test_a_script_edited_between_runs_is_the_new_script(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """A spare compiles the script it expects ahead; the file is read again at run time,
    as a cold run reads it, and an edit — same size, same modification time — wins."""
    script = project / "hooks" / "edited.py"
    script.write_text("print('first')\n")
    env = _env(tmp_path)
    assert (await pair.warm_run("python3 hooks/edited.py", project, env)).stdout == "first\n"
    await _spare_ready(pair)  # it has compiled the script as it was
    before = script.stat()
    script.write_text("print('other')\n")
    os.utime(script, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (await pair.warm_run("python3 hooks/edited.py", project, env)).stdout == "other\n"
    script.write_text("print('a third, longer one')\n")
    assert (await _same(pair, "python3 hooks/edited.py", project, env)).stdout == (
        "a third, longer one\n"
    )


async def _spare_ready(pair: Pair) -> Spare:
    """The one spare of ``pair``'s warm engine, once it waits for a run."""
    pool = pair.warm_runner.warm
    assert pool is not None
    with trio.fail_after(30):
        while not pool.spares:  # a replacement starts once the daemon is idle
            await trio.sleep(0.01)
        [spare] = pool.spares.values()
        while spare.state() == "starting":
            await trio.sleep(0.01)
    assert spare.state() == "ready"
    return spare


@pytest.mark.parametrize("daemon_task", [False, True], ids=["inline", "refill_when_idle"])
async def test_a_spares_replacement_starts_after_the_run_not_during_it(
    bare_pair: Pair, project: Path, tmp_path: Path, daemon_task: bool
) -> None:
    """A new interpreter's start-up would compete with the warm run for the CPU: the
    replacement starts once the run has ended (in the daemon, once it is idle)."""
    pair = bare_pair
    go, started = tmp_path / "go", tmp_path / "started"
    (project / "hooks" / "gated.py").write_text(
        "import os, pathlib, time\n"
        f"pathlib.Path({str(started)!r}).write_text(str(os.getpid()))\n"
        f"while not os.path.exists({str(go)!r}):\n"
        "    time.sleep(0.005)\n"
        "print('through')\n"
    )
    pool = pair.warm_runner.warm
    assert pool is not None
    env = _env(tmp_path)
    go.touch()
    await pair.warm_run("python3 hooks/gated.py", project, env)
    spare = await _spare_ready(pair)
    go.unlink()
    started.unlink()
    runs: list[HookRun] = []

    async def fire() -> None:
        runs.append(await pair.fire(pair.warm, "python3 hooks/gated.py", project, env))

    async with trio.open_nursery() as nursery:
        if daemon_task:
            nursery.start_soon(pool.refill_when_idle)
        nursery.start_soon(fire)
        with trio.fail_after(30):
            while not started.exists():
                await trio.sleep(0.01)
        assert int(started.read_text()) == spare.process.pid  # it is the warm run
        assert pool.spares == {}, "a replacement started while the warm run ran"
        go.touch()
        with trio.fail_after(30):
            while not runs or not pool.spares:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert runs[0].launch == "warm" and runs[0].stdout == "through\n"


GATED = """\
import os, sys, time
open(os.path.join(os.environ["STARTED"], "started-" + sys.argv[1]), "w").close()
while not os.path.exists(os.environ["GATE"]):
    time.sleep(0.005)
"""


async def _gated_event(pair: Pair, commands: list[str], cwd: Path, tmp: Path) -> list[HookRun]:
    """One event whose hooks (``hooks/gated.py <n>``) all have started before any ends."""
    gate, started = tmp / "gate", tmp / "started"
    gate.unlink(missing_ok=True)
    shutil.rmtree(started, ignore_errors=True)
    started.mkdir()
    env = {**_env(tmp), "STARTED": str(started), "GATE": str(gate)}
    runs: list[HookRun] = []

    async def fire() -> None:
        runs.extend(await pair.fire_all(pair.warm, commands, cwd, env))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fire)
        with trio.fail_after(30):
            while len(os.listdir(started)) < len(commands):
                await trio.sleep(0.01)
        gate.touch()
    assert all(run.exit_code == 0 for run in runs), runs
    return runs


async def _all_spares_ready(pool: warm_python.WarmPool) -> None:
    """Every replacement started (the pool's task starts them once the test is idle) and
    every spare past its start."""

    def spares() -> list[Spare]:
        crowds = [spare for crowd in pool.crowd.values() for spare in crowd]
        return [*pool.spares.values(), *pool.seconds.values(), *crowds]

    with trio.fail_after(30):
        while pool.pending or any(spare.state() == "starting" for spare in spares()):
            await trio.sleep(0.01)


async def test_a_hook_whose_interpreters_spares_all_run_its_other_hooks_says_so(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """Three hooks of one interpreter on one event, all running at once: the spares serve
    what they can; a hook that finds none is told that they are busy, not that it is its
    interpreter's first run here (the bench's Codex/Gemini rows saw that on every event)."""
    (project / "hooks" / "gated.py").write_text(GATED)
    pool = pair.warm_runner.warm
    assert pool is not None
    await _gated_event(pair, ["python3 hooks/gated.py 1"], project, tmp_path)
    await _all_spares_ready(pool)
    commands = [f"python3 hooks/gated.py {i}" for i in (1, 2, 3)]
    launches = [run.launch for run in await _gated_event(pair, commands, project, tmp_path)]
    assert "warm" in launches
    assert "cold: its warm spares are running its other hooks: another is starting" in launches
    assert not any("first run" in str(launch) for launch in launches), launches


async def test_an_interpreter_with_more_hooks_on_one_event_keeps_a_spare_for_each(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """Its N hooks of one event start together and each wants a spare: once an event has
    shown that, it keeps N (within ``warm_python_spares``), and the next event runs all N
    warm — not two warm and the rest cold beside a spare starting."""
    (project / "hooks" / "gated.py").write_text(GATED)
    pool = pair.warm_runner.warm
    assert pool is not None
    commands = [f"python3 hooks/gated.py {i}" for i in (1, 2, 3, 4)]
    for _ in range(6):  # the first events start and size its spares
        runs = await _gated_event(pair, commands, project, tmp_path)
        await _all_spares_ready(pool)
        if all(run.launch == "warm" for run in runs):
            break
    assert [run.launch for run in runs] == ["warm"] * 4
    assert len({run.pid for run in runs}) == 4
    [key] = pool.crowd
    assert len(pool.crowd[key]) == 2 and key in pool.spares and key in pool.seconds
    # Unused, they retire with the rest of its spares.
    assert pool.retire_idle(now=time.monotonic() + pool.idle + 1) == 1
    assert pool.crowd == {} and pool.width == {} and pool.spares == {} and pool.seconds == {}


async def test_a_hook_that_comes_before_its_spares_replacement_started_says_so(
    pair: Pair, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon starts a used spare's replacement once it is idle; an event that comes
    before that finds no spare, and is told so, not that it is its interpreter's first run."""
    monkeypatch.setattr(warm_python, "_IDLE_WAIT", 60.0)  # idle only when the spinner stops
    pool = pair.warm_runner.warm
    assert pool is not None
    env = _env(tmp_path)
    await pair.warm_run("python3 hooks/exit3.py", project, env)
    await _spare_ready(pair)
    launches: list[str | None] = []

    async def busy() -> None:
        while True:  # never blocked: the daemon is never idle, replacements wait
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pool.refill_when_idle)
        nursery.start_soon(busy)
        with trio.fail_after(30):
            while not launches or launches[-1] == "warm":  # until the spares are used up
                run = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
                launches.append(run.launch)
        assert pool.pending
        nursery.cancel_scope.cancel()
    assert launches[-1] == (
        "cold: its warm spare's replacement had not started yet: it is starting now"
    ), launches


async def test_the_spares_kept_for_an_interpreters_hooks_stay_within_the_bound(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """``warm_python_spares`` bounds them all, however many hooks one event has."""
    (project / "hooks" / "gated.py").write_text(GATED)
    pool = pair.warm_runner.warm
    assert pool is not None
    pool.limit = 3
    commands = [f"python3 hooks/gated.py {i}" for i in (1, 2, 3, 4, 5)]
    for _ in range(4):
        runs = await _gated_event(pair, commands, project, tmp_path)
        await _all_spares_ready(pool)
        crowds = sum(len(crowd) for crowd in pool.crowd.values())
        assert len(pool.spares) + len(pool.seconds) + crowds <= 3
    assert sum(run.launch == "warm" for run in runs) >= 2


SLOW_START = """\
import os, sys, time
if "-c" in sys.orig_argv:  # a spare (the cold run starts as `python3 script`)
    while not os.path.exists(os.path.join(os.path.dirname(__file__), "gate")):
        time.sleep(0.005)
"""


async def test_an_event_whose_spare_is_still_starting_waits_for_it(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """The spare is the interpreter a cold run would start, with a head start: the event
    waits for it to be ready (once, up to a bound) instead of starting a second one."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START)
    gate = site / "gate"  # (the spare's environment has only what shapes a start-up)
    env = {**_env(tmp_path), "PYTHONPATH": str(site)}
    first = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
    assert first.launch == "cold: first run of this interpreter here: its warm spare is starting"
    pool = pair.warm_runner.warm
    assert pool is not None
    [spare] = pool.spares.values()
    runs: list[HookRun] = []

    async def fire() -> None:
        runs.append(await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fire)
        with trio.fail_after(30):
            while not spare.waiting:
                await trio.sleep(0.01)
        gate.touch()
    assert runs[0].launch == "warm" and runs[0].exit_code == 3
    assert runs[0].pid == spare.process.pid
    # Its events come faster than a spare starts: it keeps a second one from now on.
    [key] = pool.hurried
    with trio.fail_after(30):
        while key not in pool.spares or key not in pool.seconds:  # started once idle
            await trio.sleep(0.01)
    second = pool.seconds[key]
    with trio.fail_after(30):
        while second.state() == "starting":
            await trio.sleep(0.01)
    first_spare = pool.spares[key]
    first_spare.process.kill_now()  # the first is gone: the second serves
    with trio.fail_after(30):
        while first_spare.state() != "gone":
            await trio.sleep(0.01)
    run = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
    assert run.launch == "warm" and run.pid == second.process.pid


async def test_a_spare_that_does_not_start_in_time_leaves_the_event_cold(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START)
    env = {**_env(tmp_path), "PYTHONPATH": str(site)}  # and no gate: it never starts
    await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
    run = await pair.fire(pair.warm, "python3 hooks/exit3.py", project, env)
    assert run.launch == "cold: its warm spare is still starting" and run.exit_code == 3


async def test_the_daemon_runs_an_unchanged_python_hook_warm_and_audits_how(
    daemon_factory: Any, tmp_path: Path
) -> None:
    """Through a real daemon on its socket: the same hook, the same answer, cold then warm;
    the audit log says which way each run started and why."""
    from hookd.daemon.audit import AuditRun, read_records
    from hookd_client.client import Client

    policy = tmp_path / "policy.py"
    policy.write_text(PROBES["policy"])
    handle = await daemon_factory()
    configure(
        handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": f"python3 {policy}"}]}]}
    )
    payload = {
        "session_id": "warm-daemon",
        "transcript_path": "/dev/null",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"},
    }

    def fire() -> str | None:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", payload, env=_env(tmp_path)).result.decision

    def launches() -> list[str | None]:
        found = read_records(handle.daemon.settings.state_path() / "audit").records
        return [r.launch for r in found if isinstance(r, AuditRun)]

    with trio.fail_after(30):
        while "warm" not in launches():
            assert await trio.to_thread.run_sync(fire) == "deny"
            await trio.sleep(0.01)
    first, *_ = launches()
    assert first == "cold: first run of this interpreter here: its warm spare is starting"


FAKE_SHIM = """\
#!/usr/bin/env bash
set -e
program="${0##*/}"
export PYENV_ROOT="@ROOT@"
exec "@ROOT@/libexec/pyenv" exec "$program" "$@"
"""
FAKE_PYENV = """\
#!/usr/bin/env bash
# What `pyenv exec` does: pick the version, change PATH, export PYENV_*, exec it.
shift  # "exec"
program="$1"; shift
version="$(cat .python-version 2>/dev/null || cat "$PYENV_ROOT/version")"
export PYENV_VERSION="$version" PYENV_DIR="$PWD"
unset PYENV_SHELL  # a shim may remove a variable too
export PATH="$PYENV_ROOT/versions/$version/bin:$PATH"
exec "$PYENV_ROOT/versions/$version/bin/$program" "$@"
"""


@pytest.fixture
def pyenv(tmp_path: Path) -> Path:
    """A pyenv-shaped installation: a shim, ``pyenv exec``, two "versions" (links to real
    interpreters), a global ``version`` file."""
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    _executable(root / "shims" / "python3", FAKE_SHIM.replace("@ROOT@", str(root)))
    _executable(root / "libexec" / "pyenv", FAKE_PYENV)
    for version in ("one", "two"):
        (root / "versions" / version / "bin").mkdir(parents=True)
        (root / "versions" / version / "bin" / "python3").symlink_to(PYTHON)
    (root / "version").write_text("one\n")
    return root


async def test_a_version_managers_shim_runs_warm_as_the_shim_would_run_it(
    pair: Pair, project: Path, tmp_path: Path, pyenv: Path
) -> None:
    env = {**_env(tmp_path), "PATH": f"{pyenv}/shims:/usr/bin:/bin", "PYENV_SHELL": "bash"}
    cold = await pair.fire(pair.warm, "python3 hooks/identity.py", project, env)
    assert cold.launch is not None and "shim is being resolved" in cold.launch
    warm = await _same(pair, "python3 hooks/identity.py", project, env)
    assert f"{pyenv}/versions/one/bin/python3" in warm.stdout  # orig_argv[0], as pyenv execs it
    assert '"PYENV_VERSION", "one"' in warm.stdout
    assert "PYENV_SHELL" not in warm.stdout and "AGENT_VALUE" in warm.stdout
    # A .python-version in the project picks another version: resolved again, then warm.
    (project / ".python-version").write_text("two\n")
    warm = await _same(pair, "python3 hooks/identity.py", project, env)
    assert f"{pyenv}/versions/two/bin/python3" in warm.stdout


UV = Path(sys.executable).parent / "uv"


UV_SCRIPT = '# /// script\n# requires-python = ">=3.10"\n# dependencies = []\n# ///\n'


@pytest.mark.skipif(not UV.exists(), reason="uv is a dev dependency: pip install -e '.[dev]'")
@pytest.mark.parametrize("how", ["uv run --script", "uv's own #! line"])
async def test_a_uv_script_runs_warm_in_its_own_environment(
    pair: Pair, project: Path, tmp_path: Path, how: str
) -> None:
    """``uv run --script`` (PEP 723): the script's environment is resolved once, then its
    interpreter starts warm with uv's variables, as ``uv run`` would start it.  The same
    for an executable script whose first line is uv's own ``#!/usr/bin/env -S uv run
    --script``: ``env`` runs ``uv run --script SCRIPT args``."""
    if how == "uv run --script":
        (project / "hooks" / "uv_probe.py").write_text(UV_SCRIPT + PROBES["identity"])
        command = "uv run --script hooks/uv_probe.py an-argument"
    else:
        shebang = "#!/usr/bin/env -S uv run --script\n"
        _executable(project / "hooks" / "uv_probe.py", shebang + UV_SCRIPT + PROBES["identity"])
        command = "./hooks/uv_probe.py an-argument"
    env = {
        **_env(tmp_path),
        "PATH": f"{UV.parent}:{os.path.dirname(PYTHON)}:/usr/bin:/bin",
        "UV_NO_PROGRESS": "1",
    }
    settle = await pair.fire(pair.cold, command, project, env)  # uv makes the environment
    assert settle.exit_code == 0, settle.stderr
    first = await pair.fire(pair.warm, command, project, env)
    assert first.launch is not None and "uv script environment is being resolved" in first.launch
    warm = await _same(pair, command, project, env)
    assert '"VIRTUAL_ENV"' in warm.stdout and "environments" in warm.stdout


async def test_an_idle_spare_holds_no_events_variables(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """A spare is started by one event and serves a later one, maybe another session's:
    only what shapes the interpreter's start-up is in its environment."""
    env = {**_env(tmp_path), "SECRET_TOKEN": "sk-of-the-event-that-started-it"}
    await pair.warm_run("python3 hooks/exit3.py", project, env)
    # The run's replacement may still be between its fork and its exec (an empty environ).
    spare = await _spare_ready(pair)
    environ = Path(f"/proc/{spare.process.pid}/environ").read_bytes().split(b"\0")
    names = {item.partition(b"=")[0] for item in environ if item}
    assert names == {b"PATH", b"HOME", b"LANG", b"HOOKD_RUN_ID"}


async def test_a_spare_handed_out_while_another_event_waits_for_it_frees_its_descriptor(
    tmp_path: Path,
) -> None:
    """Two events for one interpreter: the first waits for its starting spare, the second
    takes that spare the moment it is ready and hands it the run (closing its control
    socket) before the first is woken.  The waiting event must be told: a socket closed
    under a waiting task stays registered in trio under its number, and the next
    descriptor to get that number — the next hook's epoll set — could not be waited on
    (``BusyResourceError``, a crashed handler; seen once under load in the full suite)."""
    script = tmp_path / "hook.py"
    script.write_text("pass\n")
    target = plan([sys.executable, str(script)], {"PATH": "/usr/bin:/bin"}, str(tmp_path))
    assert not isinstance(target, str), target
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    process: Any = object()  # become() hands it back; nothing here runs
    spare = Spare(process=process, control=ours, marker="m", started=0.0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(spare.wait_started, 30.0)
        await trio.testing.wait_all_tasks_blocked()
        number = ours.fileno()
        assert spare.become(target, {"PATH": "/bin"}, str(tmp_path)) is process
        with trio.fail_after(5):  # the waiting event is woken, not left for its 30 s
            while spare.waiting:
                await trio.lowlevel.checkpoint()
        # The next descriptor with that number can be waited on.
        reused, other = socket.socketpair()
        if reused.fileno() != number:  # make it the number the spare's socket had
            os.dup2(reused.fileno(), number)
            reused.close()
            reused = socket.socket(fileno=number)
        with reused, other, theirs:
            other.send(b"x")
            with trio.fail_after(5):
                await trio.lowlevel.wait_readable(reused)


async def test_a_warm_run_ends_on_its_exit_report_and_is_reaped_after(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """A spare says its exit status after the final flush, before its interpreter is torn
    down; the run ends there and the pool reaps the process once it is gone."""
    pool = pair.warm_runner.warm
    assert pool is not None
    run = await pair.warm_run("python3 hooks/exit3.py", project, _env(tmp_path))
    assert run.exit_code == 3 and run.pid is not None
    await _reaped_by_the_pool(pool, run.pid)


async def _reaped_by_the_pool(pool: warm_python.WarmPool, pid: int) -> None:
    """Until the pool has no run left ending and ``pid`` is gone (reaped)."""
    with trio.fail_after(30):
        while pool.ending or os.path.exists(f"/proc/{pid}"):
            await trio.sleep(0.01)


LIAR = """\
import os, socket, sys, time
print("said 5", flush=True)
if b"-c" not in open("/proc/self/cmdline", "rb").read().split(b"\\0"):
    sys.exit(5)  # a cold run (a warm one is the spare's `python3 -c <bootstrap>`)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.sendto(b"5", b"\\0hookd-exit-" + os.environ["HOOKD_RUN_ID"].encode())
os.close(1)
os.close(2)
time.sleep(300)
"""
"""A hook that says its own end (5) and goes on: its run ends there, on a pidfd or not."""


async def test_a_hook_that_reports_its_own_end_is_ended(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """The report is a datagram on an abstract socket, believed only from the run's own
    process: a hook can send it itself and go on, and its run then ends with the status it
    said (as an early ``_exit`` would end it), and its process is killed a grace later."""
    pids = tmp_path / "pids"
    first, rest = LIAR.split("\n", 1)
    note_pid = f"open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
    (project / "hooks" / "liar.py").write_text(f"{first}\n{note_pid}{rest}")
    env = _env(tmp_path)
    with trio.fail_after(60):
        while True:
            run = await pair.fire(pair.warm, "python3 hooks/liar.py", project, env, timeout=10)
            if run.launch == "warm":
                break
            assert run.exit_code == 5
            await trio.sleep(0.01)
    assert (run.exit_code, run.timed_out, run.stdout) == (5, False, "said 5\n"), run.stderr
    pid = int(pids.read_text().split()[-1])
    assert pid == run.pid
    pool = pair.warm_runner.warm
    assert pool is not None
    await _reaped_by_the_pool(pool, pid)


async def test_an_exit_report_from_another_process_does_not_count(
    pair: Pair, project: Path, tmp_path: Path
) -> None:
    """Only the run's own process can say its status: a datagram from any other process
    (here the hook's child, same user) is read and dropped."""
    (project / "hooks" / "forger.py").write_text(
        """\
import os, subprocess, sys
forge = (
    "import os, socket\\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\\n"
    "address = b'\\\\0hookd-exit-' + os.environ['HOOKD_RUN_ID'].encode()\\n"
    "try:\\n"
    "    s.sendto(b'7', address)\\n"
    "    print('sent', flush=True)\\n"
    "except OSError as error:\\n"
    "    print('not sent', error.errno, flush=True)\\n"
)
subprocess.run([sys.executable, "-c", forge], check=True)
sys.exit(3)
"""
    )
    run = await pair.warm_run("python3 hooks/forger.py", project, _env(tmp_path))
    assert (run.exit_code, run.stdout) == (3, "sent\n")


async def _warm_runs(tmp: Path, project: Path, commands: list[str]) -> list[tuple[Any, ...]]:
    """Each command's warm run (fired until a spare ran it) on a pool of its own, as the
    ``pair`` fixture runs it; what is compared of each, once the pool has reaped it."""
    tmp.mkdir()
    engines = Pair(tmp)
    pool = engines.warm_runner.warm
    assert pool is not None
    seen: list[tuple[Any, ...]] = []
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.refill_when_idle)
            await trio.testing.wait_all_tasks_blocked()
            for command in commands:
                with trio.fail_after(60):
                    run = await engines.fire(engines.warm, command, project, _env(tmp), 10)
                    while run.launch != "warm":  # the first run starts the spare
                        await trio.sleep(0.01)
                        run = await engines.fire(engines.warm, command, project, _env(tmp), 10)
                assert run.pid is not None
                await _reaped_by_the_pool(pool, run.pid)
                seen.append((*_comparable(run), run.timed_out))
            nursery.cancel_scope.cancel()
    finally:
        engines.close()
    return seen


async def test_without_a_pidfd_a_warm_run_ends_as_with_one(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel has no pidfd (``os.pidfd_open`` missing: the exit polled, a task
    per pipe), a warm run's exit code and output are the pidfd path's — its exit report
    included: a hook that says its end and goes on ends there, not at its timeout."""
    (project / "hooks" / "liar.py").write_text(LIAR)
    commands = [f"python3 hooks/{name}.py" for name in ("exit3", "liar", "stdio", "exit_message")]
    with_pidfd = await _warm_runs(tmp_path / "pidfd", project, commands)
    assert with_pidfd[1][1:3] == (5, "said 5\n")
    assert not any(seen[-1] for seen in with_pidfd)  # none timed out
    monkeypatch.delattr(os, "pidfd_open")
    assert await _warm_runs(tmp_path / "polled", project, commands) == with_pidfd

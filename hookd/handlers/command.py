"""The ``command`` handler: a shell command (``/bin/sh -c``) or an exec-form argv.

Environment, as Claude Code gives it (reference §7 and the observed env
table): the agent's environment, plus ``CLAUDE_PROJECT_DIR``,
``CLAUDE_CODE_SESSION_ID``, ``CLAUDE_PLUGIN_ROOT`` for plugin hooks and
``CLAUDE_ENV_FILE`` on the four events that get one — plus the seeds'
``HOOK_EVENT``, ``HOOK_TOOL_NAME``, ``HOOK_SESSION_ID``, ``HOOK_NAME`` and
``HOOK_INPUT_FILE`` (a file holding the same JSON as stdin).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
from collections.abc import Callable

from hookd.config.schema import CommandHandler
from hookd.handlers.base import HandlerResult, Invocation, RunAdopter, failed_with
from hookd.handlers.direct_exec import report_as_shell, shell_pwd, simple_argv
from hookd.handlers.input_dir import fallback, input_file_dir
from hookd.handlers.process import (
    AsyncAdopter,
    AsyncHandoff,
    ProcessResult,
    run_process_capped,
    working_directory,
)
from hookd.handlers.spawn import HookProcess
from hookd.handlers.warm_python import ExitReport, WarmPool, plan
from hookd.safe_names import file_name_for

__all__ = ["ENV_FILE_EVENTS", "CommandRunner", "substitute_placeholders"]

ENV_FILE_EVENTS = frozenset({"SessionStart", "Setup", "CwdChanged", "FileChanged"})
_SH_C = ["/bin/sh", "-c"]
_WarmRun = tuple[dict[str, str], HookProcess, ExitReport | None, Callable[[], None]]
"""A warm start: the run's environment, the spare become the run, where it says its exit
status, and what to call once the run is over."""
_CLAUDE_ENV_FILE_NAME = re.compile(r"^(setup|sessionstart|cwdchanged|filechanged)-hook-\d+\.sh$")
"""The names Claude Code reads in ``session-env/<session>/`` (2.1.330)."""


def substitute_placeholders(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("${" + key + "}", value)
    return text


class CommandRunner:
    """Runs command hooks; one instance per daemon holds the limits.

    Built by ``hookd.daemon.options.command_runner`` from the daemon's settings,
    where the defaults of ``output_cap``, ``kill_grace``, ``pipe_grace`` and
    ``direct`` (``command_without_shell``) live.
    """

    def __init__(
        self,
        *,
        output_cap: int,
        kill_grace: float,
        pipe_grace: float,
        direct: bool,
        input_file_dir: str | None = None,
        warm: WarmPool | None = None,
    ) -> None:
        self.output_cap = output_cap
        self.direct = direct
        """Start simple shell commands without /bin/sh (hookd/handlers/direct_exec.py)."""
        self.kill_grace = kill_grace
        self.pipe_grace = pipe_grace
        self.input_file_dir = input_file_dir
        """Where ``HOOK_INPUT_FILE``s go (None: chosen on first use, in memory if possible)."""
        self.warm = warm
        """Warm Python spares (None: every Python hook starts cold)."""

    def argv(self, handler: CommandHandler, values: dict[str, str]) -> list[str]:
        command = substitute_placeholders(handler.command, values)
        if handler.args is not None:
            return [command, *(substitute_placeholders(a, values) for a in handler.args)]
        if handler.shell == "powershell":
            pwsh = shutil.which("pwsh") or "pwsh"
            return [pwsh, "-NoProfile", "-NonInteractive", "-Command", command]
        # Observed: Claude Code runs shell-form hooks with /bin/sh -c, even when
        # SHELL is bash and `shell: "bash"` is set.
        return ["/bin/sh", "-c", command]

    def environment(self, inv: Invocation, input_file: str) -> dict[str, str]:
        spec = inv.spec
        env = dict(inv.env)
        env["CLAUDE_PROJECT_DIR"] = inv.project_dir
        env["CLAUDE_CODE_SESSION_ID"] = inv.session_id
        if spec.plugin_root:
            env["CLAUDE_PLUGIN_ROOT"] = spec.plugin_root
            env.setdefault("CLAUDE_PLUGIN_DATA", os.path.join(spec.plugin_root, ".data"))
        if inv.event_name in ENV_FILE_EVENTS:
            env["CLAUDE_ENV_FILE"] = self._env_file(inv)
        else:
            env.pop("CLAUDE_ENV_FILE", None)
        env["HOOK_EVENT"] = inv.event_name
        tool = inv.input.get("tool_name")
        env["HOOK_TOOL_NAME"] = tool if isinstance(tool, str) else ""
        env["HOOK_SESSION_ID"] = inv.session_id
        env["HOOK_NAME"] = spec.label
        env["HOOK_INPUT_FILE"] = input_file
        return env

    def _env_file(self, inv: Invocation) -> str:
        """One file per hook position, as Claude Code gives each matched hook its own
        (``<event>-hook-<index>.sh``).  When the agent's environment names one in
        Claude Code's ``session-env/<session>/`` directory (the relay's own file, or
        the one the http endpoint derives), hook *i* gets index *i* there: Claude
        Code reads every such file of the session before each Bash command;
        otherwise the file goes under ``env_file_dir`` (the daemon's state directory)."""
        name = f"{inv.event_name.lower()}-hook-{inv.hook_index}.sh"
        inherited = inv.env.get("CLAUDE_ENV_FILE")
        if inherited:
            directory, own = os.path.split(inherited)
            if not _CLAUDE_ENV_FILE_NAME.match(own):
                return inherited  # the agent's own convention: every hook appends there
            os.makedirs(directory, mode=0o700, exist_ok=True)
            return os.path.join(directory, name)
        directory = os.path.join(inv.env_file_dir, file_name_for(inv.session_id))
        os.makedirs(directory, mode=0o700, exist_ok=True)
        return os.path.join(directory, name)

    def _write_input_file(self, inv: Invocation) -> str:
        """``HOOK_INPUT_FILE``: named after the run (already unique and random), created
        exclusively, 0600 — three system calls, where ``mkstemp`` adds name retries
        and a buffered file object — in memory where the system offers it
        (:mod:`hookd.handlers.input_dir`); a full in-memory directory falls back to
        the temporary directory."""
        if self.input_file_dir is None:
            self.input_file_dir = input_file_dir()
        name = f"hookd-input-{inv.run_id}-{inv.hook_index}.json"
        path = os.path.join(self.input_file_dir, name)
        try:
            _write_new(path, inv.stdin)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT) or self.input_file_dir == fallback():
                raise
            path = os.path.join(fallback(), name)
            _write_new(path, inv.stdin)
        return path

    async def _start(
        self,
        argv: list[str],
        env: dict[str, str],
        inv: Invocation,
        *,
        stdin: bytes,
        adopter: AsyncAdopter | None,
    ) -> ProcessResult:
        """Run ``argv`` to its end — without the shell when ``/bin/sh -c`` would only
        have looked the program up and started it (:mod:`hookd.handlers.direct_exec`)."""

        async def run(
            argv: list[str],
            env: dict[str, str],
            started: HookProcess | None = None,
            report: ExitReport | None = None,
            own_session: bool = False,
        ) -> ProcessResult:
            return await run_process_capped(
                argv,
                stdin=stdin,
                cwd=inv.cwd,
                env=env,
                timeout=inv.timeout,
                output_cap=self.output_cap,
                kill_grace=self.kill_grace,
                pipe_grace=self.pipe_grace,
                on_spawn=lambda pid: setattr(inv, "pid", pid),
                on_async_ack=adopter,
                run_id=inv.run_id,
                started=started,
                output_budget=inv.output_budget,
                exit_report=report,
                own_session=own_session,
            )

        shell = argv[:2] == _SH_C
        direct = simple_argv(argv[2], env) if self.direct and shell else None
        if shell and direct is None:
            inv.launch = "cold: the command needs a shell"
            return await run(argv, env)
        cwd = working_directory(inv.cwd) or os.getcwd()
        program, program_env = (
            (argv, env) if direct is None else (direct, {**env, "PWD": shell_pwd(env, cwd)})
        )
        warm, python = await self._warm_start(program, program_env, cwd, inv)
        if warm is None:
            # A Python hook that may run warm starts in a session of its own either way.
            result = await run(program, program_env, own_session=python)
        else:
            run_env, process, report, after = warm
            try:
                result = await run(program, run_env, process, report)
            finally:
                after()  # reaped once gone; its replacement starts after it, not beside it
        if direct is None:
            return result
        if result.spawn_error is not None:
            # Not startable as is (not found, not executable, no #! line): the
            # shell says so in its own words, or runs it as a script.
            return await run(argv, env)
        report_as_shell(result)
        return result

    async def _warm_start(
        self, argv: list[str], env: dict[str, str], cwd: str, inv: Invocation
    ) -> tuple[_WarmRun | None, bool]:
        """A warm Python spare become ``argv``'s run, with the environment it was given,
        where it reports its exit status, and what to call when the run is over (reaps it,
        starts its replacement), when it is a Python hook one is ready for
        (:mod:`hookd.handlers.warm_python`); None: run it cold.  And whether it is a
        Python hook that may run warm: then it runs in a session of its own, warm or cold
        (:func:`hookd.handlers.spawn.session_flags`).  ``inv.launch`` says which way it
        started, and why."""
        if self.warm is None:
            inv.launch = "cold: warm Python is off (warm_python = false)"
            return None, False
        target = plan(argv, env, cwd, self.warm.launchers)
        if isinstance(target, str):
            inv.launch = f"cold: {target}"
            return None, False
        env = target.environment(env)
        spare, why = await self.warm.take_when_started(target, env, cwd)
        if spare is None:
            inv.launch = f"cold: {why}"
            return None, True
        run_env = {**env, "HOOKD_RUN_ID": spare.marker}
        process = spare.become(target, run_env, cwd)
        refill = functools.partial(self.warm.refill, target, env, cwd)
        if process is None:
            self.warm.retire(spare)
            refill()
            inv.launch = "cold: its warm spare went away"
            return None, True
        inv.launch = "warm"
        inv.run_id = spare.marker  # the marker its processes carry (async journal, kills)
        after = functools.partial(self.warm.after_run, target, env, cwd, process, spare.report)
        return (run_env, process, spare.report, after), True

    async def run(self, handler: CommandHandler, inv: Invocation) -> HandlerResult:
        values = {"CLAUDE_PROJECT_DIR": inv.project_dir}
        if inv.spec.plugin_root:
            values["CLAUDE_PLUGIN_ROOT"] = inv.spec.plugin_root
            values["CLAUDE_PLUGIN_DATA"] = os.path.join(inv.spec.plugin_root, ".data")
        input_file = self._write_input_file(inv)
        adopter = _KeepInputFile(inv.async_adopter, inv, input_file) if inv.async_adopter else None
        try:
            result = await self._start(
                self.argv(handler, values),
                self.environment(inv, input_file),
                inv,
                stdin=inv.stdin if handler.pass_context else b"",
                adopter=adopter,
            )
        finally:
            if adopter is None or not adopter.adopted:
                try:
                    os.unlink(input_file)
                except OSError:
                    pass
        if result.spawn_error is not None:
            return failed_with(f"could not start: {result.spawn_error}", result.spawn_exc)
        if result.refused is not None:
            return HandlerResult(exit_code=None, failure=result.refused, pid=result.pid)
        if result.went_async:
            # The ack line alone: interpretation reads it as "async" and waits for nothing.
            return HandlerResult(
                exit_code=None,
                stdout=result.stdout.decode("utf-8", errors="replace"),
                pid=result.pid,
                went_async=True,
            )
        return HandlerResult(
            exit_code=result.returncode,
            stdout=result.stdout.decode("utf-8", errors="replace"),
            stderr=result.stderr.decode("utf-8", errors="replace"),
            truncated=result.truncated,
            timed_out=result.timed_out,
            pid=result.pid,
        )


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist), owner-only, holding ``data``; no file is left
    behind when the write fails."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


class _KeepInputFile:
    """Passes a handoff on with its invocation, and moves the input file's removal to
    the hook's real end.

    A hook that backgrounds itself may read ``HOOK_INPUT_FILE`` after the ack,
    so the file lives until the adopted process is finished.
    """

    def __init__(self, inner: RunAdopter, inv: Invocation, input_file: str) -> None:
        self.inner = inner
        self.inv = inv
        self.input_file = input_file
        self.adopted = False

    def adopt(self, handoff: AsyncHandoff) -> str | None:
        handoff.cleanup.append(lambda: os.unlink(self.input_file))
        refusal = self.inner(self.inv, handoff)
        self.adopted = refusal is None
        return refusal

"""What a Python launcher would start, learnt by running it once: pyenv shims, ``uv run --script``.

Many Python hooks do not name an interpreter. ``python3`` on a pyenv user's ``PATH`` is a
shim — a bash script that picks a version (``PYENV_VERSION``, a ``.python-version`` in the
directory or a parent, the global ``version`` file) and execs that version's interpreter with
``PATH`` and a few ``PYENV_*`` variables changed; ``uv run --script hook.py`` reads the
script's inline metadata (PEP 723), makes or reuses an environment for it and starts that
environment's interpreter with ``VIRTUAL_ENV`` and friends set. Either way the interpreter, its
``argv`` and its environment are decided by the launcher, every time, at a cost of 0.2–0.4 s.

hookd runs the launcher once — per launcher, working directory, start-up environment and the
state of the files it reads (the version files; the script itself for uv) — with a probe in
place of the hook that writes down ``sys.orig_argv`` and ``os.environ`` as the interpreter got
them, and exits. A warm spare (:mod:`hookd.handlers.warm_python`) then starts that interpreter
under that path, with those arguments and those variables (added, changed and removed), as the
launcher would have. The probe runs in the background: until it has answered, the hook runs
cold, through its launcher. A probe that fails (an old interpreter, a launcher that does
something else) leaves the hook cold, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hookd.handlers.spawn import session_options
from hookd.subreaper import SUBREAPER

__all__ = [
    "Delta",
    "Launched",
    "LauncherResolver",
    "is_pyenv_shim",
    "is_uv_script",
    "startup_environment",
]

_PROBE_VARIABLE = "HOOKD_WARM_PROBE"
"""Names the file the probe writes ``[sys.orig_argv, os.environ]`` to."""

_PROBE_PROGRAM = (
    "import json, os, sys\n"
    f"out = os.environ.pop({_PROBE_VARIABLE!r})\n"
    "with open(out, 'w') as fh:\n"
    "    json.dump([sys.orig_argv, dict(os.environ)], fh)\n"
)
_SITECUSTOMIZE = (
    "import os as _os\n"
    f"if {_PROBE_VARIABLE!r} in _os.environ:\n"
    "    import sys as _sys\n"
    "    _paths = _os.environ.get('PYTHONPATH', '').split(_os.pathsep)[1:]\n"
    "    if any(_paths):\n"
    "        _os.environ['PYTHONPATH'] = _os.pathsep.join(_paths)\n"
    "    else:\n"
    "        _os.environ.pop('PYTHONPATH', None)\n"
    + "".join("    " + line + "\n" for line in _PROBE_PROGRAM.replace("sys.", "_sys.").splitlines())
    + "    _os._exit(0)\n"
)
"""A uv script's probe: imported by ``site`` before the script, from a directory hookd puts
first on ``PYTHONPATH`` (and takes off again before it writes the environment down)."""

_PROBE_TIMEOUT = 120.0
"""A first ``uv run`` may install the script's dependencies."""

Delta = tuple[tuple[str, str | None], ...]
"""Variables a launcher sets (a value) or removes (None)."""


@dataclass(frozen=True, slots=True)
class Launched:
    """What the launcher started: the interpreter's whole argv, and what it changed."""

    orig_argv: tuple[str, ...]
    env_delta: Delta


@dataclass(slots=True)
class _Probe:
    process: subprocess.Popen[bytes] | None
    output: str
    env: dict[str, str]
    """The environment the launcher was given (before the probe's own variables)."""
    started: float
    answer: Launched | str | None = None

    def result(self, waiting: str) -> Launched | str:
        if self.answer is not None:
            return self.answer
        assert self.process is not None
        if self.process.poll() is None:
            if time.monotonic() - self.started < _PROBE_TIMEOUT:
                return waiting
            self.process.kill()
            self.process.wait()
        SUBREAPER.waited(self.process.pid)
        self.process = None
        self.answer = self._read()
        return self.answer

    def _read(self) -> Launched | str:
        try:
            with open(self.output, encoding="utf-8") as fh:
                orig_argv, environ = json.load(fh)
        except (OSError, ValueError):
            return "its launcher did not start a CPython 3.10 or newer hookd could probe"
        finally:
            Path(self.output).unlink(missing_ok=True)
        if not orig_argv or not os.path.isabs(orig_argv[0]):
            return "its launcher started an interpreter hookd cannot name"
        changed: dict[str, str | None] = {k: None for k in self.env if k not in environ}
        changed.update((k, v) for k, v in environ.items() if self.env.get(k) != v)
        return Launched(tuple(orig_argv), tuple(sorted(changed.items())))


def is_pyenv_shim(path: str) -> bool:
    """A pyenv shim: ``exec "<root>/libexec/pyenv" exec "$program" "$@"``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1024)
    except OSError:
        return False
    return head.startswith(b"#!") and b"pyenv" in head and b'" exec "$program"' in head


def is_uv_script(argv: Sequence[str]) -> bool:
    """``uv run --script SCRIPT [args…]``, exactly that shape."""
    return (
        len(argv) >= 4
        and os.path.basename(argv[0]) == "uv"
        and argv[1:3] == ["run", "--script"]
        and not argv[3].startswith("-")
    )


@dataclass(slots=True)
class LauncherResolver:
    """Probes by launcher and what decides its choice; bounded (``limit``)."""

    limit: int = 64
    probes: dict[tuple[object, ...], _Probe] = field(default_factory=dict)
    _site: str | None = None

    def pyenv(self, shim: str, env: Mapping[str, str], cwd: str) -> Launched | str:
        """What ``shim`` (a pyenv shim) execs in ``cwd`` under ``env``."""
        key = ("pyenv", shim, cwd, _startup(env), _version_files(shim, env, cwd))
        probe = self.probes.get(key)
        if probe is None:
            probe = self._start(key, [shim, "-c", _PROBE_PROGRAM], env, cwd, {})
        return probe.result("its pyenv shim is being resolved (once per version and directory)")

    def uv_script(
        self, uv: str, argv: Sequence[str], env: Mapping[str, str], cwd: str
    ) -> Launched | str:
        """What ``uv run --script SCRIPT args`` starts (the script's environment's python)."""
        script = os.path.join(cwd, argv[3])
        stamp = _stamp(script, ctime=True)
        if stamp is None:
            return f"script {argv[3]} not found"
        uv_vars = tuple(sorted((k, v) for k, v in env.items() if k.startswith("UV_")))
        key = ("uv", _stamp(uv), tuple(argv), cwd, _startup(env), uv_vars, stamp)
        probe = self.probes.get(key)
        if probe is None:
            site = self._site_dir()
            path = env.get("PYTHONPATH")
            extra = {"PYTHONPATH": site + (os.pathsep + path if path else "")}
            probe = self._start(key, list(argv), env, cwd, extra)
        return probe.result("its uv script environment is being resolved (once per script)")

    def close(self) -> None:
        for probe in self.probes.values():
            if probe.process is not None:
                probe.process.kill()
                probe.result("")
        self.probes.clear()
        if self._site is not None:
            shutil.rmtree(self._site, ignore_errors=True)
            self._site = None

    def _site_dir(self) -> str:
        if self._site is None:
            self._site = tempfile.mkdtemp(prefix="hookd-probe-")
            Path(self._site, "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
        return self._site

    def _start(
        self,
        key: tuple[object, ...],
        argv: list[str],
        env: Mapping[str, str],
        cwd: str,
        extra: dict[str, str],
    ) -> _Probe:
        if len(self.probes) >= self.limit:
            self.probes = {k: p for k, p in self.probes.items() if p.process is not None}
        fd, output = tempfile.mkstemp(prefix="hookd-probe-", suffix=".json")
        os.close(fd)
        # Only what steers a launcher: the probe outlives the event that started it, and
        # must not carry that event's variables (another session's, secrets among them).
        env = {k: v for k, v in env.items() if _LAUNCHER_ENV.fullmatch(k)}
        probe = _Probe(None, output, env, time.monotonic())
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
                env={**env, **extra, _PROBE_VARIABLE: output},
                **session_options(),
            )
        except OSError as exc:
            Path(output).unlink(missing_ok=True)
            probe.answer = f"its launcher {argv[0]} did not start: {exc.strerror}"
        else:
            SUBREAPER.spawned(process.pid)
            probe.process = process
        self.probes[key] = probe
        return probe


_STARTUP_ENV = re.compile(r"PYTHON.*|LANG|LANGUAGE|LC_.*|HOME|PATH|TZ")
_LAUNCHER_ENV = re.compile(
    r"PYTHON.*|LANG|LANGUAGE|LC_.*|HOME|PATH|TZ|PYENV_.*|UV_.*|VIRTUAL_ENV|XDG_.*|TMPDIR|USER|LOGNAME"
)
"""What a launcher reads to decide (pyenv's version, uv's cache and settings) besides the
interpreter's start-up: the only variables a probe is given, and so the only ones whose
removal by the launcher a warm start reproduces."""
"""Variables CPython or a preloaded module reads while starting: a spare started under
other values would not be the cold run (encodings, ``sys.path``, user site, flags, zone)."""


def startup_environment(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The part of ``env`` that shapes an interpreter's start-up, as a key."""
    return tuple(sorted((k, v) for k, v in env.items() if _STARTUP_ENV.fullmatch(k)))


_startup = startup_environment


def _version_files(shim: str, env: Mapping[str, str], cwd: str) -> tuple[object, ...]:
    """What a pyenv shim reads to pick a version: ``PYENV_VERSION``, the global
    ``version`` file and every ``.python-version`` from ``cwd`` up."""
    root = env.get("PYENV_ROOT") or os.path.dirname(os.path.dirname(shim))
    found: list[object] = [env.get("PYENV_VERSION"), _stamp(os.path.join(root, "version"))]
    directory = cwd
    while True:
        found.append(_stamp(os.path.join(directory, ".python-version")))
        parent = os.path.dirname(directory)
        if parent == directory:
            return tuple(found)
        directory = parent


def _stamp(path: str, *, ctime: bool = False) -> tuple[int, ...] | None:
    """A file's identity and content stamp (inode, mtime, size, and ctime when asked)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
    return (*stamp, st.st_ctime_ns) if ctime else stamp

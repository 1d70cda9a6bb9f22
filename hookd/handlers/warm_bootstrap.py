"""What a warm Python interpreter runs: wait for one hook, then become it.

This file is not imported by hookd. :mod:`hookd.handlers.warm_python` reads its text and starts
the *hook's own* interpreter as ``<interpreter> <the hook's flags> -c <this text> 3 <script>``:
the same binary, path, flags and start-up environment a cold ``python3 hook.py`` would have,
with the hook's stdin, stdout and stderr pipes already in place, in the hook's own process
group (and session, where hooks get one: :func:`hookd.handlers.spawn.session_flags`). So
everything the interpreter decides at start-up — ``sys.flags``, ``sys.executable``,
``sys.prefix`` of a virtual environment, ``sys.path``, the stdio objects' encodings and
buffering, signal dispositions, the hash seed — is what the cold run would decide,
because it *is* a cold start, paid before the event instead of during it.

Then it compiles the script it is likely to run (the one named after the descriptor: its
interpreter's last one there), says ``R`` on the control descriptor, imports a few
standard-library modules hooks commonly use while no request has come, and blocks there. The
daemon sends one request (JSON: the hook's argv as a cold run would have it, the script, cwd,
environment). The interpreter then turns itself into the cold run: working directory,
environment, ``sys.argv``/``sys.orig_argv``, ``sys.path[0]``, a fresh ``__main__`` with the
globals CPython gives a script, modules a sibling file would shadow forgotten, and the script —
read again, as a cold run reads it, and compiled again unless it holds the very bytes compiled
ahead — executed at the top level of this program, so that a normal end, ``SystemExit`` in every
form, ``atexit``, non-daemon threads and the final flush go through CPython's own finalisation.
An uncaught exception is printed by ``sys.excepthook`` with a traceback that starts at the
script's own frame, as CPython prints it.

Each warm interpreter serves exactly one hook and exits with it: nothing of one run can reach
the next. Written for CPython 3.10 and newer (``sys.orig_argv``); older ones answer ``U``.
"""

import sys

# Before anything else is imported: what a cold start had loaded by the script's first line.
_baseline = set(sys.modules)
_initial_main = list(globals().items())[:7]  # __name__ … __builtins__, as CPython made them

import _frozen_importlib_external  # noqa: E402 - likewise; its SourceFileLoader runs scripts
import os  # noqa: E402 - always loaded at start-up (so in the baseline)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_control = int(sys.argv[1])


def _say(message: bytes) -> None:
    try:
        os.write(_control, message)
    except OSError:
        os._exit(0)


if sys.version_info < (3, 10) or sys.implementation.name != "cpython":
    _say(b"U")
    os._exit(0)

# ``-c`` put the current directory first on sys.path; a script run puts its own directory
# there. Neither may serve the preloads: they come from the interpreter's own paths.
_safe_path = bool(getattr(sys.flags, "safe_path", False)) or bool(sys.flags.isolated)
if not _safe_path and sys.path and sys.path[0] == "":
    del sys.path[0]
sys.path_importer_cache.pop("", None)

import _socket  # noqa: E402 - for the exit report (below); kept out of sys.modules
import importlib  # noqa: E402 - what the run needs, held before any purge or new sys.path[0]
import json  # noqa: E402
import select  # noqa: E402

if "_socket" not in _baseline:
    del sys.modules["_socket"]


def _prepare(script: str) -> "tuple[str, bytes, Any] | None":
    """The script this spare will most likely run (its interpreter's last one here), read
    and compiled ahead: (file, source, code), used at run time only if the file then holds
    the very same bytes.  A compilation that warns or fails is left to run time, where its
    messages belong."""
    import warnings

    file = os.path.join(os.getcwd(), script)
    try:
        with open(file, "rb") as source_file:
            source = source_file.read()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            code = compile(source, file, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None
    return None if said else (file, source, code)


_prepared = _prepare(sys.argv[2]) if len(sys.argv) > 2 else None

# Ready as soon as it can serve: an event that came while this interpreter was starting
# waits for it. The modules hooks commonly use are imported while nobody waits, one at a
# time, each only if no request has come meanwhile.
_say(b"R")
for _name in ("re", "pathlib", "shlex", "subprocess", "datetime", "typing", "fnmatch"):
    if select.select([_control], [], [], 0)[0]:
        break
    try:
        __import__(_name)
    except Exception:  # a preload is an optimisation; the script imports its own
        pass

# What a sibling file could shadow, computed while nobody waits (nothing is imported from
# here until the script runs).
_preloaded = {_name.partition(".")[0] for _name in sys.modules if _name not in _baseline}


def _read_request() -> "dict[str, Any]":
    chunks = []
    while True:
        try:
            chunk = os.read(_control, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    data = b"".join(chunks)
    if not data:
        os._exit(0)  # the daemon retired this interpreter
    request: dict[str, Any] = json.loads(data)
    return request


_request = _read_request()
os.close(_control)
_report_to = _request.get("report")


def _shadowed(directory: str) -> bool:
    """Whether ``directory`` holds a module that one this interpreter preloaded would hide."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return False
    return any(entry.partition(".")[0] in _preloaded for entry in entries)


def _set_environment(env: "dict[str, str]") -> None:
    """``os.environ.clear()`` then ``os.environ.update(env)`` — the same ``unsetenv`` and
    ``putenv`` calls in the same order, so the C ``environ`` a child inherits is in the
    cold run's order too, and the same mapping — without ``MutableMapping``'s ``popitem``
    and ``__setitem__`` round trips per variable: ~40 µs for 60 variables where those took
    ~150, on the path of every event."""
    data = getattr(os.environ, "_data", None)
    if not isinstance(data, dict):
        os.environ.clear()
        os.environ.update(env)
        return
    for key in list(data):
        os.unsetenv(key)
    data.clear()
    encoding = sys.getfilesystemencoding()
    for name, value in env.items():
        key, encoded = (
            name.encode(encoding, "surrogateescape"),
            value.encode(encoding, "surrogateescape"),
        )
        os.putenv(key, encoded)
        data[key] = encoded


def _become(request: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
    """What a cold ``python [flags] script args`` has before the script's first line."""
    os.chdir(request["cwd"])
    _set_environment(request["env"])
    script = request["script"]
    file = os.path.join(os.getcwd(), script)
    sys.argv[:] = request["argv"]
    sys.orig_argv[:] = request["orig_argv"]
    if not _safe_path:
        directory = os.path.dirname(os.path.realpath(file))
        if _shadowed(directory):
            # A sibling named like a preloaded module: the cold run would import the
            # sibling. Forget every preload, as if none had happened.
            for name in [n for n in sys.modules if n not in _baseline]:
                del sys.modules[name]
        sys.path.insert(0, directory)
    importlib.invalidate_caches()
    main = type(sys)("__main__")
    namespace = main.__dict__
    namespace.clear()
    namespace.update(_initial_main)
    namespace["__doc__"] = None  # not this program's own docstring
    namespace["__annotations__"] = {}  # nor its annotations
    namespace["__loader__"] = _frozen_importlib_external.SourceFileLoader("__main__", file)
    namespace["__file__"] = file
    namespace["__cached__"] = None
    sys.modules["__main__"] = main
    return file, namespace


_file, _namespace = _become(_request)
del _request
try:
    # Read at run time, as the cold run reads it: an edited script is the edited script.
    with open(_file, "rb") as _source:
        _text = _source.read()
    if _prepared is not None and _prepared[:2] == (_file, _text):
        _code_object = _prepared[2]
    else:
        _code_object = compile(_text, _file, "exec", dont_inherit=True)
    del _text, _prepared
except OSError as _error:
    sys.stderr.write(
        f"{sys.orig_argv[0]}: can't open file {_file!r}: [Errno {_error.errno}] {_error.strerror}\n"
    )
    sys.stderr.flush()
    os._exit(2)
except SyntaxError as _error:
    _error.__traceback__ = None  # CPython's parser error has none: no "Traceback" header
    sys.last_type, sys.last_value, sys.last_traceback = type(_error), _error, None
    sys.excepthook(type(_error), _error, None)
    raise SystemExit(1) from None


def _exit_code(exit: SystemExit) -> int | None:
    """The status ``SystemExit`` ends the process with, when it says nothing (else None)."""
    code = exit.code
    if code is None:
        return 0
    if isinstance(code, int) and -(2**31) <= code < 2**31:
        return int(code)
    return None  # a message to print, or a value CPython converts its own way


def _finish(code: int, *, interrupted: bool = False) -> None:
    """End as CPython's finalisation would, without tearing every module down.

    The steps a hook can observe, in CPython's order: non-daemon threads joined,
    ``atexit`` callbacks, stdout and stderr flushed, the script's globals released
    (their ``__del__`` run), and the exit status — or, after an unhandled
    ``KeyboardInterrupt``, death by SIGINT as CPython ends then. Returns (and lets CPython
    finalise for real) only when a flush fails: its message and status 120 are its own.
    """
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    import atexit

    atexit._run_exitfuncs()
    if not _flushed():
        return
    _namespace.clear()
    if not _flushed():
        return
    if interrupted:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    _report_exit(code)
    os._exit(code)


def _report_exit(code: int) -> None:
    """Say the exit status now, before the interpreter's teardown (~0.5 ms of unmapping
    that the kernel finishes before it reports the exit): stdout and stderr closed (their
    EOF tells the daemon the output is complete), then one datagram to the daemon's
    abstract socket (hookd.handlers.warm_python.ExitReport), which believes it only from
    this process. Nothing of the hook runs after this; a failed send leaves the daemon
    to learn the status from the exit, as before."""
    if not _report_to:
        return
    try:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM)
    except OSError:
        return
    for fd in (1, 2):  # then the EOFs and the report come together: one wake-up of the daemon
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        sock.sendto(b"%d" % (code & 0xFF), _socket.MSG_DONTWAIT, b"\0" + _report_to.encode())
    except OSError:
        pass


def _flushed() -> bool:
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except Exception:  # CPython reports it at its finalisation
            return False
    return True


_failure: BaseException | None = None
_code = 0
try:
    exec(_code_object, _namespace)
except SystemExit as _exit:
    _status = _exit_code(_exit)
    if _status is None:
        raise
    _code = _status
    del _exit
except BaseException as _error:  # printed below exactly as CPython prints it
    _failure = _error
if _failure is not None:
    _traceback = _failure.__traceback__.tb_next if _failure.__traceback__ else None
    _failure.__traceback__ = _traceback
    sys.last_type, sys.last_value, sys.last_traceback = type(_failure), _failure, _traceback
    sys.excepthook(type(_failure), _failure, _traceback)
    _interrupted = isinstance(_failure, KeyboardInterrupt)
    del _failure, _traceback
    _code = 1
    _finish(_code, interrupted=_interrupted)
_finish(_code)
raise SystemExit(_code)

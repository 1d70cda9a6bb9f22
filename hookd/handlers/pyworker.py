"""The python-hook worker process: ``python -m hookd.handlers.pyworker``.

A worker is started by :class:`hookd.handlers.python.PythonWorkerPool`, keeps
its imported hook modules warm, and serves one call at a time over its
original stdin/stdout: each frame is a 4-byte big-endian length and a
msgspec-JSON :class:`WorkerRequest` / :class:`WorkerReply`.  Before serving it
moves those two descriptors aside and points fd 0 at ``/dev/null`` and fd 1 at
stderr, so a hook that ``print``\\ s cannot corrupt the protocol (its output
lands in the daemon's log instead).

Reloading: before each call the hook's own source file is ``stat``-ed; when
its mtime or size changed it is compiled again *from source* (never from a
``.pyc``, whose one-second mtime stamp would miss quick edits) into a fresh
module object.  Only that module is reloaded, not what it imports.  A failed
reload keeps nothing half-built: the call fails with the error, and the next
call tries again.

This module imports nothing of the daemon (no trio, no httpx) so a worker
starts in tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import struct
import sys
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import IO, Any, Literal

import msgspec

from hookd_client.events import decode_event

__all__ = [
    "HookLoadError",
    "WorkerReply",
    "WorkerRequest",
    "callable_at",
    "encode_capped",
    "hook_answer",
    "load_file",
    "read_frame",
    "write_frame",
]

_HEADER = struct.Struct(">I")


class WorkerRequest(msgspec.Struct, kw_only=True):
    callable: str
    function: Literal["hook", "stop"] = "hook"
    event: str
    input: dict[str, Any]
    project_dir: str
    cwd: str
    project_trusted: bool = True
    """False: the project is untrusted, so nothing is looked up in ``project_dir``."""
    output_cap: int = 1024 * 1024
    """Bytes of the return value kept (the daemon's ``output_cap``, as for command output)."""


class WorkerReply(msgspec.Struct, kw_only=True, omit_defaults=True):
    kind: Literal["none", "text", "json", "error"]
    value: Any = None
    error: str | None = None
    traceback: str = ""
    truncated: bool = False
    """The value was over ``output_cap``: ``value`` is its first bytes as text."""


class HookLoadError(Exception):
    """The ``callable`` reference cannot be resolved to a function."""


def read_frame(stream: IO[bytes]) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    return data if len(data) == size else None


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


class _FreshLoader(importlib.machinery.SourceFileLoader):
    """Compile from the source file every time: never trust a cached ``.pyc``."""

    def get_code(self, fullname: str) -> Any:
        source = self.get_data(self.path)
        return compile(source, self.path, "exec", dont_inherit=True)


_loaded: dict[str, tuple[tuple[int, int], ModuleType]] = {}


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _exec_fresh(name: str, path: str, search: list[str] | None) -> ModuleType:
    loader = _FreshLoader(name, path)
    spec = importlib.util.spec_from_file_location(
        name, path, loader=loader, submodule_search_locations=search
    )
    if spec is None:
        raise HookLoadError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        if previous is not None:
            sys.modules[name] = previous
        else:
            sys.modules.pop(name, None)
        raise
    return module


def load_file(path: str) -> ModuleType:
    name = "hookd_user_" + hashlib.sha1(path.encode()).hexdigest()[:16]
    stamp = _stamp(path)
    cached = _loaded.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    module = _exec_fresh(name, path, None)
    _loaded[path] = (stamp, module)
    return module


_project_modules: dict[str, str] = {}
"""Modules imported from a project directory, by name → that directory.  Workers serve
every project: a module one project supplied must not answer another's lookup."""


def _forget_foreign(name: str, project_dir: str | None) -> None:
    """Drop ``name`` (and its submodules) from ``sys.modules`` when another project —
    or, with ``project_dir`` None, any project — supplied it."""
    top = name.split(".")[0]
    owner = _project_modules.get(top)
    if owner is None or owner == project_dir:
        return
    for loaded in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
        del sys.modules[loaded]
    del _project_modules[top]


def _load_module(name: str, project_dir: str | None) -> ModuleType:
    """``name`` from ``sys.path``, then from ``project_dir`` (None: an untrusted project,
    whose directory is not searched).  The project directory is on the search path only
    for this lookup, so one project's modules never leak into another's."""
    _forget_foreign(name, project_dir)
    added = bool(project_dir) and project_dir not in sys.path
    if added:
        sys.path.append(str(project_dir))
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise HookLoadError(f"cannot import {name}: {exc}") from None
    finally:
        if added:
            sys.path.remove(str(project_dir))
    if spec is None:
        raise HookLoadError(f"no module named {name!r}")
    origin = spec.origin
    if project_dir and origin and _inside(origin, project_dir):
        _project_modules[name.split(".")[0]] = project_dir
    if origin is None or not origin.endswith(".py") or not os.path.isfile(origin):
        return importlib.import_module(name)  # not plain source: import once, never reload
    stamp = _stamp(origin)
    cached = _loaded.get(origin)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    module = _exec_fresh(name, origin, spec.submodule_search_locations)
    _loaded[origin] = (stamp, module)
    return module


def _inside(path: str, directory: str) -> bool:
    root = os.path.realpath(directory).rstrip("/") + "/"
    return os.path.realpath(path).startswith(root)


def resolve(reference: str, project_dir: str, *, trusted: bool = True) -> Callable[..., Any]:
    """``package.module:function`` or ``/path/file.py:function`` (relative: to the project).

    In an untrusted project (``trusted`` False) nothing is loaded from the project
    directory: a relative file path is refused and a module is looked up on
    ``sys.path`` alone — the repository's code must not run before ``hookctl trust``.
    """
    target, sep, attr = reference.rpartition(":")
    if not sep or not target or not attr:
        raise HookLoadError(f"{reference!r}: expected `module:function` or `file.py:function`")
    if target.endswith(".py") or os.sep in target:
        if not os.path.isabs(target) and not trusted:
            raise HookLoadError(
                f"{target} is relative to the project directory {project_dir}, which is not "
                "trusted (hookctl trust DIR)"
            )
        path = target if os.path.isabs(target) else os.path.join(project_dir, target)
        if not os.path.isfile(path):
            raise HookLoadError(f"{path}: no such file")
        module = load_file(path)
    else:
        try:
            module = _load_module(target, project_dir if trusted else None)
        except HookLoadError as exc:
            if trusted:
                raise
            raise HookLoadError(
                f"{exc} (the project directory {project_dir} is not searched: it is not "
                "trusted — hookctl trust DIR)"
            ) from None
    return callable_at(module, attr, target, reference)


def callable_at(module: Any, attr: str, where: str, reference: str) -> Callable[..., Any]:
    """``module``'s (dotted) attribute ``attr``, which must be callable; ``where`` names
    the module and ``reference`` the whole reference in the errors."""
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise HookLoadError(f"{where} has no attribute {attr!r}") from None
    if not callable(obj):
        raise HookLoadError(f"{reference} is not callable")
    return obj  # type: ignore[no-any-return]


def _finish(value: Any) -> Any:
    """Await what a coroutine function returned (each call gets a fresh asyncio loop)."""
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value


def read_transcript(path: str) -> list[dict[str, Any]]:
    """The conversation as JSONL entries; unreadable lines are skipped, not fatal."""
    entries: list[dict[str, Any]] = []
    if not path:
        return entries
    with open(path, "rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                entry = msgspec.json.decode(line)
            except (msgspec.DecodeError, UnicodeError, RecursionError):
                print(f"hookd pyworker: skipping a bad transcript line in {path}", file=sys.stderr)
                continue
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def _stop_answer(value: Any) -> WorkerReply:
    """``True`` allows stopping; ``False`` or ``(False, reason)`` keeps the agent working."""
    reason = "a stop function asked to continue"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool):
        value, given = value
        if given:
            reason = str(given)
    if not isinstance(value, bool):
        return WorkerReply(
            kind="error",
            error=f"stop function returned {type(value).__name__}; expected True or "
            "(False, reason)",
        )
    if value:
        return WorkerReply(kind="none")
    return WorkerReply(kind="json", value={"decision": "block", "reason": reason})


def hook_answer(value: Any) -> WorkerReply:
    if value is None:
        return WorkerReply(kind="none")
    if isinstance(value, str):
        return WorkerReply(kind="text", value=value)
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict):
        try:
            msgspec.json.encode(value)
        except (TypeError, UnicodeError, msgspec.EncodeError) as exc:
            return WorkerReply(kind="error", error=f"python hook returned non-JSON data: {exc}")
        return WorkerReply(kind="json", value=value)
    return WorkerReply(
        kind="error",
        error=f"python hook returned {type(value).__name__}; expected dict, HookOutput, "
        "str or None",
    )


def serve_one(request: WorkerRequest) -> WorkerReply:
    try:
        if request.cwd and os.path.isdir(request.cwd):
            os.chdir(request.cwd)
        fn = resolve(request.callable, request.project_dir, trusted=request.project_trusted)
        if request.function == "stop":
            raw = request.input
            path = raw.get("agent_transcript_path") or raw.get("transcript_path") or ""
            return _stop_answer(_finish(fn(read_transcript(str(path)))))
        event = decode_event(request.input, request.event)
        return hook_answer(_finish(fn(event)))
    except HookLoadError as exc:
        return WorkerReply(kind="error", error=str(exc))
    except Exception as exc:
        return WorkerReply(
            kind="error",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
        )


def main() -> None:
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    # `python -m` puts the daemon's cwd first on sys.path; hooks resolve against their project.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path.pop(0)
    encoder = msgspec.json.Encoder()
    decoder = msgspec.json.Decoder(WorkerRequest)
    while True:
        frame = read_frame(proto_in)
        if frame is None:
            return
        try:
            request = decoder.decode(frame)
        except msgspec.DecodeError as exc:
            reply = WorkerReply(kind="error", error=f"bad request: {exc}")
        else:
            reply = serve_one(request)
        sys.stdout.flush()
        write_frame(proto_out, encode_capped(encoder, reply, request.output_cap))


def encode_capped(encoder: msgspec.json.Encoder, reply: WorkerReply, cap: int) -> bytes:
    """The reply as one frame body, its value capped at ``cap`` bytes like command output.

    A hook that returns 300 MB must not make the daemon read 300 MB: a value
    whose JSON is over the cap goes back as its first ``cap`` bytes of text,
    marked ``truncated`` — exactly what a command hook printing the same JSON
    would give (truncated JSON is read as plain text, reference §4.1).  A
    value that cannot be encoded at all (a lone surrogate in a string) is this
    hook's error, never the worker's death.
    """
    try:
        body = encoder.encode(reply)
    except (UnicodeError, msgspec.EncodeError, TypeError, ValueError) as exc:
        return encoder.encode(
            WorkerReply(kind="error", error=f"python hook returned unencodable data: {exc}")
        )
    if len(body) <= cap or reply.kind not in ("text", "json"):
        return body
    if isinstance(reply.value, str):
        raw = reply.value.encode("utf-8", "replace")
    else:
        raw = encoder.encode(reply.value)
    if len(raw) <= cap:
        return body  # the frame is over the cap, the value is not
    text = raw[:cap].decode("utf-8", "ignore")
    return encoder.encode(WorkerReply(kind="text", value=text, truncated=True))


if __name__ == "__main__":
    main()

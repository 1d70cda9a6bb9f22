"""Where ``HOOK_INPUT_FILE``s are written: the system's temporary directory — in memory.

Every command hook gets its own file, created and deleted around its run.  On a
disk filesystem (ext4 ``/tmp``, the default on Debian and in many containers)
the create and the unlink are journalled metadata updates: measured
~0.1 ms of the daemon's time per hook quiet and several times that with the
disk busy — of the order of the whole spawn (docs/performance.md, "Parallel
spawns").  On tmpfs they are a few µs.  So when the temporary directory is not
in memory and the user did not choose one (``TMPDIR``/``TEMP``/``TMP``), the
files go to a directory that is: the user's ``XDG_RUNTIME_DIR`` (owner-only), or
else ``/dev/shm`` (shared and sticky, as ``/tmp`` — the names stay unguessable
and the files ``O_EXCL``, 0600).  A full tmpfs falls back to the temporary
directory (:func:`fallback`).
"""

from __future__ import annotations

import os
import stat
import tempfile

__all__ = ["fallback", "input_file_dir"]

_MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})


def _filesystem(path: str) -> str | None:
    """The type of the filesystem ``path`` is on (the longest mount point above it)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        if len(parts) < 5 or not rest:
            continue
        mount = parts[4].replace("\\040", " ")
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, kind = mount, rest.split()[0]
    return kind


def _usable(path: str, *, private: bool) -> bool:
    """A directory in memory that only we (``private``) or, sticky, everyone may write."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or _filesystem(path) not in _MEMORY_FILESYSTEMS:
        return False
    if private:
        return st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0
    return bool(st.st_mode & stat.S_ISVTX) and os.access(path, os.W_OK | os.X_OK)


def input_file_dir(environ: dict[str, str] | None = None) -> str:
    """The directory for hook input files, decided once per runner (see the module docstring)."""
    env = os.environ if environ is None else environ
    temp = tempfile.gettempdir()
    if any(env.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return temp  # the user's choice
    if _filesystem(temp) in _MEMORY_FILESYSTEMS:
        return temp
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime) and _usable(runtime, private=True):
        return runtime
    if _usable("/dev/shm", private=False):
        return "/dev/shm"
    return temp


def fallback() -> str:
    """Where a file goes when the chosen directory is full (a small ``/dev/shm``)."""
    return tempfile.gettempdir()

"""Read a configuration file that someone else may have planted.

A repository decides what its ``.claude/hooks.json`` is, and git carries
symlinks: the file can lead to ``/dev/zero``, a FIFO, ``/dev/stdin`` or a
multi-gigabyte log.  A plain ``read_text`` of such a "file" blocks the daemon
or eats its memory before trust is even asked (an untrusted project's files are
read too, to show what is held back).  Every config file — project, user,
policy, skill — is therefore read through :func:`read_source_file`: opened
without blocking, checked to be a regular file of sane size, then read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["MAX_SOURCE_BYTES", "read_source_file"]

MAX_SOURCE_BYTES = 8 * 1024 * 1024
"""No hook file is anywhere near this; anything bigger is not a hook file."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_source_file(path: Path | str) -> bytes:
    """The bytes of a regular file of at most :data:`MAX_SOURCE_BYTES`.

    Raises ``FileNotFoundError`` when it is absent (callers treat that as an
    empty source) and another ``OSError`` naming the problem when it is not a
    regular file, too big or unreadable.  Symlinks are followed — where a file
    was *found* decides trust (hookd/daemon/trust.py), not what it is read from.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"{_kind(st.st_mode)}, not a regular file", str(path))
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_SOURCE_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_SOURCE_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_SOURCE_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_SOURCE_BYTES} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)

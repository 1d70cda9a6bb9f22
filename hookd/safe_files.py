"""Writing files where someone else may have planted a name first.

hookd writes into directories it does not own alone: a repository's
``.claude/`` (the installers), a shared ``/tmp`` (spill files), and its own
state and config directories.  A repository can commit a symlink under any
name hookd later writes — the temporary file, a backup, an install record,
the settings file itself, or its directory — so a writer that opens a
predictable name with plain ``O_CREAT`` writes *through* the link, into any
file the user can write (issue 28.2).  Everything here follows three rules:

* a file is *created* with ``O_CREAT|O_EXCL|O_NOFOLLOW`` under an
  unpredictable name, so no planted name is ever opened, and its mode is set
  on the descriptor (``fchmod``), never through a path;
* it is renamed over the destination; ``rename`` replaces a symlink planted
  there instead of following it, so the link's target is never touched;
* a file hookd wrote for itself and reads back (an install record, a backup)
  is read with ``O_NOFOLLOW``: a symlink there is refused, not followed.

Where a user's own file is a symlink (dotfiles: ``~/.claude/settings.json ->
~/dotfiles/claude.json``) the installers *mean* to follow it:
:func:`write_destination` says where writing that file really lands and
refuses a destination outside the project when the file belongs to a
project (a repository could plant that link).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "UnsafePath",
    "open_append",
    "read_own_text",
    "write_atomically",
    "write_destination",
]

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(ValueError):
    """A path hookd refuses to write or read through; the message says which and why."""


def write_atomically(path: Path, data: str | bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` (mode ``mode`` exactly) in one rename.

    The temporary file is ``.<name>.<random>.hookd-tmp`` beside ``path``,
    created exclusively and without following links, so a name planted in
    the directory is never opened; its mode is set on the descriptor before
    the first byte (never wider, not even for a moment, whatever the umask);
    the data is fsynced before the rename and the directory after it, so a
    crash leaves the old file or the new one, never a torn one.  A symlink at
    ``path`` itself is replaced, not followed (callers that mean to edit a
    link's target pass :func:`write_destination`'s answer).
    """
    body = data.encode("utf-8") if isinstance(data, str) else data
    directory = path.parent
    tmp = directory / f".{path.name}.{secrets.token_hex(8)}.hookd-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode & 0o777)
    try:
        try:
            os.fchmod(fd, mode & 0o777)  # O_CREAT's mode was masked by the umask
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(directory)


def open_append(path: Path, mode: int = 0o600) -> int:
    """A descriptor appending to ``path`` (created ``mode`` if missing); a symlink there
    is refused (``OSError`` ELOOP) rather than followed: an append-only log (the audit
    log, the async journal) is hookd's own file, never another one a link names."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, mode)


def read_own_text(path: Path) -> str | None:
    """The text of a file hookd wrote for itself (None when there is none).

    Opened with ``O_NOFOLLOW`` and required to be a regular file: a symlink or
    anything else at that name was not written by hookd, and reading through it
    would let whoever planted it choose what hookd believes it wrote.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafePath(
                f"{path} is a symlink, not a file hookd wrote: refusing to read it "
                "(remove it if you did not make it)"
            ) from exc
        raise
    with os.fdopen(fd, "rb") as fh:
        if not _is_regular(fh.fileno()):
            raise UnsafePath(f"{path} is not a regular file: hookd did not write it")
        return fh.read().decode("utf-8")


def write_destination(path: Path, root: Path | None, *, follow: bool = True) -> Path:
    """Where writing ``path`` really lands: ``path``, or its target when it is a symlink.

    ``root`` is the project the file belongs to (None: the user's own file).  A
    user's symlinked file is edited at its target (in the target's directory),
    leaving the link; a project's file that leads outside ``root`` — through
    itself or one of its directories — is refused with :class:`UnsafePath`.
    ``follow=False`` is for hookd's own files (backups, install records): a
    symlink at their name is replaced, never followed, so only their directory
    must stay inside the project.
    """
    if root is not None:
        real = Path(os.path.realpath(path if follow else path.parent))
        base = Path(os.path.realpath(root))
        if real != base and base not in real.parents:
            raise UnsafePath(
                f"{path} leads outside the project {root} (to {real}, through a symlink): "
                "hookd does not write outside the project it installs into — replace the "
                "link with a file, or install for your user instead"
            )
    if follow and os.path.islink(path):
        return Path(os.path.realpath(path))
    return path


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

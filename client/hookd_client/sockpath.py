"""Where the daemon's socket is, and whether a client may send anything to it.

One function answers "which path" for the daemon, ``hookctl``, the three
client flavours and ``hookd-relay``: ``$HOOKD_SOCKET``, else
``$XDG_RUNTIME_DIR/hookd/hookd.sock`` (when that directory exists), else
``/tmp/hookd-<uid>/hookd.sock``.

Another one, :func:`unsafe_reason`, says whether that path may be trusted
with a hook input (and the agent's whole environment, API keys included).
Whoever owns the socket file listens on it, and whoever can write a
directory on the way to it can put their own socket (or a symlink) there: a
client that connected would send every event to a stranger and apply
whatever verdict came back.  ``/tmp/hookd-<uid>`` is the obvious case (anyone
can create it first), but not the only one: ``$XDG_RUNTIME_DIR`` pointing
into a shared directory, or ``$HOOKD_SOCKET`` in ``/tmp``, are the same.  So,
as ssh does for its files and ssh-agent and tmux for their sockets, every
client checks every path, before it connects:

* the socket is a socket (``lstat``: not a symlink to one) owned by the
  caller's uid — the daemon (or the caller's systemd, under socket
  activation) made it;
* every directory from ``/`` down to it is owned by the caller or by root,
  and none is writable by anyone else unless it is sticky (``/tmp``): in a
  sticky directory nobody but the owner of an entry can rename or remove it,
  so the caller's own entries there cannot be swapped;
* a symlink on the way is followed only when the caller or root owns it
  (its owner can point it elsewhere at any time).

A missing file or directory is not unsafe: connecting fails with "not
running".  The daemon applies the same rule to the socket it finds in the
``/tmp`` fallback before it probes or replaces it.

Why this module imports nothing but ``os``: ``hookd-relay`` imports it on
every hook event, where start-up time is the whole cost; the checks are one
``lstat`` per path component (three to six).  relay/hookd-relay.c has the
same rule, word for word.
"""

import os

__all__ = ["default_socket_path", "fallback_dir", "runtime_dir", "unsafe_reason"]

_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFSOCK = 0o140000
_S_IFLNK = 0o120000
_S_ISVTX = 0o1000
"""Sticky: only an entry's owner (or the directory's, or root) may rename or remove it."""
_MAX_SYMLINKS = 40
_WRITABLE_BY_OTHERS = 0o022
"""Group- or other-writable: someone else could replace what is in the directory."""


def fallback_dir() -> str:
    """``/tmp/hookd-<uid>``: used only when ``$XDG_RUNTIME_DIR`` is not set (or missing)."""
    return f"/tmp/hookd-{os.getuid()}"


def runtime_dir() -> str:
    """``$XDG_RUNTIME_DIR/hookd`` when that runtime directory exists, else :func:`fallback_dir`."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return base + "/hookd"
    return fallback_dir()


def default_socket_path() -> str:
    """``$HOOKD_SOCKET``, else ``<runtime dir>/hookd.sock`` (an explicit setting wins over both)."""
    env = os.environ.get("HOOKD_SOCKET")
    if env:
        return env
    return runtime_dir() + "/hookd.sock"


def unsafe_reason(path: str) -> str | None:
    """Why ``path`` must not be connected to (the path and who owns what), or None.

    ``lstat`` only, component by component from ``/``, so a symlink planted in
    place of a directory or the socket is seen as what it is; a symlink owned
    by the caller or root is followed by hand (at most 40) and its target
    checked the same way.  None also when something on the way is missing
    (nothing listens there: connecting says so).
    """
    try:
        _walk(path, os.getuid())
    except _Refused as refused:
        return str(refused)
    return None


class _Refused(Exception):
    """Why the path is not provably the caller's."""


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p and p != "."]


def _walk(path: str, uid: int) -> None:
    """Raise :class:`_Refused` with the reason, or return (safe, or missing on the way)."""
    parts = _parts(path if path.startswith("/") else _cwd(path) + "/" + path)
    done = ""  # the resolved prefix checked so far ("" is "/")
    hops = 0
    while parts:
        name = parts.pop(0)
        if name == "..":
            done = done.rpartition("/")[0]
            continue
        here = done + "/" + name
        info = _lstat(here)
        if info is None:
            return  # missing: "not running"
        kind = info.st_mode & _S_IFMT
        if kind == _S_IFLNK:
            hops += 1
            target = _link_target(here, info, uid, hops, path)
            if target.startswith("/"):
                done = ""
            parts[:0] = _parts(target)
        elif not parts:  # the socket itself
            _check_socket(here, info, uid, kind)
            return
        elif kind != _S_IFDIR:
            return  # connecting fails (ENOTDIR): "not running"
        else:
            _check_directory(here, info, uid)
            done = here
    raise _Refused(f"{path} is a directory, not a socket")


def _cwd(path: str) -> str:
    """The directory a relative ``path`` starts from; refused when there is none (the
    working directory was removed): the path cannot be checked, so it is not connected to."""
    try:
        return os.getcwd()
    except OSError as exc:
        raise _Refused(f"cannot check {path}: {exc.strerror or exc}") from None


def _lstat(here: str) -> os.stat_result | None:
    try:
        return os.lstat(here)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _Refused(f"cannot check {here}: {exc.strerror or exc}") from None


def _link_target(here: str, info: os.stat_result, uid: int, hops: int, path: str) -> str:
    if info.st_uid not in (uid, 0):
        raise _Refused(_not_yours(here, "symlink", info.st_uid, uid))
    if hops > _MAX_SYMLINKS:
        raise _Refused(f"cannot check {path}: too many levels of symbolic links")
    try:
        return os.readlink(here)
    except OSError as exc:
        raise _Refused(f"cannot check {here}: {exc.strerror or exc}") from None


def _check_socket(here: str, info: os.stat_result, uid: int, kind: int) -> None:
    if kind != _S_IFSOCK:
        raise _Refused(f"{here} is not a socket; hookd's socket is one the daemon made")
    if info.st_uid != uid:
        raise _Refused(_not_yours(here, "socket", info.st_uid, uid))


def _check_directory(here: str, info: os.stat_result, uid: int) -> None:
    if info.st_uid not in (uid, 0):
        raise _Refused(_not_yours(here, "directory", info.st_uid, uid))
    if info.st_mode & _WRITABLE_BY_OTHERS and not info.st_mode & _S_ISVTX:
        raise _Refused(
            f"{here} is writable by other users (mode {info.st_mode & 0o7777:04o}) and not "
            "sticky: anyone could put their own socket in it; hookd's directory must "
            "be private (0700)"
        )


def _not_yours(where: str, kind: str, owner: int, uid: int) -> str:
    return (
        f"{where} belongs to uid {owner}, not to you (uid {uid}): another user may have "
        f"created this {kind} to intercept hookd's traffic"
    )

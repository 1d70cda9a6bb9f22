"""Where the daemon's socket is, and whether the shared ``/tmp`` fallback may be trusted.

One function answers "which path" for the daemon, ``hookctl``, the three
client flavours and ``hookd-relay``: ``$HOOKD_SOCKET``, else
``$XDG_RUNTIME_DIR/hookd/hookd.sock`` (when that directory exists), else
``/tmp/hookd-<uid>/hookd.sock``.

The last one lives in a world-writable directory, so anyone can create
``/tmp/hookd-<uid>`` before the daemon does and listen there: a client that
connected would send every hook input to a stranger and apply whatever verdict
came back.  So, as ssh-agent and tmux do, a path in the fallback directory is
used only when the directory is a real directory (not a symlink) owned by the
caller's uid and writable by nobody else, and the socket in it (when there is
one) is owned by the caller too.  ``$XDG_RUNTIME_DIR`` is private by
construction (the login manager makes it 0700 for the user) and an explicit
path is the caller's own choice, so only the fallback is checked.

Why this module imports nothing but ``os``: ``hookd-relay`` imports it on
every hook event, where start-up time is the whole cost, and the checks are
two ``lstat`` calls.
"""

import os

__all__ = ["default_socket_path", "fallback_dir", "runtime_dir", "unsafe_reason"]

_S_IFMT = 0o170000
_S_IFDIR = 0o040000
_S_IFSOCK = 0o140000
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
    """Why ``path`` must not be used, or None.

    Only a path inside :func:`fallback_dir` is checked; a missing directory or
    socket is not unsafe (connecting then fails as "not running").  ``lstat``
    only, so a symlink planted in place of the directory or the socket is
    seen as what it is.
    """
    directory = os.path.dirname(path)
    fallback = fallback_dir()
    if directory.rstrip("/") != fallback:
        return None
    uid = os.getuid()
    for name, want in ((fallback, _S_IFDIR), (path, _S_IFSOCK)):
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"cannot check {name}: {exc.strerror or exc}"
        kind = "directory" if want == _S_IFDIR else "socket"
        if info.st_mode & _S_IFMT != want:
            return f"{name} is not a {kind} (a symlink or file that someone else may control)"
        if info.st_uid != uid:
            return (
                f"{name} belongs to uid {info.st_uid}, not to you (uid {uid}): "
                "another user may have created it to intercept hookd's traffic"
            )
        if info.st_mode & _WRITABLE_BY_OTHERS:
            return (
                f"{name} is writable by other users (mode {info.st_mode & 0o7777:04o}); "
                f"hookd's {kind} must be private (0700 directory, 0600 socket)"
            )
    return None

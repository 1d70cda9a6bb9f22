"""What a path-like field may hold when it crosses into the daemon.

A path from a client ends up in ``open``, ``stat``, ``chdir`` and the config
registry's keys.  The kernel refuses a NUL byte (Python raises ``ValueError``
before the system call, which no ``except OSError`` catches) and anything over
``PATH_MAX``; a relative ``cwd`` would be resolved against the *daemon's*
directory, which is never what the agent meant.  Checking at the protocol edge
turns each of those into a ``bad_request`` that names the field, instead of an
exception deep inside the daemon — one such request used to leave a project
registered that no reload could read, and the next watched change stopped the
daemon (issue 14).
"""

from __future__ import annotations

__all__ = ["PATH_MAX", "check_path", "path_problem"]

PATH_MAX = 4096
"""Linux's ``PATH_MAX`` (bytes, NUL included); a longer path can never be opened."""


def path_problem(value: str, *, absolute: bool = False) -> str | None:
    """Why ``value`` cannot be used as a path, or None when it can."""
    if "\0" in value:
        return "contains a NUL byte"
    # UTF-8 takes at most 4 bytes a character: most paths are short enough to skip
    # the encode (this runs on every event's cwd).
    if len(value) * 4 >= PATH_MAX and len(value.encode("utf-8", "surrogatepass")) >= PATH_MAX:
        return f"is longer than PATH_MAX ({PATH_MAX} bytes)"
    if absolute and not value.startswith("/"):
        return f"must be an absolute path, got {value[:80]!r}"
    return None


def check_path(field: str, value: str | None, *, absolute: bool = False) -> None:
    """Raise ``ValueError("`field` …")`` for an unusable path (None passes).

    Called from Structs' ``__post_init__``: msgspec turns the ``ValueError``
    into a ``ValidationError`` carrying this message.
    """
    if value is None:
        return
    problem = path_problem(value, absolute=absolute)
    if problem is not None:
        raise ValueError(f"`{field}` {problem}")

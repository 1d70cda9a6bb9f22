"""A name from an event (a session id) as one component of a path hookd creates.

Session ids arrive in hook inputs: from the agent, from a client, from a token holder at the
http door. hookd names per-session directories after them (``CLAUDE_ENV_FILE`` files under
``<state>/env/<session>/``, spilled outputs under ``<spill>/<session>/``), so an id such as
``../../elsewhere`` would make the daemon create directories and files outside its own tree.
Claude Code's ids are UUIDs; anything that is not a plain file name becomes a digest of
itself, so two different ids never share a directory and no id leaves the parent.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["file_name_for"]

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+=-]{0,127}")


def file_name_for(name: str, *, empty: str = "no-session") -> str:
    """``name`` itself when it is a plain file name, else ``id-<sha256 prefix>`` of it."""
    if not name:
        return empty
    if _PLAIN.fullmatch(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"id-{digest}"

"""What hookd reads about an agent's process from ``/proc`` (Linux; a safe default elsewhere).

Both front doors that learn an agent's pid — the relay request and the http
endpoint — ask the same question of it, so the answer lives here, below both.
"""

from __future__ import annotations

__all__ = ["agent_context"]


def agent_context(pid: int | None) -> str:
    """``batch`` when the agent is ``claude -p`` (nobody to ask; asyncRewake hooks
    are waited for, as observed), else ``interactive`` — read from its command line."""
    if pid is None:
        return "interactive"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return "interactive"
    return "batch" if b"-p" in argv or b"--print" in argv else "interactive"

"""How a request handler answers: a reply now, or work for a task.

Every handler is a plain function called in the connection's reader task.
Most requests are answered from memory without awaiting, and a reply
returned there is written at once — no task, no trip through trio's
scheduler.  A request that must wait (an event whose hooks run, a status
line command, ``tail -f``) returns :class:`Later`: the dispatcher runs its
work in a task of the connection's nursery, where it can be cancelled, and
sends what it returns.  A handler that already sent what it had to send
returns None.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from hookd.daemon.connection import Connection

__all__ = ["Answer", "Handler", "Later", "RequestError"]


@dataclass(frozen=True, slots=True)
class Later:
    """The request needs a task: ``work`` runs in the connection's nursery; its result is sent."""

    work: Callable[[], Awaitable[msgspec.Struct | None]]


class RequestError(Exception):
    """A request the daemon refuses: answered with ``error{code, message}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


Answer = msgspec.Struct | Later | None
Handler = Callable[[Connection, Any], Answer]
"""A request handler: the connection it came on and the decoded request → its answer."""

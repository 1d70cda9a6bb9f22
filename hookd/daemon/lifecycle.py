"""Whether the daemon is stopping, and how to ask it to.

The server sets :attr:`Lifecycle.stopping` when it begins to shut down and
waits on :attr:`Lifecycle.stop_requested`; the ``shutdown`` request and the
signal handler ask for the stop; the event route refuses new events once it
is stopping.  One small object below all of them, so none needs the server.
"""

from __future__ import annotations

import trio

__all__ = ["Lifecycle"]


class Lifecycle:
    def __init__(self) -> None:
        self.stopping = False
        """Shutdown has begun: no new connection is accepted, no new event is run."""
        self.stop_requested = trio.Event()

    def request_stop(self) -> None:
        self.stop_requested.set()

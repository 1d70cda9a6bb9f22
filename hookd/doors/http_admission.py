"""Who may hold a connection to the http door: the token's holders, and briefly, anyone.

Any local process can connect to the loopback port — another user's too — and
until its first request is read nobody knows whether it holds the token.  If
every accepted connection counted against ``http_max_connections``, a process
without the token could hold them all with connections that never say a word
(issue 28: 300 silent connections from another uid, then every one of the
owner's new connections got ``503`` and Claude Code's guards stopped running).

So a connection is *pending* from its accept until a request of it shows the
token, and pending connections live in a pool of their own
(``http_max_unauthenticated``).  When the pool is full a newcomer is never
refused: the oldest pending connection is evicted instead — preferring one
whose socket another uid owns (asked of the kernel, ``sock_diag``, only then:
a door that is not under pressure makes no such system call).  So a flood can
only ever push out other pending connections, and the owner's new connection,
which shows its token in its first read, is trusted before a flood could reach
it.  Only *trusted* connections — shown the token, or a peer of the owner's
uid on the Unix socket — count against ``http_max_connections`` and can earn a
``503``.

Eviction is ``shutdown(SHUT_RDWR)``: the connection's own task then reads the
end of the stream and closes it, as if the client had left.  A pending
connection is never inside a hook run (nothing runs without the token), so
there is nothing to cancel.  Admission is synchronous and on the loop thread,
like the Unix socket's (:mod:`hookd.daemon.limits`): a burst cannot slip past a
check between two awaits.
"""

from __future__ import annotations

import os
import socket
import struct
from collections import Counter
from collections.abc import Callable

import structlog

__all__ = ["DoorAdmission"]

log = structlog.get_logger("hookd.doors.http")

_UNKNOWN = -1
"""A pending connection whose owner uid has not been asked yet."""


class DoorAdmission:
    """The pending pool and the trusted count of one http listener set.

    ``uid_of``: the uid owning a connection's peer socket (None when the kernel
    will not say); asked at most once per connection, and only when the pool is
    full and a connection must be chosen for eviction.  ``counters`` gets
    ``http_evicted`` (what ``hookctl status`` shows).
    """

    def __init__(
        self,
        max_trusted: int | None,
        max_pending: int,
        uid_of: Callable[[socket.socket], int | None],
        counters: Counter[str] | None = None,
        own_uid: int | None = None,
    ) -> None:
        self.max_trusted = max_trusted
        self.max_pending = max(1, max_pending)
        self._uid_of = uid_of
        self.own_uid = os.getuid() if own_uid is None else own_uid
        self.pending: dict[socket.socket, int | None] = {}
        """Pending connections, oldest first, with their peer's uid once asked."""
        self.trusted: set[socket.socket] = set()
        self.counters: Counter[str] = Counter() if counters is None else counters

    def admit_pending(self, conn: socket.socket) -> None:
        """A new connection nobody vouches for yet: into the pool, evicting if it is full."""
        if len(self.pending) >= self.max_pending:
            self._evict(self._victim())
        self.pending[conn] = _UNKNOWN

    def admit_trusted(self, conn: socket.socket) -> str | None:
        """A connection trusted from its accept (the owner-only Unix socket), or why not."""
        refused = self._over_cap()
        if refused is None:
            self.trusted.add(conn)
        return refused

    def promote(self, conn: socket.socket) -> str | None:
        """``conn`` showed the token: trust it, or say why it cannot be served (the cap,
        or it was evicted while its request was still in its buffer)."""
        if conn in self.trusted:
            return None
        if conn not in self.pending:
            return "connection closed by hookd: more newer unauthenticated connections arrived"
        refused = self._over_cap()
        if refused is None:
            del self.pending[conn]
            self.trusted.add(conn)
        return refused

    def leave(self, conn: socket.socket) -> None:
        """``conn`` is closed (whatever it was)."""
        if conn in self.pending:
            del self.pending[conn]
        else:
            self.trusted.discard(conn)

    def _over_cap(self) -> str | None:
        if self.max_trusted is None or len(self.trusted) < self.max_trusted:
            return None
        return (
            f"hookd already has {len(self.trusted)} authenticated http connections open "
            f"(setting http_max_connections = {self.max_trusted})"
        )

    def _victim(self) -> socket.socket:
        """The oldest pending connection of another uid (or of an unknown one); the
        oldest of all when every one is the owner's."""
        for conn, uid in self.pending.items():
            if uid == _UNKNOWN:
                uid = self.pending[conn] = self._ask_uid(conn)
            if uid != self.own_uid:
                return conn
        return next(iter(self.pending))

    def _ask_uid(self, conn: socket.socket) -> int | None:
        try:
            return self._uid_of(conn)
        except (OSError, struct.error) as exc:  # gone, or a reply netlink should not give
            log.debug("http peer uid unknown", error=str(exc))
            return None

    def _evict(self, conn: socket.socket) -> None:
        uid = self.pending.pop(conn)
        self.counters["http_evicted"] += 1
        evicted = self.counters["http_evicted"]
        if evicted == 1 or evicted % 1000 == 0:  # a flood is said, not logged per connection
            log.warning(
                "http door: unauthenticated connections evicted by newer ones",
                evicted=evicted,
                peer_uid=uid if uid != _UNKNOWN else None,
                setting=f"http_max_unauthenticated = {self.max_pending}",
            )
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # the client is gone already: its task closes it
            log.debug("evicted http connection already gone", error=str(exc))

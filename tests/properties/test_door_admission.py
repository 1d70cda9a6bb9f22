"""Who may hold a connection to the http door, over every order of arrivals (issue 32).

:class:`hookd.doors.http_admission.DoorAdmission` decides, synchronously, what
happens to each connection of the loopback port and of ``http.sock``.  Its rules,
checked against a model over random sequences of connections of several uids —
new connections, requests that show the token, connections that leave:

- the pending pool (connections that have not shown the token) never holds more than
  ``http_max_unauthenticated``: a newcomer to a full pool is never refused, it evicts
  exactly one connection — the oldest of *another* uid (a uid the kernel will not
  name counts as another), and the owner's oldest only when every pending one is the
  owner's; the evicted connection is shut down (its peer reads the end) and counted;
- the peer's uid is asked only when a connection must be chosen for eviction, and at
  most once per connection (a door not under pressure makes no such system call);
- only trusted connections count against ``http_max_connections``: showing the
  token past the cap is refused with a reason naming the setting, and a connection
  evicted while its request was still buffered is refused too, never trusted;
- a connection that leaves frees its place, pending or trusted.

Real sockets (``socketpair``), a model of the rules; the door's own tests
(``tests/reliability/test_http_door.py``) run the same rules with real processes of
another uid.
"""

from __future__ import annotations

import socket
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hookd.doors.http_admission import DoorAdmission

OWNER = 0
"""The daemon's uid (``own_uid``): root's, so that no uid value is special to the door."""
OTHER = 1000
UNNAMED = None
"""A peer whose uid the kernel does not say (gone already, or not a TCP socket)."""
RAISES = "raises"
"""A peer whose uid lookup fails (``OSError``): counted as another uid."""

_UIDS = st.sampled_from([OWNER, OTHER, OTHER + 1, UNNAMED, RAISES])
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("connect"), _UIDS),
        st.tuples(st.just("token"), st.integers(0, 40)),
        st.tuples(st.just("leave"), st.integers(0, 40)),
        st.tuples(st.just("trusted connect"), st.just(OWNER)),  # the owner-only socket
    ),
    max_size=40,
)


class _Model:
    def __init__(self, max_trusted: int | None, max_pending: int) -> None:
        self.max_trusted = max_trusted
        self.max_pending = max(1, max_pending)
        self.pending: list[socket.socket] = []
        self.trusted: set[socket.socket] = set()
        self.evicted: list[socket.socket] = []

    def victim(self, uid_of: dict[socket.socket, object]) -> socket.socket:
        for conn in self.pending:
            if uid_of[conn] != OWNER:
                return conn
        return self.pending[0]

    def over_cap(self) -> bool:
        return self.max_trusted is not None and len(self.trusted) >= self.max_trusted


@settings(max_examples=150, deadline=None)
@example(  # the owner's pending connection, passed over by two evictions: asked once
    steps=[("connect", OWNER), ("connect", OTHER), ("connect", OTHER), ("connect", OTHER)],
    max_pending=2,
    max_trusted=None,
)
@given(
    steps=_STEPS,
    max_pending=st.integers(0, 4),
    max_trusted=st.one_of(st.none(), st.integers(0, 4)),
)
def test_the_pool_and_the_cap_over_every_order_of_arrivals(
    steps: list[tuple[str, object]], max_pending: int, max_trusted: int | None
) -> None:
    uid_of: dict[socket.socket, object] = {}
    asked: Counter[socket.socket] = Counter()

    def peer_uid(conn: socket.socket) -> int | None:
        asked[conn] += 1
        uid = uid_of[conn]
        if uid == RAISES:
            raise OSError("gone")
        assert uid is None or isinstance(uid, int)
        return uid

    counters: Counter[str] = Counter()
    door = DoorAdmission(max_trusted, max_pending, peer_uid, counters, own_uid=OWNER)
    model = _Model(max_trusted, max_pending)
    peers: dict[socket.socket, socket.socket] = {}
    opened: list[socket.socket] = []
    try:
        for action, arg in steps:
            if action in ("connect", "trusted connect"):
                ours, theirs = socket.socketpair()
                peers[ours] = theirs
                opened.append(ours)
                uid_of[ours] = arg
                if action == "trusted connect":
                    refused = door.admit_trusted(ours)
                    assert (refused is not None) == model.over_cap(), refused
                    if refused is None:
                        model.trusted.add(ours)
                    else:
                        assert f"http_max_connections = {max_trusted}" in refused
                    continue
                full = len(model.pending) >= model.max_pending
                if full:
                    victim = model.victim(uid_of)
                    model.pending.remove(victim)
                    model.evicted.append(victim)
                before = dict(asked)
                door.admit_pending(ours)
                model.pending.append(ours)
                if not full:
                    assert dict(asked) == before, "a uid asked with room in the pool"
            elif opened:
                conn = opened[int(str(arg)) % len(opened)]
                if action == "token":
                    refused = door.promote(conn)
                    if conn in model.trusted:
                        assert refused is None
                    elif conn not in model.pending:  # evicted (or left)
                        assert refused is not None and "unauthenticated" in refused, refused
                    elif model.over_cap():
                        assert refused is not None, "trusted past the cap"
                        assert f"http_max_connections = {max_trusted}" in refused
                    else:
                        assert refused is None, refused
                        model.pending.remove(conn)
                        model.trusted.add(conn)
                else:
                    door.leave(conn)
                    if conn in model.pending:
                        model.pending.remove(conn)
                    model.trusted.discard(conn)
            assert list(door.pending) == model.pending
            assert door.trusted == model.trusted
            assert len(door.pending) <= model.max_pending
            assert counters["http_evicted"] == len(model.evicted)
            assert all(n <= 1 for n in asked.values()), "a uid asked twice"
        for conn in opened:  # the evicted, and only they, were shut down
            peers[conn].setblocking(False)
            try:
                ended = peers[conn].recv(1) == b""
            except BlockingIOError:
                ended = False
            assert ended == (conn in model.evicted), (conn in model.evicted, ended)
    finally:
        for conn in opened:
            conn.close()
            peers[conn].close()

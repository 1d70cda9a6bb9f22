"""Which local process is at the other end of a loopback TCP connection (Linux).

TCP has no ``SO_PEERCRED``: the kernel keeps no pid for a TCP peer.  What it
does keep is the peer socket's inode, and every process holding that socket
has an ``fd`` link ``socket:[<inode>]`` in ``/proc/<pid>/fd``.  So the
question has two halves, and both used to be slow:

1. **The inode.**  Reading ``/proc/net/tcp`` costs a line per socket on the
   machine.  One ``NETLINK_SOCK_DIAG`` request names the exact 4-tuple and
   gets back that one socket's inode and owner uid (what ``ss -e`` shows);
   ``/proc/net/tcp{,6}`` stays as the fallback where netlink is refused.
2. **The owner.**  Scanning every ``/proc/<pid>/fd`` (~11 ms on a busy box)
   is what made a new connection cost more than a whole request.  The
   candidates are tried in the order the owner is most likely to be:
   processes that were peers recently (Claude Code opens a new connection
   from the process that owned the last one), then the rest newest first (a
   short-lived client such as ``curl`` has a high pid), skipping every
   process not owned by the socket's uid with one ``stat`` instead of a
   directory listing.

Blocking (``/proc`` and netlink are system calls): call it in a worker thread.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

import structlog

__all__ = ["PeerFinder", "SocketOwner", "peer_uid", "socket_owner"]

log = structlog.get_logger("hookd.doors.tcp_peer")

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NLMSG = struct.Struct("=IHHII")
_DIAG_REQ = struct.Struct("=BBBxI")  # family, protocol, ext, pad, states
_SOCKID = struct.Struct(">HH16s16sI8s")  # ports and addresses in network order
_DIAG_MSG_TAIL = struct.Struct("=IIIII")  # expires, rqueue, wqueue, uid, inode
_NO_COOKIE = b"\xff" * 8
_RECENT = 8
"""Recent peer pids remembered: Claude Code sessions on one machine, give or take."""


@dataclass(frozen=True, slots=True)
class SocketOwner:
    """The peer socket's inode and the uid that owns it."""

    inode: int
    uid: int | None


def socket_owner(client: tuple[str, int], server: tuple[str, int]) -> SocketOwner | None:
    """The socket ``client → server`` (the peer's end of a connection we accepted)."""
    try:
        return _sock_diag(client, server)
    except OSError as exc:
        log.debug("sock_diag refused; reading /proc/net/tcp", error=str(exc))
    return _proc_net_owner(client[1], server[1])


def peer_uid(conn: socket.socket) -> int | None:
    """The uid owning the peer's end of an accepted loopback connection (None: unknown).

    Synchronous and cheap (a netlink round trip; no ``/proc`` scan): the http door
    asks it on the loop thread, and only of connections it must choose between.
    """
    local, peer = conn.getsockname(), conn.getpeername()
    owner = socket_owner((peer[0], peer[1]), (local[0], local[1]))
    return None if owner is None else owner.uid


def _sock_diag(client: tuple[str, int], server: tuple[str, int]) -> SocketOwner | None:
    src, dst = ipaddress.ip_address(client[0]), ipaddress.ip_address(server[0])
    family = socket.AF_INET if src.version == 4 else socket.AF_INET6
    src_bytes, dst_bytes = src.packed.ljust(16, b"\0"), dst.packed.ljust(16, b"\0")
    sockid = _SOCKID.pack(client[1], server[1], src_bytes, dst_bytes, 0, _NO_COOKIE)
    body = _DIAG_REQ.pack(family, socket.IPPROTO_TCP, 0, 0xFFFFFFFF) + sockid
    header = _NLMSG.pack(_NLMSG.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
        nl.sendto(header + body, (0, 0))
        reply = nl.recv(65536)
    length, kind, _, _, _ = _NLMSG.unpack_from(reply)
    if kind == _NLMSG_ERROR:
        code = -struct.unpack_from("=i", reply, _NLMSG.size)[0]
        if code == errno.ENOENT:
            return None  # gone already (the client closed), or not on this host
        raise OSError(code, os.strerror(code))
    if kind != _SOCK_DIAG_BY_FAMILY or length < _NLMSG.size + 4 + _SOCKID.size + 20:
        raise OSError(errno.EPROTO, f"unexpected sock_diag reply type {kind}")
    tail = _NLMSG.size + 4 + _SOCKID.size
    _, _, _, uid, inode = _DIAG_MSG_TAIL.unpack_from(reply, tail)
    return SocketOwner(inode, uid)


def _proc_net_inode(client_port: int, server_port: int) -> int | None:
    owner = _proc_net_owner(client_port, server_port)
    return None if owner is None else owner.inode


def _proc_net_owner(client_port: int, server_port: int) -> SocketOwner | None:
    """The fallback: ``/proc/net/tcp{,6}`` lists each socket's owner uid and inode."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                lines = fh.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if local_port == client_port and remote_port == server_port:
                return SocketOwner(int(fields[9]), int(fields[7]))
    return None


def _holds(pid: int, wanted: str) -> bool | None:
    """Whether ``pid`` has an fd on the socket; None when its fds cannot be listed."""
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(f"{fd_dir}/{fd}") == wanted:
                return True
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.EACCES, errno.EPERM):
                log.debug("cannot read fd link", pid=pid, error=str(exc))
    return False


@dataclass
class PeerFinder:
    """Finds peer pids, remembering recent ones; its counters say what each search cost.

    One finder serves one listener; its searches run in worker threads, so its
    state is only touched through :meth:`find` (list appends and counter
    increments are atomic under the GIL, and a lost hint only costs a scan).
    """

    recent: list[int] = field(default_factory=list)
    lookups: int = 0
    """Searches made (the endpoint makes at most one per connection)."""
    processes_scanned: int = 0
    """Processes whose fd table was listed, over all searches."""

    def find(self, client: tuple[str, int], server: tuple[str, int]) -> int | None:
        """The pid holding ``client``'s end of the connection (None: unknown or gone)."""
        found = self.find_peer(client, server)
        return None if found is None else found[0]

    def find_peer(self, client: tuple[str, int], server: tuple[str, int]) -> tuple[int, str] | None:
        """The pid holding ``client``'s end, with the socket's ``fd`` link
        (``socket:[<inode>]``): what a reader checks again once it has pinned the
        process (:func:`hookd.agent_process.own_process`), since a pid can be reused."""
        self.lookups += 1
        owner = socket_owner(client, server)
        if owner is None:
            return None
        wanted = f"socket:[{owner.inode}]"
        for pid in self._candidates(owner.uid):
            self.processes_scanned += 1
            if _holds(pid, wanted):
                if pid in self.recent:
                    self.recent.remove(pid)
                self.recent.insert(0, pid)
                del self.recent[_RECENT:]
                return pid, wanted
        return None

    def _candidates(self, uid: int | None) -> Iterable[int]:
        me = os.getpid()
        hints = [pid for pid in self.recent if pid != me]
        yield from hints
        try:
            pids = sorted((int(p) for p in os.listdir("/proc") if p.isdigit()), reverse=True)
        except OSError:
            return
        for pid in pids:
            if pid == me or pid in hints:
                continue
            if uid is not None:
                try:
                    if os.stat(f"/proc/{pid}").st_uid != uid:
                        continue
                except OSError:
                    continue
            yield pid

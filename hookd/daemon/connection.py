"""One client connection: frames in, frames out, and nothing a client does can stall others.

A reply is written at once, without awaiting, when the socket takes it and
nothing is queued ahead of it (:meth:`Connection.send`); what the socket
cannot take goes to a bounded queue that one writer task drains.  So a
request handler never blocks on a slow reader: when the queue is full, or a
single queued write takes longer than ``send_timeout``, the client is too slow
and its connection is closed (its in-flight work is cancelled with it).  Framing
errors that lose the frame boundary (an oversized length) close the
connection; errors inside a well-framed body get an ``error`` reply and the
connection goes on.
"""

from __future__ import annotations

import collections
import itertools
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import structlog
import trio

from hookd.daemon.limits import BufferBudget, LimitExceeded, request_id_in
from hookd.fdio import read_when_ready, write_nowait
from hookd_client import protocol
from hookd_client.framing import FrameReader
from hookd_client.protocol import HEADER

__all__ = ["Connection", "PeerCred", "peer_credentials"]

log = structlog.get_logger("hookd.connection")

_READ_CHUNK = 65536


class PeerCred(msgspec.Struct, frozen=True):
    pid: int
    uid: int
    gid: int


def peer_credentials(stream: trio.SocketStream) -> PeerCred | None:
    """SO_PEERCRED of a Unix-socket peer (Linux); None where the platform has none."""
    sock = stream.socket
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return PeerCred(pid, uid, gid)


class Connection:
    _ids = itertools.count(1)

    def __init__(
        self,
        stream: trio.SocketStream,
        peer: PeerCred | None,
        *,
        max_frame: int,
        send_queue: int,
        send_timeout: float,
        hello_timeout: float,
        frame_timeout: float,
        budget: BufferBudget | None = None,
    ) -> None:
        self.stream = stream
        self.peer = peer
        self.number = next(self._ids)
        self.max_frame = max_frame
        self.send_timeout = send_timeout
        self.hello_timeout = hello_timeout
        self.frame_timeout = frame_timeout
        self.budget = budget
        self.reserved = 0
        """Bytes of :attr:`budget` this connection holds for the frame arriving now."""
        self._opened = trio.current_time()
        self.client = ""
        self.agent_pid: int | None = peer.pid if peer else None
        self.env: dict[str, str] | None = None
        """The agent's environment from ``hello`` (None: the client sent none)."""
        self.greeted = False
        self.send_queue = send_queue
        self._outbox: collections.deque[bytes] = collections.deque()
        self._queued_held = 0
        """Bytes of the buffer budget the large replies in the outbox hold."""
        self._writer_busy = False
        self._more = trio.Event()
        self._finishing = False
        self._fd = stream.socket.fileno()
        self._callback_ids = itertools.count(1)
        self._callbacks: dict[int, trio.MemorySendChannel[protocol.CallbackResult]] = {}
        self.cancel_scope = trio.CancelScope()
        """Cancels everything of this connection: the hard close."""
        self.reader_scope = trio.CancelScope()
        """Cancels only reading: the graceful close (queued replies are still sent)."""
        self.requests: dict[int, trio.CancelScope] = {}
        self.streams: set[int] = set()
        """Requests that never finish on their own (``tail -f``): cancelled at EOF."""
        self._no_requests = trio.Event()
        self._no_requests.set()
        self.closed = False

    # --- sending -----------------------------------------------------------------

    def send(self, message: msgspec.Struct) -> None:
        """Send a message now if the socket takes it, else queue it for the writer.

        Writing straight from the task that produced the reply saves two trips
        through trio's scheduler per request (hand-over to the writer task, and
        its own checkpoint) — a third of a no-hook event's latency.  Order is
        kept: the direct write happens only when nothing is queued and the
        writer holds nothing.  A client whose queue passes ``send_queue``
        messages is too slow and is dropped.
        """
        if self.closed or self._finishing:
            return
        data = protocol.encode(message)
        if len(data) - HEADER.size > self.max_frame:
            data = self._too_large(message, len(data) - HEADER.size)
        if not self._outbox and not self._writer_busy:
            try:
                sent = write_nowait(self._fd, data)
            except OSError:
                self.close()  # the peer is gone
                return
            if sent == len(data):
                return
            data = data[sent:]
        if len(self._outbox) >= self.send_queue:
            log.warning("client too slow: send queue full, closing", conn=self.number)
            self.close()
            return
        if not self._hold_queued(len(data)):
            log.warning(
                "client too slow: its unread replies do not fit the buffer budget, closing",
                conn=self.number,
                queued=self._queued_held,
                size=len(data),
            )
            self.close()
            return
        self._outbox.append(data)
        self._more.set()

    def _hold_queued(self, size: int) -> bool:
        """A large reply waiting for a slow reader is charged to the buffer budget —
        without waiting: 256 queued replies of a few MiB each (hook output, a rewritten
        input) would otherwise be gigabytes held for a client that does not read.  The
        first large one always goes in (charged even past the budget: it is held all
        the same) — a reply larger than what the socket takes at once is no sign of a
        slow reader; a second piling up behind it, with no room left, is."""
        if self.budget is None or size <= _READ_CHUNK:
            return True
        if self._queued_held:
            if not self.budget.take(size):
                return False
        else:
            self.budget.force(size)
        self._queued_held += size
        return True

    def _sent_queued(self, size: int) -> None:
        # After a close every charge was given back at once.
        if self.budget is not None and size > _READ_CHUNK and not self.closed:
            self.budget.give(size)
            self._queued_held -= size

    def _too_large(self, message: msgspec.Struct, size: int) -> bytes:
        """The frame that replaces a reply over ``max_frame``: never send a frame the
        peer was told it need not accept (``welcome.max_frame``)."""
        rid = getattr(message, "id", None)
        kind = type(message).__name__
        log.warning(
            "reply over max_frame replaced by an error", conn=self.number, kind=kind, size=size
        )
        return protocol.encode(
            protocol.Error(
                id=rid if isinstance(rid, int) else None,
                code="too_large",
                message=f"the {kind} reply is {size} bytes, over max_frame ({self.max_frame}); "
                "lower output_cap or raise max_frame",
            )
        )

    async def writer(self) -> None:
        """Drain what :meth:`send` could not write at once; exit when finishing and empty."""
        while True:
            while self._outbox:
                self._writer_busy = True
                data = self._outbox.popleft()
                with trio.move_on_after(self.send_timeout) as scope:
                    try:
                        await self.stream.send_all(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        self._sent_queued(len(data))
                        self.close()
                        return
                self._sent_queued(len(data))
                self._writer_busy = False
                if scope.cancelled_caught:
                    log.warning("client too slow: write timed out, closing", conn=self.number)
                    self.close()
                    return
            if self._finishing or self.closed:
                return
            self._more = trio.Event()
            await self._more.wait()

    def close(self) -> None:
        """Hard close: a misbehaving or vanished client; drop whatever is queued."""
        if not self.closed:
            self.closed = True
            self._outbox.clear()
            if self._queued_held and self.budget is not None:
                self.budget.give(self._queued_held)
            self._queued_held = 0
            self._more.set()
            self.cancel_scope.cancel()

    def end(self) -> None:
        """Graceful close: stop reading; replies already queued are still delivered."""
        self.reader_scope.cancel()

    def finish_sending(self) -> None:
        """No more replies will be queued: the writer flushes and exits."""
        self._finishing = True
        self._more.set()

    # --- request bookkeeping -------------------------------------------------------

    def add_request(self, request_id: int, scope: trio.CancelScope) -> None:
        self.requests[request_id] = scope
        if self._no_requests.is_set():
            self._no_requests = trio.Event()

    def remove_request(self, request_id: int) -> None:
        self.requests.pop(request_id, None)
        self.streams.discard(request_id)
        if not self.requests:
            self._no_requests.set()

    async def wait_requests(self) -> None:
        """Wait for in-flight requests; streaming ones (tail -f) are cancelled instead."""
        for rid in list(self.streams):
            scope = self.requests.get(rid)
            if scope is not None:
                scope.cancel()
        await self._no_requests.wait()

    # --- receiving ---------------------------------------------------------------

    async def frames(self) -> AsyncIterator[tuple[bytes, int]]:
        """Yield ``(frame body, bytes of the budget it holds)`` until EOF; raise
        FrameError when framing is lost.

        Reads in large chunks and lets the client package's sans-IO
        :class:`~hookd_client.framing.FrameReader` cut frames out of them: one
        ``recv`` usually brings a whole frame (often several), where reading
        header and body separately cost a system call each — on these VMs a
        system call is a good part of a no-hook event's cost.  Each read waits
        for readability first (:func:`hookd.fdio.read_when_ready`): a client
        that fires one event at a time has sent nothing yet when its reply goes
        out.

        The budget a large frame holds passes to whoever takes the body: the
        dispatcher gives it back when the request is answered
        (:class:`~hookd.daemon.limits.BufferBudget`).
        """
        frames = FrameReader(self.max_frame)
        frame_started = self._opened
        while True:
            body = frames.next_frame()
            while body is not None:
                held, self.reserved = self.reserved, 0
                frame_started = trio.current_time()
                yield body, held
                body = None  # not kept while this connection waits for its next frame
                if frames.buffered() >= HEADER.size:
                    # More frames already buffered (a pipelining or flooding
                    # client): let other connections run between them.
                    await trio.lowlevel.checkpoint()
                body = frames.next_frame()
            want = _READ_CHUNK
            size = frames.frame_size()
            if size is not None:
                if size > _READ_CHUNK and not self.reserved and not await self._reserve(size):
                    await self._drop_frame(frames, size, frame_started)
                    continue
                want = min(max(want, size - frames.buffered()), 1 << 20)
            chunk = await self._read(frames, frame_started, want)
            if not chunk:
                frames.eof()
                return
            if not frames.buffered():
                frame_started = trio.current_time()
            frames.feed(chunk)

    async def _read(self, frames: FrameReader, frame_started: float, want: int) -> bytes:
        try:
            if frames.buffered() or not self.greeted:
                # A frame under way, or no hello yet: the peer has a deadline.
                return await self._read_by(frame_started, bool(frames.buffered()), want)
            return await read_when_ready(self._fd, want)
        except OSError as exc:  # reset by the peer, and the like
            raise trio.BrokenResourceError(str(exc)) from exc

    async def _read_by(self, frame_started: float, mid_frame: bool, want: int) -> bytes:
        """Read, or raise :class:`LimitExceeded` when the peer's deadline passes first.

        Until ``hello`` the whole handshake has one deadline, counted from the
        connection's start: a hello trickled a byte at a time is a frame under way,
        and must not earn the (longer) frame deadline in its place."""
        deadline, setting = self._opened + self.hello_timeout, "hello_timeout"
        what = f"no `hello` within {self.hello_timeout:g} s"
        if mid_frame and (self.greeted or frame_started + self.frame_timeout < deadline):
            deadline, setting = frame_started + self.frame_timeout, "frame_timeout"
            what = f"a frame was not completed within {self.frame_timeout:g} s"
        with trio.move_on_at(deadline):
            return await read_when_ready(self._fd, want)
        raise LimitExceeded("timeout", f"{what} (setting {setting})")

    async def _reserve(self, size: int) -> bool:
        """Charge a large frame to the budget, waiting for it (bounded); False: refused."""
        if self.budget is None:
            return True
        self.reserved = await self.budget.hold(size)
        return bool(self.reserved)

    async def _drop_frame(self, frames: FrameReader, size: int, frame_started: float) -> None:
        """A frame the budget cannot hold: ``error{busy}`` to its request now, then its
        bytes read and dropped as they come, so the connection goes on (a refused
        event is the client's to handle by its failure policy, not a broken pipe)."""
        assert self.budget is not None
        prefix, remaining = frames.skip_frame()
        kind, rid = request_id_in(prefix)
        self.send(
            protocol.Error(
                # A callback's result carries the daemon's id, not one of the client's.
                id=rid if kind != "callback_result" else None,
                code="busy",
                message=self.budget.refusal(size),
            )
        )
        log.warning("frame refused: buffer budget", conn=self.number, size=size, kind=kind)
        while remaining:
            chunk = await self._read_by(frame_started, True, min(remaining, 1 << 20))
            if not chunk:
                return  # EOF: the caller's next read sees it
            if len(chunk) > remaining:
                frames.feed(chunk[remaining:])
                remaining = 0
            else:
                remaining -= len(chunk)

    def release_buffer(self) -> None:
        """Give back this connection's share of the buffer budget (frame done, or closed)."""
        if self.reserved and self.budget is not None:
            self.budget.give(self.reserved)
        self.reserved = 0

    # --- server-initiated requests (client callbacks) ----------------------------

    async def call_back(
        self, callback_id: str, payload: dict[str, Any], tool_use_id: str | None, timeout: float
    ) -> protocol.CallbackResult:
        """Ask the client to run one of its callbacks; cancelled or timed out → told so."""
        if self.closed:
            return protocol.CallbackResult(id=0, error="the client that registered it is gone")
        rid = next(self._callback_ids)
        send, receive = trio.open_memory_channel[protocol.CallbackResult](1)
        self._callbacks[rid] = send
        try:
            self.send(
                protocol.Callback(
                    id=rid,
                    callback_id=callback_id,
                    input=payload,
                    tool_use_id=tool_use_id,
                    timeout=timeout,
                )
            )
            try:
                return await receive.receive()
            except trio.EndOfChannel:
                return protocol.CallbackResult(id=rid, error="the client disconnected")
        except trio.Cancelled:
            # The engine's timeout (or a cancel) ended the wait: tell the client to stop.
            self.send(protocol.CallbackCancel(id=rid))
            raise
        finally:
            self._callbacks.pop(rid, None)

    def deliver_callback_result(self, message: protocol.CallbackResult) -> bool:
        channel = self._callbacks.get(message.id)
        if channel is None:
            return False
        try:
            channel.send_nowait(message)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    def fail_callbacks(self) -> None:
        for channel in self._callbacks.values():
            channel.close()
        self._callbacks.clear()

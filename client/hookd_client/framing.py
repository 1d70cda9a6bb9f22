"""Frame reading without I/O: bytes in, whole frame bodies out.

Every frame is a 4-byte big-endian length and that many bytes of body
(docs/protocol.md).  The daemon's connection and all three clients read
frames the same way, so the rule is written once, here, free of any I/O
library: each reader does its own ``recv`` (trio, asyncio, a blocking socket,
the daemon's raw descriptor) and hands the bytes to a :class:`FrameReader`.
Reading big chunks and cutting frames out of one buffer is also the fast way:
one ``recv`` usually brings a whole frame, often several, where reading header
and body separately costs a system call each.

``hookd-relay`` keeps its own tiny reader on purpose (it imports nothing but
``_socket``, ``os`` and ``sys``, for start-up time, and reads one reply).
"""

from __future__ import annotations

from hookd_client.protocol import HEADER, FrameError

__all__ = ["FrameReader"]

_HEADER_SIZE = HEADER.size
_unpack_from = HEADER.unpack_from


class FrameReader:
    """Reassembles frames from a byte stream that arrives in arbitrary chunks.

    ``feed`` the bytes as they come; ``next_frame`` returns one whole body at a
    time, or None when more bytes are needed.  A length over ``max_frame``
    raises :class:`~hookd_client.protocol.FrameError` as soon as its header is
    in (framing is then lost: the connection must close), and so does
    :meth:`eof` when the stream ends inside a frame.
    """

    __slots__ = ("_buf", "max_frame")

    def __init__(self, max_frame: int) -> None:
        self._buf = bytearray()
        self.max_frame = max_frame

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next_frame(self) -> bytes | None:
        """The next whole frame's body (taken out of the buffer), or None."""
        buf = self._buf
        if len(buf) < _HEADER_SIZE:
            return None
        (length,) = _unpack_from(buf)
        if length > self.max_frame:
            raise FrameError(
                f"frame of {length} bytes exceeds the maximum of {self.max_frame} bytes"
            )
        end = _HEADER_SIZE + length
        if len(buf) < end:
            return None
        body = bytes(buf[_HEADER_SIZE:end])
        del buf[:end]
        return body

    def buffered(self) -> int:
        """Bytes received and not yet returned as a frame."""
        return len(self._buf)

    def frame_size(self) -> int | None:
        """Header and body of the frame under way, once its header is in (else None)."""
        if len(self._buf) < _HEADER_SIZE:
            return None
        (length,) = _unpack_from(self._buf)
        return _HEADER_SIZE + int(length)

    def skip_frame(self, keep: int = 64) -> tuple[bytes, int]:
        """Drop the frame under way (its header is in): the first ``keep`` bytes of its
        body received so far, and how many of its bytes are still to come — the
        caller reads and drops those, so that a refused frame costs no memory."""
        size = self.frame_size()
        if size is None:
            raise ValueError("no frame under way")
        have = len(self._buf)
        prefix = bytes(self._buf[_HEADER_SIZE : min(have, size, _HEADER_SIZE + keep)])
        del self._buf[: min(have, size)]
        return prefix, max(0, size - have)

    def eof(self) -> None:
        """The stream ended: fine between frames, a FrameError inside one."""
        if self._buf:
            raise FrameError(
                f"connection closed in the middle of a frame ({len(self._buf)} bytes pending)"
            )

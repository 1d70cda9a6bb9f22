"""The one request shape Claude Code sends, read without h11; anything else goes to h11.

Every http hook call is the same small thing: ``POST /hooks/<Event>
HTTP/1.1`` with a ``Content-Length`` JSON body on a keep-alive connection.
h11 reads it correctly but costs ~100–400 µs of Python per request (its
state machine runs per event, its header validation per header) — more
than the whole rest of a no-hook event.  This module reads exactly that
shape in a few µs and *declines* everything else, so h11 keeps serving what
needs its generality: chunked bodies, ``Expect``, HTTP/1.0, folded or
malformed headers, and every protocol error with its precise status.

Declining is the safe direction: a request this reader accepts is one h11
would accept the same way (request line of token, origin-form target and
``HTTP/1.1``; field names that are tokens; values without control bytes;
one ``Content-Length`` of digits; a ``Host``), and its answer is written in
the same form h11 would write it.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass

__all__ = ["MAX_HEAD", "HeadMemo", "SimpleRequest", "parse_head", "response_bytes"]

MAX_HEAD = 64 * 1024
"""A request head longer than this is left to h11 (which refuses it: 431)."""

_REQUEST_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (/[!-~]*) HTTP/1\.1")
_VALUE = rb"(?:[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff\t]*[\x21-\x7e\x80-\xff])?)?"
_FIELD = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(" + _VALUE + rb")[ \t]*")


@dataclass(slots=True)
class SimpleRequest:
    """A request head in the shape above (header names lowercased, as h11 gives them)."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]
    content_length: int
    close: bool
    """The client sent ``Connection: close``: answer, then close."""
    length_at: tuple[int, int] | None = None
    """Where the ``Content-Length`` value is in the head (None without one)."""


def parse_head(head: bytes) -> SimpleRequest | None:
    """The head (without its final blank line) if it is the simple shape, else None."""
    lines = head.split(b"\r\n")
    first = _REQUEST_LINE.fullmatch(lines[0])
    if first is None or first.group(1) == b"HEAD":  # HEAD's answer has no body: h11's job
        return None
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    length_at = None
    close = False
    host = False
    offset = len(lines[0]) + 2
    for line in lines[1:]:
        field = _FIELD.fullmatch(line)
        if field is None:
            return None  # obs-fold, bare LF, control bytes…: h11 decides
        name, value = field.group(1).lower(), field.group(2)
        if name == b"content-length":
            if length is not None or not value.isdigit() or len(value) > 18:
                return None
            length = int(value)
            length_at = (offset + field.start(2), offset + field.end(2))
        elif name == b"transfer-encoding" or name == b"expect" or name == b"upgrade":
            return None
        elif name == b"connection":
            tokens = {t.strip().lower() for t in value.split(b",")}
            if tokens - {b"close", b"keep-alive"}:
                return None
            close = b"close" in tokens
        elif name == b"host":
            if host:
                return None
            host = True
        headers.append((name, value))
        offset += len(line) + 2
    if not host:
        return None
    return SimpleRequest(first.group(1), first.group(2), headers, length or 0, close, length_at)


class HeadMemo:
    """One connection's last simple head, so the next one is read by comparison.

    A client on a kept-alive connection sends the same head each time but for
    the ``Content-Length`` value (axios, under Claude Code's http hooks, does).
    A head whose bytes before and after that value equal the last accepted
    head's, with digits in between, is that head with another length — the
    same checks would pass on every other byte — so it is taken in two
    comparisons instead of a parse, the largest part of reading a request.
    """

    __slots__ = ("_after", "_before", "_index", "_last")

    def __init__(self) -> None:
        self._before = b""
        self._after = b""
        self._last: SimpleRequest | None = None
        self._index = 0

    def copy(self) -> HeadMemo:
        memo = HeadMemo()
        memo._before, memo._after, memo._last, memo._index = (
            self._before,
            self._after,
            self._last,
            self._index,
        )
        return memo

    def parse(self, head: bytes) -> SimpleRequest | None:
        """:func:`parse_head`, remembering the answer for the next head."""
        last, before, after = self._last, self._before, self._after
        value_end = len(head) - len(after)
        # Compared in constant time: the head carries the token (and on a server's
        # memo, the last connection's), which is only ever compared that way.
        if (
            last is not None
            and value_end > len(before)
            and hmac.compare_digest(head[: len(before)], before)
            and hmac.compare_digest(head[value_end:], after)
        ):
            value = head[len(before) : value_end]
            if value.isdigit() and len(value) <= 18:
                headers = last.headers.copy()
                headers[self._index] = (b"content-length", value)
                return SimpleRequest(
                    last.method,
                    last.target,
                    headers,
                    int(value),
                    last.close,
                    (len(before), value_end),
                )
        request = parse_head(head)
        if request is not None and request.length_at is not None:
            start, stop = request.length_at
            self._before, self._after, self._last = head[:start], head[stop:], request
            self._index = [n for n, _ in request.headers].index(b"content-length")
        return request


def response_bytes(status: int, reason: bytes, payload: bytes, close: bool = False) -> bytes:
    """One whole response, as h11 writes it for the same status and headers."""
    if status == 200 and not payload:
        return _NOTHING_TO_SAY[close]  # most answers: no hook had anything to say
    return _response_bytes(status, reason, payload, close)


def _response_bytes(status: int, reason: bytes, payload: bytes, close: bool) -> bytes:
    head = b"HTTP/1.1 %d %s\r\ncontent-length: %d\r\n" % (status, reason, len(payload))
    if payload:
        head += b"content-type: application/json\r\n"
    if close:
        head += b"connection: close\r\n"
    return head + b"\r\n" + payload


_NOTHING_TO_SAY = {close: _response_bytes(200, b"OK", b"", close) for close in (False, True)}

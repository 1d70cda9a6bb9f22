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

import re
from dataclasses import dataclass

__all__ = ["MAX_HEAD", "SimpleRequest", "parse_head", "response_bytes"]

MAX_HEAD = 64 * 1024
"""A request head longer than this is left to h11 (which refuses it: 431)."""

_REQUEST_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (/[!-~]*) HTTP/1\.1")
_VALUE = rb"(?:[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff\t]*[\x21-\x7e\x80-\xff])?)?"
_FIELD = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(" + _VALUE + rb")[ \t]*")


@dataclass(frozen=True, slots=True)
class SimpleRequest:
    """A request head in the shape above (header names lowercased, as h11 gives them)."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]
    content_length: int
    close: bool
    """The client sent ``Connection: close``: answer, then close."""


def parse_head(head: bytes) -> SimpleRequest | None:
    """The head (without its final blank line) if it is the simple shape, else None."""
    lines = head.split(b"\r\n")
    first = _REQUEST_LINE.fullmatch(lines[0])
    if first is None or first.group(1) == b"HEAD":  # HEAD's answer has no body: h11's job
        return None
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    close = False
    host = False
    for line in lines[1:]:
        field = _FIELD.fullmatch(line)
        if field is None:
            return None  # obs-fold, bare LF, control bytes…: h11 decides
        name, value = field.group(1).lower(), field.group(2)
        if name == b"content-length":
            if length is not None or not value.isdigit() or len(value) > 18:
                return None
            length = int(value)
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
    if not host:
        return None
    return SimpleRequest(first.group(1), first.group(2), headers, length or 0, close)


def response_bytes(status: int, reason: bytes, payload: bytes, close: bool = False) -> bytes:
    """One whole response, as h11 writes it for the same status and headers."""
    head = b"HTTP/1.1 %d %s\r\ncontent-length: %d\r\n" % (status, reason, len(payload))
    if payload:
        head += b"content-type: application/json\r\n"
    if close:
        head += b"connection: close\r\n"
    return head + b"\r\n" + payload

"""Plain-socket exchanges with the daemon's http door, for tests that need the bytes."""

from __future__ import annotations

import socket

__all__ = ["HEALTH", "exchange"]

HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
"""A health check that asks the server to close after answering."""


def exchange(port: int, request: bytes, pieces: int = 1, timeout: float = 30) -> bytes:
    """Send ``request`` to 127.0.0.1:``port`` (split in ``pieces`` sends) and read until
    the server closes the connection (blocking: call it in a thread)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        step = max(1, len(request) // pieces)
        for i in range(0, len(request), step):
            conn.sendall(request[i : i + step])
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
        return data

"""The floor of any trio http door: wait, read, answer an empty 200 — nothing else.

For ``bench/peers.py --floor``.  It reads each request at its descriptor and writes
a constant answer, as hookd's http door does on its fast path, but parses nothing,
validates nothing, keeps no session, audits nothing: what trio and the kernel cost a
keep-alive request, so that hookd's no-hook row reads as floor + hookd's own work.
It assumes one whole request per read (true of the bench's client, which waits for
each answer), and exists for the bench only.

    python bench/peers/trio_floor.py PORT
"""

from __future__ import annotations

import os
import socket
import sys

import trio

ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"


async def _serve(conn: socket.socket) -> None:
    fd = conn.fileno()
    try:
        while True:
            await trio.lowlevel.wait_readable(fd)
            if not os.read(fd, 65536):
                return
            os.write(fd, ANSWER)
    finally:
        conn.close()


async def main(port: int) -> None:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    listener.setblocking(False)
    async with trio.open_nursery() as nursery:
        while True:
            await trio.lowlevel.wait_readable(listener)
            conn, _ = listener.accept()
            conn.setblocking(False)
            nursery.start_soon(_serve, conn)


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]))

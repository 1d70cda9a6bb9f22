"""The floor for a no-hook event: a bare trio + msgspec server on a Unix socket.

It does what any trio/msgspec server must do for one event and nothing more:
read a length-prefixed frame, decode it into hookd's own ``ClientMessage``
Structs (validation included), and answer a ``fire`` with a ``fire_reply``
carrying an empty result.  No sessions, no config, no engine.  hookd's row 1
is compared with this, measured with the same client in the same run.

    python bench/echo_floor.py /tmp/x/floor.sock
"""

from __future__ import annotations

import os
import sys

import trio

from hookd_client import protocol
from hookd_client.results import FireResult


async def _serve(stream: trio.SocketStream) -> None:
    buf = bytearray()
    async with stream:
        while True:
            while len(buf) < 4:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                buf += chunk
            (length,) = protocol.HEADER.unpack_from(buf)
            while len(buf) < 4 + length:
                chunk = await stream.receive_some(65536)
                if not chunk:
                    return
                buf += chunk
            message = protocol.decode_client(bytes(buf[4 : 4 + length]))
            del buf[: 4 + length]
            if isinstance(message, protocol.Hello):
                reply: protocol.ServerMessage = protocol.Welcome(
                    version=protocol.PROTOCOL_VERSION, server="floor", pid=os.getpid(), max_frame=0
                )
            elif isinstance(message, protocol.Fire):
                reply = protocol.FireReply(id=message.id, result=FireResult(event=message.event))
            else:
                reply = protocol.Error(code="unknown_kind", message="floor answers fire only")
            await stream.send_all(protocol.encode(reply))


async def main(path: str) -> None:
    sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
    await sock.bind(path)
    sock.listen(512)
    await trio.serve_listeners(_serve, [trio.SocketListener(sock)])


if __name__ == "__main__":
    try:
        trio.run(main, sys.argv[1])
    except KeyboardInterrupt:
        pass

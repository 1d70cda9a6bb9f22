"""The running daemon follows ``http_port`` in its settings file: opens, moves, closes the
Claude Code endpoint without a restart (hookd/daemon/http_door.py).

A real in-process daemon whose settings file is re-read at each reload (as ``hookd
serve`` re-reads hookd.toml), real loopback sockets; the watcher sees the saves.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import trio

from e2e.daemon import free_port
from support.http_door import HEALTH, exchange


async def _until(predicate: Any, what: str) -> None:
    try:
        with trio.fail_after(30):
            while not predicate():
                await trio.sleep(0.01)
    except trio.TooSlowError:
        raise AssertionError(f"not seen within 30 s: {what}") from None


async def _health(port: int) -> bytes:
    return await trio.to_thread.run_sync(exchange, port, HEALTH)


def _refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


async def test_saving_hookd_toml_opens_moves_and_closes_the_port(
    daemon_factory: Any, tmp_path: Path
) -> None:
    toml = tmp_path / "hookd.toml"
    handle = await daemon_factory(settings_file=toml)
    assert handle.daemon.http_port is None
    first, second = free_port(), free_port()
    toml.write_text(f"http_port = {first}\n")
    await _until(lambda: handle.daemon.http_port == first, "the port opened")
    assert b"200 OK" in await _health(first)
    toml.write_text(f"http_port = {second}\n")
    await _until(lambda: handle.daemon.http_port == second, "the port moved")
    assert b"200 OK" in await _health(second)
    await _until(lambda: _refused(first), "the old port closed")
    toml.write_text("# no http_port: no endpoint\n")
    await _until(lambda: handle.daemon.http_port is None, "the port closed")
    await _until(lambda: _refused(second), "the port closed")


async def test_a_taken_port_is_reported_and_tried_again_at_the_next_reload(
    daemon_factory: Any, tmp_path: Path
) -> None:
    toml = tmp_path / "hookd.toml"
    handle = await daemon_factory(settings_file=toml, watch=False)
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    port = squatter.getsockname()[1]
    toml.write_text(f"http_port = {port}\n")
    handle.daemon.reload()
    await _until(lambda: handle.daemon.http_error is not None, "the failure recorded")
    assert handle.daemon.http_error == (
        f"cannot serve http://127.0.0.1:{port}: the port is in use by another process"
    )
    assert handle.daemon.http_port is None and handle.daemon.http_wanted == port
    squatter.close()
    handle.daemon.reload()  # hookctl reload, SIGHUP: the same
    await _until(lambda: handle.daemon.http_port == port, "served once free")
    assert handle.daemon.http_error is None
    assert b"200 OK" in await _health(port)

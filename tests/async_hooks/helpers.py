"""Helpers for the async-hook tests: a trio wire client, events, configs, pid checks."""

from __future__ import annotations

import itertools
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from hookd_client import protocol
from support.daemon import configure as configure  # re-exported for the async suites
from support.events import fixture_event
from support.processes import alive as alive

DATA = Path(__file__).resolve().parent.parent / "data"
SCRIPTS = DATA / "async"
CC_FIXTURES = DATA / "cc-fixtures"


class Wire:
    """One connection to the daemon with many requests in flight (replies routed by id).

    Pushes (``async_result``) land in ``pushes``.  Written against the protocol
    directly so the tests do not depend on any client flavour.
    """

    def __init__(self, stream: trio.SocketStream, nursery: trio.Nursery) -> None:
        self.stream = stream
        self.nursery = nursery
        self.ids = itertools.count(1)
        self.waiting: dict[int, trio.MemorySendChannel[protocol.ServerMessage]] = {}
        self.push_send, self.pushes = trio.open_memory_channel[protocol.AsyncResult](1000)
        self.send_lock = trio.Lock()
        self.buffer = bytearray()

    @classmethod
    async def open(cls, path: Path, nursery: trio.Nursery, pid: int | None = None) -> Wire:
        stream = await trio.open_unix_socket(str(path))
        wire = cls(stream, nursery)
        await stream.send_all(protocol.encode(protocol.Hello(client="async-tests", pid=pid)))
        welcome = await wire._read()
        assert isinstance(welcome, protocol.Welcome), welcome
        nursery.start_soon(wire._reader)
        return wire

    async def _read(self) -> protocol.ServerMessage:
        while True:
            if len(self.buffer) >= 4:
                (length,) = protocol.HEADER.unpack(self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body = bytes(self.buffer[4 : 4 + length])
                    del self.buffer[: 4 + length]
                    return protocol.decode_server(body)
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk

    async def _reader(self) -> None:
        try:
            while True:
                message = await self._read()
                if isinstance(message, protocol.AsyncResult):
                    self.push_send.send_nowait(message)
                    continue
                rid = getattr(message, "id", None)
                channel = self.waiting.pop(rid, None) if rid is not None else None
                if channel is not None:
                    channel.send_nowait(message)
        except (EOFError, trio.ClosedResourceError, trio.BrokenResourceError):
            for channel in self.waiting.values():
                channel.close()

    async def request(self, make: Callable[[int], Any]) -> protocol.ServerMessage:
        rid = next(self.ids)
        send, receive = trio.open_memory_channel[protocol.ServerMessage](1)
        self.waiting[rid] = send
        async with self.send_lock:
            await self.stream.send_all(protocol.encode(make(rid)))
        return await receive.receive()

    async def fire(
        self, event: str, payload: dict[str, Any], context: str = "interactive"
    ) -> protocol.FireReply | protocol.Error:
        reply = await self.request(
            lambda rid: protocol.Fire(id=rid, event=event, input=payload, context=context)  # type: ignore[arg-type]
        )
        assert isinstance(reply, protocol.FireReply | protocol.Error), reply
        return reply

    async def check(self, session_id: str) -> list[dict[str, Any]]:
        reply = await self.request(lambda rid: protocol.CheckAsync(id=rid, session_id=session_id))
        assert isinstance(reply, protocol.Reply), reply
        data: list[dict[str, Any]] = reply.data
        return data

    async def listing(self, session_id: str | None = None) -> list[dict[str, Any]]:
        reply = await self.request(lambda rid: protocol.AsyncList(id=rid, session_id=session_id))
        assert isinstance(reply, protocol.Reply), reply
        data: list[dict[str, Any]] = reply.data
        return data

    async def status(self) -> dict[str, Any]:
        reply = await self.request(lambda rid: protocol.Status(id=rid))
        assert isinstance(reply, protocol.Reply), reply
        data: dict[str, Any] = reply.data
        return data

    async def subscribe(self, session_id: str | None = None) -> None:
        reply = await self.request(
            lambda rid: protocol.SubscribeAsync(id=rid, session_id=session_id)
        )
        assert isinstance(reply, protocol.Reply) and reply.data == {"subscribed": True}

    async def aclose(self) -> None:
        await self.stream.aclose()


def event(name: str, session_id: str, **fields: Any) -> dict[str, Any]:
    """A real Claude Code input for ``name`` (from cc-fixtures) in session ``session_id``."""
    return fixture_event(name, session_id=session_id, **fields)


def script(name: str, *args: str | Path) -> str:
    return " ".join([str(SCRIPTS / name), *(f"'{a}'" for a in args)])


def command_hook(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **extra}


def async_hook(command: str, **extra: Any) -> dict[str, Any]:
    """A config ``async: true`` command hook (``async`` cannot be a keyword argument)."""
    return {**command_hook(command), "async": True, **extra}


def read_pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split() if line.strip()]


def kill_quietly(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


async def wait_until(predicate: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``predicate`` until truthy; fail after a generous ``timeout``."""
    with trio.fail_after(timeout):
        while True:
            value = predicate()
            if value:
                return value
            await trio.sleep(0.02)


async def wait_until_async(predicate: Callable[[], Awaitable[Any]], timeout: float = 20.0) -> Any:
    """:func:`wait_until` for a predicate that must ask the daemon (an awaitable)."""
    with trio.fail_after(timeout):
        while True:
            value = await predicate()
            if value:
                return value
            await trio.sleep(0.02)


async def poll_results(conn: Wire, session_id: str, count: int, timeout: float = 20.0) -> list[Any]:
    results: list[dict[str, Any]] = []
    with trio.fail_after(timeout):
        while len(results) < count:
            results.extend(await conn.check(session_id))
            if len(results) < count:
                await trio.sleep(0.02)
    return results

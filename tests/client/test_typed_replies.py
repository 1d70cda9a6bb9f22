"""Every reply kind is its own Struct; the clients hand back typed payloads; the wire stays
what docs/protocol.md documents (``{kind: "reply", id, data}`` with the listed fields)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from hookd_client import protocol
from hookd_client.client import Client
from hookd_client.trio_client import open_client
from support.daemon import configure


def _configure(handle: Any) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    configure(handle, hooks)


async def test_the_blocking_client_returns_typed_payloads(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    _configure(handle)
    project = str(handle.project())

    def run() -> tuple[Any, ...]:
        with Client(handle.socket) as client:
            return (
                client.reload(),
                client.hooks(project),
                client.validate([str(handle.user_config)]),
                client.reset_breakers(),
                client.status_line(project, {"session_id": "s"}),
            )

    reloaded, listing, validated, reset, line = await trio.to_thread.run_sync(run)
    assert isinstance(reloaded, protocol.Reloaded) and reloaded.errors == []
    assert isinstance(listing, protocol.HookListing) and listing.project == project
    (hook,) = listing.hooks
    assert (hook.event, hook.matcher, hook.hook, hook.runs, hook.why) == (
        "PreToolUse",
        "Bash",
        "true",
        True,
        None,
    )
    (file,) = validated
    assert isinstance(file, protocol.ValidatedFile)
    assert (file.exists, file.hooks, file.errors) == (True, 1, [])
    assert reset == []
    assert line is None  # no statusLine configured: keep the old line


async def test_the_wire_shape_is_the_documented_one(daemon_factory: Any) -> None:
    """A client that knows nothing of the payload Structs reads the documented maps."""
    handle = await daemon_factory()
    _configure(handle)
    project = str(handle.project())

    def run() -> tuple[Any, ...]:
        with Client(handle.socket) as client:
            reload = client.call(protocol.Reload(id=client.next_id()))
            hooks = client.call(protocol.Hooks(id=client.next_id(), cwd=project))
            files = client.call(protocol.Validate(id=client.next_id(), files=["/nonexistent.json"]))
            return reload, hooks, files

    reload, hooks, files = await trio.to_thread.run_sync(run)
    assert set(reload) == {"changed", "generation", "errors"}
    assert set(hooks) == {"project", "generation", "hooks"}
    assert set(hooks["hooks"][0]) == {
        "event",
        "matcher",
        "type",
        "hook",
        "scope",
        "source",
        "timeout",
        "runs",
    }  # `why` only when the hook does not run; `timeout` sent even when nil
    assert hooks["hooks"][0]["timeout"] is None
    assert files == [
        {"file": "/nonexistent.json", "exists": False, "hooks": 0, "errors": [], "warnings": []}
    ]


async def test_the_async_clients_return_typed_payloads(daemon_factory: Any) -> None:
    handle = await daemon_factory()
    _configure(handle)
    project = str(handle.project())
    async with open_client(handle.socket) as client:
        reloaded = await client.reload()
        listing = await client.hooks(project)
        registered = await client.register_session_hooks(
            "typed-s", {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
        )
        removed = await client.clear_session_hooks("typed-s")
    assert isinstance(reloaded, protocol.Reloaded)
    assert [h.hook for h in listing.hooks] == ["true"]
    assert (registered, removed) == (1, 1)


def test_reply_data_names_a_reply_that_is_not_the_payload() -> None:
    reply = protocol.Reply(id=7, data={"removed": "many"})
    with pytest.raises(protocol.InvalidMessage, match="reply 7"):
        protocol.reply_data(reply, protocol.Removed)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (msgspec.msgpack.encode({"kind": "no_such_kind", "id": 1}), protocol.UnknownKind),
        (msgspec.msgpack.encode({"kind": "fire", "id": "one"}), protocol.InvalidMessage),
        (msgspec.msgpack.encode({"id": 1}), protocol.InvalidMessage),
        (msgspec.msgpack.encode({"kind": 3, "id": 1}), protocol.InvalidMessage),
        (b"\xc1", protocol.InvalidMessage),
    ],
)
def test_decode_errors_carry_their_code_by_type(body: bytes, error: type[Exception]) -> None:
    """The daemon's error code comes from the decode error's type, not its message text."""
    with pytest.raises(error) as caught:
        protocol.decode_client(body)
    assert type(caught.value) is error
    expected = "unknown_kind" if error is protocol.UnknownKind else "bad_request"
    assert caught.value.code == expected  # type: ignore[attr-defined]

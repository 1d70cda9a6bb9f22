"""Property tests of the frame codec: any bytes give a frame or a clear error, never a crash.

The daemon's reader and the clients cut frames out of a byte stream and decode
each body into a tagged Struct.  Whatever arrives — valid frames split at any
point, or junk — each step either yields whole messages or raises
:class:`~hookd_client.protocol.FrameError` with a message; no other exception
may escape (one did once: a non-UTF-8 string raised ``UnicodeDecodeError``).
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookd.daemon.limits import request_id_in
from hookd_client import protocol
from hookd_client.framing import FrameReader

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.integers(0, 2**63 - 1)

client_messages = st.one_of(
    st.builds(
        protocol.Fire,
        id=ids,
        event=st.text(min_size=1, max_size=30),
        input=st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    ),
    st.builds(protocol.Hello, client=st.text(max_size=20), pid=st.none() | st.integers(1, 2**31)),
    st.builds(protocol.Status, id=ids),
    st.builds(protocol.CheckAsync, id=ids, session_id=st.text(max_size=20)),
    st.builds(protocol.Cancel, id=ids, target=ids),
)

server_messages = st.one_of(
    st.builds(
        protocol.Welcome,
        version=st.integers(0, 10),
        server=st.text(max_size=20),
        pid=st.integers(1, 2**31),
        max_frame=st.integers(1, 2**32 - 1),
    ),
    st.builds(protocol.Reply, id=ids, data=json_values),
    st.builds(
        protocol.Error, code=st.text(max_size=12), message=st.text(max_size=40), id=st.none() | ids
    ),
    st.builds(
        protocol.RelayReply,
        id=ids,
        stdout=st.text(max_size=40),
        stderr=st.text(max_size=40),
        exit_code=st.integers(0, 255),
    ),
)


def _msgpack_values() -> st.SearchStrategy[Any]:
    """MessagePack maps that look like messages: a kind, an id, and arbitrary fields."""
    kinds = st.sampled_from(["fire", "status", "hello", "relay", "cancel", "nope", ""])
    return st.fixed_dictionaries(
        {"kind": kinds},
        optional={
            "id": st.integers(-(2**63), 2**64 - 1) | st.text(max_size=4) | st.booleans(),
            "event": st.text(max_size=10) | st.integers(-(2**63), 2**63 - 1),
            "input": json_values,
            "session_id": st.text(max_size=10) | st.none(),
            "target": st.integers(-5, 5),
        },
    )


def _feed(reader: FrameReader, data: bytes) -> list[protocol.ServerMessage]:
    """Feed bytes; decode every whole frame now available (as each client's reader does)."""
    reader.feed(data)
    messages: list[protocol.ServerMessage] = []
    body = reader.next_frame()
    while body is not None:
        messages.append(protocol.decode_server(body))
        body = reader.next_frame()
    return messages


@FAST
@given(st.binary(max_size=200))
def test_any_body_decodes_to_a_message_or_a_frame_error(body: bytes) -> None:
    for decode in (protocol.decode_client, protocol.decode_server):
        try:
            message = decode(body)
        except protocol.FrameError as exc:
            assert str(exc)
        else:
            assert isinstance(message, msgspec.Struct)
    rid = protocol.request_id_of(body)
    assert rid is None or isinstance(rid, int)


@FAST
@given(_msgpack_values())
def test_message_shaped_maps_decode_or_fail_clearly(value: dict[str, Any]) -> None:
    body = msgspec.msgpack.encode(value)
    try:
        message = protocol.decode_client(body)
    except protocol.FrameError as exc:
        # UnknownKind (a kind no request has) says so; every other decode error is InvalidMessage.
        assert str(exc).startswith(("invalid message", "unknown message kind", "frame "))
        rid = protocol.request_id_of(body)
        wanted = value.get("id")
        if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted < 2**63:
            assert rid == wanted  # the error reply can name the request
    else:
        assert getattr(message, "kind", None) is None  # tags are not fields
        assert type(message).__struct_config__.tag == value["kind"]


@FAST
@given(client_messages)
def test_client_messages_survive_a_round_trip(message: msgspec.Struct) -> None:
    data = protocol.encode(message)
    (length,) = protocol.HEADER.unpack(data[: protocol.HEADER.size])
    assert length == len(data) - protocol.HEADER.size
    assert protocol.decode_client(data[protocol.HEADER.size :]) == message


@FAST
@given(st.lists(server_messages, max_size=6), st.data())
def test_frames_split_anywhere_reassemble_in_order(
    messages: list[msgspec.Struct], data: st.DataObject
) -> None:
    stream = b"".join(protocol.encode(m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    buffer = FrameReader(protocol.MAX_FRAME)
    got: list[protocol.ServerMessage] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        got += _feed(buffer, stream[start:cut])
        start = cut
    assert got == messages


@FAST
@given(st.lists(st.binary(max_size=64), max_size=6), st.integers(8, 1 << 20))
def test_junk_streams_give_messages_or_a_frame_error(chunks: list[bytes], max_frame: int) -> None:
    buffer = FrameReader(max_frame=max_frame)
    for chunk in chunks:
        try:
            for message in _feed(buffer, chunk):
                assert isinstance(message, msgspec.Struct)
        except protocol.FrameError as exc:
            assert str(exc)
            return  # framing is lost: the connection closes


@FAST
@given(st.integers(1, 1 << 20), st.integers(0, 1 << 21))
def test_a_frame_over_the_limit_is_refused_from_its_header(max_frame: int, length: int) -> None:
    buffer = FrameReader(max_frame=max_frame)
    header = protocol.HEADER.pack(length)
    if length > max_frame:
        try:
            _feed(buffer, header)
        except protocol.FrameError as exc:
            assert f"frame of {length} bytes exceeds the maximum of {max_frame} bytes" == str(exc)
        else:
            raise AssertionError("an oversized header was accepted")
    elif length == 0:
        try:
            _feed(buffer, header)  # an empty body is no message
        except protocol.FrameError as exc:
            assert str(exc)
        else:
            raise AssertionError("an empty frame was accepted")
    else:
        assert _feed(buffer, header) == []  # waits for the body


@FAST
@given(st.lists(st.binary(max_size=40), max_size=5), st.data())
def test_the_frame_reader_returns_whole_bodies_and_knows_a_cut_frame(
    bodies: list[bytes], data: st.DataObject
) -> None:
    """The one sans-IO reader (daemon and clients): bodies in order, the rest buffered;
    the stream ending inside a frame is a FrameError, between frames it is not."""
    stream = b"".join(protocol.HEADER.pack(len(b)) + b for b in bodies)
    cut = data.draw(st.integers(0, len(stream)))
    reader = FrameReader(protocol.MAX_FRAME)
    reader.feed(stream[:cut])
    got: list[bytes] = []
    body = reader.next_frame()
    while body is not None:
        got.append(body)
        body = reader.next_frame()
    assert got == bodies[: len(got)]
    rest = cut - sum(protocol.HEADER.size + len(b) for b in got)
    assert reader.buffered() == rest
    if rest >= protocol.HEADER.size:
        assert reader.frame_size() == protocol.HEADER.size + len(bodies[len(got)])
    else:
        assert reader.frame_size() is None
    if rest:
        try:
            reader.eof()
        except protocol.FrameError as exc:
            assert f"({rest} bytes pending)" in str(exc)
        else:
            raise AssertionError("a cut frame passed for a whole one")
    else:
        reader.eof()


# --- the request id of a refused (oversized) frame ----------------------------------------

_WIDTHS = [0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1]
_WIDTHS += [-1, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63)]
_INTS = st.one_of(
    st.sampled_from(_WIDTHS),  # every MessagePack int width at its edges
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
)
_TEXTS = st.one_of(
    st.sampled_from([0, 31, 32, 255, 256, 65536]).map(lambda n: "k" * n),  # str widths
    st.text(max_size=300),
)
_SCALARS = st.one_of(st.none(), st.booleans(), _INTS, _TEXTS)


@settings(max_examples=400, deadline=None)
@given(
    kind=_TEXTS,
    rid=_INTS,
    before=st.dictionaries(
        st.text(max_size=40).filter(lambda k: k not in ("kind", "id")), _SCALARS, max_size=20
    ),
    cut=st.integers(min_value=0, max_value=64),
)
def test_a_refused_frames_prefix_names_its_kind_and_id(
    kind: str, rid: int, before: dict[str, Any], cut: int
) -> None:
    """A frame too large to read still gets its error answered with its ``id``
    (``limits.request_id_in``): whatever scalars come before ``id`` — every MessagePack
    width of int and str, None, booleans — the prefix up to ``id`` and a little more
    gives ``(kind, id)`` exactly; a bool is never taken for an id."""
    body = msgspec.msgpack.encode({"kind": kind, **before, "id": rid, "input": {"x": 1}})
    tail = len(msgspec.msgpack.encode("input")) + len(msgspec.msgpack.encode({"x": 1}))
    end = len(body) - tail + cut  # just past the id's value, and up to `cut` bytes more
    assert request_id_in(body[:end]) == (kind, rid)
    as_bool = msgspec.msgpack.encode({"kind": kind, **before, "id": True})
    assert request_id_in(as_bool) == (kind, None)
    # Cut inside the map: never an exception, never an id that was not there.
    for short in range(0, len(body) - tail, 7):
        _, got_id = request_id_in(body[:short])
        assert got_id in (None, rid)


def test_a_refused_frame_with_a_map32_header_still_names_its_id() -> None:
    """A request map of 65536 entries or more has a 4-byte count (map32)."""
    body = msgspec.msgpack.encode({"kind": "fire", "id": 41, **{f"k{n}": 0 for n in range(2**16)}})
    assert body[0] == 0xDF
    assert request_id_in(body[:64]) == ("fire", 41)

"""Hostile clients: the short version of bench/fuzz.py against a real daemon subprocess."""

from __future__ import annotations

import pytest
import trio

from reliability.helpers import bench_module

fuzz = bench_module("fuzz")


@pytest.mark.slow
async def test_bad_frames_get_an_error_or_a_close_and_nothing_leaks() -> None:
    """Every bad frame is answered (error frame or closed connection), never silently;
    the daemon survives with fds back to where they were and RSS bounded, and a
    well-behaved session keeps being served while the fuzzing goes on.  (How fast
    it is served is a timing claim: ``bench/fuzz.py`` reports it against its bound.)"""
    with fuzz.daemon_process() as daemon:
        m = await fuzz.measure(daemon, daemon.socket, 400, 4, seed=7, probes=60, pace=0.01)
        assert daemon.proc.poll() is None, "the daemon died"
    fuzz.print_measurement(m)
    report = m.report
    assert report.frames == 400
    assert report.silent == []
    assert sum(report.answers.values()) == 400
    # Every case kind was answered the way the protocol says.
    assert report.answers["error:bad_frame"] + report.answers["closed"] >= 80  # huge + half
    assert report.answers["error:bad_input"] == report.sent["garbage_event"]
    assert not any(k.startswith("reply:") for k in report.answers), report.answers
    assert m.fds_after <= m.fds_before
    assert m.rss_after_kb - m.rss_before_kb < 64 * 1024, "RSS grew by more than 64 MiB"
    assert m.under_fuzz, "the well-behaved session was not served during the fuzzing"


async def test_a_non_utf8_string_is_a_bad_request_not_a_crash() -> None:
    """Found by the fuzzer: msgspec raises UnicodeDecodeError (not DecodeError) for such
    a string, and it used to escape the connection and stop the whole daemon."""
    bad = fuzz.encode({"kind": "status", "id": 3}).replace(b"status", b"st\xb8tus")
    deep = b"\x81\xa4kind" + b"\x91" * 5000 + b"\xc0"
    with fuzz.daemon_process() as daemon:
        for body in (bad, deep):
            stream = await trio.open_unix_socket(str(daemon.socket))
            async with stream:
                buf = bytearray()
                await stream.send_all(fuzz.HELLO)
                assert (await fuzz._read_frame(stream, buf))["kind"] == "welcome"
                await stream.send_all(fuzz.frame(body))
                answer = await fuzz._read_frame(stream, buf)
                assert answer is not None and answer["code"] == "bad_request", answer
        assert daemon.proc.poll() is None

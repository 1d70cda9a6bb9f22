"""``HOOK_INPUT_FILE`` is written in memory when the machine offers it (issue 29, item 2).

On a disk ``/tmp`` each hook's input file cost a journalled create and unlink on the
event's path; where ``/dev/shm`` or the user's ``XDG_RUNTIME_DIR`` is a tmpfs, the file
goes there — same bytes, same 0600, deleted afterwards — unless the user chose a
temporary directory (``TMPDIR``).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio

from hookd.handlers.input_dir import input_file_dir
from hookd_client.client import Client
from reliability.helpers import event
from support.daemon import configure


def _filesystem(path: str) -> str:
    """The filesystem type under ``path``, read here from /proc/self/mountinfo."""
    real, best, kind = os.path.realpath(path), "", ""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        mount = fields.split()[4]
        if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
            best, kind = mount, rest.split()[0]
    return kind


def _memory_dir_expected() -> bool:
    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return False
    if _filesystem(tempfile.gettempdir()) == "tmpfs":
        return True
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    shm = os.path.isdir("/dev/shm") and _filesystem("/dev/shm") == "tmpfs"
    return shm or bool(runtime and _filesystem(runtime) == "tmpfs")


async def test_input_file_is_written_in_memory_with_the_same_bytes(
    daemon_factory: Any, tmp_path: Path
) -> None:
    if not _memory_dir_expected():
        pytest.skip("no in-memory temporary directory here (or TMPDIR chooses one)")
    handle = await daemon_factory()
    seen = tmp_path / "seen"
    command = (
        f'printf %s "$HOOK_INPUT_FILE" > {seen}.path; stat -c %a "$HOOK_INPUT_FILE" > {seen}.mode;'
        f' cat "$HOOK_INPUT_FILE" > {seen}.copy; cat > {seen}.stdin'
    )
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]})

    def fire() -> None:
        with Client(handle.socket) as client:
            reply = client.fire("PreToolUse", event(session_id="input-file"))
        assert [r.outcome for r in reply.result.hooks] == ["success"]

    await trio.to_thread.run_sync(fire)
    path = Path(f"{seen}.path").read_text()
    assert _filesystem(os.path.dirname(path)) == "tmpfs", path
    assert Path(f"{seen}.copy").read_bytes() == Path(f"{seen}.stdin").read_bytes() != b""
    assert Path(f"{seen}.mode").read_text().strip() == "600"
    assert not os.path.exists(path), "deleted once the hook is over"


def test_a_chosen_temporary_directory_is_kept() -> None:
    """``TMPDIR`` (``TEMP``, ``TMP``) set: the user's choice, in memory or not."""
    assert input_file_dir({"TMPDIR": tempfile.gettempdir()}) == tempfile.gettempdir()


def test_the_directory_is_in_memory_and_safe_or_the_temporary_one() -> None:
    chosen = input_file_dir({})
    if chosen == tempfile.gettempdir():
        return
    st = os.stat(chosen)
    assert _filesystem(chosen) == "tmpfs"
    shared_but_sticky = bool(st.st_mode & stat.S_ISVTX)
    private = st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0
    assert shared_but_sticky or private

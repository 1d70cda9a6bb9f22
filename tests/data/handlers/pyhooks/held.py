"""Python hooks that hold a worker until the test releases them (test_python_pool.py).

Each writes ``<dir>/<name>.started`` first, so the test can wait for it, then
holds its worker: ``blocked`` sleeps in the kernel (opening a FIFO blocks until
a writer opens it), ``spinning`` is an ``async def`` busy loop that never yields
to its event loop.  Both end when the test creates ``<dir>/release`` and opens
the FIFO for writing.  ``<dir>`` is the event's ``cwd``.
"""

import os
from pathlib import Path
from typing import Any


def blocked(event: Any) -> dict[str, str]:
    here = Path(event.typed.cwd)
    (here / "blocked.started").write_text("")
    with open(here / "fifo", "rb"):
        pass
    return {"systemMessage": "BLOCKED-DONE"}


async def spinning(event: Any) -> dict[str, str]:
    here = Path(event.typed.cwd)
    (here / "spinning.started").write_text("")
    while not os.path.exists(here / "release"):
        pass
    return {"systemMessage": "SPINNING-DONE"}


def quick(event: Any) -> dict[str, str]:
    return {"systemMessage": "QUICK-" + event.typed.session_id}

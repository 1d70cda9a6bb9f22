import time
from pathlib import Path


def hook(event: object) -> dict[str, str]:
    # Tell the test this version is running, then hold until it says go: the
    # test edits the file while this call is inside the worker, with no sleep.
    Path(__file__ + ".started").touch()
    go = Path(__file__ + ".go")
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    return {"systemMessage": "EDITABLE-V1"}

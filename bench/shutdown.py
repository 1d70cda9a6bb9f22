"""How long a real ``hookd serve`` takes from SIGTERM to exit, idle and in common states.

    .venv/bin/python bench/shutdown.py [--runs 5]

Issue 21 reported ~3 s for an idle daemon; unit tests carry no wall-clock bound, so the
timing lives here.  Each state starts a fresh daemon in private directories, waits until
it serves, sets the state up, sends SIGTERM and measures until the process has exited:

* ``idle``: nothing connected;
* ``client``: a blocking client connected and idle;
* ``tail``: ``hookctl tail -f`` attached;
* ``after-hooks``: a python hook and an async command hook have run.

Prints the median and the worst run per state, in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hookd_client.client import Client, DaemonUnavailable

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "cc-fixtures" / "PreToolUse-Bash.json"
HELD = ROOT / "tests" / "data" / "handlers" / "pyhooks" / "held.py"


def _serving(sock: Path, daemon: subprocess.Popen[bytes]) -> Client:
    """Connected once the daemon serves (a client does not retry a missing socket)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return Client(sock, retries=0).connect()
        except DaemonUnavailable:
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _env(base: Path) -> dict[str, str]:
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(base / "config"),
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_RUNTIME_DIR": str(base),
        "HOME": str(base / "home"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }


def one(state: str) -> float:
    with tempfile.TemporaryDirectory(prefix="hkshut", dir="/tmp") as tmp:
        base = Path(tmp)
        sock = base / "h.sock"
        (base / "config" / "hookd").mkdir(parents=True)
        if state == "after-hooks":
            hooks = [
                {"type": "python", "callable": f"{HELD}:quick"},
                {"type": "command", "command": "true", "async": True},
            ]
            (base / "config" / "hookd" / "hooks.json").write_text(
                json.dumps({"hooks": {"PreToolUse": [{"hooks": hooks}]}})
            )
        env = _env(base)
        daemon = subprocess.Popen(
            [sys.executable, "-m", "hookd.cli.hookd_main", "serve", "--socket", str(sock)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        extra: list[subprocess.Popen[bytes]] = []
        try:
            with _serving(sock, daemon) as client:
                client.status()  # serving
                if state == "tail":
                    extra.append(
                        subprocess.Popen(
                            [
                                sys.executable,
                                "-m",
                                "hookd.cli.hookctl",
                                "--socket",
                                str(sock),
                                "tail",
                                "-f",
                            ],
                            env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                        )
                    )
                    while client.status()["connections"] < 2:
                        time.sleep(0.01)
                if state == "after-hooks":
                    raw = json.loads(FIXTURE.read_text())
                    raw["cwd"] = str(base)
                    client.fire("PreToolUse", raw)
                if state != "client":
                    client.close()
                start = time.monotonic()
                daemon.send_signal(signal.SIGTERM)
                daemon.wait()
                return time.monotonic() - start
        finally:
            for proc in extra:
                proc.kill()
                proc.wait()
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for state in ("idle", "client", "tail", "after-hooks"):
        times = [one(state) for _ in range(args.runs)]
        print(f"{state:<12} median {statistics.median(times):.3f} s  worst {max(times):.3f} s")


if __name__ == "__main__":
    main()

"""A command hook for the Agent SDK e2e: ``python -m agents.sdk_hook HOOK`` prints
:func:`agents.sdk_scenarios.decide`'s answer for the hook input on stdin."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from agents.sdk_scenarios import SLEEP, decide

PROBED = (
    "AI_AGENT",
    "CLAUDE_PID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "COREPACK_ENABLE_AUTO_PIN",
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
)
"""Variables the CLI gives its own command hooks under the SDK (claude-code-observed.md)."""


def _probe_environment() -> None:
    """``$HOME/hook-env.json``: the probed variables, and the command line of the process
    ``CLAUDE_PID`` names (read now, while the CLI runs)."""
    found = {name: os.environ.get(name) for name in PROBED}
    pid = found["CLAUDE_PID"]
    if pid and pid.isdigit():
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            found["claude_pid_cmdline"] = cmdline.read().decode(errors="replace")
    (Path(os.environ["HOME"]) / "hook-env.json").write_text(json.dumps(found))


def main() -> int:
    if sys.argv[1] == "sleep":
        time.sleep(SLEEP)  # hookd kills it at the hook's timeout
    hook_input = json.load(sys.stdin)
    if sys.argv[1] == "env_probe":
        _probe_environment()
    answer = decide(sys.argv[1], hook_input)
    if answer:
        print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())

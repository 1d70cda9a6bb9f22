"""A command hook for the Agent SDK e2e: ``python -m agents.sdk_hook HOOK`` prints
:func:`agents.sdk_scenarios.decide`'s answer for the hook input on stdin."""

from __future__ import annotations

import json
import sys
import time

from agents.sdk_scenarios import SLEEP, decide


def main() -> int:
    if sys.argv[1] == "sleep":
        time.sleep(SLEEP)  # hookd kills it at the hook's timeout
    answer = decide(sys.argv[1], json.load(sys.stdin))
    if answer:
        print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())

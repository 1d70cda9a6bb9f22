"""A command hook for the agent e2e tests: record what it was given, then answer as told.

Run as ``python3 scripted_hook.py --record FILE --label L [--stdout TEXT]
[--stderr TEXT] [--exit N] [--sleep S] [--unless-stop-hook-active]``.  The same
script serves the native run (answers in the agent's format) and the run
through hookd (answers in Claude Code's), so the two runs differ only in what
the test means to compare.  One JSON line per run goes to ``FILE``: the label,
the event and tool names and the tool input the hook saw, whether it finished.

``--unless-stop-hook-active``: answer only when the input's ``stop_hook_active``
is false (a Stop hook that continues the turn once, as hooks must).
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--stdout", default="")
    parser.add_argument("--stderr", default="")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--unless-stop-hook-active", action="store_true")
    args = parser.parse_args()
    data = json.loads(sys.stdin.read() or "{}")
    entry = {
        "label": args.label,
        "event": data.get("hook_event_name"),
        "tool_name": data.get("tool_name"),
        "tool_input": data.get("tool_input"),
        "stop_hook_active": data.get("stop_hook_active"),
    }
    with open(args.record, "a", encoding="utf-8") as out:
        out.write(json.dumps({**entry, "phase": "start"}) + "\n")
    if args.sleep:
        time.sleep(args.sleep)
    if args.unless_stop_hook_active and data.get("stop_hook_active"):
        return 0
    with open(args.record, "a", encoding="utf-8") as out:
        out.write(json.dumps({**entry, "phase": "answered"}) + "\n")
    sys.stdout.write(args.stdout)
    sys.stderr.write(args.stderr)
    code: int = args.exit
    return code


if __name__ == "__main__":
    sys.exit(main())

"""``hookctl fire EVENT``: through the daemon, or with ``--local`` in this process.

Exit codes: 0 ran and nothing blocked; 4 blocked (deny, block, ``continue:
false``); 1 bad input or config, or an event name hookd does not know; 3 the
daemon is not running.  With
``--format claude`` the exit code is the one a Claude Code hook exits with.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from hookd.cli.examples import is_hookctl_session, unknown_event
from hookd.cli.fire_io import InputError, held_back_line, print_fire_result, read_input
from hookd.cli.style import Style
from hookd_client.client import Client, DaemonError, DaemonUnavailable
from hookd_client.events import EventInputError

__all__ = ["cmd_fire"]

EXIT_ERROR, EXIT_NO_DAEMON = 1, 3


def cmd_fire(args: argparse.Namespace) -> int:
    if args.format is None:  # people read a summary; pipes and scripts get the whole result
        args.format = "text" if sys.stdout.isatty() else "json"
    problem = unknown_event(args.event)
    if problem is not None:
        # A misspelt event matches no hook: "allowed" would be a lie, so it is an error.
        print(f"hookctl fire: {problem}", file=sys.stderr)
        return EXIT_ERROR
    try:
        if args.local:
            # The heavy path (trio, the engine); it does not import this module back.
            from hookd.cli.local_fire import fire_local

            return fire_local(args)
        return _fire_remote(args)
    except (InputError, EventInputError, json.JSONDecodeError, OSError, ValueError) as exc:
        print(f"hookctl fire: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _fire_remote(args: argparse.Namespace) -> int:
    payload = read_input(args.input, args.event)
    try:
        with Client(args.socket, name="hookctl", retries=0) as client:
            reply = client.fire(
                args.event,
                payload,
                env=dict(os.environ),
                context=args.context,
                claude=args.format == "claude",
                # hookctl's own session: leave none behind; the next fire is judged by its
                # own cwd.  An agent's session id is a real session and stays.
                once=is_hookctl_session(payload.get("session_id")),
            )
    except DaemonUnavailable as exc:
        print(f"hookctl: {exc}", file=sys.stderr)
        return EXIT_NO_DAEMON
    except DaemonError as exc:
        print(f"hookctl fire: the daemon refused: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if reply.kept_project is not None and args.format != "claude":
        named = os.environ.get("CLAUDE_PROJECT_DIR") or payload.get("cwd")
        print(
            f"hookctl fire: session {payload.get('session_id')!r} is known to the daemon in "
            f"{reply.kept_project}, and a session keeps its project: the hooks judged are "
            f"{reply.kept_project}'s, not {named}'s (leave session_id out of --input to "
            "judge this directory)",
            file=sys.stderr,
        )
    if reply.held_back is not None:
        held = reply.held_back
        print(held_back_line(held.hooks, held.project, held.reason), file=sys.stderr)
    style = Style.for_stream(sys.stdout, args.color)
    return print_fire_result(reply.result, args.format, reply.claude, style)

"""``hookd`` / ``python -m hookd``: run the daemon.

``hookd serve`` needs no configuration file: every setting has a default
(see :class:`hookd.daemon.settings.DaemonSettings`), ``~/.config/hookd/hookd.toml``
overrides them, and each flag overrides the file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from hookd.daemon.server import AlreadyRunning, Daemon
from hookd.daemon.settings import SettingsError, load_settings
from hookd.logging import configure_logging

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookd", description="the hookd daemon")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the daemon in the foreground")
    serve.add_argument("--config", type=Path, help="daemon settings file (default: hookd.toml)")
    serve.add_argument("--socket", help="Unix socket path")
    serve.add_argument("--log-format", choices=("auto", "json", "console"))
    serve.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    serve.add_argument(
        "--no-watch",
        dest="watch",
        action="store_false",
        default=None,
        help="do not watch config files (reload with SIGHUP or hookctl reload)",
    )
    serve.add_argument(
        "--claude-settings",
        action="store_true",
        default=None,
        help="also read hooks from Claude Code's settings files",
    )
    serve.add_argument("--policy-file", dest="policy_files", action="append")
    serve.add_argument("--user-file", dest="user_files", action="append")
    serve.add_argument("--state-dir")
    serve.add_argument("--http-port", type=int, help="serve Claude Code http hooks on 127.0.0.1")
    serve.add_argument("--max-frame", type=int)
    serve.add_argument("--shutdown-grace", type=float)
    serve.add_argument("--kill-grace", type=float)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in (None, "serve"):
        return 2
    overrides: dict[str, Any] = {
        key: getattr(args, key, None)
        for key in (
            "socket",
            "log_format",
            "log_level",
            "watch",
            "claude_settings",
            "policy_files",
            "user_files",
            "state_dir",
            "http_port",
            "max_frame",
            "shutdown_grace",
            "kill_grace",
        )
    }
    try:
        settings = load_settings(getattr(args, "config", None), overrides)
    except SettingsError as exc:
        print(f"hookd: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format, settings.log_level)
    daemon = Daemon(settings)
    try:
        trio.run(daemon.run)
    except AlreadyRunning as exc:
        print(f"hookd: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

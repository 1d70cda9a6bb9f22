"""``hookd`` / ``python -m hookd``: run the daemon.

``hookd serve`` needs no configuration file: every setting has a default
(see :class:`hookd.daemon.settings.DaemonSettings`), ``~/.config/hookd/hookd.toml``
overrides them, and each flag overrides the file.
"""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from hookd.daemon.server import AlreadyRunning, Daemon
from hookd.daemon.settings import DaemonSettings, SettingsError, load_settings
from hookd.logging import configure_logging

__all__ = ["main"]


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`DaemonSettings` field, derived from the field's type.

    uvicorn's rule: every setting has a default, a place in ``hookd.toml`` and a
    flag, one to one, so no setting is reachable one way and not another.
    ``x_y`` becomes ``--x-y``; booleans get ``--x`` / ``--no-x``; a list field
    ``xs`` becomes a repeatable ``--x``.
    """
    defaults = DaemonSettings()
    for name, hint in typing.get_type_hints(DaemonSettings).items():
        flag = "--" + name.replace("_", "-")
        default = getattr(defaults, name)
        args = typing.get_args(hint)
        if hint is bool:
            parser.add_argument(
                flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"(default: {default})",
            )
        elif typing.get_origin(hint) is list:
            parser.add_argument(
                flag.removesuffix("s"),
                dest=name,
                action="append",
                metavar=name.upper()[:-1],
                help=f"repeatable (default: {default})",
            )
        elif typing.get_origin(hint) is typing.Literal:
            parser.add_argument(flag, dest=name, choices=args, help=f"(default: {default})")
        else:
            base = next((a for a in args if a is not type(None)), hint) if args else hint
            parser.add_argument(flag, dest=name, type=base, help=f"(default: {default!r})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookd", description="the hookd daemon")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser(
        "serve",
        help="run the daemon in the foreground",
        description="Run the daemon. Every setting has a default, a key in hookd.toml and a "
        "flag; flags override the file.",
    )
    serve.add_argument("--config", type=Path, help="daemon settings file (default: hookd.toml)")
    _add_setting_flags(serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in (None, "serve"):
        return 2
    overrides: dict[str, Any] = {
        name: getattr(args, name, None) for name in DaemonSettings.__struct_fields__
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

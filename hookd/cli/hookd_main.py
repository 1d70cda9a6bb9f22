"""``hookd`` / ``python -m hookd``: run the daemon.

``hookd serve`` needs no configuration file: every setting has a default
(see :class:`hookd.daemon.settings.DaemonSettings`), ``~/.config/hookd/hookd.toml``
overrides them, and each flag overrides the file.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
import textwrap
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio

import hookd
from hookd.daemon import own_process
from hookd.daemon.server import AlreadyRunning, Daemon, HttpPortTaken, UnsafeSocketPath
from hookd.daemon.settings import (
    CLEARED,
    DaemonSettings,
    SettingsError,
    SettingsSource,
    TelemetrySettings,
    settings_path,
)
from hookd.logging import configure_logging

__all__ = ["main", "setting_overrides"]


def setting_docs(cls: type = DaemonSettings) -> dict[str, str]:
    """Each :class:`DaemonSettings` (or ``cls``) field's docstring (the string under it), by name.

    Attribute docstrings are not kept at run time, so the class source is read
    with :mod:`ast`: the settings are documented once, where they are defined,
    and ``hookd serve --help`` shows the same words.
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for field, after in zip(body, [*body[1:], None], strict=True):
        if not (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)):
            continue
        if (
            isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            text = " ".join(after.value.value.split())
            docs[field.target.id] = re.sub(r"``([^`]*)``", r"\1", text)
    return docs


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`DaemonSettings` field, derived from the field's type.

    uvicorn's rule: every setting has a default, a place in ``hookd.toml`` and a
    flag, one to one, so no setting is reachable one way and not another.
    ``x_y`` becomes ``--x-y``; booleans get ``--x`` / ``--no-x``; a list field
    ``xs`` becomes a repeatable ``--x``.
    """
    defaults = DaemonSettings()
    docs = setting_docs()
    for name, hint in typing.get_type_hints(DaemonSettings).items():
        flag = "--" + name.replace("_", "-")
        default = getattr(defaults, name)
        args = typing.get_args(hint)
        doc = docs.get(name, name.replace("_", " "))
        if hint is TelemetrySettings:
            _add_table_flags(parser, name, hint)
        elif hint is bool:
            parser.add_argument(
                flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{doc} (default: {default})",
            )
        elif typing.get_origin(hint) is list:
            parser.add_argument(
                flag.removesuffix("s"),
                dest=name,
                action="append",
                metavar=name.upper()[:-1],
                help=f"{doc} Repeatable (default: {default})",
            )
        elif typing.get_origin(hint) is dict:
            parser.add_argument(
                flag.removesuffix("s"),
                dest=name,
                action="append",
                type=_key_count,
                metavar="NAME=N",
                help=f"repeatable (default: {default})",
            )
        elif typing.get_origin(hint) is typing.Literal:
            parser.add_argument(flag, dest=name, choices=args, help=f"{doc} (default: {default})")
        else:
            base = next((a for a in args if a is not type(None)), hint) if args else hint
            if type(None) in args:
                base = _or_none(base)
            parser.add_argument(flag, dest=name, type=base, help=f"{doc} (default: {default!r})")


def _or_none(base: Any) -> Callable[[str], Any]:
    """A flag of an optional setting: ``None`` sets it to None (over hookd.toml), as its
    help says (``--http-port None`` turns the endpoint off); anything else is ``base``'s."""

    def convert(text: str) -> Any:
        return CLEARED if text in ("None", "none") else base(text)

    convert.__name__ = getattr(base, "__name__", "value")  # argparse names it in errors
    return convert


def _add_table_flags(parser: argparse.ArgumentParser, table: str, cls: type) -> None:
    """The flags of a settings table (``[telemetry]``): ``--telemetry`` / ``--no-telemetry``
    for its ``enabled`` key, ``--telemetry-KEY`` for each scalar key (``dest``
    ``telemetry.KEY``); its mappings (headers, resource attributes) are set in the file
    or by their ``OTEL_*`` variables."""
    parser.set_defaults(**{table: None})  # the table itself: from its keys' flags
    defaults = cls()
    docs = setting_docs(cls)
    for key, hint in typing.get_type_hints(cls).items():
        dest = f"{table}.{key}"
        doc = docs.get(key, key.replace("_", " "))
        default = getattr(defaults, key)
        flag = f"--{table}" if key == "enabled" else f"--{table}-{key.replace('_', '-')}"
        if hint is bool:
            parser.add_argument(
                flag,
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=f"{doc} (default: {default})",
            )
        elif typing.get_origin(hint) is typing.Literal:
            choices = typing.get_args(hint)
            parser.add_argument(
                flag, dest=dest, choices=choices, help=f"{doc} (default: {default})"
            )
        elif hint in (str, int, float):
            parser.add_argument(
                flag,
                dest=dest,
                type=hint,
                metavar=key.upper(),
                help=f"{doc} (default: {default!r})",
            )


def setting_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the flags gave (None: not given), tables as nested mappings."""
    overrides: dict[str, Any] = {
        name: getattr(args, name, None) for name in DaemonSettings.__struct_fields__
    }
    for name, value in overrides.items():
        if isinstance(value, list) and value and isinstance(value[0], tuple):
            overrides[name] = dict(value)  # NAME=N pairs of a mapping setting
    for dest, value in vars(args).items():
        table, dot, key = dest.partition(".")
        if dot and value is not None:
            overrides[table] = {**(overrides.get(table) or {}), key: value}
    return overrides


def _key_count(text: str) -> tuple[str, int]:
    """``NAME=N`` for a mapping setting (``--inject-fault reload=1``)."""
    name, sep, count = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=N, got {text!r}")
    try:
        return name, int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=N with an integer N, got {text!r}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hookd", description="hookd: the persistent hook runtime for AI coding agents"
    )
    parser.add_argument("--version", action="version", version=f"hookd {hookd.__version__}")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser(
        "serve",
        help="run the daemon in the foreground",
        description="Run the daemon. Every setting has a default, a key in hookd.toml and a "
        "flag; flags override the file.",
    )
    serve.add_argument(
        "--config",
        type=Path,
        help="daemon settings file (default: ~/.config/hookd/hookd.toml, if it exists)",
    )
    _add_setting_flags(serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in (None, "serve"):
        return 2
    source = SettingsSource(
        getattr(args, "config", None) or settings_path(), setting_overrides(args)
    )
    try:
        settings = source.load()
    except SettingsError as exc:
        print(f"hookd: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_format, settings.log_level)
    own_process.set_up()
    daemon = Daemon(settings, source=source)
    try:
        trio.run(daemon.run)
    except (AlreadyRunning, UnsafeSocketPath, HttpPortTaken) as exc:
        print(f"hookd: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""hookctl: fire events, validate configs, and (with a daemon) inspect and steer it.

Exit codes scripts can rely on: 0 success; 1 a validation error or a failed
request; 2 bad usage; 3 the daemon is not running; 4 (fire) the event was
blocked.  fire --format claude exits with the code a Claude Code hook exits with.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import hookd

__all__ = ["COMMANDS", "build_parser", "main"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_DAEMON = 0, 1, 2, 3

_OWN_NAME = "hookd.cli.hookctl"
"""Commands defined in this module (not ``__name__``: under ``python -m`` that is ``__main__``)."""

# Which module registers (and runs) each subcommand, and its one-line help.
# Only the chosen subcommand's module is imported: `hookctl status` must not
# pay for trio, httpx and the engine (it starts about as fast as the blocking
# client), and `hookctl --help` imports none of them.
COMMANDS: dict[str, tuple[str, str]] = {
    "fire": (
        _OWN_NAME,
        "fire one event (through the daemon, or --local) and show the result",
    ),
    "example": (_OWN_NAME, "print an example input for an event (for fire --input)"),
    "validate": (
        _OWN_NAME,
        "check config files: every error with file, line and JSON path",
    ),
    "status": ("hookd.cli.remote", "the daemon, its config, sessions and running hooks"),
    "hooks": ("hookd.cli.remote", "the effective hooks for a directory"),
    "reload": ("hookd.cli.remote", "re-read every config source now"),
    "sessions": ("hookd.cli.remote", "the sessions the daemon knows"),
    "tail": ("hookd.cli.remote", "recent hook runs; -f to follow"),
    "statusline": ("hookd.cli.remote", "run the project's statusLine (or fileSuggestion) command"),
    "stop": ("hookd.cli.remote", "stop the daemon gracefully"),
    "async": ("hookd.cli.async_cmd", "background (async) hooks: running, queued, finished"),
    "trust": (
        "hookd.cli.reliability_cmd",
        "trust a project directory's own hooks (default: the current one); --list",
    ),
    "untrust": ("hookd.cli.reliability_cmd", "stop trusting a project directory"),
    "audit": ("hookd.cli.reliability_cmd", "the audit log: events, decisions, hook runs"),
    "replay": ("hookd.cli.reliability_cmd", "re-run a recorded event on the current config"),
    "reset": ("hookd.cli.reliability_cmd", "resume hooks paused by the circuit breaker"),
    "claude": ("hookd.cli.claude_cmd", "run Claude Code's hooks through hookd"),
    "agents": ("hookd.cli.agents_cmd", "every coding agent here: list, install, uninstall, status"),
    "explain": (
        "hookd.cli.explain_cmd",
        "which hooks an agent's event would run here, and what the agent loses",
    ),
    "doctor": ("hookd.cli.doctor_cmd", "lint every agent's hook files for silent failures"),
    "systemd": ("hookd.cli.systemd_cmd", "run hookd as a socket-activated user service"),
    "top": ("hookd.cli.top", "a live full-screen view: sessions, running hooks, latency"),
    "completion": (_OWN_NAME, "print a shell completion script (bash, zsh, fish)"),
}


_REGISTRARS = {
    "hookd.cli.remote": "add_commands",
    "hookd.cli.async_cmd": "add_command",
    "hookd.cli.reliability_cmd": "add_commands",
    "hookd.cli.claude_cmd": "add_claude_command",
    "hookd.cli.agents_cmd": "add_agents_command",
    "hookd.cli.explain_cmd": "add_explain_command",
    "hookd.cli.doctor_cmd": "add_doctor_command",
    "hookd.cli.systemd_cmd": "add_systemd_command",
    "hookd.cli.top": "add_top_command",
}


def _lazy(target: str) -> Callable[[argparse.Namespace], int]:
    """A command function imported when it runs (``module:function``)."""

    def run(args: argparse.Namespace) -> int:
        module, name = target.split(":")
        code: int = getattr(importlib.import_module(module), name)(args)
        return code

    return run


def _add_own_commands(sub: Any) -> None:
    """fire, example and validate: defined here, run from their own modules."""
    fire = sub.add_parser(
        "fire",
        help=COMMANDS["fire"][1],
        description="Fire one event and show the result. The input is the event's example "
        "(hookctl example EVENT) with --input's fields on top, so a partial input is enough. "
        "Exit 0: nothing blocked; 4: blocked (deny, block, continue:false); 1: bad input or "
        "config; 3: no daemon. --format claude exits as a Claude Code hook would.",
    )
    fire.add_argument("event", help="event name, e.g. PreToolUse")
    fire.add_argument("--local", action="store_true", help="run in this process, no daemon")
    fire.add_argument(
        "--settings",
        action="append",
        metavar="FILE",
        help="with --local: settings file or inline JSON (repeatable); replaces the default "
        "sources; a missing or broken one is an error",
    )
    fire.add_argument(
        "--with-defaults",
        action="store_true",
        help="with --settings: also load the default sources",
    )
    fire.add_argument(
        "--input", metavar="FILE", help="event input JSON (partial is fine), or - for stdin"
    )
    fire.add_argument(
        "--format",
        choices=("text", "json", "claude"),
        help="text: a summary (default on a terminal); json: the whole result (default "
        "otherwise); claude: what a Claude Code command hook prints",
    )
    fire.add_argument(
        "--context",
        choices=("interactive", "batch"),
        default="interactive",
        help="how the agent runs (decides e.g. whether ask can prompt)",
    )
    fire.set_defaults(func=_lazy("hookd.cli.fire_cmd:cmd_fire"))

    example = sub.add_parser("example", help=COMMANDS["example"][1])
    example.add_argument("event", nargs="?", help="event name; without it, list the events")
    example.set_defaults(func=_lazy("hookd.cli.examples:cmd_example"))

    validate = sub.add_parser("validate", help=COMMANDS["validate"][1])
    validate.add_argument("files", nargs="+", metavar="FILE", help="settings, TOML or SKILL.md")
    validate.add_argument("--json", action="store_true", help="one JSON report for all files")
    validate.set_defaults(func=_lazy("hookd.cli.validate_cmd:cmd_validate"))

    completion = sub.add_parser(
        "completion",
        help=COMMANDS["completion"][1],
        description='bash: eval "$(hookctl completion bash)"; zsh: eval "$(hookctl completion '
        'zsh)"; fish: hookctl completion fish | source',
    )
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell")
    completion.set_defaults(
        func=_lazy("hookd.cli.completion:cmd_completion"),
        full_parser=functools.partial(build_parser, full=True),
    )


def build_parser(command: str | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """hookctl's parser; with ``command``, only that command's module is imported.

    The other subcommands are listed (name and help) without their options, which
    is all ``hookctl --help`` shows; ``full`` registers every one with all its
    options (for completion scripts and tests).
    """
    parser = argparse.ArgumentParser(
        prog="hookctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"hookctl {hookd.__version__}")
    parser.add_argument(
        "--socket", help="the daemon's socket (default: $HOOKD_SOCKET, then the runtime dir)"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour in human output (auto: on a terminal, unless NO_COLOR is set)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if full:
        wanted = list(dict.fromkeys(m for m, _ in COMMANDS.values()))
    else:
        wanted = [COMMANDS[command][0]] if command in COMMANDS else []
    for module in wanted:
        if module == _OWN_NAME:
            _add_own_commands(sub)
        else:
            getattr(importlib.import_module(module), _REGISTRARS[module])(sub)
    for name, (_, help_text) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=help_text)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand without a description its one-line help as one, nested
    ones included: ``hookctl status --help`` should say what ``status`` is, not only
    how to call it."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, child in action.choices.items():
            text = helps.get(name)
            if not child.description and text:
                child.description = text[0].upper() + text[1:] + ("" if text[-1] in ".?!" else ".")
            _describe(child)


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (skipping global options and their values)."""
    takes_value = {"--socket", "--color"}
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in takes_value:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())

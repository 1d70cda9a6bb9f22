"""``hookctl completion bash|zsh|fish``: a completion script made from hookctl's own parser.

Generated, not hand-written, so a new command or option completes the day it
is added.  Add to your shell's start-up file:
``eval "$(hookctl completion bash)"`` (zsh: the same with ``zsh``; fish:
``hookctl completion fish | source``).
"""

from __future__ import annotations

import argparse
import shlex

from hookd_client.events import EVENT_NAMES

__all__ = ["cmd_completion", "completion_table", "script"]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def completion_table(
    parser: argparse.ArgumentParser,
) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    """``{"_ claude install": (words, [(option, help)])}``: what may follow each command path.

    ``_`` is the root (bash associative arrays cannot have an empty key).
    """
    table: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}

    def walk(path: str, parser: argparse.ArgumentParser) -> None:
        options = [
            (opt, action.help or "")
            for action in parser._actions
            for opt in action.option_strings
            if opt.startswith("--")
        ]
        children = _subparsers(parser)
        words = list(children)
        if path in ("_ fire", "_ example"):
            words += list(EVENT_NAMES)
        table[path] = (words, options)
        for name, child in children.items():
            walk(f"{path} {name}", child)

    walk("_", parser)
    return table


def _bash(parser: argparse.ArgumentParser) -> str:
    entries = "\n".join(
        f"  [{shlex.quote(path)}]={shlex.quote(' '.join(words + [o for o, _ in options]))}"
        for path, (words, options) in completion_table(parser).items()
    )
    return f"""# hookctl completion (bash; zsh through bashcompinit)
declare -gA _hookctl_words=(
{entries}
)
_hookctl() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} key=_ w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    [[ $w == -* ]] && continue
    [[ -n ${{_hookctl_words["$key $w"]+set}} ]] && key="$key $w"
  done
  COMPREPLY=($(compgen -W "${{_hookctl_words[$key]}}" -- "$cur"))
}}
complete -o default -F _hookctl hookctl
"""


def _zsh(parser: argparse.ArgumentParser) -> str:
    return "autoload -U +X bashcompinit && bashcompinit\n" + _bash(parser).replace(
        "declare -gA", "typeset -gA"
    )


def _fish(parser: argparse.ArgumentParser) -> str:
    lines = ["# hookctl completion (fish)", "complete -c hookctl -f"]
    for path, (words, options) in completion_table(parser).items():
        if path == "_":
            condition = "__fish_use_subcommand"
        else:
            condition = "__fish_seen_subcommand_from " + path.split()[-1]
        for word in words:
            lines.append(f"complete -c hookctl -n {shlex.quote(condition)} -a {shlex.quote(word)}")
        for option, help_text in options:
            lines.append(
                f"complete -c hookctl -n {shlex.quote(condition)} -l {option[2:]}"
                + (f" -d {shlex.quote(help_text[:60])}" if help_text else "")
            )
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser)


def cmd_completion(args: argparse.Namespace) -> int:
    """hookctl hands over a factory for its full parser (this module never imports hookctl)."""
    print(script(args.shell, args.full_parser()), end="")
    return 0

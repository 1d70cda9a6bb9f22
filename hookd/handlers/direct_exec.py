"""Run a simple shell command without the shell: one process and one exec less per hook.

Claude Code runs every shell-form hook as ``/bin/sh -c COMMAND``.  For the
commonest commands — a program and plain arguments (``cat``,
``python3 /opt/hooks/check.py --strict``,
``"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh``) — all the shell does is look
the program up on PATH and start it, and dash (Debian's ``/bin/sh``) even
forks to do that: two processes, two execs.  Starting the program directly
gives it the same argv, environment, working directory, stdin, output and exit
status, about half a millisecond sooner (``bench/`` row 4; docs/performance.md).

*Simple* is decided conservatively, on the text alone: words made of
``[A-Za-z0-9_./,:@%+=-]``, single-quoted strings (literal to the next ``'``, as
POSIX has it: no expansion or escape inside) and double-quoted strings whose
only expansions are ``$NAME`` / ``${NAME}``; the first word is not a shell
keyword, builtin or assignment.  A ``#`` that begins a word begins a comment to
the end of the command (``cat # audit copy``), as in the shell, and leaves the
argv; a comment followed by further lines goes to the shell.  Anything else —
backslashes, globs, ``~``, redirections, pipes, ``;``, ``&``, ``$( )``, unquoted
``$VAR`` (word splitting) — goes to ``/bin/sh`` exactly as before.

What the shell would have done, this does too:

- the program is looked up on the hook environment's PATH;
- ``PWD`` is exported as the working directory (dash and bash both do it);
- a program that cannot be started (not found, not executable, no ``#!``
  line) is handed to the shell after all, so the message and the 126/127 exit
  are the shell's own (see :class:`hookd.handlers.command.CommandRunner`);
- death by signal N is reported as exit status 128+N with the signal's name
  on stderr when ``/bin/sh`` is a shell that forks for the command (dash,
  ash), as that shell reports it (:func:`report_as_shell`); bash execs the
  command itself, so there the signal stays a signal.
"""

from __future__ import annotations

import functools
import os
import re
import signal
from collections.abc import Mapping

from hookd.handlers.process import ProcessResult

__all__ = ["SIGNAL_AS_STATUS", "report_as_shell", "shell_pwd", "simple_argv"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PLAIN = re.compile(r"[A-Za-z0-9_./,:@%+=-]+")
_QUOTED = re.compile(rf'"([^"\\`$]*(?:\$(?:{_NAME}|\{{{_NAME}\}})[^"\\`$]*)*)"')
_SINGLE_QUOTED = re.compile(r"'([^']*)'")
_REFERENCE = re.compile(rf"\$(?:({_NAME})|\{{({_NAME})\}})")

_WORDS = (
    # keywords (POSIX, bash)
    "if then else elif fi do done case esac while until for in function select time coproc "
    # builtins of dash and of bash (/bin/sh is one or the other on most systems)
    ". : [ [[ alias bg bind break builtin caller cd chdir command compgen complete compopt "
    "continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash "
    "help history jobs kill let local logout mapfile popd printf pushd pwd read readarray "
    "readonly return set shift shopt source suspend test times trap true type typeset ulimit "
    "umask unalias unset wait"
)
_SHELL_WORDS = frozenset(_WORDS.split())
"""First words the shell itself answers: those commands always go through /bin/sh."""

_SHELL_VARIABLES = frozenset({"PPID", "IFS", "PS1", "PS2", "PS4", "OPTIND", "LINENO", "PWD"})
"""Names the shell sets itself rather than taking from the environment."""


SIGNAL_AS_STATUS = os.path.basename(os.path.realpath("/bin/sh")) != "bash"
"""Whether ``/bin/sh -c CMD`` reports CMD's death by signal N as exit status 128+N."""


def simple_argv(command: str, env: Mapping[str, str]) -> list[str] | None:
    """The argv ``/bin/sh -c command`` would exec, or None when it takes a shell to know."""
    if "PATH" not in env:
        return None  # the shell's built-in default search path is its own to know
    words: list[str] = []
    current: str | None = None
    first_raw = ""
    text = command.strip(" ")
    i = 0
    while i < len(text):
        char = text[i]
        if char == " ":
            if current is not None:
                words.append(current)
                current = None
            i += 1
            continue
        if char == "#" and current is None:
            if "\n" in text[i:]:
                return None  # a comment and more lines: the shell's to read
            break  # a comment to the end: the shell ignores it, and so does the argv
        plain = _PLAIN.match(text, i)
        if plain is not None:
            piece = plain.group()
        elif char == '"' and (quoted := _QUOTED.match(text, i)) is not None:
            expanded = _expand(quoted.group(1), env)
            if expanded is None:
                return None
            piece, plain = expanded, quoted
        elif char == "'" and (quoted := _SINGLE_QUOTED.match(text, i)) is not None:
            piece, plain = quoted.group(1), quoted
        else:
            return None  # anything else is for the shell to interpret
        if not words:
            first_raw += plain.group()
        current = (current or "") + piece
        i = plain.end()
    if current is not None:
        words.append(current)
    if not words or not words[0]:
        return None
    if "=" in first_raw or ("/" not in words[0] and words[0] in _SHELL_WORDS):
        return None
    return words


def _expand(inner: str, env: Mapping[str, str]) -> str | None:
    """``$NAME`` / ``${NAME}`` inside double quotes: the value, unsplit (unset: empty)."""
    out: list[str] = []
    position = 0
    for ref in _REFERENCE.finditer(inner):
        name = ref.group(1) or ref.group(2)
        if name in _SHELL_VARIABLES:
            return None
        out.append(inner[position : ref.start()])
        out.append(env.get(name, ""))
        position = ref.end()
    out.append(inner[position:])
    return "".join(out)


def shell_pwd(env: Mapping[str, str], cwd: str) -> str:
    """``PWD`` as the shell would export it in ``cwd``: the inherited value when it
    names that same directory, else the physical path."""
    inherited = env.get("PWD")
    if inherited and os.path.isabs(inherited):
        try:
            if os.path.samefile(inherited, cwd):
                return inherited
        except OSError:
            pass  # it names nothing any more
    return _physical(cwd)


@functools.lru_cache(maxsize=256)
def _physical(directory: str) -> str:
    """``getcwd()`` in ``directory``; memoised, as a project dir rarely moves under us."""
    return os.path.realpath(directory)


def report_as_shell(result: ProcessResult) -> None:
    """Make a direct run's ending read as ``/bin/sh -c`` would have reported it.

    dash and ash report a command's death by signal N as exit status 128+N and
    print the signal's description (``Terminated``, ``Killed`` …) to stderr,
    except for SIGINT and SIGPIPE.  (They add `` (core dumped)`` when a core was
    written; that one suffix is not reproduced.)
    """
    code = result.returncode
    if code is None or code >= 0 or not SIGNAL_AS_STATUS:
        return
    number = -code
    result.returncode = 128 + number
    if number not in (signal.SIGINT, signal.SIGPIPE):
        result.stderr += (signal.strsignal(number) or f"Signal {number}").encode() + b"\n"

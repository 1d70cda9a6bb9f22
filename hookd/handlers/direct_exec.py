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
POSIX has it: no expansion or escape inside), double-quoted strings whose only
expansions are ``$NAME`` / ``${NAME}``, a ``~`` or ``~/`` that begins a word
(``$HOME``, when set and not empty: without it dash and bash differ), and an
unquoted ``$NAME`` / ``${NAME}`` whose value field splitting and pathname
expansion would leave whole (not empty, no blank, no ``*?[\\``, default IFS);
the first word is not a shell keyword, builtin or assignment.  A ``#`` that
begins a word begins a comment to the end of the command (``cat # audit
copy``), as in the shell, and leaves the argv; a comment followed by further
lines goes to the shell.  Anything else — backslashes, globs, ``~user``,
redirections, pipes, ``;``, ``&``, ``$( )``, a value that would split — goes to
``/bin/sh`` exactly as before.

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
_SPLIT_OR_GLOB = re.compile(r"[ \t\n*?\[\\]")
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

_SHELL_VARIABLES = frozenset(
    {
        # POSIX (dash sets these itself)
        *("PPID", "IFS", "PS1", "PS2", "PS4", "OPTIND", "LINENO", "PWD", "OLDPWD"),
        # bash, where /bin/sh is bash: set or changed at start-up, or computed when read
        *("_", "SHLVL", "RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS", "EPOCHREALTIME"),
        *("UID", "EUID", "GROUPS", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "BASH"),
        *("BASHOPTS", "BASHPID", "BASH_VERSION", "BASH_VERSINFO", "BASH_ARGV0", "SHELLOPTS"),
        *("DIRSTACK", "FUNCNAME", "HISTCMD", "PIPESTATUS", "OPTERR", "PS3", "COLUMNS", "LINES"),
    }
)
"""Names the shell sets itself rather than taking from the environment (an expansion
of one of them is the shell's to make)."""


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
        found = _piece(text, i, env, word_start=current is None)
        if found is None:
            return None  # anything else is for the shell to interpret
        piece, end = found
        if not words:
            first_raw += text[i:end]
        current = (current or "") + piece
        i = end
    if current is not None:
        words.append(current)
    if not words or not words[0]:
        return None
    if "=" in first_raw or ("/" not in words[0] and words[0] in _SHELL_WORDS):
        return None
    return words


def _piece(text: str, i: int, env: Mapping[str, str], word_start: bool) -> tuple[str, int] | None:
    """The part of a word that starts at ``text[i]``, as the shell would expand it, and
    where it ends; None for anything this module leaves to the shell."""
    char = text[i]
    if (plain := _PLAIN.match(text, i)) is not None:
        return plain.group(), plain.end()
    if char == "'" and (single := _SINGLE_QUOTED.match(text, i)) is not None:
        return single.group(1), single.end()
    if char == '"' and (double := _QUOTED.match(text, i)) is not None:
        expanded = _expand(double.group(1), env)
        return None if expanded is None else (expanded, double.end())
    if char == "~" and word_start and text[i + 1 : i + 2] in ("", "/", " "):
        # ``~`` or ``~/…`` at a word's start is $HOME, unsplit, in dash and bash alike —
        # when HOME is set and not empty (without it the two shells differ).
        home = env.get("HOME", "")
        return (home, i + 1) if home else None
    if char == "$" and (reference := _REFERENCE.match(text, i)) is not None:
        value = _unquoted_value(reference.group(1) or reference.group(2), env)
        return None if value is None else (value, reference.end())
    return None


def _unquoted_value(name: str, env: Mapping[str, str]) -> str | None:
    """An unquoted ``$NAME``'s value where field splitting and pathname expansion leave it
    whole: not empty (the word would vanish), without blanks or glob characters, and
    with the default IFS (one from the environment is the shell's own business)."""
    value = env.get(name)
    if name in _SHELL_VARIABLES or "IFS" in env or not value:
        return None
    return None if _SPLIT_OR_GLOB.search(value) else value


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

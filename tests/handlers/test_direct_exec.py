"""Simple shell commands run without /bin/sh — and nobody can tell but the clock.

Every command below runs twice through the real engine, once as Claude Code
runs it (``/bin/sh -c``) and once with the shell skipped where
:func:`simple_argv` allows; exit code, stdout, stderr and outcome must match.
A last test proves the skip really happens (the hook's parent is not a shell).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from engine.vectors import command_engine
from hookd.config.loader import build_config, load_source
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
from hookd.daemon.settings import DaemonSettings
from hookd.handlers.direct_exec import simple_argv
from hookd_client.events import decode_event
from hookd_client.results import HookRun
from support.daemon import configure

ENV = {
    "CLAUDE_PROJECT_DIR": "/srv/my project",
    "X": "1",
    "EMPTY": "",
    "GLOB": "*.py",
    "HOME": "/home/me",
    "PATH": "/usr/bin:/bin",
}


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("cat", ["cat"]),
        (
            "  python3 /opt/h/check.py --strict --level=2  ",
            ["python3", "/opt/h/check.py", "--strict", "--level=2"],
        ),
        (
            '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh',
            ["/srv/my project/.claude/hooks/guard.sh"],
        ),
        ('"${X}y" "$UNSET" "$EMPTY"', ["1y", "", ""]),
        ('tool "a;b|c*?~ {x}"', ["tool", "a;b|c*?~ {x}"]),
        ("/bin/echo -n x", ["/bin/echo", "-n", "x"]),
        ("echo hi", None),  # builtins answer differently from /bin/echo
        ("exit 2", None),
        ("true", None),
        ("[ -f x ]", None),
        ("if", None),
        ("A=1 cmd", None),  # assignment
        ("cat *.py", None),  # glob
        ("cat ~/x", ["cat", "/home/me/x"]),  # ~ at a word's start: HOME
        ("cat | tee", None),
        ("cat > out", None),
        ("a; b", None),
        ("a && b", None),
        ("sleep 1 &", None),
        ("cmd $X ${X}y", ["cmd", "1", "1y"]),  # unquoted, but nothing to split or glob
        ("cmd $CLAUDE_PROJECT_DIR/h.py", None),  # a blank in the value: field splitting
        ("cmd $GLOB", None),  # pathname expansion
        ("cmd $EMPTY", None),  # an empty unquoted word vanishes
        ("cmd $UNSET", None),
        ("cmd $PPID", None),  # the shell's own variable
        ('cmd "$SHLVL" $RANDOM "${_}"', None),  # bash sets or computes these itself
        ("~/.claude/hooks/guard.sh ~ a~", None),  # a ~ inside a word: left to the shell
        (
            "~/.claude/hooks/guard.sh ~ ~/x",
            ["/home/me/.claude/hooks/guard.sh", "/home/me", "/home/me/x"],
        ),
        ("cat ~root/x", None),  # another user's home
        ('cat ~"/x"', None),
        ('"$PWD"', None),  # the shell's own variable
        ('"$(date)"', None),
        ('"a\\"b"', None),
        ("'quoted'", ["quoted"]),  # single quotes: literal, nothing expanded
        ("tool 'a \"$X\" `b` \\ # c' d'e'\"$X\"", ["tool", 'a "$X" `b` \\ # c', "de1"]),
        ("tool '' 'multi\nline'", ["tool", "", "multi\nline"]),
        ("tool 'unterminated", None),
        ("'A=1' cmd", None),  # not an assignment to the shell, but left to it
        ("'true'", None),  # a quoted builtin is still the builtin
        ("cat\\ x", None),
        ('""', None),
        ("", None),
        ("# comment", None),
        ("cat # 3", ["cat"]),  # a comment from a word's start to the end: not an argument
        ('/bin/echo -n "a # b"  #  x y ;| *', ["/bin/echo", "-n", "a # b"]),
        ("cat #", ["cat"]),
        ("cat a#b", None),  # inside a word, # is no comment: left to the shell
        ("cat # x\necho y", None),  # more lines after the comment: the shell's
        ("A=1 cat # x", None),
    ],
)
def test_what_counts_as_simple(command: str, argv: list[str] | None) -> None:
    assert simple_argv(command, ENV) == argv


def test_tilde_and_unquoted_values_need_the_shell_where_shells_differ() -> None:
    """Without HOME, dash leaves ``~`` as it is and bash asks the password database; a
    custom IFS splits values its own way."""
    assert simple_argv("cat ~/x", {"PATH": "/bin"}) is None
    assert simple_argv("cat ~/x", {"PATH": "/bin", "HOME": ""}) is None
    assert simple_argv("cat $X", {"PATH": "/bin", "X": "a:b", "IFS": ":"}) is None


def test_without_path_the_shell_decides() -> None:
    assert simple_argv("cat", {}) is None


def _script(path: Path, body: str) -> Path:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def programs(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "show-args", '#!/bin/sh\nfor a in "$@"; do printf "[%s]" "$a"; done; echo\n')
    _script(bin_dir / "exit3", "#!/bin/sh\necho out; echo err >&2; exit 3\n")
    _script(bin_dir / "killself", "#!/bin/sh\nkill -TERM $$\nsleep 5\n")
    _script(bin_dir / "no-shebang", "echo ran as a script\n")
    (bin_dir / "not-executable").write_text("#!/bin/sh\necho never\n")
    _script(bin_dir / "env-dump", "#!/bin/sh\nenv | grep -v -e '^_=' -e '^SHLVL=' | sort\n")
    _script(
        bin_dir / "json-deny",
        "#!/bin/sh\ncat >/dev/null\n"
        'echo \'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
        '"permissionDecision":"deny","permissionDecisionReason":"no"}}\'\n',
    )
    spaced = tmp_path / "dir with space"
    spaced.mkdir()
    _script(spaced / "hook.sh", "#!/bin/sh\necho spaced $#\n")
    return {"bin": str(bin_dir), "spaced": str(spaced)}


async def _fire(tmp_path: Path, command: str, *, direct: bool, env: dict[str, str]) -> HookRun:
    settings = tmp_path / f"hooks-{direct}.json"
    settings.write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}}
        )
    )
    config = build_config([load_source(SourceSpec(settings, Scope.USER))])
    engine = command_engine(DaemonSettings(command_without_shell=direct, kill_grace=0.2))
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    event = decode_event(
        {
            "session_id": "direct",
            "transcript_path": "/dev/null",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
        }
    )
    result = await engine.fire(config, event, env=env)
    [run] = result.hooks
    return run


COMMANDS = [
    "cat",
    "show-args a 'b c'",  # single quotes: literal
    "show-args '$HOOK_EVENT' 'a\\b' 'x # y' '' end",
    "show-args 'it'\\''s'",  # a backslash outside quotes: through the shell
    "show-args 'two\nlines' \"$HOOK_EVENT\"'!'",
    'show-args ~/a ~ $PLAIN/x ${PLAIN}y "$BLANKS"',  # ~ and plain values: no shell
    "show-args $BLANKS $GLOBBY $NOT_SET end",  # split, globbed, vanished: the shell's
    "show-args a --b=c ,:@%+",
    "show-args a # b 'c' $(d) ; e",  # a comment: the shell skips it, and so does the argv
    "exit3 #",
    'show-args "$HOOK_EVENT" "${HOOK_TOOL_NAME}x" "$NOT_SET" end',
    '"$SPACED"/hook.sh one two',
    "exit3",
    "killself",
    "no-shebang",
    "not-executable",
    "does-not-exist --flag",
    "env-dump",
    "json-deny",
]


@pytest.mark.parametrize("command", COMMANDS)
async def test_direct_and_shell_runs_are_indistinguishable(
    tmp_path: Path, programs: dict[str, str], command: str
) -> None:
    env = {
        "PATH": f"{programs['bin']}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "SPACED": programs["spaced"],
        "PWD": "/somewhere/else",  # stale, as an agent's may be: the shell fixes it
        "HOME": str(tmp_path / "home"),
        "PLAIN": "/opt/plain-value",
        "BLANKS": "two  words",
        "GLOBBY": "*",
        "LANG": "C.UTF-8",
    }
    shell = await _fire(tmp_path, command, direct=False, env=env)
    direct = await _fire(tmp_path, command, direct=True, env=env)

    def comparable(run: HookRun) -> tuple[Any, ...]:
        # The input file and run id are per run by design; everything else must agree.
        out = "\n".join(
            line
            for line in run.stdout.splitlines()
            if not line.startswith(("HOOK_INPUT_FILE=", "HOOKD_RUN_ID="))
        )
        return run.outcome, run.exit_code, out, run.stderr, run.output

    assert comparable(direct) == comparable(shell)


async def test_the_shell_is_really_skipped(tmp_path: Path, programs: dict[str, str]) -> None:
    parent = Path(programs["bin"]) / "parent-name"
    _script(parent, f"#!{os.path.realpath('/bin/sh')}\ncat /proc/$PPID/comm\n")
    env = {"PATH": f"{programs['bin']}:/usr/bin:/bin"}
    shell = await _fire(tmp_path, "parent-name", direct=False, env=env)
    direct = await _fire(tmp_path, "parent-name", direct=True, env=env)
    assert shell.stdout.strip() == "sh"  # comm of the shell started as /bin/sh
    assert direct.stdout.strip() != shell.stdout.strip()  # the daemon itself started it


@pytest.mark.parametrize(("setting", "via_shell"), [(True, False), (False, True)])
async def test_the_daemon_setting_switches_it(
    daemon_factory: Any, tmp_path: Path, setting: bool, via_shell: bool
) -> None:
    import trio

    from hookd_client.client import Client

    script = _script(tmp_path / "parent-name", "#!/bin/sh\ncat /proc/$PPID/comm\n")
    handle = await daemon_factory(command_without_shell=setting)
    configure(handle, {"PreToolUse": [{"hooks": [{"type": "command", "command": str(script)}]}]})
    payload = {
        "session_id": f"setting-{setting}",
        "transcript_path": "/dev/null",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }

    def fire() -> Any:
        with Client(handle.socket) as client:
            return client.fire("PreToolUse", payload)

    reply = await trio.to_thread.run_sync(fire)
    [run] = reply.result.hooks
    assert (run.stdout.strip() == "sh") is via_shell, run  # else: the daemon's own process

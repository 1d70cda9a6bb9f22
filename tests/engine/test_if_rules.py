"""``if`` rules beyond ``Bash(git *)`` and ``Edit(src/**)``: every branch of the rule matcher.

Reference §5.2 and docs/configuration.md: ``Tool`` or ``Tool(pattern)``; Bash
subcommands, ``$(…)``/backticks, ``VAR=value`` prefixes; file patterns relative
to the event's cwd, ``~/``, ``//abs`` and a trailing ``/``; WebFetch
``domain:``; any other tool (MCP, Glob, Grep, …) by its input; the legacy
``:*`` form; and fail-open wherever the rule or the command cannot be
understood.  Each case is one row: change the branch that decides it and the
row fails.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from hookd.config import matching
from hookd.config.matching import IfMemo, compile_if_rule, if_rule_matches

CWD = "/work/proj"


def matches(rule: str, tool: str, tool_input: Any, event: str = "PreToolUse") -> bool:
    """The rule's verdict, asked with a generation's memo (twice: the second answer comes
    from the memo) and without one; all three must agree."""
    parsed = compile_if_rule(rule)
    memo = IfMemo()
    verdict = if_rule_matches(parsed, event, tool, tool_input, CWD, memo)
    assert if_rule_matches(parsed, event, tool, tool_input, CWD, memo) is verdict
    assert if_rule_matches(parsed, event, tool, tool_input, CWD) is verdict
    return verdict


# --- WebFetch domain: ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "url", "expected"),
    [
        ("WebFetch(domain:example.com)", "https://example.com/docs", True),
        ("WebFetch(domain:example.com)", "https://example.com", True),
        ("WebFetch(domain:example.com)", "http://example.com:8080/x", True),  # port is no part
        ("WebFetch(domain:example.com)", "https://EXAMPLE.com/", True),  # hosts have no case
        ("WebFetch(domain:Example.COM)", "https://example.com/", True),
        ("WebFetch(domain:example.com)", "https://docs.example.com/", False),
        ("WebFetch(domain:example.com)", "https://example.org/example.com", False),  # path
        ("WebFetch(domain:example.com)", "https://other.com/?next=example.com", False),
        ("WebFetch(domain:*.example.com)", "https://docs.example.com/a", True),
        ("WebFetch(domain:*.example.com)", "https://example.com/a", False),
        ("WebFetch(domain: example.com )", "https://example.com/a", True),  # trimmed
        ("WebFetch(domain:example.com)", "example.com/path", True),  # no scheme
    ],
)
def test_webfetch_domain_rules(rule: str, url: str, expected: bool) -> None:
    assert matches(rule, "WebFetch", {"url": url, "prompt": "p"}) is expected


def test_webfetch_domain_rule_without_a_url_fails_open() -> None:
    assert matches("WebFetch(domain:example.com)", "WebFetch", {"prompt": "p"}) is True
    assert matches("WebFetch(domain:example.com)", "WebFetch", {"url": 7}) is True


def test_webfetch_domain_rule_is_only_for_webfetch() -> None:
    assert matches("WebFetch(domain:example.com)", "WebSearch", {"query": "example.com"}) is False


# --- the generic rule: MCP, Glob, Grep and every other tool ---------------------------


@pytest.mark.parametrize(
    ("rule", "tool", "tool_input", "expected"),
    [
        ("Grep(TODO)", "Grep", {"pattern": "TODO", "path": "src"}, True),
        ("Grep(TODO)", "Grep", {"pattern": "FIXME", "path": "src"}, False),
        ("Grep(TODO*)", "Grep", {"pattern": "TODO: later"}, True),
        ("Grep(todo)", "Grep", {"pattern": "TODO"}, False),  # case-sensitive
        ("Glob(*.py)", "Glob", {"pattern": "**/*.py"}, True),
        ("Glob(*.py)", "Glob", {"pattern": "**/*.ts"}, False),
        ("Grep", "Grep", {"pattern": "anything"}, True),  # no pattern: the tool is enough
        ("Grep()", "Grep", {"pattern": "anything"}, True),
        ("Grep(*)", "Grep", {"pattern": "anything"}, True),
        ("Grep(TODO)", "Glob", {"pattern": "TODO"}, False),  # another tool
        ("mcp__memory__create_entities", "mcp__memory__create_entities", {"x": 1}, True),
        ("mcp__memory__create_entities", "mcp__memory__delete_entities", {"x": 1}, False),
        ("mcp__memory__search(secret)", "mcp__memory__search", {"query": "a secret"}, True),
        ("mcp__memory__search(secret)", "mcp__memory__search", {"query": "public"}, False),
        ("mcp__brave-search__web(x)", "mcp__brave-search__web", {"q": "x"}, True),
    ],
)
def test_generic_rules_match_the_tool_and_its_input(
    rule: str, tool: str, tool_input: Any, expected: bool
) -> None:
    assert matches(rule, tool, tool_input) is expected


def test_rules_name_a_tool_by_its_legacy_alias_too() -> None:
    assert matches("Task", "Agent", {"prompt": "x"}) is True
    assert matches("KillShell", "TaskStop", {}) is True
    assert matches("Agent", "Task", {}) is False  # an alias names the tool, not the reverse


# --- Bash: legacy :*, $(…) and $VAR, unparseable commands -----------------------------


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(npm run test:*)", "npm run test", True),
        ("Bash(npm run test:*)", "npm run test --watch", True),
        ("Bash(npm run test:*)", "npm run build", False),
        ("Bash(npm run test:*)", "cd app && npm run test", True),  # every subcommand
        ("Bash(git:*)", "git status", True),
        ("Bash(git:*)", "echo git", False),
    ],
)
def test_legacy_colon_star_is_a_prefix(rule: str, command: str, expected: bool) -> None:
    assert matches(rule, "Bash", {"command": command}) is expected


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        # A pattern naming more than the command cannot see through a substitution: run.
        ("Bash(git push *)", "$(echo git) push origin", True),
        ("Bash(git push *)", "$CMD push origin", True),
        ("Bash(git push *)", "git $SUB origin", True),
        ("Bash(git push --force*)", "echo $HOME", True),
        ("Bash(git push*)", "$CMD push", True),  # two words are already "more than the command"
        # A one-word pattern is judged on the words as written.
        ("Bash(git*)", "echo $HOME", False),
        ("Bash(rm)", "echo $(date)", False),
        # The command inside $(…) or backticks is checked on its own.
        ("Bash(git push *)", "echo $(git push origin)", True),
        ("Bash(git push *)", "echo `git push origin`", True),
        ("Bash(rm *)", "echo $(rm -rf /)", True),
        # No substitution, no match: the hook does not run.
        ("Bash(git push *)", "git pull origin", False),
        # Leading assignments are not the command.
        ("Bash(git push *)", "GIT_TRACE=1 FOO=bar git push origin", True),
        ("Bash(GIT_TRACE=1 *)", "GIT_TRACE=1 git push", False),
        # Every subcommand of a list or a pipeline.
        ("Bash(rm *)", "ls; rm -rf x", True),
        ("Bash(rm *)", "false || rm x", True),
        ("Bash(rm *)", "cat x | rm y", True),
        ("Bash(rm *)", "ls\nrm x", True),
        ("Bash(rm *)", "ls && echo rm", False),
        ("Bash(rm *)", "ls && ; && rm x", True),  # empty subcommands are skipped
        ("Bash(rm *)", "ls && ;", False),
        ("Bash(rm *)", "FOO=1 && rm x", True),  # a subcommand of assignments only is skipped
    ],
)
def test_substitutions_assignments_and_lists(rule: str, command: str, expected: bool) -> None:
    assert matches(rule, "Bash", {"command": command}) is expected


@pytest.mark.parametrize(
    "command",
    [
        'echo "unterminated',
        "git status && echo 'oops",
        "x" * 5000 + ' "',  # past the memoised length, still unparseable
    ],
)
def test_an_unparseable_command_runs_the_hook(command: str) -> None:
    assert matches("Bash(rm *)", "Bash", {"command": command}) is True


def test_long_commands_are_judged_like_short_ones() -> None:
    long = "echo " + "a" * 5000
    assert matches("Bash(rm *)", "Bash", {"command": f"{long} && rm x"}) is True
    assert matches("Bash(rm *)", "Bash", {"command": f"{long} && ls x"}) is False


def test_a_bash_rule_without_a_command_fails_open() -> None:
    assert matches("Bash(rm *)", "Bash", {"description": "no command"}) is True
    assert matches("Bash(rm *)", "Bash", {"command": ["rm", "x"]}) is True


def test_powershell_rules_read_the_command_like_bash() -> None:
    assert matches("PowerShell(git push*)", "PowerShell", {"command": "git push origin"}) is True
    assert matches("PowerShell(git push*)", "PowerShell", {"command": "git pull"}) is False


# --- unparseable rules, off tool events --------------------------------------------------


@pytest.mark.parametrize("rule", ["Bash(git *", "!!!", "(rm *)", "Bash git", "9lives(x)", ""])
def test_an_unparseable_rule_runs_the_hook(rule: str) -> None:
    assert matches(rule, "Bash", {"command": "ls"}) is True
    assert matches(rule, "Read", {"file_path": "/x"}) is True


@pytest.mark.parametrize(
    "event", ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"]
)
def test_rules_apply_on_tool_events(event: str) -> None:
    assert matches("Bash(ls*)", "Bash", {"command": "ls"}, event=event) is True
    assert matches("Bash(ls*)", "Bash", {"command": "rm"}, event=event) is False


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "SessionStart", "Notification"])
def test_off_tool_events_a_hook_with_if_never_runs(event: str) -> None:
    assert matches("Bash", "Bash", {"command": "ls"}, event=event) is False
    assert matches("!!!", "Bash", {"command": "ls"}, event=event) is False  # not even fail-open


# --- file paths: relative, ~/, //, trailing / -----------------------------------------


HOME = os.path.expanduser("~")


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("Read(~/.ssh/**)", f"{HOME}/.ssh/id_ed25519", True),
        ("Read(~/.ssh/**)", f"{CWD}/.ssh/id_ed25519", False),
        ("Read(~/.ssh/**)", "/tmp/~/.ssh/x", False),
        ("Edit(//etc/**)", "/etc/passwd", True),
        ("Edit(//etc/**)", f"{CWD}/etc/passwd", False),
        ("Edit(src/)", f"{CWD}/src/a/b.py", True),
        ("Edit(src/)", f"{CWD}/src/b.py", True),
        ("Edit(src/)", f"{CWD}/srcx/b.py", False),
        ("Edit(src/)", "/elsewhere/src/b.py", False),
        ("Edit(src/*.py)", f"{CWD}/src/b.py", True),
        ("Edit(src/*.py)", f"{CWD}/src/sub/b.py", False),  # * stays within one name
        ("Edit(src/?.py)", f"{CWD}/src/b.py", True),
        ("Edit(src/?.py)", f"{CWD}/src/bb.py", False),
        ("Edit(**/*.lock)", "/anywhere/deep/Cargo.lock", True),
        ("Edit(**/*.lock)", "/anywhere/deep/Cargo.toml", False),
        ("Edit(**)", "/any/thing", True),
        ("Edit(src/**)", f"{CWD}/src/../secrets/x", False),  # normalised before matching
        ("Edit(secrets/**)", f"{CWD}/src/../secrets/x", True),
        ("Edit(a+b/[x].py)", f"{CWD}/a+b/[x].py", True),  # regex characters are literal
        ("Edit(a+b/[x].py)", f"{CWD}/aab/x.py", False),
    ],
)
def test_path_rules(rule: str, path: str, expected: bool) -> None:
    assert matches(rule, "Edit" if rule.startswith("Edit") else "Read", {"file_path": path}) is (
        expected
    )


def test_notebook_edit_uses_the_notebook_path() -> None:
    rule = "NotebookEdit(nb/**)"
    assert matches(rule, "NotebookEdit", {"notebook_path": f"{CWD}/nb/a.ipynb"}) is True
    assert matches(rule, "NotebookEdit", {"notebook_path": f"{CWD}/other/a.ipynb"}) is False


@pytest.mark.parametrize("tool", ["Write", "MultiEdit", "Read"])
def test_every_file_tool_reads_its_path(tool: str) -> None:
    assert matches(f"{tool}(src/**)", tool, {"file_path": f"{CWD}/src/x"}) is True
    assert matches(f"{tool}(src/**)", tool, {"file_path": f"{CWD}/lib/x"}) is False


def test_a_path_rule_without_a_path_fails_open() -> None:
    assert matches("Edit(src/**)", "Edit", {"old_string": "a"}) is True


def test_the_generation_memo_stays_bounded_and_right() -> None:
    """The memo of one configuration generation empties itself when full: a stream of
    distinct commands (an agent's whole session) cannot grow the daemon's memory."""
    rule = compile_if_rule("Bash(rm *)")
    memo = IfMemo()
    limit = matching._MEMO_LIMIT
    for i in range(limit + 50):
        command = f"rm x{i}" if i % 2 else f"ls x{i}"
        assert if_rule_matches(rule, "PreToolUse", "Bash", {"command": command}, CWD, memo) is (
            i % 2 == 1
        )
        assert len(memo._split) <= limit and len(memo._verdicts) <= limit
    assert len(memo._split) < limit  # it was emptied on the way, not merely capped

"""``hookctl validate``: every error with file, line and JSON path; advice for unknown events."""

from __future__ import annotations

import json
from pathlib import Path

from hookd.config.json_lines import line_of_path, value_lines

from .helpers import hookctl

BAD = """{
  "hooks": {
    "PreToolUSe": [{"hooks": [{"type": "command", "command": "true"}]}],
    "PostToolUse": [
      {
        "matcher": 5,
        "hooks": [
          {"type": "command"},
          {"type": "command", "command": "x", "timeout": "slow"}
        ]
      }
    ]
  }
}
"""


def test_every_error_of_a_group_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(BAD)
    done = hookctl("validate", str(path))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        f"{path}:6: $.hooks.PostToolUse[0].matcher: Expected `str | null`, got `int`",
        f"{path}:8: $.hooks.PostToolUse[0].hooks[0]: Object missing required field `command`",
        f"{path}:9: $.hooks.PostToolUse[0].hooks[1].timeout: Expected `float | null`, got `str`",
    ]


def test_unknown_event_is_a_warning_with_a_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    hook = {"hooks": [{"type": "command", "command": "true"}]}
    path.write_text(json.dumps({"hooks": {"PreToolUSe": [hook], "Bogus": [hook]}}, indent=1))
    done = hookctl("validate", str(path))
    assert done.returncode == 0, done.stdout  # forward compatible: still valid
    assert (
        f"warning: {path}:3: $.hooks.PreToolUSe: unknown event 'PreToolUSe' (did you mean "
        "PreToolUse?)" in done.stdout
    )
    assert "unknown event 'Bogus': its hooks run only if an agent sends it" in done.stdout
    assert done.stdout.splitlines()[-1] == f"{path}: ok (2 hooks)"


def test_json_report(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(BAD)
    done = hookctl("validate", "--json", str(path), str(tmp_path / "missing.json"))
    assert done.returncode == 1
    bad, missing = json.loads(done.stdout)
    assert bad["ok"] is False and bad["hooks"] == 1
    assert [e["line"] for e in bad["errors"]] == [6, 8, 9]
    assert bad["warnings"][0]["path"] == "$.hooks.PreToolUSe"
    assert missing["ok"] is False and missing["errors"][0]["message"] == "no such file"


def test_value_lines_follow_nesting_strings_and_escapes() -> None:
    text = '{"a": [1,\n {"b\\"c": "x\\n]"},\n  null], "d": {}}\n'
    lines = value_lines(text)
    assert lines['$.a[1].b"c'] == 2
    assert lines["$.a[2]"] == 3
    assert lines["$.d"] == 3
    # A missing field points at the object it is missing from.
    assert line_of_path(lines, "$.a[1].nothing.deeper") == 2


def test_every_bad_field_of_a_handler_and_a_did_you_mean(tmp_path: Path) -> None:
    """msgspec stops at a handler's first bad field: validate showed only the timeout, and
    no word of the misspelt `comand` behind the missing `command`."""
    path = tmp_path / "hooks.json"
    path.write_text(
        '{"hooks": {\n'
        '  "PreToolUse": [{"hooks": [\n'
        '    {"type": "command", "comand": "echo hi", "timeout": "5", "async": "yes"},\n'
        '    {"type": "comand", "command": "true"}\n'
        "  ]}],\n"
        '  "Stop": [{"hooks": [{"type": "command", "command": "true", "timout": 5}]}]\n'
        "}}\n"
    )
    done = hookctl("validate", str(path))
    assert done.returncode == 1
    where = "$.hooks.PreToolUse[0].hooks"
    assert done.stdout.splitlines() == [
        f"{path}:3: {where}[0]: Object missing required field `command` "
        "(`comand` is not a field: did you mean `command`?)",
        f"{path}:3: {where}[0].timeout: Expected `float | null`, got `str`",
        f"{path}:3: {where}[0].async: Expected `bool`, got `str`",
        f"{path}:4: {where}[1].type: Invalid value 'comand' (did you mean 'command'?)",
        f"warning: {path}:6: $.hooks.Stop[0].hooks[0].timout: unknown key `timout` is "
        "ignored (did you mean `timeout`?)",
        f"{path}: not applied (a file with an error runs none of its hooks)",
    ]

"""``hookctl doctor`` and ``hookctl explain`` on real files in a private HOME and state dir."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hookd.cli.hookctl import main as hookctl

from .helpers import serving


@pytest.fixture
def home(private_home: Path) -> Path:
    return private_home


@pytest.fixture
def daemon(home: Path, tmp_path: Path) -> Iterator[None]:
    """hookd serving the socket the wired agents' relays reach (doctor follows them)."""
    with serving(tmp_path / "none.sock", "--no-watch", "--log-level", "error"):
        yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    return project


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def cmd(command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": command, **extra}


def doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = hookctl(["doctor", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_a_clean_machine_has_nothing_to_report(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd("~/guard.sh")]}]}})  # fmt: skip
    assert doctor(capsys, "--project-dir", str(project)) == (0, [])
    assert hookctl(["doctor", "--project-dir", str(project)]) == 0
    assert "no silent failures" in capsys.readouterr().out


def test_the_silent_failures_are_found_with_file_and_place(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gemini = home / ".gemini" / "settings.json"
    write(gemini, {"hooksConfig": {"enabled": False}, "hooks": {"BeforeTool": [
        {"matcher": "Bash", "hooks": [cmd("echo hi", timeout=30)]}]}})  # fmt: skip
    qwen = project / ".qwen" / "settings.json"
    qwen.parent.mkdir(parents=True)
    qwen.write_text('{"hooks": {"PreToolUse": [}')
    hookd = home / ".config" / "hookd" / "hooks.json"
    write(hookd, {"hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [cmd("x")]}]}})
    write(project / ".claude" / "hooks.json", {"hooks": {"Stop": [{"hooks": [cmd("y")]}]}})

    code, rows = doctor(capsys, "--project-dir", str(project))
    assert code == 1
    found = {(r["agent"], r["severity"], r["path"], r["where"]) for r in rows}
    assert ("gemini", "error", str(gemini), "hooksConfig.enabled") in found
    assert ("gemini", "warning", str(gemini), "hooks.BeforeTool[0].matcher") in found
    assert any(a == "gemini" and w.endswith(".timeout") for a, _, _, w in found)
    assert ("hookd", "warning", str(hookd), "hooks.PreToolUse[0].matcher") in found
    [parse] = [r for r in rows if r["path"] == str(qwen)]
    assert parse["severity"] == "error" and "runs none of its hooks" in parse["message"]
    assert "line 1" in parse["message"]
    [held] = [r for r in rows if "holds back" in r["message"]]
    assert f"hookctl trust {project}" in held["message"]
    # Errors first, in the text output too.
    assert hookctl(["doctor", "--project-dir", str(project)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("error ")


def test_for_a_wired_agent_doctor_says_what_it_does_with_each_hook(
    home: Path, project: Path, daemon: None, capsys: pytest.CaptureFixture[str]
) -> None:
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"Stop": [
        {"hooks": [cmd("./keep-going.sh")]}]}})  # fmt: skip
    assert hookctl(["agents", "install", "windsurf", "--python-relay"]) == 0
    capsys.readouterr()
    code, rows = doctor(capsys, "--agent", "windsurf", "--project-dir", str(project))
    assert code == 0
    [stop] = rows
    # With -v, also the agent's own gate, which hookd cannot check for it.
    code, every = doctor(capsys, "--agent", "windsurf", "--project-dir", str(project), "-v")
    [gate] = [r for r in every if "runs hookd's entries" in r["message"]]
    assert gate["severity"] == "info" and "reload the window" in gate["message"]
    assert gate["path"] == str(home / ".codeium" / "windsurf" / "hooks.json")
    hidden = sum(r["severity"] == "info" for r in every)
    assert hookctl(["doctor", "--agent", "windsurf", "--project-dir", str(project)]) == 0
    assert f"{hidden} note(s) worth knowing" in capsys.readouterr().out
    assert stop["agent"] == "windsurf" and stop["severity"] == "warning"
    assert "cannot continue" in stop["message"] and "./keep-going.sh" in stop["message"]


def test_explain_traces_every_hook_for_an_agents_event(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = home / ".config" / "hookd" / "hooks.json"
    write(user, {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd("guard")]},
        {"matcher": "Edit|Write", "hooks": [cmd("fmt")]},
        {"hooks": [cmd("push-check", **{"if": "Bash(git push *)"})]},
    ]}})  # fmt: skip
    write(project / ".claude" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [cmd("repo")]}]}})
    args = ["explain", "BeforeTool", "--agent", "gemini", "--cwd", str(project), "--json"]
    assert hookctl([*args, "--tool", "run_shell_command"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert (e["event"], e["canonical_tool"], e["trusted"]) == ("PreToolUse", "Bash", False)
    runs = {h["hook"]: (h["runs"], h["source"]) for h in e["hooks"]}
    assert runs == {
        "guard": ("yes", str(user)),
        "fmt": ("no", str(user)),
        "push-check": ("depends", str(user)),
        "repo": ("no", str(project / ".claude" / "hooks.json")),
    }
    assert "not trusted" in next(h["why"] for h in e["hooks"] if h["hook"] == "repo")
    assert "ask the user" in e["can"] and "add context" in e["cannot"]

    # Once trusted, the project's hook runs too.
    assert hookctl(["trust", str(project)]) == 0
    capsys.readouterr()
    assert hookctl([*args, "--tool", "Bash"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["trusted"] and {h["hook"]: h["runs"] for h in e["hooks"]}["repo"] == "yes"


def test_explain_says_what_an_agent_loses(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd("guard")]}]}})  # fmt: skip
    args = ["explain", "pre_run_command", "--agent", "windsurf", "--cwd", str(project)]
    assert hookctl([*args, "--json", "--tool", "Bash"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["can"] == ["block"] and "rewrite input" in e["cannot"]
    messages = " ".join(loss["message"] for loss in e["losses"])
    assert "updatedInput" in messages and "ask" in messages
    assert all(loss["hooks"] == ["guard"] for loss in e["losses"])
    assert hookctl([*args, "--tool", "Bash"]) == 0
    out = capsys.readouterr().out
    assert "pre_run_command → PreToolUse" in out and "built from its docs" in out


def test_explain_an_event_the_agent_does_not_have(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        hookctl(["explain", "PermissionRequest", "--agent", "cursor", "--cwd", str(project)]) == 1
    )
    err = capsys.readouterr().err
    assert "Cursor has no event 'PermissionRequest'" in err and "beforeShellExecution" in err


def test_doctor_finds_an_entry_that_fails_open_where_a_hook_asks_to_fail_closed(
    home: Path, project: Path, daemon: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hook given onFailure: block after install: the agent's entry still fails open."""
    config = home / ".config" / "hookd" / "hooks.json"
    write(config, {"hooks": {"PreToolUse": [{"hooks": [cmd("guard")]}]}})
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    write(config, {"hooks": {"PreToolUse": [{"hooks": [cmd("guard", onFailure="block")]}]}})
    capsys.readouterr()
    code, rows = doctor(capsys, "--agent", "qwen", "--project-dir", str(project))
    [stale] = [r for r in rows if "fails open" in r["message"]]
    assert stale["path"] == str(home / ".qwen" / "settings.json")
    assert "PreToolUse" in stale["message"] and "install qwen" in stale["message"]
    assert stale["where"].startswith("line ")
    # Installing again writes --fail-closed there, and doctor is content.
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    capsys.readouterr()
    code, rows = doctor(capsys, "--agent", "qwen", "--project-dir", str(project))
    assert code == 0 and not [r for r in rows if "fail" in r["message"]]


def test_doctor_reads_codexs_trust_and_inline_hooks_from_its_config_toml(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex skips hooks it has not trusted without a word; doctor says so, and stops
    saying so once config.toml records trusted hooks and the project."""
    assert hookctl(["agents", "install", "codex", "--python-relay"]) == 0
    write(project / ".codex" / "hooks.json", {"hooks": {"Stop": [{"hooks": [cmd("notify")]}]}})
    capsys.readouterr()

    def codex_rows() -> list[dict[str, Any]]:
        _, rows = doctor(capsys, "--agent", "codex", "--project-dir", str(project))
        return [r for r in rows if r["severity"] == "warning"]

    found = codex_rows()
    assert {r["path"] for r in found if "trusted no hook" in r["message"]} == {
        str(home / ".codex" / "hooks.json"),
        str(project / ".codex" / "hooks.json"),
    }
    assert [r["path"] for r in found if "trusted project" in r["message"]] == [
        str(project / ".codex" / "hooks.json")
    ]
    config = home / ".codex" / "config.toml"
    config.write_text(
        f'[hooks.state."hooks.json:PreToolUse:0"]\ntrusted_hash = "abc"\n\n'
        f'[projects."{project}"]\ntrust_level = "trusted"\n\n'
        '[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\n'
        'type = "command"\ncommand = "old-guard.sh"\n'
    )
    found = codex_rows()
    assert not [r for r in found if "trust" in r["message"]]
    [inline] = [r for r in found if "inline" in r["message"]]
    assert inline["path"] == str(config) and "PreToolUse" in inline["message"]
    config.write_text(config.read_text() + "\n[features]\nhooks = false\n")
    _, rows = doctor(capsys, "--agent", "codex", "--project-dir", str(project))
    off = [r for r in rows if "switched off" in r["message"]]
    assert off and {r["severity"] for r in off} == {"error"}
    assert {r["path"] for r in off} == {
        str(home / ".codex" / "hooks.json"),
        str(project / ".codex" / "hooks.json"),
    }


def test_explain_and_doctor_say_how_each_agent_names_an_mcp_tool(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One guard on Claude Code's ``mcp__srv__echo``: explain shows it fires for Copilot's
    ``srv-echo`` and says how the name was read; for a dashed name every reading is named;
    for Cursor, which names no server, the matcher is an error in doctor's report."""
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "mcp__srv__echo", "hooks": [cmd("mcp-guard")]}]}})  # fmt: skip
    args = ["explain", "preToolUse", "--agent", "copilot", "--cwd", str(project), "--json"]
    assert hookctl([*args, "--tool", "srv-echo"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["canonical_tool"] == "mcp__srv__echo"
    assert [h["runs"] for h in e["hooks"]] == ["yes"]
    assert "-" in e["tool_note"] and any("look-alike" in x["message"] for x in e["losses"])
    assert hookctl([*args, "--tool", "srv-ec-ho"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert "mcp__srv__ec-ho" in e["tool_note"] and "mcp__srv-ec__ho" in e["tool_note"]
    args = ["explain", "BeforeTool", "--agent", "gemini", "--cwd", str(project), "--json"]
    assert hookctl([*args, "--tool", "mcp__srv__echo"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert "`mcp_srv_echo`" in e["tool_note"] and [h["runs"] for h in e["hooks"]] == ["yes"]

    assert hookctl(["agents", "install", "cursor", "--python-relay"]) == 0
    installed = capsys.readouterr().out
    assert "error: PreToolUse matcher 'mcp__srv__echo'" in installed  # install says it too
    assert "never matches" in installed
    code, rows = doctor(capsys, "--agent", "cursor", "--project-dir", str(project))
    [mcp] = [r for r in rows if "MCP tool" in r["message"]]
    assert code == 1 and mcp["severity"] == "error" and "never matches" in mcp["message"]


def test_a_deliberate_difference_is_said_by_explain_and_doctor(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where hookd answers otherwise than the agent would act (Codex: continue:false and a
    rewrite without a decision deny), explain says so on its own line and doctor warns
    for every hook on that event."""
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd("sanitise")]}]}})  # fmt: skip
    args = ["explain", "PreToolUse", "--agent", "codex", "--cwd", str(project)]
    assert hookctl([*args, "--json"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert "continue: false" in e["differs"] and "permissionDecision" in e["differs"]
    assert hookctl(args) == 0
    assert "hookd, deliberately: `continue: false`" in capsys.readouterr().out
    assert hookctl(["agents", "install", "codex", "--python-relay"]) == 0
    capsys.readouterr()
    _, rows = doctor(capsys, "--agent", "codex", "--project-dir", str(project))
    [row] = [r for r in rows if "hookd differs from" in r["message"]]
    assert row["severity"] == "warning" and "sanitise" in row["message"]


def test_doctor_warns_about_a_hook_type_install_cannot_move_into_hookd(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hook type hookd's config has not (an agent's own, newer kind): install cannot move
    it — moved, hookd would refuse the group — so doctor says so, where it is; the types
    hookd holds (command, http, prompt, …) are not reported."""
    droid = home / ".factory" / "hooks.json"
    write(droid, {"PreToolUse": [{"matcher": "Execute", "hooks": [
        cmd("guard.sh"), {"type": "plugin", "name": "guard"}, {"type": "http", "url": "http://x"}
    ]}]})  # fmt: skip
    _, rows = doctor(capsys, "--project-dir", str(project))
    found = [r for r in rows if "cannot move it into hookd" in r["message"]]
    assert [(r["agent"], r["severity"], r["path"], r["where"]) for r in found] == [
        ("factory", "warning", str(droid), "PreToolUse[0].hooks[1].type")
    ]
    assert "'plugin'" in found[0]["message"]


def test_doctor_warns_about_copilot_s_prompt_hook_which_install_would_change(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Copilot's ``prompt`` hook submits text as the user (sessionStart); hookd's asks a model
    to judge: moved by install it would do something else, so doctor says so."""
    copilot = home / ".copilot" / "hooks" / "hooks.json"
    write(copilot, {"hooks": {"SessionStart": [{"hooks": [
        {"type": "prompt", "prompt": "/review"}, cmd("start.sh")]}]}})  # fmt: skip
    _, rows = doctor(capsys, "--project-dir", str(project))
    found = [r for r in rows if "means something else" in r["message"]]
    assert [(r["agent"], r["severity"], r["path"], r["where"]) for r in found] == [
        ("copilot", "warning", str(copilot), "SessionStart[0].hooks[0].type")
    ]
    assert "as if the user typed it" in found[0]["message"]


def test_droid_s_ignored_prompt_block_is_said_by_explain(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Droid ignores a UserPromptSubmit `decision: "block"`; through hookd it blocks (fails
    safe): explain says so."""
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"UserPromptSubmit": [
        {"hooks": [cmd("no-secrets")]}]}})  # fmt: skip
    args = ["explain", "UserPromptSubmit", "--agent", "factory", "--cwd", str(project)]
    assert hookctl([*args, "--json"]) == 0
    assert 'decision: "block"' in json.loads(capsys.readouterr().out)["differs"]


def test_qwen_s_deliberate_differences_are_said_by_explain_and_doctor(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Qwen Code ignores a PreToolUse rewrite and lets a later allow outvote a deny; hookd
    blocks the rewrite and keeps the deny (tests/agents/test_qwen.py): said by both."""
    write(home / ".config" / "hookd" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd("sanitise")]}]}})  # fmt: skip
    args = ["explain", "PreToolUse", "--agent", "qwen", "--cwd", str(project)]
    assert hookctl([*args, "--json"]) == 0
    e = json.loads(capsys.readouterr().out)
    assert "updatedInput" in e["differs"] and "last hook" in e["differs"]
    assert hookctl(["agents", "install", "qwen", "--python-relay"]) == 0
    capsys.readouterr()
    _, rows = doctor(capsys, "--agent", "qwen", "--project-dir", str(project))
    [row] = [r for r in rows if "hookd differs from Qwen Code" in r["message"]]
    assert row["severity"] == "warning" and "sanitise" in row["message"]

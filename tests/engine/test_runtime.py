"""The engine with real processes: time limits, process trees, big outputs,
exact stdin, environment, placeholders and per-session memory.

Each test builds a small vector (same format as tests/data/vectors) in code
because it needs to look at processes, files or clocks, not only at the result.
"""

from __future__ import annotations

import json
import os
import resource
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hookd.config.loader import build_config, load_source
from hookd.config.model import Scope
from hookd.config.sources import SourceSpec
from hookd.engine.engine import SessionState
from hookd_client.events import decode_event
from support.processes import alive, processes_with_env

from .vectors import (
    CC_FIXTURES,
    HOOKS,
    PY,
    Prepared,
    command_engine,
    fire_prepared,
    hook_command,
    prepare,
)


def one_hook(event: str, source: Any, behaviour: dict[str, Any], **handler: Any) -> dict[str, Any]:
    return {
        "input": source,
        "event": event,
        "settings": {
            "hooks": {event: [{"hooks": [{"type": "command", "command": "@HOOK:A@", **handler}]}]}
        },
        "behaviours": {"A": behaviour},
    }


def records(prepared: Prepared, key: str = "A") -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(prepared.records.glob(f"{key}-*.json"))]


# --- concurrency and time limits ------------------------------------------------


def _rendezvous(name: str) -> str:
    """A hook that arrives, then waits until all three have arrived (exit 1 after ~30 s).

    Each can only finish if the other two started while it was still running,
    so three successes prove the hooks ran concurrently, on any machine load.
    """
    return (
        f"touch arrived-{name}; n=0; "
        "until [ -e arrived-a ] && [ -e arrived-b ] && [ -e arrived-c ]; do "
        "n=$((n+1)); [ $n -gt 3000 ] && exit 1; sleep 0.01; done; "
        f"echo {name}"
    )


async def test_three_hooks_run_in_parallel(tmp_path: Path) -> None:
    """Observed parallel_3x1s: the hooks of one event run at once (also across groups)."""
    vector = {
        "input": "PreToolUse-Bash",
        "settings": {
            "hooks": {
                "PreToolUse": [
                    {"hooks": [{"type": "command", "command": _rendezvous("a"), "timeout": 60}]},
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": _rendezvous("b"), "timeout": 60}],
                    },
                    {"hooks": [{"type": "command", "command": _rendezvous("c"), "timeout": 60}]},
                ]
            }
        },
    }
    prepared = prepare(vector, tmp_path)
    result = await fire_prepared(prepared)
    assert [(r.outcome, r.stdout.strip()) for r in result.hooks] == [
        ("success", "a"),
        ("success", "b"),
        ("success", "c"),
    ]


async def test_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    """A hook, its SIGTERM-ignoring child and a setsid'd double-forked grandchild:
    after the timeout not one of them survives (reference §4.7; hookd kills the tree)."""
    marker = f"FORKER_MARKER={uuid.uuid4().hex}"
    pidfile = tmp_path / "pids.txt"
    vector = {
        "input": "PreToolUse-Bash",
        "settings": {
            "hooks": {
                "PreToolUse": [
                    {
                        "hooks": [
                            {
                                "type": "command",
                                "command": f"@PY@ -I -S @HOOKS@/forker.py {pidfile}",
                                "timeout": 1,
                            }
                        ]
                    }
                ]
            }
        },
    }
    prepared = prepare(vector, tmp_path)
    key, value = marker.split("=", 1)
    prepared.env[key] = value
    result = await fire_prepared(prepared)
    (run,) = result.hooks
    assert run.timed_out and run.outcome == "cancelled"
    assert result.decision is None  # a timed-out hook has no verdict: fail open
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 3
    survivors = [p for p in pids if alive(p)]
    assert survivors == [], f"processes survived the timeout: {survivors}"
    assert processes_with_env(marker) == []


async def test_timeout_with_on_failure_block_blocks(tmp_path: Path) -> None:
    """§4.7: with onFailure "block" a timed-out hook counts as exit 2."""
    prepared = prepare(
        one_hook("PreToolUse", "PreToolUse-Bash", {"sleep": 30}, timeout=0.5, onFailure="block"),
        tmp_path,
    )
    result = await fire_prepared(prepared)
    assert result.decision == "deny"
    assert result.reason is not None
    assert result.reason.startswith(f"[{hook_command('A')}]: failed; blocking because onFailure")


async def test_output_flood_is_capped(tmp_path: Path) -> None:
    """50 MB on stdout and 10 MB on stderr: kept to the cap, the rest drained, memory bounded."""
    chunk = "x" * 65536
    behaviour = {"stdout_repeat": [chunk, 800], "stderr": "e" * (10 * 1024 * 1024)}
    prepared = prepare(one_hook("PostToolUse", "PostToolUse-Bash", behaviour), tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = await fire_prepared(prepared)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    (run,) = result.hooks
    assert run.truncated is True
    assert run.exit_code == 0
    assert len(run.stdout) == 1024 * 1024
    assert len(run.stderr) == 1024 * 1024
    assert grown_mb < 30, f"peak memory grew by {grown_mb:.0f} MB for a 60 MB flood"


async def test_session_end_budget_kills_slow_hooks(tmp_path: Path) -> None:
    """§1.4: all SessionEnd hooks share 1.5 s by default."""
    prepared = prepare(one_hook("SessionEnd", "SessionEnd-other", {"sleep": 30}), tmp_path)
    result = await fire_prepared(prepared)
    # Its own timeout is the 600 s default: only the shared budget can have cut it short.
    # (The budget's value is test_session_end_budget_rules'.)
    assert result.hooks[0].timed_out


def _budget(tmp_path: Path, timeouts: dict[Scope, float]) -> float:
    loaded = []
    for i, (scope, timeout) in enumerate(timeouts.items()):
        path = tmp_path / f"s{i}.json"
        hook = {"type": "command", "command": "true", "timeout": timeout}
        path.write_text(json.dumps({"hooks": {"SessionEnd": [{"hooks": [hook]}]}}))
        root = str(tmp_path) if scope is Scope.PLUGIN else None
        loaded.append(load_source(SourceSpec(path, scope, plugin_root=root)))
    return build_config(loaded).session_end_budget


def test_session_end_budget_rules(tmp_path: Path) -> None:
    """§1.4: raised to the largest settings-file timeout, capped at 60 s; plugins don't raise it."""
    assert _budget(tmp_path, {}) == 1.5
    assert _budget(tmp_path, {Scope.USER: 5}) == 5
    assert _budget(tmp_path, {Scope.USER: 5, Scope.PROJECT: 500}) == 60
    assert _budget(tmp_path, {Scope.PLUGIN: 30}) == 1.5


# --- what a hook receives ------------------------------------------------------------


def _unicode_input(cc_fixtures: Path) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((cc_fixtures / "PreToolUse-Write.json").read_text())
    piece = 'héllo wörld ✓ 日本語テキスト 🎉🚀 Ω≈ç√ \u2028 "quoted" \\ back\n'
    content = (piece * (200_000 // len(piece.encode()) + 1)).encode()[:200_000]
    raw["tool_input"] = {"file_path": "/tmp/x.txt", "content": content.decode(errors="ignore")}
    raw["future_field"] = {"nested": [1, 2.5, None, True], "ключ": "значение"}
    return raw


async def test_large_unicode_input_is_byte_exact(tmp_path: Path, cc_fixtures: Path) -> None:
    """Observed: compact raw UTF-8 JSON plus one newline; 200 KB intact; unknown fields kept.
    HOOK_INPUT_FILE holds the same bytes."""
    raw = _unicode_input(cc_fixtures)
    prepared = prepare(one_hook("PreToolUse", raw, {}), tmp_path)
    await fire_prepared(prepared)
    (record,) = records(prepared)
    got = record["stdin"].encode("latin-1")
    expected = json.dumps(prepared.raw, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    assert len(got) > 200_000
    assert got == expected
    assert record["input_file"].encode("latin-1") == expected
    assert json.loads(got) == prepared.raw
    assert list(json.loads(got)) == list(prepared.raw), "key order must be kept"


async def test_every_fixture_decodes_and_reaches_the_hook_untouched(
    tmp_path: Path, cc_fixtures: Path
) -> None:
    """Every real Claude Code input decodes, and a hook on its event receives it as sent."""
    for path in sorted(cc_fixtures.glob("*.json")):
        raw = json.loads(path.read_text())
        event = decode_event(raw)
        assert event.name == raw["hook_event_name"]
        work = tmp_path / path.stem
        work.mkdir()
        prepared = prepare(one_hook(event.name, raw, {}), work)
        result = await fire_prepared(prepared)
        assert [r.outcome for r in result.hooks] == ["success"], path.name
        (record,) = records(prepared)
        assert json.loads(record["stdin"].encode("latin-1")) == prepared.raw, path.name


async def test_unknown_event_passes_through(tmp_path: Path) -> None:
    """An event hookd does not know still runs its hooks, with the input untouched."""
    raw = {
        "session_id": "s1",
        "transcript_path": "",
        "hook_event_name": "FutureEvent",
        "brand_new": {"x": [1, "two"]},
    }
    prepared = prepare(
        one_hook("FutureEvent", raw, {"stdout": {"systemMessage": "FUTURE-OK"}}), tmp_path
    )
    result = await fire_prepared(prepared)
    assert result.system_messages == ["FUTURE-OK"]
    (record,) = records(prepared)
    assert json.loads(record["stdin"]) == prepared.raw


_ENV_KEYS = (
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CODE_SESSION_ID",
    "HOOK_EVENT",
    "HOOK_TOOL_NAME",
    "HOOK_SESSION_ID",
    "HOOK_NAME",
)


@pytest.mark.parametrize(
    ("fixture", "gets_env_file"),
    [
        ("PreToolUse-Bash", False),
        ("SessionStart-startup", True),
        ("CwdChanged", True),
        ("UserPromptSubmit", False),
        ("Stop", False),
    ],
)
async def test_environment(
    fixture: str, gets_env_file: bool, tmp_path: Path, cc_fixtures: Path
) -> None:
    """§7 and the observed env table.

    CLAUDE_ENV_FILE is only given on SessionStart, Setup, CwdChanged and FileChanged."""
    raw = json.loads((cc_fixtures / f"{fixture}.json").read_text())
    event = raw["hook_event_name"]
    project = tmp_path / "project"
    sub = project / "sub"
    sub.mkdir(parents=True)
    prepared = prepare(one_hook(event, raw, {}, name="env-probe"), tmp_path)
    prepared.raw["cwd"] = str(sub)  # the session's current cwd, below the project root
    prepared.env["CLAUDE_PROJECT_DIR"] = str(project)
    prepared.env["CLAUDE_ENV_FILE"] = ""  # an inherited empty value must not leak through
    await fire_prepared(prepared)
    (record,) = records(prepared)
    env = record["env"]
    assert record["cwd"] == str(sub)
    assert {k: env.get(k) for k in _ENV_KEYS} == {
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDE_CODE_SESSION_ID": raw["session_id"],
        "HOOK_EVENT": event,
        "HOOK_TOOL_NAME": raw.get("tool_name", ""),
        "HOOK_SESSION_ID": raw["session_id"],
        "HOOK_NAME": "env-probe",
    }
    assert env["HOOK_INPUT_FILE"] and not os.path.exists(env["HOOK_INPUT_FILE"])
    if gets_env_file:
        assert env["CLAUDE_ENV_FILE"].endswith(f"{event.lower()}-hook-0.sh")
    else:
        assert "CLAUDE_ENV_FILE" not in env


async def test_env_file_per_hook_index(tmp_path: Path) -> None:
    """Observed: each matched SessionStart hook gets its own file, named by its position."""
    vector = {
        "input": "SessionStart-startup",
        "settings": {
            "hooks": {
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": "@HOOK:A@"}]},
                    {"hooks": [{"type": "command", "command": "@HOOK:B@"}]},
                ]
            }
        },
    }
    prepared = prepare(vector, tmp_path)
    await fire_prepared(prepared)
    files = {records(prepared, k)[0]["env"]["CLAUDE_ENV_FILE"] for k in ("A", "B")}
    assert len(files) == 2


async def test_inherited_env_file_is_one_per_hook_in_claude_codes_directory(
    tmp_path: Path,
) -> None:
    """Through the relay the agent's environment names the relay's own file
    (``…/session-env/<id>/sessionstart-hook-0.sh``); natively each of two hooks gets
    its own file in that directory, which Claude Code reads in full — so hookd's hook
    *i* gets index *i* there, not the relay's file for both."""
    vector = {
        "input": "SessionStart-startup",
        "settings": {
            "hooks": {
                "SessionStart": [
                    {"hooks": [{"type": "command", "command": "@HOOK:A@"}]},
                    {"hooks": [{"type": "command", "command": "@HOOK:B@"}]},
                ]
            }
        },
    }
    prepared = prepare(vector, tmp_path)
    session_env = tmp_path / "home" / ".claude" / "session-env" / "s1"
    prepared.env["CLAUDE_ENV_FILE"] = str(session_env / "sessionstart-hook-0.sh")
    await fire_prepared(prepared)
    files = [records(prepared, k)[0]["env"]["CLAUDE_ENV_FILE"] for k in ("A", "B")]
    assert files == [
        str(session_env / "sessionstart-hook-0.sh"),
        str(session_env / "sessionstart-hook-1.sh"),
    ]
    assert session_env.is_dir()


async def test_project_dir_placeholder(tmp_path: Path) -> None:
    """§7: ${CLAUDE_PROJECT_DIR} is substituted in the command (shell and exec form)."""
    hook = tmp_path / "hook.sh"
    hook.write_text('#!/bin/sh\necho "{\\"systemMessage\\": \\"ran $1\\"}"\n')
    hook.chmod(0o755)
    vector = {
        "input": "UserPromptSubmit",
        "settings": {
            "hooks": {
                "UserPromptSubmit": [
                    {
                        "hooks": [
                            {"type": "command", "command": "${CLAUDE_PROJECT_DIR}/hook.sh shell"}
                        ]
                    },
                    {
                        "hooks": [
                            {
                                "type": "command",
                                "command": "${CLAUDE_PROJECT_DIR}/hook.sh",
                                "args": ["${CLAUDE_PROJECT_DIR}"],
                            }
                        ]
                    },
                ]
            }
        },
    }
    prepared = prepare(vector, tmp_path)
    result = await fire_prepared(prepared)
    assert result.system_messages == ["ran shell", f"ran {tmp_path}"]


async def test_plugin_root_placeholder_and_separate_dedup(tmp_path: Path) -> None:
    """§7: ${CLAUDE_PLUGIN_ROOT} and the env var; §6: a plugin's copy of a settings
    hook is not deduplicated against it."""
    plugin = tmp_path / "plugins" / "p1"
    plugin.mkdir(parents=True)
    (plugin / "hook.sh").write_text(
        '#!/bin/sh\necho "{\\"systemMessage\\": \\"plugin $CLAUDE_PLUGIN_ROOT\\"}"\n'
    )
    (plugin / "hook.sh").chmod(0o755)
    same = {"type": "command", "command": hook_command("A")}
    (plugin / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {
                            "hooks": [
                                {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hook.sh"}
                            ]
                        },
                        {"hooks": [same]},
                    ]
                }
            }
        )
    )
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [same]}]}}))
    prepared = prepare(one_hook("UserPromptSubmit", "UserPromptSubmit", {}), tmp_path)
    config = build_config(
        [
            load_source(SourceSpec(user, Scope.USER)),
            load_source(SourceSpec(plugin / "hooks.json", Scope.PLUGIN, plugin_root=str(plugin))),
        ]
    )
    assert not config.errors
    engine = command_engine(input_file_dir=str(tmp_path))
    result = await engine.fire(
        config, decode_event(prepared.raw), session=SessionState(), env=prepared.env
    )
    assert result.system_messages == [f"plugin {plugin}"]
    assert len(records(prepared)) == 2  # the user copy and the plugin copy


# --- context cap --------------------------------------------------------------------


async def test_additional_context_over_10000_chars_spills_to_a_file(tmp_path: Path) -> None:
    """§4.1 step 4: strings over 10,000 characters are saved to a file; a preview and
    the path are delivered instead."""
    text = "".join(f"line {i:05d} ✓\n" for i in range(1500))
    assert len(text) > 10_000
    behaviour = {
        "stdout": {
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}
        }
    }
    prepared = prepare(one_hook("UserPromptSubmit", "UserPromptSubmit", behaviour), tmp_path)
    result = await fire_prepared(prepared)
    (context,) = result.additional_context
    assert len(context) <= 10_000
    assert context.startswith("line 00000")
    spilled = list((tmp_path / "spill").rglob("*.txt"))
    assert len(spilled) == 1
    assert str(spilled[0]) in context
    assert spilled[0].read_text(encoding="utf-8") == text
    assert spilled[0].stat().st_mode & 0o777 == 0o600  # a hook's output may hold secrets


async def test_context_at_exactly_10000_chars_is_kept(tmp_path: Path) -> None:
    text = "y" * 10_000
    prepared = prepare(one_hook("UserPromptSubmit", "UserPromptSubmit", {"stdout": text}), tmp_path)
    result = await fire_prepared(prepared)
    assert result.plain_context == [text]
    assert not (tmp_path / "spill").exists()


# --- per-session memory ----------------------------------------------------------------


async def test_stop_block_cap(tmp_path: Path) -> None:
    """Observed stop_block_always: blocks 1–8 continue; the 9th is overridden, with a warning."""
    behaviour = {"stdout": {"decision": "block", "reason": "AGAIN"}}
    prepared = prepare(one_hook("Stop", "Stop", behaviour), tmp_path)
    session = SessionState()
    decisions = []
    for _ in range(9):
        result = await fire_prepared(prepared, session)
        decisions.append(result.decision)
    assert decisions == ["block"] * 8 + [None]
    assert any("9 consecutive times" in m for m in result.system_messages)
    # The count starts over after the override: from zero, so eight blocks again.
    decisions = [(await fire_prepared(prepared, session)).decision for _ in range(9)]
    assert decisions == ["block"] * 8 + [None]


async def test_only_stop_blocks_are_capped(tmp_path: Path) -> None:
    """The cap is Stop's and SubagentStop's: a UserPromptSubmit that blocks ten times in a
    row blocks ten times (a surviving mutant capped every event's blocks)."""
    prepared = prepare(one_hook("UserPromptSubmit", "UserPromptSubmit", {"exit": 2}), tmp_path)
    session = SessionState()
    decisions = [(await fire_prepared(prepared, session)).decision for _ in range(10)]
    assert decisions == ["block"] * 10


async def test_a_runs_duration_is_the_time_it_took(tmp_path: Path) -> None:
    """``duration_ms`` (status, tail, audit): measured from the hook's start, so within
    the time the whole fire took (a surviving mutant added the start time)."""
    prepared = prepare(one_hook("PreToolUse", "PreToolUse-Bash", {}), tmp_path)
    began = time.perf_counter()
    result = await fire_prepared(prepared)
    took_ms = (time.perf_counter() - began) * 1000
    [run] = result.hooks
    assert 0 < run.duration_ms <= took_ms


async def test_a_sequential_chain_goes_on_past_a_hook_with_no_output(tmp_path: Path) -> None:
    """A sequential group stops at a hook that denies or blocks; a hook that printed
    nothing does neither, so the next one runs (two surviving mutants stopped there)."""
    vector = {
        "input": "PreToolUse-Bash",
        "event": "PreToolUse",
        "settings": {
            "hooks": {
                "PreToolUse": [
                    {
                        "sequential": True,
                        "hooks": [
                            {"type": "command", "command": "@HOOK:A@"},
                            {"type": "command", "command": "@HOOK:B@"},
                        ],
                    }
                ]
            }
        },
        "behaviours": {"A": {}, "B": {"stdout": "B-RAN"}},
    }
    prepared = prepare(vector, tmp_path)
    result = await fire_prepared(prepared)
    assert [r.outcome for r in result.hooks] == ["success", "success"]
    assert len(records(prepared, "B")) == 1


async def test_stop_block_counter_resets_when_the_turn_ends(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "q").mkdir()
    blocking = prepare(one_hook("Stop", "Stop", {"exit": 2}), tmp_path / "b")
    quiet = prepare(one_hook("Stop", "Stop", {}), tmp_path / "q")
    session = SessionState()
    for _ in range(7):
        assert (await fire_prepared(blocking, session)).decision == "block"
    assert (await fire_prepared(quiet, session)).decision is None
    for _ in range(8):
        assert (await fire_prepared(blocking, session)).decision == "block"


async def test_stop_block_counter_resets_on_a_stop_that_runs_no_hook(tmp_path: Path) -> None:
    """A Stop that matches no hook at all (answered without running one) also ends the
    run of consecutive blocks (a surviving mutant kept counting across it)."""
    (tmp_path / "b").mkdir()
    (tmp_path / "n").mkdir()
    blocking = prepare(one_hook("Stop", "Stop", {"exit": 2}), tmp_path / "b")
    no_hook = prepare({"input": "Stop", "event": "Stop", "settings": {"hooks": {}}}, tmp_path / "n")
    session = SessionState()
    for _ in range(7):
        assert (await fire_prepared(blocking, session)).decision == "block"
    assert (await fire_prepared(no_hook, session)).hooks == []
    for _ in range(8):
        assert (await fire_prepared(blocking, session)).decision == "block"


async def test_once_runs_once_per_session(tmp_path: Path) -> None:
    """hookd honours `once` everywhere (Claude Code: only in skill frontmatter)."""
    prepared = prepare(one_hook("UserPromptSubmit", "UserPromptSubmit", {}, once=True), tmp_path)
    session = SessionState()
    await fire_prepared(prepared, session)
    second = await fire_prepared(prepared, session)
    assert second.hooks == []
    assert len(records(prepared)) == 1
    await fire_prepared(prepared, SessionState())  # a new session runs it again
    assert len(records(prepared)) == 2


async def test_once_counts_only_a_successful_run(tmp_path: Path) -> None:
    """Reference §1.3 (Sep docs): removed after the first *successful* run."""
    prepared = prepare(
        one_hook("UserPromptSubmit", "UserPromptSubmit", {"exit": 1}, once=True), tmp_path
    )
    session = SessionState()
    await fire_prepared(prepared, session)
    await fire_prepared(prepared, session)
    assert len(records(prepared)) == 2


def test_fixture_dir_is_the_shared_one(cc_fixtures: Path) -> None:
    assert cc_fixtures == CC_FIXTURES
    assert (HOOKS / "scripted.py").exists() and os.path.isabs(PY)
    assert (
        msgspec.json.decode((cc_fixtures / "Stop.json").read_bytes())["hook_event_name"] == "Stop"
    )


async def test_background_grandchild_does_not_hold_the_event(tmp_path: Path) -> None:
    """hookd stops reading a pipe shortly after the hook exits (pipe grace), even if a
    background grandchild keeps it open; Claude Code would wait until the timeout."""
    command = 'sleep 120 & echo $! > bg.pid; echo \'{"systemMessage": "FOREGROUND-DONE"}\''
    vector = {
        "input": "UserPromptSubmit",
        "settings": {
            "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
        },
    }
    prepared = prepare(vector, tmp_path)
    try:
        result = await fire_prepared(prepared)
        # The event is answered while the grandchild still holds the pipe open.
        bg = int((tmp_path / "bg.pid").read_text())
        assert alive(bg), "the event waited for the background process to end"
    finally:
        os.kill(int((tmp_path / "bg.pid").read_text()), 9)
    assert result.system_messages == ["FOREGROUND-DONE"]
    assert result.hooks[0].outcome == "success"


@pytest.mark.parametrize("session_id", ["../../escaped", "/abs/escaped", "..", "a/b", "x\x01y"])
async def test_a_session_id_never_leads_a_file_out_of_its_directory(
    session_id: str, tmp_path: Path
) -> None:
    """Per-session directories (``CLAUDE_ENV_FILE``'s, spilled outputs') are named after the
    session id, which any client chooses: an id that is not a plain file name is replaced by
    a digest of itself, so nothing is created outside ``envfiles/`` and ``spill/``."""
    long_text = "z" * 10_001
    behaviour = {
        "stdout": {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": long_text}
        }
    }
    prepared = prepare(one_hook("SessionStart", "SessionStart-startup", behaviour), tmp_path)
    prepared.raw["session_id"] = session_id
    prepared.env.pop("CLAUDE_ENV_FILE", None)
    await fire_prepared(prepared)
    (record,) = records(prepared)
    env_file = Path(record["env"]["CLAUDE_ENV_FILE"])
    assert env_file.parent.parent == tmp_path / "envfiles"
    assert env_file.parent.name.startswith("id-")
    (spilled,) = (tmp_path / "spill").rglob("*.txt")
    assert spilled.parent.parent == tmp_path / "spill"
    made = {p for p in tmp_path.rglob("*") if "escaped" in p.name or p.name == "b"}
    assert not made

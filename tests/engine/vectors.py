"""The test-vector format and its runner (tests/data/vectors/*.json).

A vector file is ``{"vectors": [vector, …]}``; one vector is::

    {
      "name": "pre_exit2_stderr",          unique within the file
      "ref": "observed: pre_exit2_stderr", where the expectation comes from
      "event": "PreToolUse",               optional; default: the input's hook_event_name
      "input": "PreToolUse-Bash",          a cc-fixtures name, or an inline object
      "input_patch": {...},                shallow-merged over the input
      "settings": {"hooks": {...}},        a Claude Code settings document
      "behaviours": {"A": {...}},          what scripted.py KEY does (see that file)
      "expect": {...},                     FireResult fields (subset), "hooks": [per-run subsets],
                                           "runs": {KEY: how many times it ran}
      "expect_claude": {"exit": 0, "stdout": "…" | "stdout_json": {...}, "stderr": "…"},
      "config_errors": ["…"],              fragments of the expected config errors, in order
      "cli": true                          also run it through `hookctl fire --local`
    }

Strings may use tokens: ``@HOOK:A@`` (the command that runs scripted.py with
key A), ``@LABEL:A@`` (hookd's name for that hook), ``@PY@`` (a real Python
interpreter, started with ``-I -S`` for speed),
``@HOOKS@`` (tests/data/hooks) and ``@TMP@`` (the vector's scratch directory,
which is also the event's ``cwd`` and the project directory).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from hookd.config.assemble import load_config
from hookd.config.schema import CommandHandler, handler_label
from hookd.daemon.options import command_runner, engine_settings
from hookd.daemon.settings import DaemonSettings
from hookd.engine.engine import Engine, SessionState
from hookd.handlers.registry import handler_table
from hookd_client.events import decode_event
from hookd_client.results import FireResult

TESTS = Path(__file__).resolve().parent.parent
DATA = TESTS / "data"
VECTORS = DATA / "vectors"
HOOKS = DATA / "hooks"
CC_FIXTURES = DATA / "cc-fixtures"
ROOT = TESTS.parent
PY = os.path.realpath(sys.executable)
"""The interpreter itself, not a wrapper script (pyenv shims cost ~50 ms a run)."""


def hook_command(key: str) -> str:
    return f"{PY} -I -S {HOOKS}/scripted.py {key}"


def substitute(value: Any, tmp: Path) -> Any:
    """Expand the @…@ tokens in every string of a JSON value."""
    if isinstance(value, str):
        text = value
        while "@HOOK:" in text:
            start = text.index("@HOOK:")
            end = text.index("@", start + 6)
            text = text[:start] + hook_command(text[start + 6 : end]) + text[end + 1 :]
        while "@LABEL:" in text:  # hookd's name for that hook (shortened past 80 chars)
            start = text.index("@LABEL:")
            end = text.index("@", start + 7)
            label = handler_label(CommandHandler(command=hook_command(text[start + 7 : end])))
            text = text[:start] + label + text[end + 1 :]
        return text.replace("@PY@", PY).replace("@HOOKS@", str(HOOKS)).replace("@TMP@", str(tmp))
    if isinstance(value, list):
        return [substitute(v, tmp) for v in value]
    if isinstance(value, dict):
        return {substitute(k, tmp): substitute(v, tmp) for k, v in value.items()}
    return value


def load_vectors(pattern: str = "*.json") -> list[tuple[str, dict[str, Any]]]:
    """Every vector of every matching file, as (``file::name``, vector)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(VECTORS.glob(pattern)):
        document = json.loads(path.read_text(encoding="utf-8"))
        names: set[str] = set()
        for vector in document["vectors"]:
            name = vector["name"]
            assert name not in names, f"{path.name}: duplicate vector name {name}"
            names.add(name)
            found.append((f"{path.stem}::{name}", vector))
    return found


def fixture_input(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CC_FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return data


def clean_env() -> dict[str, str]:
    """The test process's environment without anything an agent may have set."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE", "HOOK_", "HOOKD_", "SCRIPTED_"))
    }


@dataclass
class Prepared:
    """A vector made concrete in a scratch directory."""

    vector: dict[str, Any]
    tmp: Path
    settings_file: Path
    input_file: Path
    raw: dict[str, Any]
    env: dict[str, str]
    records: Path

    @property
    def event(self) -> str:
        return str(self.vector.get("event") or self.raw["hook_event_name"])


def prepare(vector: dict[str, Any], tmp: Path) -> Prepared:
    vector = substitute(vector, tmp)
    source = vector.get("input", {})
    raw = fixture_input(source) if isinstance(source, str) else dict(source)
    raw["cwd"] = str(tmp)
    raw.update(vector.get("input_patch", {}))
    records = tmp / "records"
    records.mkdir(exist_ok=True)
    behaviours = tmp / "behaviours.json"
    behaviours.write_text(json.dumps(vector.get("behaviours", {})), encoding="utf-8")
    settings_file = tmp / "settings.json"
    settings_file.write_text(json.dumps(vector["settings"]), encoding="utf-8")
    input_file = tmp / "input.json"
    input_file.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    env = clean_env()
    env["SCRIPTED_BEHAVIOURS"] = str(behaviours)
    env["SCRIPTED_RECORD_DIR"] = str(records)
    env["CLAUDE_PROJECT_DIR"] = str(tmp)
    return Prepared(vector, tmp, settings_file, input_file, raw, env, records)


def command_engine(
    settings: DaemonSettings | None = None,
    *,
    input_file_dir: str | None = None,
    spill_dir: str | None = None,
    env_file_dir: str | None = None,
) -> Engine:
    """An engine that runs command hooks only, with the daemon's defaults (or ``settings``)."""
    settings = settings or DaemonSettings()
    return Engine(
        handler_table(command_runner(settings, input_file_dir=input_file_dir)),
        engine_settings(settings, spill_dir=spill_dir, env_file_dir=env_file_dir),
    )


async def fire_prepared(
    prepared: Prepared,
    session: SessionState | None = None,
    engine: Engine | None = None,
) -> FireResult:
    config = load_config(None, str(prepared.tmp), [str(prepared.settings_file)])
    wanted = prepared.vector.get("config_errors", [])
    got = [str(e) for e in config.errors]
    assert len(got) == len(wanted), got
    for fragment, error in zip(wanted, got, strict=True):
        assert fragment in error, (fragment, error)
    if engine is None:
        engine = command_engine(
            input_file_dir=str(prepared.tmp),
            spill_dir=str(prepared.tmp / "spill"),
            env_file_dir=str(prepared.tmp / "envfiles"),
        )
    event = decode_event(prepared.raw, prepared.event)
    return await engine.fire(config, event, session=session or SessionState(), env=prepared.env)


def run_cli(prepared: Prepared, fmt: str = "claude") -> subprocess.CompletedProcess[str]:
    """``hookctl fire EVENT --local`` as a real subprocess."""
    env = dict(prepared.env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "client")])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "hookd.cli.hookctl",
            "fire",
            prepared.event,
            "--local",
            "--settings",
            str(prepared.settings_file),
            "--input",
            str(prepared.input_file),
            "--format",
            fmt,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=prepared.tmp,
        timeout=60,
    )


# --- comparing ---------------------------------------------------------------

_RESULT_ALIASES = {"continue": "continue_"}
_RUN_KEYS = {
    "outcome",
    "exit_code",
    "block_message",
    "error",
    "error_contains",
    "output",
    "plain_text",
    "timed_out",
    "truncated",
    "is_async",
    "name",
}


def result_fields(result: FireResult) -> dict[str, Any]:
    return msgspec.structs.asdict(result)


def check_result(result: FireResult, expect: dict[str, Any], prepared: Prepared) -> None:
    fields = result_fields(result)
    for key, want in expect.items():
        if key == "hooks":
            check_runs(result, want)
        elif key == "runs":
            for hook_key, count in want.items():
                got = len(list(prepared.records.glob(f"{hook_key}-*.json")))
                assert got == count, f"hook {hook_key} ran {got} times, expected {count}"
        elif key == "errors_contain":
            for fragment in want:
                assert any(fragment in e for e in result.errors), (fragment, result.errors)
        else:
            name = _RESULT_ALIASES.get(key, key)
            assert name in fields, f"unknown FireResult field {key}"
            assert fields[name] == want, f"{key}: got {fields[name]!r}, expected {want!r}"


def check_runs(result: FireResult, want: list[dict[str, Any]]) -> None:
    runs = result.hooks
    assert len(runs) == len(want), f"{len(runs)} hooks ran, expected {len(want)}: {runs}"
    for i, (run, expected) in enumerate(zip(runs, want, strict=True)):
        for key, value in expected.items():
            assert key in _RUN_KEYS, f"unknown HookRun expectation {key}"
            if key == "error_contains":
                assert run.error is not None and value in run.error, (i, run.error, value)
            elif key == "name":
                assert run.hook.name == value, (i, run.hook.name, value)
            else:
                got = getattr(run, key)
                assert got == value, f"hook {i} {key}: got {got!r}, expected {value!r}"


def check_claude(stdout: str, stderr: str, code: int, expect: dict[str, Any]) -> None:
    if "exit" in expect:
        assert code == expect["exit"], (code, stdout, stderr)
    if "stdout" in expect:
        assert stdout == expect["stdout"], (stdout, expect["stdout"])
    if "stdout_json" in expect:
        assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
        assert json.loads(stdout) == expect["stdout_json"], stdout
    if "stderr" in expect:
        assert stderr == expect["stderr"], (stderr, expect["stderr"])

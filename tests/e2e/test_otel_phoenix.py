"""Every hook run of a real Claude Code session, as spans in a real OpenTelemetry backend.

Arize Phoenix (``phoenix serve``, from PyPI; scripts/check installs it into
``.venv-phoenix`` when this file is selected) is started on loopback; a real ``hookd
serve`` exports to it (``[telemetry]`` in its hookd.toml); the real Claude Code CLI
runs one ``-p`` session of a few tool calls against the fake Messages API, its hooks
installed into hookd (``hookctl claude install --user``).  Then the test asks Phoenix,
through its REST API, for what it stored, and finds for every hook run of the session
(the audit log lists them) its span: its attributes, its parent — the span of the event
that ran it — and the session and prompt that join it to Claude Code's own telemetry.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from e2e.daemon import VENV_BIN, RunningDaemon, daemon_paths, free_port, hookd_daemon
from e2e.fake_api import Turn
from e2e.harness import claude_available, run_claude
from hookd.daemon.audit import AuditEvent, AuditRun, read_records
from support.clis import require_cli

pytestmark = [pytest.mark.slow, pytest.mark.claude]

ROOT = Path(__file__).resolve().parents[2]
PROJECT_NAME = "hookd-e2e"
SECRET = "e2e-s3cret-value"
BASH = {"command": "echo one > one.txt; echo one", "description": "first"}
BASH_2 = {"command": "echo two > two.txt; echo two", "description": "second"}
TURNS: list[list[dict[str, Any]]] = [
    [{"type": "tool_use", "name": "Bash", "input": BASH}],
    [{"type": "tool_use", "name": "Bash", "input": BASH_2}],
    [{"type": "text", "text": "FINAL-ANSWER"}],
]
KEEP_TRACEPARENT = 'printf %s "$TRACEPARENT" > "$CLAUDE_PROJECT_DIR/traceparent.txt"'
"""A hook that keeps the trace context Claude Code gave its hooks (hookd passes the agent's
environment on: the Stop event comes through the relay, a command hook of Claude Code's)."""
HOOKS: dict[str, Any] = {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "true"}]}],
    "PreToolUse": [
        {
            "matcher": "Bash",
            "hooks": [
                {"type": "command", "command": "cat >/dev/null"},
                {"type": "command", "command": f"true --token={SECRET}"},
            ],
        }
    ],
    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": KEEP_TRACEPARENT}]}],
}


def claude_tracing(phoenix: str) -> dict[str, str]:
    """Claude Code's own (beta) tracing, pointed at the same Phoenix: with it Claude Code
    passes its span to its command hooks as ``TRACEPARENT`` (2.1.330 needs every one of
    these), and hookd's relay — a command hook — carries it to the daemon."""
    return {
        "DISABLE_TELEMETRY": "",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
        "ENABLE_ENHANCED_TELEMETRY_BETA": "1",
        "ENABLE_BETA_TRACING_DETAILED": "1",
        "CLAUDE_CODE_PROPAGATE_TRACEPARENT": "1",
        "BETA_TRACING_ENDPOINT": phoenix,
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix,
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT_NAME}",
        "OTEL_TRACES_EXPORT_INTERVAL": "500",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }


def phoenix_binary() -> str | None:
    """``$HOOKD_PHOENIX``, else scripts/check's ``.venv-phoenix``, else ``phoenix`` on PATH."""
    named = os.environ.get("HOOKD_PHOENIX")
    if named:
        return named
    local = ROOT / ".venv-phoenix" / "bin" / "phoenix"
    if local.exists():
        return str(local)
    return shutil.which("phoenix")


@pytest.fixture(autouse=True)
def _require_tools() -> None:
    require_cli(claude_available(), "the Claude Code CLI or node")
    require_cli(
        phoenix_binary() is not None,
        "Arize Phoenix (phoenix serve)",
        "scripts/check installs it: python3 -m venv .venv-phoenix && "
        ".venv-phoenix/bin/pip install arize-phoenix",
    )


async def _phoenix_ready(base: str, proc: trio.Process, log: Path) -> None:
    async with httpx.AsyncClient() as client:
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"phoenix exited: {log.read_text()[-3000:]}")
            try:
                if (await client.get(f"{base}/healthz", timeout=5)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await trio.sleep(0.25)


async def _spans(base: str) -> list[dict[str, Any]]:
    """Every span Phoenix stored for the project, through its REST API (paged)."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    async with httpx.AsyncClient() as client:
        while True:
            params: dict[str, Any] = {"limit": 1000}
            if cursor:
                params["cursor"] = cursor
            reply = await client.get(
                f"{base}/v1/projects/{PROJECT_NAME}/spans", params=params, timeout=30
            )
            if reply.status_code == 404:  # no span yet: the project does not exist
                return []
            reply.raise_for_status()
            body = reply.json()
            out.extend(body["data"])
            cursor = body.get("next_cursor")
            if not cursor:
                return out


def _write_daemon_config(daemon: RunningDaemon, phoenix: str) -> None:
    config = daemon.config_home / "hookd" / "hookd.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "[telemetry]\n"
        "enabled = true\n"
        f"endpoint = '{phoenix}'\n"
        "metrics = false  # Phoenix stores traces only\n"
        "schedule_delay = 0.2\n"
        "service_name = 'hookd-e2e'\n"
        f"resource_attributes = {{ 'openinference.project.name' = '{PROJECT_NAME}' }}\n"
    )


async def _status(daemon: RunningDaemon) -> dict[str, Any]:
    done = await trio.run_process(
        [str(VENV_BIN / "hookctl"), "status", "--json"], env=daemon.env(), capture_stdout=True
    )
    return dict(json.loads(done.stdout))


async def test_every_hook_run_of_a_claude_session_is_a_span_under_its_event_in_phoenix(
    tmp_path: Path,
) -> None:
    binary = phoenix_binary()
    assert binary is not None
    port = free_port()
    phoenix = f"http://127.0.0.1:{port}"
    work = tmp_path / "phoenix"
    work.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = tmp_path / "phoenix.log"
    home = tmp_path / "home"
    project = tmp_path / "proj"
    project.mkdir()
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": HOOKS}))
    daemon = daemon_paths(tmp_path, home)
    _write_daemon_config(daemon, phoenix)
    installed = await trio.run_process(
        [
            str(VENV_BIN / "hookctl"),
            *("claude", "install", "--user"),
            *("--port", str(daemon.port), "--socket", str(daemon.socket)),
        ],
        env=daemon.env(),
        capture_stdout=True,
        check=False,
    )
    # 3: wired, but no daemon serves the door yet — it is started below.
    assert installed.returncode in (0, 3), installed.stdout
    with log.open("wb") as out:
        proc = await trio.lowlevel.open_process(
            [binary, "serve"], env=env, stdout=out, stderr=out, cwd=work
        )
    try:
        with trio.fail_after(240):  # a loaded 2-core machine: Phoenix starts in ~30 s
            await _phoenix_ready(phoenix, proc, log)
        async with hookd_daemon(daemon):
            run = await run_claude(
                prompt="please run the commands",
                turns=[Turn(t) for t in TURNS],
                home=home,
                project=project,
                env=claude_tracing(phoenix),
            )
            assert run.exit_code == 0, run.stderr[-2000:]
            assert run.result.get("result") == "FINAL-ANSWER"
            with trio.fail_after(60):
                while True:  # every span recorded has reached Phoenix
                    status = (await _status(daemon))["telemetry"]
                    assert status["dropped"] == 0, status
                    if status["exported"] == status["recorded"] and not status["queued"]:
                        break
                    await trio.sleep(0.2)
        spans = await _spans(phoenix)
    finally:
        proc.terminate()
        with trio.move_on_after(20):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()

    records = read_records(home / ".state" / "hookd" / "audit").records
    events = {r.id: r for r in records if isinstance(r, AuditEvent)}
    runs = [r for r in records if isinstance(r, AuditRun)]
    (session,) = {r.session_id for r in events.values()}
    # The session ran the hooks it should: 1 prompt, 2 × (2 Pre + 1 Post), 1 Stop.
    assert sorted(r.event for r in runs) == sorted(
        ["UserPromptSubmit", "Stop", *["PreToolUse"] * 4, *["PostToolUse"] * 2]
    )
    by_id = {s["context"]["span_id"]: s for s in spans}
    event_span = {
        s["attributes"]["hookd.event.id"]: s
        for s in spans
        if "hookd.hooks" in s["attributes"] and "hookd.event.id" in s["attributes"]
    }
    # Every event hookd answered has its span, joined to the session and the prompt.
    assert set(event_span) == set(events)
    for event_id, record in events.items():
        attrs = event_span[event_id]["attributes"]
        assert attrs["session.id"] == session
        assert attrs["hookd.event"] == record.event
        prompt = (record.input or {}).get("prompt_id")
        if prompt:
            assert attrs["prompt.id"] == prompt
    # 100 % of the hook runs: each one's span, under its event's span.
    hook_spans = [
        s for s in spans if s["attributes"].get("gen_ai.operation.name") == "execute_hook"
    ]
    assert len(hook_spans) == len(runs)
    unmatched = list(hook_spans)
    for run_record in runs:
        parent = event_span[run_record.event_id]
        found = [
            s
            for s in unmatched
            if s["parent_id"] == parent["context"]["span_id"]
            and s["attributes"]["hookd.hook.type"] == run_record.hook_type
            and s["attributes"].get("process.exit.code") == run_record.exit_code
        ]
        assert found, f"no span for {run_record}"
        span = found[0]
        unmatched.remove(span)
        attrs = span["attributes"]
        assert span["context"]["trace_id"] == parent["context"]["trace_id"]
        assert by_id[span["parent_id"]] is parent
        assert attrs["session.id"] == session
        assert attrs["prompt.id"] == parent["attributes"].get("prompt.id")
        assert attrs["hookd.event"] == run_record.event
        assert attrs["hookd.hook.outcome"] == run_record.outcome == "success"
        assert attrs["gen_ai.agent.name"] == "claude"
        if run_record.event in ("PreToolUse", "PostToolUse"):
            assert attrs["gen_ai.tool.name"] == "Bash"
            assert attrs["gen_ai.tool.call.id"] == parent["attributes"]["gen_ai.tool.call.id"]
    # Where Claude Code passed its trace context (the relay's events: Stop here), hookd's
    # event span continues Claude Code's trace, as a child of the span it named.
    _, trace, agent_span, _ = (project / "traceparent.txt").read_text().split("-")
    (stop,) = (s for s in spans if s["name"] == "hookd Stop")
    assert (stop["context"]["trace_id"], stop["parent_id"]) == (trace, agent_span)
    assert stop["attributes"]["hookd.client"] == "hookd-relay"
    names = {s["attributes"]["hookd.hook.name"] for s in hook_spans}
    assert "true --token=…" in names and "cat >/dev/null" in names
    assert SECRET not in json.dumps(spans)
    assert all(s["attributes"].get("prompt.id") for s in hook_spans)

"""OpenTelemetry export (docs/observability.md): a real daemon, its real exporter process,
real OTLP/HTTP on loopback to a receiver that decodes what it gets.

The end-to-end test with the real Claude Code CLI and a real backend (Arize Phoenix) is
tests/e2e/test_otel_phoenix.py; here each rule is checked on its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from async_hooks.helpers import async_hook, script, wait_until
from hookd.cli.hookd_main import build_parser, setting_overrides
from hookd.daemon.otel_export import redact_hook
from hookd.daemon.settings import TelemetrySettings, load_settings
from hookd.daemon.telemetry import parse_traceparent, resolve_config
from hookd_client import protocol
from hookd_client.client import Client
from support.daemon import configure
from support.events import fixture_event
from support.otlp import OtlpSink, ReceivedSpan, start_otlp_sink, start_silent

pytest.importorskip("opentelemetry.proto", reason="the otel extra: pip install -e '.[otel]'")

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-s3cret"
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


def telemetry(endpoint: str, **keys: Any) -> TelemetrySettings:
    values: dict[str, Any] = {
        "enabled": True,
        "endpoint": endpoint,
        "schedule_delay": 0.1,
        "metrics": False,
    }
    return TelemetrySettings(**{**values, **keys})


def _fire(sock: Path, name: str, payload: dict[str, Any], env: dict[str, str] | None) -> Any:
    with Client(sock) as client:
        reply = client.fire(name, payload, env=env)
    assert isinstance(reply, protocol.FireReply)
    return reply.result


async def fire(handle: Any, name: str, env: dict[str, str] | None = None, **changes: Any) -> Any:
    payload = fixture_event(name, **changes)
    event_name = name.partition("-")[0]
    return await trio.to_thread.run_sync(_fire, handle.socket, event_name, payload, env)


def hook_spans(sink: OtlpSink) -> list[ReceivedSpan]:
    return [s for s in sink.spans if s.attributes.get("gen_ai.operation.name") == "execute_hook"]


def event_spans(sink: OtlpSink) -> list[ReceivedSpan]:
    return [s for s in sink.spans if "hookd.hooks" in s.attributes]


async def test_each_event_and_hook_run_is_a_span_under_its_event(
    daemon_factory: Any, nursery: trio.Nursery
) -> None:
    sink = await start_otlp_sink(nursery)
    handle = await daemon_factory(telemetry=telemetry(sink.endpoint))
    deny = (
        """printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","""
        """"permissionDecision":"deny","permissionDecisionReason":"no"}}'"""
    )
    configure(
        handle,
        {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"TOKEN={SECRET} true --key={SECRET} {SECRET}",
                        },
                        {"type": "command", "command": deny},
                    ],
                },
                {
                    "matcher": "Read",
                    "hooks": [{"type": "command", "command": "sleep 5", "timeout": 0.3}],
                },
            ]
        },
    )
    parent = {"TRACEPARENT": f"00-{TRACE}-{PARENT}-01"}
    denied = await fire(
        handle, "PreToolUse-Bash", parent, session_id="s-otel", prompt_id="p-1", tool_use_id="tu-1"
    )
    assert denied.decision == "deny"
    await fire(handle, "PreToolUse-Read", session_id="s-otel", prompt_id="p-2")
    await fire(handle, "PreToolUse-Write", session_id="s-otel", prompt_id="p-2")  # no hook

    await sink.wait_for(lambda: len(hook_spans(sink)) == 3 and len(event_spans(sink)) == 3)
    events = {s.attributes["gen_ai.tool.name"]: s for s in event_spans(sink)}
    bash, read, grep = events["Bash"], events["Read"], events["Write"]
    # The agent's trace context is continued; without one each event starts a trace.
    assert (bash.trace_id, bash.parent_id) == (TRACE, PARENT)
    assert read.parent_id == "" and read.trace_id not in (TRACE, grep.trace_id)
    assert bash.attributes["hookd.decision"] == "deny" and bash.attributes["hookd.hooks"] == 2
    assert grep.attributes["hookd.hooks"] == 0
    for span in event_spans(sink):
        assert span.attributes["session.id"] == "s-otel"
        assert span.attributes["gen_ai.agent.name"] == "claude"
        assert span.resource["service.name"] == "hookd"
    assert bash.attributes["prompt.id"] == "p-1" and read.attributes["prompt.id"] == "p-2"

    runs = hook_spans(sink)
    by_parent = {s.parent_id for s in runs}
    assert by_parent == {bash.span_id, read.span_id}
    assert {s.trace_id for s in runs if s.parent_id == bash.span_id} == {TRACE}
    under_bash = [s for s in runs if s.parent_id == bash.span_id]
    (first,) = (s for s in under_bash if "TOKEN" in s.attributes["hookd.hook.name"])
    (denier,) = (s for s in under_bash if s is not first)
    assert first.attributes["hookd.hook.name"] == "TOKEN=… true --key=… …"
    assert first.attributes["process.exit.code"] == 0
    assert first.attributes["hookd.hook.outcome"] == "success"
    assert first.attributes["hookd.hook.matcher"] == "Bash"
    assert first.attributes["hookd.hook.type"] == "command"
    assert first.attributes["hookd.hook.async"] is False
    assert first.attributes["gen_ai.tool.call.id"] == "tu-1"
    assert first.attributes["prompt.id"] == "p-1"
    assert denier.attributes["hookd.decision"] == "deny"
    (slow,) = (s for s in runs if s.parent_id == read.span_id)
    assert slow.attributes["hookd.hook.timed_out"] is True
    assert slow.attributes["error.type"] == "timeout"
    assert slow.status == 2  # STATUS_CODE_ERROR
    for span in sink.spans:  # the redaction rule: the secret is nowhere
        assert SECRET not in repr(span)

    status = handle.daemon.telemetry_status()
    assert status is not None and status.dropped == 0 and status.recorded == 6
    await wait_until(lambda: handle.daemon.telemetry_status().exported == 6)


async def test_an_async_hook_span_ends_with_it_and_is_linked_from_the_receiving_event(
    daemon_factory: Any, nursery: trio.Nursery
) -> None:
    sink = await start_otlp_sink(nursery)
    handle = await daemon_factory(telemetry=telemetry(sink.endpoint))
    configure(
        handle,
        {
            "PostToolUse": [{"hooks": [async_hook(script("late_context.sh", "LATE", "0.2"))]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "true"}]}],
        },
    )
    await fire(handle, "PostToolUse-Bash", session_id="s-async", prompt_id="p-a")
    await wait_until(lambda: handle.daemon.async_runner.stats()["undelivered"] == 1)
    later = await fire(handle, "UserPromptSubmit", session_id="s-async", prompt_id="p-b")
    assert later.async_results == ["LATE", "SYS-LATE"]

    def ready() -> bool:
        return any(s.attributes.get("hookd.hook.async") for s in hook_spans(sink)) and any(
            s.attributes["hookd.event"] == "UserPromptSubmit" for s in event_spans(sink)
        )

    await sink.wait_for(ready)
    (started_by,) = (s for s in event_spans(sink) if s.attributes["hookd.event"] == "PostToolUse")
    (receiver,) = (
        s for s in event_spans(sink) if s.attributes["hookd.event"] == "UserPromptSubmit"
    )
    (run,) = (s for s in hook_spans(sink) if s.attributes["hookd.hook.async"])
    # Its span is a child of the event that started it, and ends when the hook ended —
    # after that event's answer.
    assert (run.trace_id, run.parent_id) == (started_by.trace_id, started_by.span_id)
    assert run.end_ns > started_by.end_ns
    assert [(t, s, a["hookd.link"]) for t, s, a in run.links] == [
        (started_by.trace_id, started_by.span_id, "started_by")
    ]
    assert run.attributes["prompt.id"] == "p-a" and run.attributes["session.id"] == "s-async"
    assert run.attributes["hookd.hook.outcome"] == "success"
    # The event that received its result links to it.
    assert [(t, s) for t, s, _ in receiver.links] == [(run.trace_id, run.span_id)]
    assert receiver.links[0][2]["hookd.link"] == "async_result"


async def test_metrics_reach_the_collector(daemon_factory: Any, nursery: trio.Nursery) -> None:
    sink = await start_otlp_sink(nursery)
    handle = await daemon_factory(
        telemetry=telemetry(sink.endpoint, metrics=True, metric_interval=0.3),
        breaker_threshold=1,
    )
    configure(
        handle,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "false"}]}]},
    )
    await fire(handle, "PreToolUse-Bash", session_id="s-m")
    wanted = {
        "hookd.hook.duration",
        "hookd.event.duration",
        "hookd.hook.failures",
        "hookd.sessions",
        "hookd.async.running",
        "hookd.async.queued",
        "hookd.config.generation",
        "hookd.config.errors",
        "hookd.config.reload_failures",
        "hookd.breaker.paused",
    }
    await sink.wait_for(lambda: wanted <= set(sink.metrics), timeout=30)
    ((attrs, point), *_) = sink.metrics["hookd.hook.duration"]
    assert attrs["hookd.hook.name"] == "false" and attrs["hookd.event"] == "PreToolUse"
    assert point.count >= 1
    assert any(p.as_int == 1 for a, p in sink.metrics["hookd.sessions"])
    assert any(
        a["hookd.hook.name"] == "false" and p.as_int == 1
        for a, p in sink.metrics["hookd.breaker.paused"]
    )
    assert any(
        p.as_int == handle.daemon.registry.generation
        for a, p in sink.metrics["hookd.config.generation"]
    )


async def test_a_collector_that_never_answers_costs_only_drops(
    daemon_factory: Any, nursery: trio.Nursery
) -> None:
    silent = await start_silent(nursery)
    handle = await daemon_factory(
        telemetry=telemetry(silent.endpoint, max_queue=8, batch_size=4, timeout=30.0)
    )
    configure(
        handle,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]},
    )
    for i in range(60):
        result = await fire(handle, "PreToolUse-Bash", session_id=f"s-{i % 3}")
        assert result.hooks[0].outcome == "success"
    await wait_until(lambda: silent.connections >= 1)
    status = await wait_until(
        lambda: (s := handle.daemon.telemetry_status()) is not None and s.dropped > 0 and s
    )
    # Bounded: what waits is at most the daemon's buffer and the exporter's queue.
    assert status.queued <= 2 * 8
    assert status.exported == 0
    assert status.recorded == 120
    # hookctl status shows it.
    done = await trio.run_process(
        [sys.executable, "-m", "hookd.cli.hookctl", "--socket", str(handle.socket), "status"],
        capture_stdout=True,
    )
    out = done.stdout.decode()
    assert "telemetry:" in out and "dropped" in out


def test_the_daemon_never_imports_opentelemetry(tmp_path: Path) -> None:
    """The daemon, with export on, imports no ``opentelemetry`` module (its exporter
    process does): ``python -X importtime`` lists every module the daemon imported."""
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(tmp_path),
    }
    sock = tmp_path / "d.sock"
    code = (
        "import sys, trio\n"
        "from hookd.daemon.server import Daemon\n"
        "from hookd.daemon.settings import DaemonSettings, TelemetrySettings\n"
        "from hookd_client.client import Client\n"
        f"settings = DaemonSettings(socket={str(sock)!r}, state_dir={str(tmp_path / 's')!r},\n"
        "    policy_files=[], watch=False,\n"
        "    telemetry=TelemetrySettings(enabled=True, endpoint='http://127.0.0.1:9'))\n"
        "daemon = Daemon(settings)\n"
        "assert daemon.telemetry is not None\n"
        "async def main():\n"
        "    async with trio.open_nursery() as n:\n"
        "        await n.start(daemon.run)\n"
        "        def fire():\n"
        f"            with Client({str(sock)!r}) as c:\n"
        "                c.fire('SessionStart', {'session_id': 's', 'transcript_path': '/t',\n"
        f"                       'cwd': {str(tmp_path)!r}, 'hook_event_name': 'SessionStart',\n"
        "                       'source': 'startup'})\n"
        "        await trio.to_thread.run_sync(fire)\n"
        "        await trio.sleep(0)\n"
        "        daemon.stop_requested.set()\n"
        "    otel = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "    print('OTEL' if otel else 'CLEAN')\n"
        "trio.run(main)\n"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("CLEAN")
    imported = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert imported and not [line for line in imported if "opentelemetry" in line]


# --- configuration -----------------------------------------------------------------------


def test_the_table_mirrors_the_otel_variables_and_wins_over_them(tmp_path: Path) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20abc,x-team=tools",
        "OTEL_SERVICE_NAME": "hookd-laptop",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=dev,team=tools",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
        "OTEL_METRIC_EXPORT_INTERVAL": "15000",
        "OTEL_BSP_MAX_QUEUE_SIZE": "100",
    }
    from_env = resolve_config(TelemetrySettings(enabled=True), env, "1.0")
    assert from_env.traces_endpoint == "http://collector:4318/v1/traces"
    assert from_env.metrics_endpoint == "http://collector:4318/v1/metrics"
    assert from_env.headers == {"authorization": "Bearer abc", "x-team": "tools"}
    assert from_env.resource["service.name"] == "hookd-laptop"
    assert from_env.resource["team"] == "tools"
    assert (from_env.timeout, from_env.metric_interval) == (2.5, 15.0)
    assert (from_env.max_queue, from_env.batch_size) == (100, 100)  # a batch fits the queue

    config = tmp_path / "hookd.toml"
    config.write_text(
        "[telemetry]\nenabled = true\nendpoint = 'http://file:4318'\n"
        "service_name = 'from-file'\nresource_attributes = { team = 'hooks' }\n"
    )
    args = build_parser().parse_args(["serve", "--telemetry-traces-endpoint", "http://t/x"])
    settings = load_settings(config, setting_overrides(args))
    table = resolve_config(settings.telemetry, env, "1.0")
    assert table.traces_endpoint == "http://t/x"  # the flag, used as is
    assert table.metrics_endpoint == "http://file:4318/v1/metrics"  # the file beats the variable
    assert table.resource["service.name"] == "from-file"
    assert table.resource["team"] == "hooks"
    assert table.resource["deployment.environment"] == "dev"
    off = build_parser().parse_args(["serve", "--no-telemetry"])
    assert load_settings(config, setting_overrides(off)).telemetry.enabled is False
    assert load_settings(tmp_path / "none.toml", {}).telemetry.enabled is False  # off by default
    with pytest.raises(ValueError, match="http/protobuf"):
        resolve_config(TelemetrySettings(), {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "1.0")


def test_the_redaction_rule() -> None:
    assert redact_hook("TOKEN=abc python3 ~/hooks/guard.py --strict --key=abc xyz", "command") == (
        "TOKEN=… python3 ~/hooks/guard.py --strict --key=… …"
    )
    assert redact_hook(
        "curl -H 'Authorization: Bearer x' https://u:p@h.example:8443/a?t=1", "command"
    ) == ("curl -H … https://h.example:8443/a")
    assert redact_hook("https://user:pw@hooks.example/check?key=1", "http") == (
        "https://hooks.example/check"
    )
    assert redact_hook("Is this safe? secret", "prompt").startswith("prompt:")
    assert redact_hook("mypkg.hooks:guard", "python") == "mypkg.hooks:guard"
    assert redact_hook("echo 'unbalanced", "command") == "echo …"
    assert redact_hook("a b", "command", "full") == "a b"
    assert redact_hook("a b", "command", "hash").startswith("sha256:")


def test_traceparent_parsing() -> None:
    assert parse_traceparent(f"00-{TRACE}-{PARENT}-01") == (TRACE, int(PARENT, 16))
    assert parse_traceparent(None) is None
    assert parse_traceparent("00-" + "0" * 32 + f"-{PARENT}-01") is None
    assert parse_traceparent(f"00-{TRACE}-zzzzzzzzzzzzzzzz-01") is None


async def test_an_exporter_that_dies_is_restarted_and_its_counts_kept(
    daemon_factory: Any, nursery: trio.Nursery
) -> None:
    sink = await start_otlp_sink(nursery)
    handle = await daemon_factory(telemetry=telemetry(sink.endpoint))
    await fire(handle, "PreToolUse-Bash", session_id="s-r")
    await sink.wait_for(lambda: len(event_spans(sink)) == 1)
    daemon = handle.daemon
    first = await wait_until(lambda: (s := daemon.telemetry_status()).exported == 1 and s)
    assert first.exporter_pid is not None
    os.kill(first.exporter_pid, 9)
    again = await wait_until(
        lambda: (
            (s := daemon.telemetry_status()).restarts == 1
            and s.exporter_pid not in (None, first.exporter_pid)
            and s
        )
    )
    assert again.last_error == "exporter exited with status -9"
    await fire(handle, "PreToolUse-Bash", session_id="s-r")
    await sink.wait_for(lambda: len(event_spans(sink)) == 2)
    await wait_until(lambda: daemon.telemetry_status().exported == 2)


def test_without_the_extra_the_daemon_runs_and_says_why_nothing_is_exported(
    tmp_path: Path,
) -> None:
    """An ``opentelemetry`` package without the SDK (the API alone, as other packages pull
    in) first on the path: telemetry is off, and status says what to install."""
    shadow = tmp_path / "path" / "opentelemetry"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    code = (
        "from hookd.daemon.server import Daemon\n"
        "from hookd.daemon.settings import DaemonSettings, TelemetrySettings\n"
        f"d = Daemon(DaemonSettings(state_dir={str(tmp_path / 's')!r}, policy_files=[],\n"
        "    telemetry=TelemetrySettings(enabled=True)))\n"
        "print(d.telemetry is None, d.telemetry_status().last_error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(tmp_path / "path")},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]  # after the daemon's log lines
    assert last.startswith("True ") and "pip install 'hookd[otel]'" in last
    assert "telemetry off" in done.stdout  # and the log said so

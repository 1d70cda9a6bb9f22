"""The Agent SDK's adapter: Claude Code's dialect on the SDK's events, wired in code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookd.agents.agent_sdk import SDK_EVENTS, AgentSdkAdapter
from hookd.agents.base import Installation, UnknownAgentEvent
from hookd.agents.registry import adapter_for
from hookd_client.results import FireResult

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-agent-sdk-0.2.187"


def test_its_events_are_the_helpers() -> None:
    """hookd cannot import the helper (it imports the SDK); the two lists must agree."""
    agent_sdk = pytest.importorskip("hookd_client.agent_sdk")
    assert (*agent_sdk.CALLBACK_EVENTS, *agent_sdk.SETTINGS_EVENTS) == SDK_EVENTS
    assert AgentSdkAdapter.name == agent_sdk.AGENT
    assert [s.native for s in AgentSdkAdapter.events] == sorted(
        SDK_EVENTS, key=[s.native for s in adapter_for("claude").events].index
    )


def test_registered_under_its_name() -> None:
    assert isinstance(adapter_for("claude-agent-sdk"), AgentSdkAdapter)


@pytest.mark.parametrize("fixture", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_decodes_the_sdks_real_inputs_as_they_came(fixture: str) -> None:
    raw = json.loads((FIXTURES / f"{fixture}.json").read_text())
    event = AgentSdkAdapter().decode(raw["hook_event_name"], raw)
    assert event.event == fixture and event.input == raw and event.agent == "claude-agent-sdk"


def test_an_event_the_sdk_never_hands_hookd_is_unknown() -> None:
    with pytest.raises(UnknownAgentEvent):
        AgentSdkAdapter().decode("CwdChanged", {})


def test_encodes_as_claude_code() -> None:
    result = FireResult(event="PreToolUse", decision="deny", reason="no")
    raw = json.loads((FIXTURES / "PreToolUse.json").read_text())
    reply = AgentSdkAdapter().encode(result, AgentSdkAdapter().decode("PreToolUse", raw))
    assert reply.exit_code == 0
    assert json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_nothing_to_install_and_it_says_what_to_write(tmp_path: Path) -> None:
    adapter = AgentSdkAdapter()
    assert adapter.hook_files("user", tmp_path, None) == []
    with pytest.raises(ValueError, match=r"hooks=hookd_hooks\(\)"):
        adapter.wire(None, lambda spec: "")
    assert "hookd_settings()" in adapter.trust_steps("user")[0]


def test_detect_finds_the_sdk_in_hookds_environment_or_says_it_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``hookctl agents list`` reports the SDK as hookd's Python environment has it: the
    installed distribution's version, or not installed (never a guess either way)."""
    import importlib.metadata

    version = importlib.metadata.version("claude-agent-sdk")  # a dev dependency
    assert AgentSdkAdapter().detect() == Installation(installed=True, version=version)

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert AgentSdkAdapter().detect() == Installation(installed=False)

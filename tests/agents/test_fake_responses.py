"""The fake Responses API answers the way Codex and Copilot read it (both CLIs run against it in
tests/agents/test_codex.py and test_copilot.py; these pin its script logic without a CLI)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import trio

from agents.fake_responses import FALLBACK_TEXT, FakeResponsesApi, Shell, Text, serve_fake_responses


def _events(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")
    ]


async def _post(api: FakeResponsesApi, body: dict[str, Any]) -> list[dict[str, Any]]:
    async with httpx.AsyncClient() as client:
        reply = await client.post(f"{api.base_url}/responses", json=body)
    assert reply.status_code == 200, reply.text
    return _events(reply.text)


async def test_shell_turn_uses_the_shell_tool_each_agent_offers(nursery: trio.Nursery) -> None:
    api = FakeResponsesApi([Shell("echo hi"), Shell("echo again"), Text("done")])
    await nursery.start(serve_fake_responses, api)
    codex = await _post(api, {"stream": True, "tools": [{"name": "exec_command"}], "input": []})
    copilot = await _post(api, {"stream": True, "tools": [{"name": "bash"}], "input": []})
    assert [e["type"] for e in codex] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    assert codex[2]["item"]["name"] == "exec_command"
    assert json.loads(codex[2]["item"]["arguments"]) == {"cmd": "echo hi"}
    assert copilot[2]["item"]["name"] == "bash"
    assert json.loads(copilot[2]["item"]["arguments"]) == {"command": "echo again"}
    final = await _post(api, {"stream": True, "tools": [{"name": "bash"}], "input": []})
    assert final[-1]["response"]["output"][0]["content"][0]["text"] == "done"


async def test_side_requests_and_an_exhausted_script_end_with_the_fallback_text(
    nursery: trio.Nursery,
) -> None:
    api = FakeResponsesApi([Text("only")])
    await nursery.start(serve_fake_responses, api)
    side = await _post(api, {"stream": True, "input": [{"role": "user", "content": "title?"}]})
    assert side[-1]["response"]["output"][0]["content"][0]["text"] == FALLBACK_TEXT
    first = await _post(api, {"stream": True, "tools": [{"name": "bash"}], "input": []})
    extra = await _post(api, {"stream": True, "tools": [{"name": "bash"}], "input": []})
    assert first[-1]["response"]["output"][0]["content"][0]["text"] == "only"
    assert extra[-1]["response"]["output"][0]["content"][0]["text"] == FALLBACK_TEXT
    assert len(api.requests) == 2 and len(api.side_requests) == 1


async def test_what_the_model_saw_is_read_back_from_the_recorded_request(
    nursery: trio.Nursery,
) -> None:
    api = FakeResponsesApi([Text("ok")])
    await nursery.start(serve_fake_responses, api)
    body = {
        "stream": True,
        "tools": [{"name": "bash"}],
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "ctx"}]},
            {"type": "function_call_output", "call_id": "c", "output": "ran"},
        ],
    }
    await _post(api, body)
    assert api.tool_outputs() == ["ran"]
    assert api.messages("developer") == ["ctx"]

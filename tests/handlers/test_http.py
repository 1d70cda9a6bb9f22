"""http hooks (and the seeds' webhook) against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json

import msgspec
import pytest
import structlog

from handlers.rig import Rig, data_reply, fixture_input
from handlers.scripted_server import Reply
from hookd.handlers.http import interpolate_header, url_allowed
from support.fake_http import refused_port

PRE = "PreToolUse-Bash.json"


async def test_2xx_json_deny_blocks_and_posts_the_input(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("deny.json")
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    assert result.decision == "deny"
    assert result.reason == "HTTP-DENY-REASON"
    (request,) = rig.server.requests
    assert request.method == "POST"
    assert request.headers["Content-Type"] == "application/json"
    sent = request.json()
    assert sent["tool_input"] == fixture_input(PRE)["tool_input"]
    assert sent["cwd"] == str(rig.project)


async def test_2xx_json_context_is_passed_on(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("context.json")
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    assert result.decision is None
    assert result.additional_context == ["HTTP-CONTEXT"]


async def test_2xx_empty_body_is_success_without_output(rig: Rig) -> None:
    rig.server.routes["/hook"] = Reply(status=204)
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    (run,) = result.hooks
    assert run.outcome == "success"
    assert run.output is None
    assert result.decision is None and not result.errors


async def test_2xx_non_json_is_a_non_blocking_error(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("not-json.txt")
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error == "HTTP hook must return JSON"
    assert result.decision is None


async def test_2xx_json_that_breaks_the_schema_is_a_non_blocking_error(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("bad-schema.json")
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert result.decision is None


async def test_500_is_a_non_blocking_error_even_with_a_deny_body(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("deny.json", status=500)
    result = await rig.fire(rig.config("http-pretool.json"), PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "500" in run.error
    assert result.decision is None


async def test_500_blocks_with_on_failure_block(rig: Rig) -> None:
    rig.server.routes["/hook"] = data_reply("error.html", status=500)
    result = await rig.fire(rig.config("http-onfailure.json"), PRE)
    assert result.decision == "deny"
    assert result.reason is not None and 'onFailure is "block"' in result.reason


async def test_connection_refused_is_a_non_blocking_error(rig: Rig) -> None:
    with refused_port() as port:
        config = rig.config("http-refused.json", DEADPORT=str(port))
        result = await rig.fire(config, PRE)
    (run,) = result.hooks
    assert run.outcome == "non_blocking_error"
    assert run.error is not None and "ConnectError" in run.error


async def test_timeout_cancels_without_a_decision(rig: Rig) -> None:
    rig.server.routes["/slow"] = data_reply("deny.json", delay=30)
    result = await rig.fire(rig.config("http-timeout.json"), PRE)
    (run,) = result.hooks
    assert run.outcome == "cancelled"
    assert run.timed_out
    assert result.decision is None  # the 30 s reply (a deny) was not awaited


async def test_headers_interpolate_only_allowed_variables(rig: Rig) -> None:
    rig.server.routes["/hook"] = Reply(status=200)
    env = rig.env(HOOK_TOKEN="tok-123", HOOK_SECRET="very-secret")
    with structlog.testing.capture_logs() as logs:
        result = await rig.fire(rig.config("http-headers.json"), PRE, env=env)
    (request,) = rig.server.requests
    assert request.headers["Authorization"] == "Bearer tok-123"
    assert request.headers["X-Both"] == "tok-123-"
    assert request.headers["X-Unlisted"] == "[]"
    assert request.headers["Content-Length"] == str(len(request.body))
    assert "Transfer-Encoding" not in request.headers
    # Header values are secrets: never in the result (HookRef labels) nor in the logs.
    assert b"tok-123" not in msgspec.json.encode(result)
    assert "tok-123" not in json.dumps(logs, default=str)


async def test_header_allowlist_is_intersected_with_settings(rig: Rig) -> None:
    rig.server.routes["/hook"] = Reply(status=200)
    env = rig.env(HOOK_TOKEN="tok-123")
    await rig.fire(rig.config("http-headers-policy.json"), PRE, env=env)
    (request,) = rig.server.requests
    assert request.headers["Authorization"] == "Bearer"


async def test_url_allowlist_runs_only_matching_urls(rig: Rig) -> None:
    rig.server.routes["/allowed/hook"] = data_reply("deny.json")
    rig.server.routes["/elsewhere/hook"] = data_reply("deny.json")
    result = await rig.fire(rig.config("http-allowlist.json"), PRE)
    assert [r.path for r in rig.server.requests] == ["/allowed/hook"]
    allowed, refused = result.hooks
    assert allowed.outcome == "blocking"
    assert result.decision == "deny"
    assert refused.outcome == "non_blocking_error"
    assert refused.error is not None and "allowedHttpHookUrls" in refused.error


async def test_empty_url_allowlist_allows_no_http_hook(rig: Rig) -> None:
    rig.server.routes["/allowed/hook"] = data_reply("deny.json")
    result = await rig.fire(rig.config("http-allowlist-empty.json"), PRE)
    assert rig.server.requests == []
    assert result.decision is None
    assert result.hooks[0].outcome == "non_blocking_error"


async def test_toml_webhook_with_put_method(rig: Rig) -> None:
    rig.server.routes["/put-hook"] = data_reply("deny.json")
    result = await rig.fire(rig.config("webhook-put.toml"), PRE)
    (request,) = rig.server.requests
    assert request.method == "PUT"
    assert result.decision == "deny"
    assert result.hooks[0].hook.name == "audit webhook"


async def test_keep_alive_reuses_one_connection(rig: Rig) -> None:
    rig.server.routes["/hook"] = Reply(status=204)
    config = rig.config("http-pretool.json")
    for _ in range(3):
        await rig.fire(config, PRE)
    assert len(rig.server.requests) == 3
    assert len({r.client_port for r in rig.server.requests}) == 1


@pytest.mark.parametrize(
    ("url", "patterns", "allowed"),
    [
        ("https://hooks.example.com/a", None, True),
        ("https://hooks.example.com/a", [], False),
        ("https://hooks.example.com/a", ["https://hooks.example.com/*"], True),
        ("https://HOOKS.Example.com./a", ["https://hooks.example.com/*"], True),
        ("https://hooks.example.com/a", ["HTTPS://hooks.example.com./*"], True),
        ("https://hooks.example.com/A", ["https://hooks.example.com/a"], False),
        ("https://evil.com/https://hooks.example.com/", ["https://hooks.example.com/*"], False),
        ("https://a.example.com:8443/x", ["https://*.example.com:*/*"], True),
        ("http://hooks.example.com/a", ["https://hooks.example.com/*"], False),
    ],
)
def test_url_allowed(url: str, patterns: list[str] | None, allowed: bool) -> None:
    assert url_allowed(url, patterns) is allowed


def test_interpolate_header_forms() -> None:
    env = {"A": "1", "B": "2"}
    allowed = frozenset({"A"})
    assert interpolate_header("$A ${A} $B ${B} $$A", env, allowed) == "1 1   $1"

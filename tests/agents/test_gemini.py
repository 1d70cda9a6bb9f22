"""Real Gemini CLI 0.61.0, offline, once with its own hooks and once through hookd.

Each scenario runs the pinned ``gemini`` (tests/e2e/package.json) twice
against the scripted fake Gemini API (``fake_gemini.py``) with a fresh HOME:

* **native**: the hooks in Gemini's own format in ``~/.gemini/settings.json``
  (``BeforeTool``, matcher ``run_shell_command``, ``{"decision": "deny"}``,
  timeouts in ms);
* **hookd**: the same hooks written once in Claude Code's format in hookd's
  ``~/.config/hookd/hooks.json`` (``PreToolUse``, matcher ``Bash``,
  ``permissionDecision``, seconds), a real ``hookd serve``, and Gemini wired by
  ``hookctl agents install gemini --user`` — every event goes through
  ``hookd-relay --agent gemini``.

Then it compares what the model received (each request's user text and tool
results), which tools ran with which input (the stream-json ``tool_use`` /
``tool_result`` and the file the shell command writes), which hooks ran, and
how the run ended (exit code, result, errors) — equal, up to the run's own
directory and process ids.  Each scenario also asserts the behaviour itself
(a deny really denied), so two runs that are wrong the same way fail.

Two scenarios start from hooks already in Gemini's own file (user scope, and a
project's ``.gemini/settings.json`` with ``install --project`` and ``hookctl
trust``): the installer moves them into hookd's config and they must behave as
they did.  One runs with hookd stopped after the install: fail-open, and
fail-closed where a hook says ``onFailure: "block"``.

The two runs of a scenario go in parallel (each is ~10 s of Gemini start-up on
this machine; ``-m`` skips the model router's extra classifier call).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from agents.agent_wiring import InstallRelay, through_hookd
from agents.fake_gemini import FakeGeminiApi, Shell, Text, ToolCall, Turn, serve_fake_gemini
from agents.scenario_hooks import group, js, scripted, tail
from e2e.daemon import VENV_BIN, daemon_paths, hookd_daemon
from support.clis import require_cli

ROOT = Path(__file__).resolve().parents[2]
GEMINI = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "gemini"
MODEL = "gemini-2.5-flash"
PROMPT = "Please run the shell command for me."
COMMAND = "echo from-the-model > tool_out.txt; echo ran"
REWRITTEN = "echo rewritten > tool_out.txt; echo ran"

pytestmark = [pytest.mark.slow, pytest.mark.gemini]


def gemini_available() -> bool:
    return GEMINI.exists() and shutil.which("node") is not None


@pytest.fixture(autouse=True)
def _require_gemini() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(gemini_available(), "the Gemini CLI or node")


# --- one run -------------------------------------------------------------------------------


@dataclass
class Run:
    root: Path
    project: Path
    records: Path
    api: FakeGeminiApi
    returncode: int = -1
    stream: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    settings: dict[str, Any] = field(default_factory=lambda: dict(BASE_SETTINGS))
    """Gemini's settings besides ``hooks`` (a scenario adds ``mcpServers``)."""

    def hooks_ran(self) -> list[tuple[str, str]]:
        """(label, phase) of every hook run, sorted (parallel hooks finish in any order)."""
        if not self.records.exists():
            return []
        lines = self.records.read_text(encoding="utf-8").splitlines()
        return sorted((json.loads(x)["label"], json.loads(x)["phase"]) for x in lines if x)

    def tool_file(self) -> str | None:
        path = self.project / "tool_out.txt"
        return path.read_text(encoding="utf-8") if path.exists() else None

    def observed(self) -> dict[str, Any]:
        """Everything compared between the native run and the run through hookd."""
        requests = [
            {
                "user": [
                    t for t in self.api.user_texts(i) if not t.startswith("<session_context>")
                ],
                "tool_results": self.api.tool_results(i),
                "tool_calls": self.api.tool_calls(i),
            }
            for i in range(len(self.api.requests))
        ]
        tools = [
            {
                k: v
                for k, v in e.items()
                if k in ("type", "tool_name", "parameters", "status", "output", "error")
            }
            for e in self.stream
            if e.get("type") in ("tool_use", "tool_result")
        ]
        end = {
            "returncode": self.returncode,
            "result": [e.get("status") for e in self.stream if e.get("type") == "result"],
            "errors": [e.get("message") for e in self.stream if e.get("type") == "error"],
        }
        seen = {
            "model_saw": requests,
            "tools": tools,
            "tool_file": self.tool_file(),
            "hooks": self.hooks_ran(),
            "end": end,
        }
        normalised: dict[str, Any] = normalise(seen, self.root)
        return normalised


def normalise(value: Any, root: Path) -> Any:
    if isinstance(value, str):
        value = value.replace(str(root), "<RUN>")
        value = re.sub(r"(Process Group PGID:) \d+", r"\1 <PGID>", value)
        return re.sub(r"\d{13}", "<MS>", value)  # Gemini's call ids hold the epoch in ms
    if isinstance(value, list):
        return [normalise(v, root) for v in value]
    if isinstance(value, tuple):
        return tuple(normalise(v, root) for v in value)
    if isinstance(value, dict):
        return {k: normalise(v, root) for k, v in value.items()}
    return value


def new_run(turns: list[Turn]) -> Run:
    # Short: hookd's Unix socket lives here (paths must stay under 108 bytes).
    root = Path(tempfile.mkdtemp(prefix="gm", dir="/tmp"))
    project = root / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (root / "home" / ".gemini").mkdir(parents=True)
    return Run(root=root, project=project, records=root / "records.jsonl", api=FakeGeminiApi(turns))


BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


async def run_gemini(run: Run, extra_env: dict[str, str]) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_gemini, run.api)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(run.root / "home"),
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": run.api.base_url,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            **extra_env,
        }
        argv = [
            str(GEMINI),
            "-p",
            PROMPT,
            "-m",
            MODEL,
            "--yolo",
            "--skip-trust",
            "-o",
            "stream-json",
        ]
        with trio.fail_after(240):
            done = await trio.run_process(
                argv,
                cwd=str(run.project),
                env=env,
                stdin=subprocess.DEVNULL,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        nursery.cancel_scope.cancel()
    run.returncode = done.returncode
    run.stderr = done.stderr.decode(errors="replace")
    for line in done.stdout.decode(errors="replace").splitlines():
        if line.startswith("{"):
            run.stream.append(json.loads(line))


async def run_native(run: Run, hooks: dict[str, Any]) -> None:
    settings = {**run.settings, "hooks": hooks}
    (run.root / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
    await run_gemini(run, {})


async def run_through_hookd(
    run: Run, hooks: dict[str, Any], *, daemon_down: bool = False, python_relay: bool = False
) -> None:
    """``hooks``: hookd's config; its ``"gemini"`` key instead holds hooks in Gemini's format,
    written into Gemini's settings for ``hookctl agents install`` to move into hookd's.
    ``daemon_down``: the daemon is not running when Gemini runs.
    ``python_relay``: install the Python relay even where the compiled one is built (the
    installer's default, so the other scenarios cover that one wherever it is built)."""
    home = run.root / "home"
    native = hooks.pop("gemini", None)
    settings = {**run.settings, "hooks": native} if native else run.settings
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    paths = daemon_paths(run.root, home)
    relay: InstallRelay = None if python_relay else "default"
    async with through_hookd("gemini", paths, relay, hooks=hooks, up=not daemon_down):
        if native:
            moved = json.loads((paths.config_home / "hookd" / "hooks.json").read_text())
            assert set(moved["hooks"]) == {"PreToolUse"}, moved
        wired = json.loads((home / ".gemini" / "settings.json").read_text())
        assert wired["security"] == BASE_SETTINGS["security"]
        assert all("--agent gemini" in g[0]["hooks"][0]["command"] for g in wired["hooks"].values())
        await run_gemini(run, {"HOOKD_SOCKET": str(paths.socket)})


Hooks = dict[str, Any]
Scenario = Callable[[Run], tuple[Hooks, Hooks]]


def hook(run: Run, label: str, *args: str) -> str:
    return scripted(run.records, label, *args)


async def compare(
    scenario: Scenario, turns: list[Turn], *, python_relay: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    native, hookd = new_run(turns), new_run(turns)
    native_hooks, _ = scenario(native)
    _, hookd_hooks = scenario(hookd)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_native, native, native_hooks)
        nursery.start_soon(
            functools.partial(run_through_hookd, hookd, hookd_hooks, python_relay=python_relay)
        )
    seen_native, seen_hookd = native.observed(), hookd.observed()
    assert seen_hookd == seen_native, (
        f"native stderr:\n{native.stderr[-3000:]}\nhookd stderr:\n{hookd.stderr[-3000:]}\n"
        f"daemon log:\n{tail(hookd.root / 'hookd.log')}"
    )
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)
    return seen_native, seen_hookd


TOOL_TURNS: list[Turn] = [Shell(COMMAND), Text("All done.")]


# --- the scenarios -------------------------------------------------------------------------


async def test_shell_deny_with_a_matcher_then_a_stop_continuation() -> None:
    """A deny on the shell tool, next to a hook on another tool that must not fire; then a
    Stop hook (AfterAgent) that sends the model back to work once."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        deny = hook(run, "deny-shell", "--stderr", "  no shell here  \n", "--exit", "2")
        other = hook(run, "read-only", "--stderr", "wrong tool\n", "--exit", "2")
        once = ["--unless-stop-hook-active"]
        native_stop = hook(
            run, "stop", *once, "--stdout", js({"decision": "deny", "reason": "Also say DONE."})
        )
        claude_stop = hook(run, "stop", *once, "--stderr", "Also say DONE.\n", "--exit", "2")
        native = {
            "BeforeTool": [group(deny, "run_shell_command"), group(other, "read_file")],
            "AfterAgent": [group(native_stop)],
        }
        hookd = {
            "PreToolUse": [group(deny, "Bash"), group(other, "Read")],
            "Stop": [group(claude_stop)],
        }
        return native, hookd

    seen, _ = await compare(scenario, [Shell(COMMAND), Text("All done."), Text("DONE.")])
    assert seen["tool_file"] is None
    assert seen["model_saw"][1]["tool_results"] == [
        {"error": "Tool execution blocked: no shell here"}
    ]
    assert len(seen["model_saw"]) == 3
    assert "Also say DONE." in seen["model_saw"][2]["user"]
    assert seen["hooks"] == [
        ("deny-shell", "answered"),
        ("deny-shell", "start"),
        ("stop", "answered"),
        ("stop", "start"),
        ("stop", "start"),
    ]


async def test_rewrite_added_context_and_a_timed_out_hook() -> None:
    """Claude Code's ``permissionDecision: "allow"`` + ``updatedInput`` is Gemini's
    ``tool_input``; context from SessionStart, the prompt hook (plain stdout in Claude
    Code's format) and after the tool reaches the model where Gemini puts it.  Beside the
    rewrite, a hook past its timeout (5000 ms natively, 5 s in hookd's config) that would
    have blocked is killed: the call goes on (fails open)."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        native_rewrite = js({"hookSpecificOutput": {"tool_input": {"command": REWRITTEN}}})
        claude_rewrite = js(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": {"command": REWRITTEN},
                }
            }
        )
        # 5 s, not less: the hook must have started (and logged so) before it is killed,
        # even on a loaded machine where a Python start takes a second or more.
        slow = hook(run, "slow", "--sleep", "60", "--stderr", "too late\n", "--exit", "2")

        def context(event: str, text: str) -> str:
            return js({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})

        native = {
            "SessionStart": [
                group(hook(run, "start", "--stdout", context("SessionStart", "CTX-START")))
            ],
            "BeforeAgent": [
                group(hook(run, "prompt", "--stdout", context("BeforeAgent", "CTX-PROMPT")))
            ],
            "BeforeTool": [
                group(hook(run, "rewrite", "--stdout", native_rewrite), "run_shell_command"),
                group(slow, "run_shell_command", timeout=5000),
            ],
            "AfterTool": [group(hook(run, "after", "--stdout", context("AfterTool", "CTX-TOOL")))],
        }
        hookd = {
            "SessionStart": [
                group(hook(run, "start", "--stdout", context("SessionStart", "CTX-START")))
            ],
            "UserPromptSubmit": [group(hook(run, "prompt", "--stdout", "CTX-PROMPT\n"))],
            "PreToolUse": [
                group(hook(run, "rewrite", "--stdout", claude_rewrite), "Bash"),
                group(slow, "Bash", timeout=5),
            ],
            "PostToolUse": [
                group(hook(run, "after", "--stdout", context("PostToolUse", "CTX-TOOL")))
            ],
        }
        return native, hookd

    seen, _ = await compare(scenario, TOOL_TURNS)
    assert seen["tool_file"] == "rewritten\n"
    first, second = seen["model_saw"][0], seen["model_saw"][1]
    assert any("CTX-START" in t for t in first["user"]), first
    assert any("CTX-PROMPT" in t for t in first["user"]), first
    (result,) = second["tool_results"]
    assert "<hook_context>CTX-TOOL</hook_context>" in result["output"]
    assert "were modified by a hook" in result["output"]
    assert ("slow", "start") in seen["hooks"]
    assert ("slow", "answered") not in seen["hooks"]


async def test_user_prompt_block() -> None:
    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        native_block = hook(
            run, "block", "--stdout", js({"decision": "deny", "reason": "not this prompt"})
        )
        claude_block = hook(
            run, "block", "--stdout", js({"decision": "block", "reason": "not this prompt"})
        )
        return {"BeforeAgent": [group(native_block)]}, {"UserPromptSubmit": [group(claude_block)]}

    seen, _ = await compare(scenario, TOOL_TURNS)
    assert seen["model_saw"] == []
    assert seen["end"]["returncode"] == 0
    assert any("not this prompt" in str(e) for e in seen["end"]["errors"]), seen["end"]


async def test_hooks_already_in_gemini_move_into_hookd_and_keep_working() -> None:
    """The install story: the user's own Gemini hooks (a shell matcher, a timeout in ms)
    are moved by ``hookctl agents install gemini`` into hookd's config, translated
    (matcher ``Bash``, seconds), and behave as they did.  Through the Python relay (the
    other scenarios use the installer's default: the compiled one where it is built)."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        deny = hook(run, "deny-shell", "--stderr", "moved guard says no\n", "--exit", "2")
        slow = hook(run, "slow", "--sleep", "60", "--exit", "2")
        other = hook(run, "read-only", "--exit", "2")
        native = {
            "BeforeTool": [
                group(deny, "run_shell_command", timeout=30000),
                group(slow, timeout=5000),
                group(other, "read_file"),
            ]
        }
        return native, {"gemini": native}

    seen, _ = await compare(scenario, TOOL_TURNS, python_relay=True)
    assert seen["tool_file"] is None
    assert seen["model_saw"][1]["tool_results"] == [
        {"error": "Tool execution blocked: moved guard says no"}
    ]


@pytest.mark.parametrize("relay", ["default", "python"])
async def test_daemon_down_fails_open_or_closed_as_configured(relay: str) -> None:
    """hookd stopped after the install: an event whose hooks include ``onFailure: "block"``
    (the shell guard, so BeforeTool was wired ``--fail-closed``) blocks, in Gemini's terms;
    every other event fails open, and the run goes on.  Both relays: each has its own
    fail-open and fail-closed code."""
    run = new_run(TOOL_TURNS)
    guard = {"type": "command", "command": hook(run, "guard"), "onFailure": "block"}
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [guard]}],
        "UserPromptSubmit": [group(hook(run, "prompt"))],
    }
    await run_through_hookd(run, hooks, daemon_down=True, python_relay=relay == "python")
    wired = json.loads((run.root / "home" / ".gemini" / "settings.json").read_text())
    command = wired["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    compiled = (VENV_BIN / "hookd-relay-c").exists() and relay == "default"
    assert ("hookd-relay-c" in command) == compiled, command
    assert wired["hooks"]["BeforeTool"][0]["hooks"][0]["command"].endswith("--fail-closed")
    assert not wired["hooks"]["BeforeAgent"][0]["hooks"][0]["command"].endswith("--fail-closed")
    seen = run.observed()
    assert seen["hooks"] == []
    assert seen["tool_file"] is None
    (result,) = seen["model_saw"][1]["tool_results"]
    assert result["error"].startswith("Tool execution blocked: hookd is not running"), result
    assert seen["end"]["returncode"] == 0
    assert "hookd is not running" in run.stderr  # the fail-open systemMessage, shown
    shutil.rmtree(run.root, ignore_errors=True)


async def test_project_hooks_move_into_the_project_s_hookd_config() -> None:
    """The project scope: a project's own ``.gemini/settings.json`` hooks (which Gemini
    loads only in a trusted workspace) are moved by ``hookctl agents install gemini
    --project`` into ``<project>/.claude/hooks.json``, which hookd runs once
    ``hookctl trust`` says so — and they deny as they did natively."""
    turns: list[Turn] = [Shell(COMMAND), Text("All done.")]
    native, hookd = new_run(turns), new_run(turns)
    trust = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def project_hooks(run: Run) -> dict[str, Any]:
        deny = hook(run, "project-guard", "--stderr", "not in this project\n", "--exit", "2")
        return {"BeforeTool": [group(deny, "run_shell_command")]}

    async def run_native_project() -> None:
        home_settings = run_root_settings(native)
        home_settings.write_text(json.dumps(BASE_SETTINGS))
        (native.project / ".gemini").mkdir()
        (native.project / ".gemini" / "settings.json").write_text(
            json.dumps({"hooks": project_hooks(native)})
        )
        await run_gemini(native, trust)

    async def run_hookd_project() -> None:
        home = hookd.root / "home"
        run_root_settings(hookd).write_text(json.dumps(BASE_SETTINGS))
        (hookd.project / ".gemini").mkdir()
        project_file = hookd.project / ".gemini" / "settings.json"
        project_file.write_text(json.dumps({"hooks": project_hooks(hookd)}))
        paths = daemon_paths(hookd.root, home)
        (paths.config_home / "hookd").mkdir(parents=True)
        async with hookd_daemon(paths) as daemon:
            for argv in (
                ["agents", "install", "gemini", "--project", "--socket", str(daemon.socket)],
                ["trust", str(hookd.project)],
            ):
                done = await trio.run_process(
                    [str(VENV_BIN / "hookctl"), *argv],
                    env=daemon.env(),
                    cwd=str(hookd.project),
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                )
                assert done.returncode == 0, done.stderr.decode() + done.stdout.decode()
            moved = json.loads((hookd.project / ".claude" / "hooks.json").read_text())
            assert [g["matcher"] for g in moved["hooks"]["PreToolUse"]] == ["Bash"]
            assert "--agent gemini" in project_file.read_text()
            await run_gemini(hookd, {**trust, "HOOKD_SOCKET": str(daemon.socket)})

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_native_project)
        nursery.start_soon(run_hookd_project)
    seen = native.observed()
    assert hookd.observed() == seen, f"{native.stderr[-2000:]}\n{hookd.stderr[-2000:]}"
    assert seen["tool_file"] is None
    assert seen["model_saw"][1]["tool_results"] == [
        {"error": "Tool execution blocked: not in this project"}
    ]
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)


def run_root_settings(run: Run) -> Path:
    return run.root / "home" / ".gemini" / "settings.json"


# --- one guard for MCP tools (issue 30) ------------------------------------------------------

FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"


async def test_a_claude_code_mcp_matcher_guards_gemini_s_mcp_tool() -> None:
    """Gemini names MCP server ``srv``'s tool ``echo`` ``mcp_srv_echo``; hookd's config says
    ``mcp__srv__.*`` as Claude Code's docs do, and the same guard denies the same call as
    Gemini's own hook on ``mcp_srv_echo``: the server never runs it."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        server = {"command": sys.executable, "args": [str(FAKE_MCP)], "trust": True}
        server["env"] = {"MCP_LOG": str(run.root / "mcp.log")}
        run.settings = {**BASE_SETTINGS, "mcpServers": {"srv": server}}
        deny = hook(run, "guard-mcp", "--stderr", "no echo here\n", "--exit", "2")
        return (
            {"BeforeTool": [group(deny, "mcp_srv_echo")]},
            {"PreToolUse": [group(deny, "mcp__srv__.*")]},
        )

    turns: list[Turn] = [ToolCall("^mcp_srv_echo$", {"text": "MCP-MARK"}), Text("All done.")]
    seen, _ = await compare(scenario, turns)
    assert ("guard-mcp", "start") in seen["hooks"]
    assert seen["model_saw"][1]["tool_results"] == [
        {"error": "Tool execution blocked: no echo here"}
    ]


async def test_an_allow_beside_a_deny_keeps_both_reasons_as_gemini_does() -> None:
    """One hook allows with a reason, another denies: Gemini's block message carries both
    hooks' reasons, one a line, the allow's too; through hookd the same."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        def says(label: str, decision: str, reason: str) -> str:
            native = {"decision": decision, "reason": reason}
            return hook(run, label, "--stdout", js(native))

        def answers(label: str, decision: str, reason: str) -> str:
            out = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": reason,
                }
            }
            return hook(run, label, "--stdout", js(out))

        return (
            {
                "BeforeTool": [
                    group(says("allow", "allow", "ALLOW-REASON"), "run_shell_command"),
                    group(says("deny", "deny", "DENY-REASON"), "run_shell_command"),
                ]
            },
            {
                "PreToolUse": [
                    group(answers("allow", "allow", "ALLOW-REASON"), "Bash"),
                    group(answers("deny", "deny", "DENY-REASON"), "Bash"),
                ]
            },
        )

    seen, _ = await compare(scenario, TOOL_TURNS)
    assert seen["tool_file"] is None

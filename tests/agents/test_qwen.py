"""Real Qwen Code 0.24.4, offline, once with its own hooks and once through hookd.

Each scenario runs the pinned ``qwen`` (tests/e2e/package.json) twice against
the scripted fake Responses API (``fake_responses.py``: Qwen Code speaks it
with ``--auth-type openai-responses``, ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/
``OPENAI_MODEL``; no login) with a fresh HOME:

* **native**: the hooks in Qwen's own ``~/.qwen/settings.json`` — Claude Code's
  dialect, matchers on Qwen's tool names (``run_shell_command``);
* **hookd**: the same hooks written once in hookd's ``~/.config/hookd/hooks.json``
  (matchers on Claude Code's names: ``Bash``), a real ``hookd serve``, and Qwen
  wired by ``hookctl agents install qwen --user`` — every event goes through
  ``hookd-relay --agent qwen``.

Then it compares what the model received (each request's tool calls, tool
results and the user-message parts a hook can cause), which tools ran (the
stream-json ``tool_use``/``tool_result`` blocks and the file the shell command
writes), which hooks ran, and how the run ended — equal, up to the run's own
directory.  Each scenario also asserts the behaviour itself (a deny really
denied), so two runs that are wrong the same way fail.

Where Qwen Code cannot do what Claude Code's answer asks, hookd's answer
deliberately differs (docs/agents.md, "Deliberate differences"): Qwen Code
0.24.4 reads no ``updatedInput`` on PreToolUse (it runs the call as the model
wrote it), so through hookd a rewrite blocks the call; that scenario asserts
the difference instead of equality.

Qwen offers an MCP server's tools to the model through its deferred-tool
bridge (``tool_call`` with ``{"name": "mcp__srv__echo", …}``); its hooks see
the underlying tool, named as Claude Code names it.  The two runs of a
scenario go in parallel.
"""

from __future__ import annotations

import difflib
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

from agents.agent_wiring import through_hookd
from agents.fake_responses import FakeResponsesApi, Text, ToolCall, Turn, serve_fake_responses
from agents.scenario_hooks import group, js, scripted, tail
from e2e.daemon import daemon_paths
from support.clis import require_cli

ROOT = Path(__file__).resolve().parents[2]
QWEN = ROOT / "tests" / "e2e" / "node_modules" / ".bin" / "qwen"
FAKE_MCP = Path(__file__).resolve().parent / "fake_mcp.py"
PROMPT = "Please run the shell command for me."
# No output on stdout: Qwen's shell sometimes reports a command's output as "(empty)"
# on a loaded machine, which would make two equal runs differ.
COMMAND = "echo from-the-model > tool_out.txt"
REWRITTEN = "echo rewritten > tool_out.txt"

pytestmark = [pytest.mark.slow, pytest.mark.qwen]


def qwen_available() -> bool:
    return QWEN.exists() and shutil.which("node") is not None


@pytest.fixture(autouse=True)
def _require_qwen() -> None:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(qwen_available(), "Qwen Code or node")


def shell(command: str) -> ToolCall:
    """The model calls Qwen's shell tool (``run_shell_command``, which takes ``command``)."""
    return ToolCall("^run_shell_command$", {"command": command})


def mcp_echo(text: str) -> ToolCall:
    """The model calls MCP server ``srv``'s ``echo`` through Qwen's deferred-tool bridge."""
    return ToolCall("^tool_call$", {"name": "mcp__srv__echo", "arguments": {"text": text}})


TOOL_TURNS: list[Turn] = [shell(COMMAND), Text("All done.")]


# --- one run -------------------------------------------------------------------------------


@dataclass
class Run:
    root: Path
    project: Path
    records: Path
    api: FakeResponsesApi
    returncode: int = -1
    stream: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    settings: dict[str, Any] = field(default_factory=lambda: dict(BASE_SETTINGS))
    """Qwen's settings besides ``hooks`` (a scenario adds ``mcpServers``)."""

    def hooks_ran(self) -> list[tuple[str, str]]:
        """(label, phase) of every hook run, sorted (parallel hooks finish in any order)."""
        if not self.records.exists():
            return []
        lines = self.records.read_text(encoding="utf-8").splitlines()
        return sorted((json.loads(x)["label"], json.loads(x)["phase"]) for x in lines if x)

    def hook_inputs(self) -> list[dict[str, Any]]:
        if not self.records.exists():
            return []
        lines = self.records.read_text(encoding="utf-8").splitlines()
        return [json.loads(x) for x in lines if x]

    def tool_file(self) -> str | None:
        path = self.project / "tool_out.txt"
        return path.read_text(encoding="utf-8") if path.exists() else None

    def mcp_calls(self) -> list[str]:
        path = self.root / "mcp.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def model_saw(self) -> list[dict[str, Any]]:
        """Per request: the tool calls and results, the user-message parts a hook can
        cause (Qwen's own reminders — skills, date — left out), and the hook context Qwen
        puts in the system instructions (SessionStart's)."""
        seen = []
        for body in self.api.requests:
            instructions = str(body.get("instructions", ""))
            system = [m.group(0) for m in HOOK_CONTEXT.finditer(instructions)]
            calls: list[dict[str, Any]] = []
            results: list[Any] = []
            user: list[str] = []
            for item in body.get("input", []):
                if not isinstance(item, dict):
                    continue
                if item.get("type") == "function_call":
                    calls.append({"name": item.get("name"), "arguments": item.get("arguments")})
                elif item.get("type") == "function_call_output":
                    results.append(item.get("output"))
                elif item.get("role") == "user":
                    user.extend(p for p in _parts(item.get("content")) if _from_hook(p))
            seen.append(
                {"system": system, "tool_calls": calls, "tool_results": results, "user": user}
            )
        return seen

    def observed(self) -> dict[str, Any]:
        """Everything compared between the native run and the run through hookd."""
        kept = ("type", "name", "input", "is_error", "content")
        tools = [
            {k: v for k, v in block.items() if k in kept}
            for event in self.stream
            if event.get("type") in ("assistant", "user")
            for block in (event.get("message") or {}).get("content") or []
            if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result")
        ]
        results = [e for e in self.stream if e.get("type") == "result"]
        end = {
            "returncode": self.returncode,
            "result": [(e.get("subtype"), e.get("is_error"), e.get("result")) for e in results],
            "error": [e.get("error") for e in results if e.get("error")],
        }
        seen = {
            "model_saw": self.model_saw(),
            "tools": tools,
            "tool_file": self.tool_file(),
            "mcp_calls": self.mcp_calls(),
            "hooks": self.hooks_ran(),
            "end": end,
        }
        normalised: dict[str, Any] = normalise(seen, self.root)
        return normalised


def _parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return []


HOOK_CONTEXT = re.compile(r"<qwen:([\w-]+-context)(?: [^>\n]*)?>\n.*?\n</qwen:\1>", re.S)
"""How Qwen wraps a hook's context for the model (``<qwen:session-start-context …>``)."""
MARKERS = re.compile(r"MARK|CTX-|DONE|REASON|BLOCK|not this prompt")
"""What the scenarios' hooks say: a user-message part holding one was caused by a hook."""


def _from_hook(text: str) -> bool:
    """A user-message part a hook can cause: the prompt, or text carrying a marker (Qwen's
    own reminders — skills, the date — are left out)."""
    return PROMPT in text or MARKERS.search(text) is not None


def normalise(value: Any, root: Path) -> Any:
    if isinstance(value, str):
        value = value.replace(str(root), "<RUN>")
        return re.sub(r"toolu_\d+_\w+", "toolu_<ID>", value)
    if isinstance(value, list):
        return [normalise(v, root) for v in value]
    if isinstance(value, tuple):
        return tuple(normalise(v, root) for v in value)
    if isinstance(value, dict):
        return {k: normalise(v, root) for k, v in value.items()}
    return value


def new_run(turns: list[Turn]) -> Run:
    # Short: hookd's Unix socket lives here (paths must stay under 108 bytes).
    root = Path(tempfile.mkdtemp(prefix="qw", dir="/tmp"))
    project = root / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (root / "home" / ".qwen").mkdir(parents=True)
    return Run(
        root=root, project=project, records=root / "records.jsonl", api=FakeResponsesApi(turns)
    )


BASE_SETTINGS: dict[str, Any] = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
}


async def run_qwen(run: Run, extra_env: dict[str, str]) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_responses, run.api)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(run.root / "home"),
            "OPENAI_API_KEY": "sk-fake",
            "OPENAI_BASE_URL": run.api.base_url,
            "OPENAI_MODEL": "gpt-fake",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            # qwen's cli.js otherwise starts a second node on itself (its memory settings)
            # and waits for it: one CLI start-up's CPU per run for nothing the hooks see
            # (test_gemini says the same with GEMINI_CLI_NO_RELAUNCH).
            "QWEN_CODE_NO_RELAUNCH": "true",
            **extra_env,
        }
        argv = [
            str(QWEN),
            "--auth-type",
            "openai-responses",
            "--yolo",
            "-o",
            "stream-json",
            PROMPT,
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


def settings_file(run: Run) -> Path:
    return run.root / "home" / ".qwen" / "settings.json"


async def run_native(run: Run, hooks: dict[str, Any]) -> None:
    settings_file(run).write_text(json.dumps({**run.settings, "hooks": hooks}))
    await run_qwen(run, {})


async def run_through_hookd(run: Run, hooks: dict[str, Any]) -> None:
    """``hooks``: hookd's config; its ``"qwen"`` key instead holds hooks in Qwen's own file,
    for ``hookctl agents install`` to move into hookd's."""
    native = hooks.pop("qwen", None)
    settings = {**run.settings, "hooks": native} if native else run.settings
    settings_file(run).write_text(json.dumps(settings))
    paths = daemon_paths(run.root, run.root / "home")
    async with through_hookd("qwen", paths, "default", hooks=hooks):
        wired = json.loads(settings_file(run).read_text())
        assert "--agent qwen" in json.dumps(wired["hooks"]), wired
        await run_qwen(run, {"HOOKD_SOCKET": str(paths.socket)})


Hooks = dict[str, Any]
Scenario = Callable[[Run], tuple[Hooks, Hooks]]


def hook(run: Run, label: str, *args: str) -> str:
    return scripted(run.records, label, *args)


def with_mcp(run: Run) -> None:
    server = {"command": sys.executable, "args": [str(FAKE_MCP)], "trust": True}
    server["env"] = {"MCP_LOG": str(run.root / "mcp.log")}
    run.settings = {**BASE_SETTINGS, "mcpServers": {"srv": server}}


async def both(scenario: Scenario, turns: list[Turn]) -> tuple[Run, Run]:
    native, hookd = new_run(turns), new_run(turns)
    native_hooks, _ = scenario(native)
    _, hookd_hooks = scenario(hookd)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_native, native, native_hooks)
        nursery.start_soon(functools.partial(run_through_hookd, hookd, hookd_hooks))
    return native, hookd


def difference(native: dict[str, Any], hookd: dict[str, Any]) -> str:
    """What differs, line by line (native ``-``, through hookd ``+``)."""
    before, after = (json.dumps(x, indent=1, sort_keys=True).splitlines() for x in (native, hookd))
    return "\n".join(difflib.unified_diff(before, after, "native", "hookd", lineterm="", n=2))


def why(native: Run, hookd: Run) -> str:
    return (
        f"native stderr:\n{native.stderr[-3000:]}\nhookd stderr:\n{hookd.stderr[-3000:]}\n"
        f"daemon log:\n{tail(hookd.root / 'hookd.log')}"
    )


async def compare(scenario: Scenario, turns: list[Turn]) -> dict[str, Any]:
    native, hookd = await both(scenario, turns)
    seen_native, seen_hookd = native.observed(), hookd.observed()
    assert seen_hookd == seen_native, f"{difference(seen_native, seen_hookd)}\n{why(native, hookd)}"
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)
    return seen_native


# --- the scenarios -------------------------------------------------------------------------


async def test_shell_deny_by_exit_2_with_a_matcher_then_a_stop_continuation() -> None:
    """An exit-2 deny on the shell tool, next to a hook on another tool that must not fire;
    then a Stop hook that sends the model back to work once."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        deny = hook(run, "deny-shell", "--stderr", "  no shell here  \n", "--exit", "2")
        other = hook(run, "read-only", "--stderr", "wrong tool\n", "--exit", "2")
        stop = hook(
            run, "stop", "--unless-stop-hook-active", "--stderr", "Also say DONE.\n", "--exit", "2"
        )
        native = {
            "PreToolUse": [group(deny, "run_shell_command"), group(other, "read_file")],
            "Stop": [group(stop)],
        }
        hookd = {
            "PreToolUse": [group(deny, "Bash"), group(other, "Read")],
            "Stop": [group(stop)],
        }
        return native, hookd

    seen = await compare(scenario, [shell(COMMAND), Text("All done."), Text("DONE.")])
    assert seen["tool_file"] is None
    assert seen["model_saw"][1]["tool_results"] == ["no shell here"], seen["model_saw"]
    assert len(seen["model_saw"]) == 3, seen["model_saw"]
    assert any("Also say DONE." in t for t in seen["model_saw"][2]["user"]), seen["model_saw"]
    assert ("read-only", "start") not in seen["hooks"]
    assert seen["hooks"].count(("stop", "start")) == 2


async def test_context_on_an_allowed_call_and_a_post_tool_block_qwen_ignores() -> None:
    """An allowing hook lets the call run; context from SessionStart (into the system
    instructions), the prompt hook (plain stdout, which Qwen and Claude Code both take as
    context) and PostToolUse (after the tool's output) reaches the model where Qwen puts
    it, and PostToolBatch's after the batch; PostToolUse's ``decision: "block"`` does
    nothing in Qwen, natively as through hookd (which records the loss)."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        def context(event: str, text: str) -> str:
            out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
            return hook(run, event, "--stdout", js(out))

        allow = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "fine",
            }
        }
        # Qwen reads no block after the tool ran (only ``continue: false`` stops there):
        # the context reaches the model, the block and its reason do not.
        after = {
            "decision": "block",
            "reason": "POST-BLOCK",
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX-TOOL"},
        }
        common = {
            "SessionStart": [group(context("SessionStart", "CTX-START"))],
            "UserPromptSubmit": [group(hook(run, "prompt", "--stdout", "CTX-PROMPT\n"))],
            "PostToolUse": [group(hook(run, "after", "--stdout", js(after)))],
            "PostToolBatch": [group(context("PostToolBatch", "CTX-BATCH"))],
        }
        allowing = hook(run, "allow", "--stdout", js(allow))
        native = {**common, "PreToolUse": [group(allowing, "run_shell_command")]}
        hookd = {**common, "PreToolUse": [group(allowing, "Bash")]}
        return native, hookd

    seen = await compare(scenario, TOOL_TURNS)
    assert seen["tool_file"] == "from-the-model\n"
    first, second = seen["model_saw"][0], seen["model_saw"][1]
    assert any("CTX-START" in t for t in first["system"]), first
    assert any("CTX-PROMPT" in t for t in first["user"]), first
    assert "POST-BLOCK" not in json.dumps(seen["model_saw"])
    # PostToolBatch (wired for Qwen since it was seen firing) adds its context after
    # PostToolUse's, both after the tool's output.
    assert ("PostToolBatch", "answered") in seen["hooks"]
    assert second["tool_results"][0].endswith("\n\nCTX-TOOL\n\nCTX-BATCH"), second


async def test_user_prompt_block() -> None:
    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        block = hook(
            run, "block", "--stdout", js({"decision": "block", "reason": "not this prompt"})
        )
        return {"UserPromptSubmit": [group(block)]}, {"UserPromptSubmit": [group(block)]}

    seen = await compare(scenario, TOOL_TURNS)
    # Qwen sends nothing to the model and ends the run quietly: the reason shows nowhere
    # in a headless run (natively as through hookd).
    assert seen["model_saw"] == []
    assert seen["tool_file"] is None
    assert seen["hooks"] == [("block", "answered"), ("block", "start")]
    assert seen["end"]["result"] == [("success", False, "")], seen["end"]


async def test_a_claude_code_mcp_matcher_guards_qwen_s_mcp_tool() -> None:
    """Qwen names MCP server ``srv``'s tool ``echo`` as Claude Code does,
    ``mcp__srv__echo``, also when the model reaches it through the deferred-tool bridge
    (``tool_call``): hookd's ``mcp__srv__.*`` denies the same call as Qwen's own hook on
    ``mcp__srv__echo`` — a JSON ``permissionDecision: "deny"`` whose reason the model
    reads as the tool's result — and the server never runs it."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        with_mcp(run)
        out = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "DENY-REASON",
            }
        }
        deny = hook(run, "guard-mcp", "--stdout", js(out))
        return (
            {"PreToolUse": [group(deny, "mcp__srv__echo")]},
            {"PreToolUse": [group(deny, "mcp__srv__.*")]},
        )

    seen = await compare(scenario, [mcp_echo("MCP-MARK"), Text("All done.")])
    assert ("guard-mcp", "start") in seen["hooks"]
    assert seen["mcp_calls"] == []
    assert seen["model_saw"][1]["tool_results"] == ["DENY-REASON"], seen["model_saw"]


async def test_a_rewrite_qwen_cannot_apply_blocks_through_hookd() -> None:
    """Qwen Code 0.24.4 reads no ``updatedInput`` on PreToolUse: natively the call runs as
    the model wrote it, the sanitising hook silently does nothing.  Through hookd the
    rewrite is a capability Qwen lacks, so the call is blocked, saying why (deliberate,
    docs/agents.md)."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        rewrite = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": REWRITTEN},
            }
        }
        command = hook(run, "rewrite", "--stdout", js(rewrite))
        return (
            {"PreToolUse": [group(command, "run_shell_command")]},
            {"PreToolUse": [group(command, "Bash")]},
        )

    native, hookd = await both(scenario, TOOL_TURNS)
    assert native.tool_file() == "from-the-model\n", why(native, hookd)
    assert hookd.tool_file() is None, why(native, hookd)
    (result,) = hookd.model_saw()[1]["tool_results"]
    assert "rewrote" in result, result
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)


async def test_a_deny_beside_a_later_allow_denies_through_hookd() -> None:
    """Two PreToolUse hooks, a deny then an allow: Qwen 0.24.4 lets the last hook's
    ``permissionDecision`` win, so natively the denied call runs.  Through hookd the deny
    wins in any order, as in Claude Code (deliberate: a guard must not be outvoted by the
    hook after it)."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        def says(decision: str) -> str:
            out = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": f"{decision.upper()}-REASON",
                }
            }
            return hook(run, decision, "--stdout", js(out))

        native = {"PreToolUse": [group(says(d), "run_shell_command") for d in ("deny", "allow")]}
        hookd = {"PreToolUse": [group(says(d), "Bash") for d in ("deny", "allow")]}
        return native, hookd

    native, hookd = await both(scenario, TOOL_TURNS)
    assert native.tool_file() == "from-the-model\n", why(native, hookd)
    assert hookd.tool_file() is None, why(native, hookd)
    assert hookd.model_saw()[1]["tool_results"] == ["DENY-REASON"], why(native, hookd)
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)


async def test_hooks_already_in_qwen_move_into_hookd_and_keep_working() -> None:
    """The install story: the user's own Qwen hooks (the shell named by Qwen's display
    name ``Shell``, which its matchers accept; a timeout in Qwen's legacy milliseconds)
    are moved by ``hookctl agents install qwen`` into hookd's config, translated (matcher
    ``Bash``, seconds), and behave as they did."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        deny = hook(run, "deny-shell", "--stderr", "moved guard says no\n", "--exit", "2")
        other = hook(run, "read-only", "--exit", "2")
        native = {
            "PreToolUse": [
                group(deny, "Shell", timeout=30000),
                group(other, "read_file"),
            ]
        }
        return native, {"qwen": native}

    seen = await compare(scenario, TOOL_TURNS)
    assert seen["tool_file"] is None
    assert seen["model_saw"][1]["tool_results"] == ["moved guard says no"], seen["model_saw"]

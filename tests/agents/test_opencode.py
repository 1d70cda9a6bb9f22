"""Real opencode 1.18.33, offline, once with a plain hook plugin and once through hookd.

opencode has **no command hooks**: its hooks are functions of in-process JS plugins.  So
"native" here is a hand-written plugin (``opencode_native.js``) that runs the same
command hooks the way Claude Code would — exit 2 blocks with ``[<command>]: <stderr>``,
a JSON deny blocks with its reason, ``updatedInput`` rewrites, ``additionalContext``
is context — with matchers on opencode's own tool names (``bash``, ``srv_echo``), as a
user porting their hooks by hand would write them.  The other run has the same hooks in
hookd's config, in Claude Code's words (``Bash``, ``mcp__srv__echo``), a real ``hookd
serve``, and opencode wired by ``hookctl agents install opencode --user``: hookd's
plugin (``hookd/doors/opencode_plugin/hookd.js``) relays every hook through
``hookd-relay --agent opencode``.

Each scenario compares what the model received (every request's messages: text, tool
calls, tool results), what ran (the file the shell command writes, the MCP server's
log), which hooks ran and how ``opencode run`` ended — equal up to the run's own
directory — and asserts the behaviour itself, so two runs wrong the same way fail.

Offline: the model is ``tests/e2e/fake_api.py`` (Anthropic Messages API) as a custom
provider in the project's ``opencode.json``; ``OPENCODE_DISABLE_AUTOUPDATE``,
``OPENCODE_DISABLE_MODELS_FETCH`` and ``OPENCODE_DISABLE_DEFAULT_PLUGINS`` keep it off
the network, and each config folder gets an empty ``node_modules`` and a lock naming
``@opencode-ai/plugin`` (Kilo's ``@kilocode/plugin``), without which opencode would ``npm
install`` that package into the folder before loading a plugin from it (the plugins here import
nothing).  ``KILO_TELEMETRY_LEVEL=off``: Kilo would wait 2 s at exit for PostHog.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio

from agents.agent_wiring import through_hookd
from agents.scenario_hooks import group, js, scripted, tail
from e2e.daemon import daemon_paths
from e2e.fake_api import FakeMessagesApi, Side, Turn, serve_fake_api
from support.clis import require_cli

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / "tests" / "e2e" / "node_modules"


@dataclass(frozen=True)
class Agent:
    """opencode, or its fork Kilo Code CLI: the same plugin door, other names and folders."""

    name: str
    binary: Path
    config_file: str
    user_folder: str
    project_folder: str
    env_prefix: str


OPENCODE = Agent(
    "opencode", MODULES / ".bin" / "opencode", "opencode.json", "opencode", ".opencode", "OPENCODE"
)
# Kilo's 7.8.1 has no Linux binary on the registry: its platform package, at 7.7.9, is pinned.
KILO = Agent("kilo", MODULES / "@kilocode" / "cli-linux-x64" / "bin" / "kilo", "kilo.json",
             "kilo", ".kilo", "KILO")  # fmt: skip
HERE = Path(__file__).resolve().parent
NATIVE_PLUGIN = HERE / "opencode_native.js"
FAKE_MCP = HERE / "fake_mcp.py"
PROMPT = "Please run the shell command for me."
COMMAND = "echo from-the-model > tool_out.txt; echo ran"
REWRITTEN = "echo rewritten > tool_out.txt; echo ran"

pytestmark = [pytest.mark.slow, pytest.mark.opencode]


def require(agent: Agent) -> Agent:
    """Skip without the CLI on a developer's machine; fail in CI (scripts/check installs it)."""
    require_cli(agent.binary.exists(), agent.name)
    return agent


# --- one run -------------------------------------------------------------------------------


@dataclass
class Run:
    agent: Agent
    root: Path
    project: Path
    records: Path
    api: FakeMessagesApi
    mcp: bool = False
    returncode: int = -1
    stdout: str = ""
    stderr: str = ""

    @property
    def home(self) -> Path:
        return self.root / "home"

    def hooks_ran(self) -> list[tuple[str, str]]:
        if not self.records.exists():
            return []
        lines = self.records.read_text(encoding="utf-8").splitlines()
        return sorted((json.loads(x)["label"], json.loads(x)["phase"]) for x in lines if x)

    def read(self, path: Path) -> str | None:
        return path.read_text(encoding="utf-8") if path.exists() else None

    def observed(self) -> dict[str, Any]:
        """Everything compared between the native run and the run through hookd."""
        seen = {
            "model_saw": [_messages(body) for body in self.api.requests],
            "tool_file": self.read(self.project / "tool_out.txt"),
            "mcp_log": self.read(self.root / "mcp.log"),
            "hooks": self.hooks_ran(),
            "returncode": self.returncode,
        }
        normalised: dict[str, Any] = normalise(seen, self.root)
        return normalised


def _messages(body: dict[str, Any]) -> list[Any]:
    """One request's conversation, block by block (cache markers and ids left out)."""
    out: list[Any] = []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                said = str(block.get("text"))
                if "<environment_details>" in said:
                    continue  # Kilo's: the time of the message, which differs per run
                out.append((message["role"], "text", said))
            elif kind == "tool_use":
                out.append((message["role"], "tool_use", block.get("name"), block.get("input")))
            elif kind == "tool_result":
                result = block.get("content")
                out.append((message["role"], "tool_result", result, bool(block.get("is_error"))))
    return out


def normalise(value: Any, root: Path) -> Any:
    if isinstance(value, str):
        return value.replace(str(root), "<RUN>")
    if isinstance(value, tuple):
        return tuple(normalise(v, root) for v in value)
    if isinstance(value, list):
        return [normalise(v, root) for v in value]
    if isinstance(value, dict):
        return {k: normalise(v, root) for k, v in value.items()}
    return value


def new_run(agent: Agent, turns: list[Turn]) -> Run:
    # Short: hookd's Unix socket lives here (paths must stay under 108 bytes).
    root = Path(tempfile.mkdtemp(prefix="oc", dir="/tmp"))
    project = root / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    title = Side(marker="Generate a title", turns=[Turn([{"type": "text", "text": "A title"}])])
    api = FakeMessagesApi(list(turns), sides=[title])
    return Run(agent, root=root, project=project, records=root / "records.jsonl", api=api)


def _no_npm_install(folder: Path) -> None:
    """opencode ``npm install``s ``@opencode-ai/plugin`` into a config folder unless its
    ``node_modules`` exists and its lock names every dependency (1.18.33's Npm.install);
    Kilo the same with ``@kilocode/plugin`` (without it, each run asks the npm registry for
    ``@kilocode/plugin@7.7.9`` in the background, and fails: no such version)."""
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    names = ("@opencode-ai/plugin", "@kilocode/plugin")
    lock = {"packages": {"": {"dependencies": dict.fromkeys(names, "*")}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))


OFFLINE = ("AUTOUPDATE", "MODELS_FETCH", "DEFAULT_PLUGINS", "LSP_DOWNLOAD", "SESSION_INGEST",
           "CODEBASE_INDEXING", "PRESENCE")  # fmt: skip
"""``<AGENT>_DISABLE_*``: no update check, no models.dev, no npm plugins, no LSP download
(Kilo's session upload, indexing and presence too; opencode has no such variables)."""


async def run_opencode(run: Run, extra_env: dict[str, str]) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(serve_fake_api, run.api)
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/anthropic",
                    "name": "Fake",
                    "options": {"baseURL": f"{run.api.base_url}/v1", "apiKey": "sk-test"},
                    "models": {"claude-fake": {"name": "claude-fake", "tool_call": True}},
                }
            },
            "model": "fake/claude-fake",
            "small_model": "fake/claude-fake",
            "autoupdate": False,
            "share": "disabled",
        }
        if run.mcp:
            server = [sys.executable, str(FAKE_MCP)]
            config["mcp"] = {
                "srv": {
                    "type": "local",
                    "command": server,
                    "environment": {"MCP_LOG": str(run.root / "mcp.log")},
                }
            }
        agent = run.agent
        (run.project / agent.config_file).write_text(json.dumps(config))
        for folder in (
            run.home / ".config" / agent.user_folder,
            run.project / agent.project_folder,
        ):
            _no_npm_install(folder)
        home = run.home
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(home),
            "PWD": str(run.project),  # opencode takes its directory from $PWD
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            **{f"{agent.env_prefix}_DISABLE_{what}": "1" for what in OFFLINE},
            # Kilo's PostHog client: off, or Kilo waits 2 s at exit for a flush that fails.
            "KILO_TELEMETRY_LEVEL": "off",
            **extra_env,
        }
        with trio.fail_after(240):
            done = await trio.run_process(
                [str(agent.binary), "run", PROMPT],
                cwd=str(run.project),
                env=env,
                stdin=subprocess.DEVNULL,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        nursery.cancel_scope.cancel()
    run.returncode = done.returncode
    run.stdout = done.stdout.decode(errors="replace")
    run.stderr = done.stderr.decode(errors="replace")


Hooks = dict[str, Any]
Scenario = Callable[[Run], tuple[Hooks, Hooks]]


async def run_native(run: Run, hooks: Hooks) -> None:
    plugins = run.project / run.agent.project_folder / "plugins"
    plugins.mkdir(parents=True)
    shutil.copy(NATIVE_PLUGIN, plugins / "native.js")
    (run.root / "native-hooks.json").write_text(json.dumps(hooks))
    await run_opencode(run, {"OPENCODE_NATIVE_HOOKS": str(run.root / "native-hooks.json")})


async def run_through_hookd(run: Run, hooks: Hooks, *, daemon_down: bool = False) -> None:
    """``daemon_down``: the daemon is not running when the agent runs."""
    paths = daemon_paths(run.root, run.home)
    async with through_hookd(run.agent.name, paths, "default", hooks=hooks, up=not daemon_down):
        plugin = paths.config_home / run.agent.user_folder / "plugins" / "hookd.js"
        assert f"--agent {run.agent.name}" in plugin.read_text()
        await run_opencode(run, {"HOOKD_SOCKET": str(paths.socket)})


def hook(run: Run, label: str, *args: str) -> str:
    return scripted(run.records, label, *args)


async def compare(
    scenario: Scenario, turns: list[Turn], *, mcp: bool = False, agent: Agent = OPENCODE
) -> dict[str, Any]:
    require(agent)
    native, hookd = new_run(agent, turns), new_run(agent, turns)
    native.mcp = hookd.mcp = mcp
    native_hooks, _ = scenario(native)
    _, hookd_hooks = scenario(hookd)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_native, native, native_hooks)
        nursery.start_soon(run_through_hookd, hookd, hookd_hooks)
    seen_native, seen_hookd = native.observed(), hookd.observed()
    assert seen_hookd == seen_native, (
        f"native stderr:\n{native.stderr[-3000:]}\nhookd stderr:\n{hookd.stderr[-3000:]}\n"
        f"daemon log:\n{tail(hookd.root / 'hookd.log')}"
    )
    for run in (native, hookd):
        shutil.rmtree(run.root, ignore_errors=True)
    return seen_native


def shell(command: str = COMMAND) -> Turn:
    return Turn([{"type": "tool_use", "name": "bash", "input": {"command": command,
                                                             "description": "write"}}])  # fmt: skip


def text(said: str) -> Turn:
    return Turn([{"type": "text", "text": said}])


# --- the scenarios -------------------------------------------------------------------------


@pytest.mark.parametrize("agent", [OPENCODE, KILO], ids=lambda a: a.name)
async def test_an_exit_2_deny_on_the_shell_and_a_prompt_s_context(agent: Agent) -> None:
    """An exit-2 deny on the shell (``bash`` natively, ``Bash`` in hookd's config), a hook
    on the edit tool that must not fire, and a UserPromptSubmit hook whose plain stdout is
    context for the model."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        deny = hook(run, "deny-shell", "--stderr", "  no shell here  \n", "--exit", "2")
        other = hook(run, "edit-guard", "--stderr", "wrong tool\n", "--exit", "2")
        prompt = hook(run, "prompt", "--stdout", "PROMPT-CONTEXT\n")
        return (
            {
                "tool.execute.before": [group(deny, "bash"), group(other, "edit")],
                "chat.message": [group(prompt)],
            },
            {
                "PreToolUse": [group(deny, "Bash"), group(other, "Edit")],
                "UserPromptSubmit": [group(prompt)],
            },
        )

    seen = await compare(scenario, [shell(), text("All done.")], agent=agent)
    assert seen["tool_file"] is None  # denied: the command never ran
    assert ("deny-shell", "answered") in seen["hooks"]
    assert not any(label == "edit-guard" for label, _ in seen["hooks"])
    result = seen["model_saw"][1][-1]
    assert result[1] == "tool_result" and result[3] is True, result
    assert result[2].endswith("]: no shell here"), result
    assert ("user", "text", "PROMPT-CONTEXT") in seen["model_saw"][0]


async def test_a_rewrite_allowed_then_context_after_the_tool() -> None:
    """A PreToolUse hook allows the call with ``updatedInput`` (the command rewritten); a
    PostToolUse hook adds context, which opencode's model reads after the tool's result."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        rewrite = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": REWRITTEN, "description": "write"},
            }
        }
        after = {
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "AFTER"}
        }
        before = hook(run, "rewrite", "--stdout", js(rewrite))
        post = hook(run, "after", "--stdout", js(after))
        return (
            {"tool.execute.before": [group(before, "bash")],
             "tool.execute.after": [group(post, "bash")]},
            {"PreToolUse": [group(before, "Bash")], "PostToolUse": [group(post, "Bash")]},
        )  # fmt: skip

    seen = await compare(scenario, [shell(), text("All done.")])
    assert seen["tool_file"] == "rewritten\n"
    calls = [m for m in seen["model_saw"][1] if m[1] == "tool_result"]
    assert calls == [("user", "tool_result", "ran\n\n\nAFTER", False)], calls


@pytest.mark.parametrize("agent", [OPENCODE, KILO], ids=lambda a: a.name)
async def test_a_json_deny_on_claude_code_s_mcp_name_guards_opencode_s_srv_echo(
    agent: Agent,
) -> None:
    """opencode names MCP server ``srv``'s tool ``echo`` ``srv_echo``; hookd's config says
    ``mcp__srv__.*`` as Claude Code's docs do, and the same JSON deny denies the same call as
    the native hook on ``srv_echo``: the server never runs it."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        said = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no echo here",
            }
        }
        deny = hook(run, "guard-mcp", "--stdout", js(said))
        return (
            {"tool.execute.before": [group(deny, "srv_echo")]},
            {"PreToolUse": [group(deny, "mcp__srv__.*")]},
        )

    call = Turn([{"type": "tool_use", "name": "srv_echo", "input": {"text": "MCP-MARK"}}])
    seen = await compare(scenario, [call, text("All done.")], mcp=True, agent=agent)
    assert ("guard-mcp", "answered") in seen["hooks"]
    assert seen["mcp_log"] is None  # the server never ran the call
    assert ("user", "tool_result", "no echo here", True) in seen["model_saw"][1]


async def test_a_prompt_blocked_with_exit_2_reaches_no_model() -> None:
    """UserPromptSubmit exit 2: opencode's ``chat.message`` throws, no request reaches the
    model (bar the title side conversation) and ``opencode run`` fails."""

    def scenario(run: Run) -> tuple[Hooks, Hooks]:
        block = hook(run, "no-prompt", "--stderr", "not this prompt\n", "--exit", "2")
        return {"chat.message": [group(block)]}, {"UserPromptSubmit": [group(block)]}

    seen = await compare(scenario, [shell(), text("All done.")])
    assert seen["model_saw"] == []
    assert seen["returncode"] != 0
    assert seen["hooks"] == [("no-prompt", "answered"), ("no-prompt", "start")]


async def test_daemon_down_fails_open_or_closed_as_configured() -> None:
    """hookd stopped after the install: the shell guard says ``onFailure: "block"``, so
    ``tool.execute.before`` was wired ``--fail-closed`` and the relay's exit 2 makes hookd's
    plugin block the call with the relay's reason; the prompt's hook fails open (the run goes
    on, the reason on opencode's stderr)."""
    run = new_run(require(OPENCODE), [shell(), text("All done.")])
    guard = {"type": "command", "command": hook(run, "guard"), "onFailure": "block"}
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [guard]}],
        "UserPromptSubmit": [group(hook(run, "prompt"))],
    }
    await run_through_hookd(run, hooks, daemon_down=True)
    plugin = (run.home / ".config" / "opencode" / "plugins" / "hookd.js").read_text()
    assert '"tool.execute.before": ' in plugin and "--fail-closed" in plugin
    seen = run.observed()
    assert seen["hooks"] == [] and seen["tool_file"] is None
    result = seen["model_saw"][1][-1]
    assert result[1] == "tool_result" and result[3] is True, result
    assert "hookd is not running" in result[2], result
    assert "hookd: hookd is not running" in run.stderr  # the prompt's hook, failing open
    shutil.rmtree(run.root, ignore_errors=True)

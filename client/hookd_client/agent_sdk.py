"""The Claude Agent SDK for Python, running the user's hooks through hookd: one line.

::

    from claude_agent_sdk import ClaudeAgentOptions, query
    from hookd_client.agent_sdk import hookd_hooks

    options = ClaudeAgentOptions(hooks=hookd_hooks())

:func:`hookd_hooks` returns the SDK's own ``hooks=`` value (event → ``HookMatcher``
list) with one matcher per callback event the SDK supports, whose one callback
forwards the event to the daemon over its socket (:class:`hookd_client.aio.AsyncClient`)
and hands the SDK back what hookd decided.  So an SDK app runs the user's hooks from
``~/.config/hookd/hooks.json`` and every other source hookd reads — with hot reload,
supervision (process groups, timeouts that kill the tree, async hooks), ``hookctl
status``/``tail`` — and the same answers Claude Code itself would get through the bridge.

Why it asks for Claude Code's rendering (``fire(..., claude=True)``) and converts
that, rather than converting the :class:`~hookd_client.results.FireResult` here: the
SDK's CLI *is* Claude Code (the bundled 2.1.330), and an SDK callback's return
value is read exactly as a command hook's JSON stdout.  The daemon's one renderer
(``hookd.engine.claude_output``) already decides every subtle case (late async
context, per-hook block headers, when a block must be an exit 2); this module only
maps the two things a callback cannot say — an exit 2 with stderr, and plain
stdout — onto the JSON that means the same (:func:`sdk_output`).

Why every matcher is ``None`` and hookd matches: the user's matchers live in
hookd's config, which is reloaded while the app runs; matching in the CLI would
freeze them at start.  Why the SDK's per-matcher timeout is long (``timeout``,
630 s by default): hookd enforces each hook's own timeout and must answer first;
the SDK's default of 60 s would cut a hook that may run 600 s.

When the daemon cannot answer, the event fails **open** (no decision, and a
``systemMessage`` the user sees), except for an event that has a hook marked
``onFailure: "block"``: that one fails **closed** (deny/block with the reason),
as the relay's ``--fail-closed`` does for Claude Code.  Which events those are is
learnt from the daemon itself (the ``hooks`` listing of the session's project,
fetched again whenever a fire reports a new config generation), because the
helper cannot read hookd's config files (the client package never imports hookd);
before the first answer, ``on_unavailable`` decides.

The SDK has no SessionStart or SessionEnd callback.  Those two reach hookd
through the CLI's settings layer instead: :func:`hookd_settings` is a ``settings=``
value whose SessionStart/SessionEnd command hooks run ``hookd-relay`` (the
same relay Claude Code uses), so the session's hooks still see them, on the
same session id.

``claude_agent_sdk`` is imported by this module only (``pip install
'hookd-client[agent-sdk]'``); the rest of the client does not need it.  The SDK
runs callbacks on whichever event loop drives ``query()``; this helper speaks
asyncio (trio apps are not supported: it says so rather than hanging).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, cast

import msgspec
from claude_agent_sdk import HookContext, HookInput, HookJSONOutput, HookMatcher
from claude_agent_sdk import __version__ as SDK_VERSION
from claude_agent_sdk.types import HookEvent

from hookd_client import protocol
from hookd_client._core import UNAVAILABLE_CODES
from hookd_client.aio import AsyncClient
from hookd_client.client import DaemonError, DaemonUnavailable
from hookd_client.sockpath import default_socket_path

__all__ = [
    "AGENT",
    "CALLBACK_EVENTS",
    "SETTINGS_EVENTS",
    "HookdHooks",
    "hookd_hooks",
    "hookd_settings",
    "sdk_output",
]

log = logging.getLogger(__name__)

AGENT = "claude-agent-sdk"
"""The agent this door speaks for: every ``fire``'s ``agent`` and the relay's ``--agent``
(``hookctl status``/``sessions``/``tail`` and the audit log show it), and the client name
in ``hello``."""

CALLBACK_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "SubagentStart",
    "PermissionRequest",
)
"""Every event the SDK (0.2.187) can hand a Python callback: its ``HookEvent`` literal.
A test holds this equal to the installed SDK's, so a new SDK event is not missed silently."""

SETTINGS_EVENTS: tuple[str, ...] = ("SessionStart", "SessionEnd")
"""Events the CLI fires but the SDK cannot call back for; :func:`hookd_settings` relays them."""

DEFAULT_TIMEOUT = 630.0
"""The SDK-side timeout of each forwarded event, in seconds: past the longest default
hook timeout (600 s), so hookd's per-hook timeouts fire first (as the blocking client's
``fire_timeout``)."""

FailOpenPolicy = Literal["open", "closed"]

_PLAIN_CONTEXT_EVENTS = frozenset(
    {"UserPromptSubmit", "UserPromptExpansion", "SessionStart", "PostModelSwitch"}
)
"""Where Claude Code reads a hook's plain stdout as context (``hookd.engine.interpret``'s
``PLAIN_TEXT_CONTEXT_EVENTS``; the client cannot import it).  Elsewhere plain stdout is
only shown in the transcript — and ``additionalContext`` on Stop would continue the turn."""


def _bundled_cli_version() -> str:
    """The CLI version the SDK bundles (``AI_AGENT`` names it), empty when unknown."""
    try:
        from claude_agent_sdk._cli_version import __cli_version__
    except ImportError:
        return ""
    return str(__cli_version__)


CLI_VERSION = _bundled_cli_version()


def _cli_pid() -> int | None:
    """The Claude Code CLI this app runs (the SDK spawns it as a child): its pid, for the
    hooks' ``CLAUDE_PID``, as the CLI gives its own hooks.  Found in ``/proc`` among this
    process's children whose command line names ``claude``; None where there is no
    ``/proc``, or not exactly one such child (several ``query()`` at once: which CLI
    fired the event is then unknown, and no pid beats a wrong one)."""
    me = os.getpid()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read()
        except OSError:
            continue  # gone, or not ours to read
        if int(fields[1]) == me and b"claude" in argv:
            found.append(int(entry))
    return found[0] if len(found) == 1 else None


def sdk_output(event: str, rendered: protocol.ClaudeHookOutput) -> HookJSONOutput:
    """What an SDK callback returns so the CLI does what it would do with ``rendered``,
    one Claude Code command hook's stdout, stderr and exit code.

    * JSON stdout is the callback's answer as it is (``continue``/``async`` spelt
      ``continue_``/``async_``, the SDK's Python names; it converts them back).
    * Plain stdout is context only where Claude Code takes it so (UserPromptSubmit):
      it becomes ``additionalContext``, because a callback cannot print.  Claude Code
      then labels it "additional context" rather than "hook success" — the same
      difference the http bridge has (docs/claude-code.md).
    * Exit 2 blocks with stderr as the reason: ``permissionDecision: "deny"`` on
      PreToolUse, ``decision: "block"`` elsewhere (hookd answers Stop/SubagentStop
      blocks made only of exit-2 hooks as an exit 2).
    * Any other exit is a failed hook, which blocks nothing: no opinion.
    """
    if rendered.exit_code == 2:
        return _block(event, rendered.stderr.strip())
    if rendered.exit_code != 0:
        return {}
    text = rendered.stdout.strip()
    if not text:
        return {}
    if text.startswith("{"):
        answer = msgspec.json.decode(text, type=dict[str, Any])
        for cli_name, python_name in (("continue", "continue_"), ("async", "async_")):
            if cli_name in answer:
                answer[python_name] = answer.pop(cli_name)
        return cast(HookJSONOutput, answer)
    if event in _PLAIN_CONTEXT_EVENTS:
        return cast(
            HookJSONOutput,
            {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
        )
    return {}


def _block(event: str, reason: str) -> HookJSONOutput:
    if event == "PreToolUse":
        specific = {
            "hookEventName": event,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
        return cast(HookJSONOutput, {"hookSpecificOutput": specific})
    return {"decision": "block", "reason": reason}


def _fallback(event: str, policy: FailOpenPolicy, why: str) -> HookJSONOutput:
    """The answer when hookd cannot: proceed with a visible message, or block with it."""
    if policy == "open":
        return {"systemMessage": f"hookd unavailable: {why}"}
    return _block(event, f"hookd unavailable (fail-closed): {why}")


@dataclass
class _Session:
    """What the helper knows about one agent session: its project, and which of its
    events fail closed (from the daemon's listing of config ``generation``)."""

    project: str
    generation: int | None = None
    fail_closed: frozenset[str] = frozenset()
    cli_pid: int | None = None
    """The CLI process running the session (``CLAUDE_PID`` of its hooks), once found."""


class HookdHooks(dict[HookEvent, list[HookMatcher]]):
    """The SDK's ``hooks=`` mapping, forwarding every callback event to hookd.

    It *is* the dict the SDK wants (so ``ClaudeAgentOptions(hooks=hookd_hooks())``
    type-checks), and it also owns the connection: ``async with hookd_hooks() as
    hooks:`` closes it at the end; without that, the connection lives as long as the
    event loop (``asyncio.run`` cancels its reader when it returns).  The client is
    made on the first event, on the loop running ``query()``, and made again if a
    later ``query()`` runs on another loop.
    """

    def __init__(
        self,
        socket_path: str | Path | None = None,
        *,
        events: Sequence[HookEvent] = CALLBACK_EVENTS,
        on_unavailable: FailOpenPolicy = "open",
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 1,
        name: str = f"{AGENT}/{SDK_VERSION}",
    ) -> None:
        unknown = [e for e in events if e not in CALLBACK_EVENTS]
        if unknown:
            raise ValueError(
                f"the Agent SDK has no callback for {', '.join(unknown)}"
                f" (it has {', '.join(CALLBACK_EVENTS)}; SessionStart/SessionEnd: hookd_settings())"
            )
        super().__init__(
            (event, [HookMatcher(matcher=None, hooks=[self._forward], timeout=timeout)])
            for event in events
        )
        self.socket_path = Path(socket_path) if socket_path else None
        self.on_unavailable: FailOpenPolicy = on_unavailable
        self.env = dict(env or {})
        self.retries = retries
        self.name = name
        self._client: AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sessions: collections.OrderedDict[str, _Session] = collections.OrderedDict()

    async def __aenter__(self) -> HookdHooks:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection to the daemon (the next event opens a new one)."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.aclose()

    # --- the one callback ------------------------------------------------------------

    async def _forward(
        self, input_data: HookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        """Fire the event the SDK called back for; answer what hookd decided."""
        hook_input: dict[str, Any] = dict(input_data)
        event = str(hook_input.get("hook_event_name", ""))
        session = self._session(hook_input)
        client = self._connection()
        try:
            reply = await self._fire(client, event, hook_input, session)
        except DaemonUnavailable as exc:
            return self._unavailable(event, session, exc.reason)
        except DaemonError as exc:
            if exc.code not in UNAVAILABLE_CODES:
                raise  # our request was wrong: failing open would hide the bug
            return self._unavailable(event, session, str(exc))
        if reply.result.generation != session.generation:
            await self._learn_failure_policy(client, hook_input, session, reply.result.generation)
        if reply.claude is None:  # a daemon that ignored format="claude"
            raise DaemonError("bad_reply", "the fire reply has no Claude Code rendering")
        return sdk_output(event, reply.claude)

    async def _fire(
        self, client: AsyncClient, event: str, hook_input: dict[str, Any], session: _Session
    ) -> protocol.FireReply:
        # ``agent``: sessions, tail and the audit log name the SDK; the daemon takes it
        # through Claude Code's route (its adapter speaks Claude Code), so the answer
        # is the one Claude Code would get.
        return await client.fire(
            event,
            hook_input,
            env=self._environment(session),
            claude=True,
            on_unavailable="raise",
            agent=AGENT,
        )

    def _environment(self, session: _Session) -> dict[str, str]:
        """The environment hooks get: this process's, the ``env`` given (the same as
        ``ClaudeAgentOptions.env``, which reaches the CLI but not this process), and what
        the CLI adds for its own command hooks under the SDK (reference/agents.md §3,
        claude-code-observed.md): ``AI_AGENT``, ``CLAUDE_PID`` (the CLI's process, found
        among this app's children), ``CLAUDE_CODE_CHILD_SESSION``,
        ``CLAUDE_CODE_SESSION_ATTENDED``, ``COREPACK_ENABLE_AUTO_PIN``."""
        env = {
            **os.environ,
            **self.env,
            "CLAUDE_PROJECT_DIR": session.project,
            "CLAUDECODE": "1",
            "CLAUDE_CODE_ENTRYPOINT": "sdk-py",
            "CLAUDE_AGENT_SDK_VERSION": SDK_VERSION,
            "CLAUDE_CODE_CHILD_SESSION": "1",
            "CLAUDE_CODE_SESSION_ATTENDED": "0",
            "COREPACK_ENABLE_AUTO_PIN": "0",
        }
        if CLI_VERSION:
            env["AI_AGENT"] = f"claude-code_{CLI_VERSION.replace('.', '-')}_harness"
        if session.cli_pid is None:
            session.cli_pid = _cli_pid()
        if session.cli_pid is not None:
            env["CLAUDE_PID"] = str(session.cli_pid)
        return env

    def _unavailable(self, event: str, session: _Session, why: str) -> HookJSONOutput:
        policy: FailOpenPolicy = "closed" if event in session.fail_closed else self.on_unavailable
        log.warning("hookd unavailable for %s (failing %s): %s", event, policy, why)
        return _fallback(event, policy, why)

    # --- state ------------------------------------------------------------------------

    def _connection(self) -> AsyncClient:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "hookd_hooks() forwards events with the asyncio client; run query() under"
                " asyncio (anyio's trio backend is not supported)"
            ) from None
        if self._client is None or self._loop is not loop:
            path = self.socket_path or Path(default_socket_path())
            self._client = AsyncClient(path, name=self.name, retries=self.retries)
            self._loop = loop
        return self._client

    def _session(self, hook_input: Mapping[str, Any]) -> _Session:
        """The session's state; its project is the cwd of its first event (the CLI's
        ``CLAUDE_PROJECT_DIR``: a later ``cd`` does not move the project)."""
        session_id = str(hook_input.get("session_id", ""))
        session = self._sessions.get(session_id)
        if session is None:
            session = _Session(project=str(hook_input.get("cwd") or os.getcwd()))
            self._sessions[session_id] = session
            while len(self._sessions) > 256:  # a long-lived app's old sessions
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_id)
        return session

    async def _learn_failure_policy(
        self,
        client: AsyncClient,
        hook_input: Mapping[str, Any],
        session: _Session,
        generation: int,
    ) -> None:
        """Which events have a running hook marked ``onFailure: "block"`` (they fail
        closed if hookd later cannot answer); asked once per config generation."""
        session_id = str(hook_input.get("session_id", "")) or None
        try:
            listing = await client.hooks(session.project, session_id=session_id)
        except (DaemonUnavailable, DaemonError) as exc:
            log.warning("could not list hookd's hooks for %s: %s", session.project, exc)
            return
        session.fail_closed = frozenset(
            h.event for h in listing.hooks if h.runs and h.on_failure == "block"
        )
        session.generation = generation


def hookd_hooks(
    socket_path: str | Path | None = None,
    *,
    events: Sequence[HookEvent] = CALLBACK_EVENTS,
    on_unavailable: FailOpenPolicy = "open",
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> HookdHooks:
    """``ClaudeAgentOptions(hooks=hookd_hooks())``: every SDK callback event through hookd.

    ``socket_path``: the daemon's socket (default: the one rule every client shares).
    ``events``: which callback events to forward (default all).  ``on_unavailable``:
    what an event whose hooks did not ask to fail closed does when hookd cannot
    answer — ``"open"`` (default; a ``systemMessage`` says so) or ``"closed"``.
    ``env``: what you pass as ``ClaudeAgentOptions.env``, so hooks run with it as
    they would natively.  ``timeout``: the SDK-side limit per event, in seconds.
    """
    return HookdHooks(
        socket_path, events=events, on_unavailable=on_unavailable, env=env, timeout=timeout
    )


def hookd_settings(
    socket_path: str | Path | None = None,
    *,
    fail_closed: Sequence[str] = (),
    python: str | None = None,
    relay: Sequence[HookEvent] = (),
) -> str:
    """A ``ClaudeAgentOptions(settings=...)`` value relaying SessionStart and SessionEnd.

    The SDK cannot call back for these two; the CLI still runs command hooks from its
    settings layers, and ``--settings`` (the SDK's ``settings=``) is loaded whatever
    ``setting_sources`` says.  Each event gets one command hook running the relay with
    this interpreter (``python -m hookd_client.relay EVENT``), which answers exactly as
    for Claude Code.  ``fail_closed``: events whose relay blocks when hookd is down.
    If you pass your own ``settings=`` too, merge its ``hooks`` with these.

    ``relay``: callback events to relay as command hooks too, for the CLI's framing of a
    command hook's answer: the CLI frames a *callback's* block otherwise — a Stop or
    SubagentStop block reaches the model twice (an extra ``Callback hook blocking
    error`` reminder beside the usual feedback) and a PostToolUse block names the hook
    ``command: "callback"`` (docs/agents.md).  Leave those events out of
    :func:`hookd_hooks`'s ``events``, or the hooks run twice.
    """
    unknown = [e for e in relay if e not in CALLBACK_EVENTS]
    if unknown:
        raise ValueError(f"not an Agent SDK callback event: {', '.join(unknown)}")
    hooks: dict[str, Any] = {}
    for event in (*SETTINGS_EVENTS, *relay):
        args = ["-m", "hookd_client.relay", "--agent", AGENT, event]
        if socket_path is not None:
            args += ["--socket", str(socket_path)]
        if event in fail_closed:
            args.append("--fail-closed")
        handler = {"type": "command", "command": python or sys.executable, "args": args}
        hooks[event] = [{"hooks": [handler]}]
    return json.dumps({"hooks": hooks})

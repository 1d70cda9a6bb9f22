"""Event requests: ``fire``, ``relay``, ``check_async``, ``subscribe_async``.

:meth:`EventRequests.route` is the one place an event's route is decided.
The event is prepared in the reader task (validation, session, config,
selection — no await); when it selects no hook, which is most tool calls, it
is answered right there, with no task started; when hooks must run (or the
client asked for progress) it becomes a task.  A daemon that is stopping
refuses new events here and nowhere else.
"""

from __future__ import annotations

from typing import Any

import msgspec
import structlog

from hookd.agent_process import agent_context
from hookd.agents.base import Adapter, EventSpec, UnknownAgentEvent
from hookd.agents.guests import guest_at_claude_door
from hookd.agents.registry import DEFAULT_AGENT, UnknownAgent, adapter_for
from hookd.daemon.async_delivery import AsyncDelivery
from hookd.daemon.async_store import AsyncEntry
from hookd.daemon.connection import Connection
from hookd.daemon.lifecycle import Lifecycle
from hookd.daemon.pipeline import EventPipeline, PreparedEvent
from hookd.engine.claude_output import carries_late_context, render_claude
from hookd.engine.engine import ProgressFn
from hookd.handlers.base import Invocation
from hookd_client import protocol
from hookd_client.events import EventInputError
from hookd_client.results import FireResult, HookRef, HookRun

from .answers import Answer, Later, RequestError

__all__ = ["EventRequests"]

EventRequest = protocol.Fire | protocol.Relay

log = structlog.get_logger("hookd.daemon.events")


class EventRequests:
    def __init__(
        self, pipeline: EventPipeline, async_delivery: AsyncDelivery, lifecycle: Lifecycle
    ) -> None:
        self.pipeline = pipeline
        self.async_delivery = async_delivery
        self.lifecycle = lifecycle

    # --- fire and relay: one route ----------------------------------------------------

    def route(self, conn: Connection, msg: EventRequest) -> Answer:
        """Finished now (no hook runs) or a task (hooks run, or progress was asked for)."""
        if self.lifecycle.stopping:
            raise RequestError("shutting_down", "hookd is stopping")
        agent = DEFAULT_AGENT
        relayed: dict[str, Any] | None = None
        if msg.agent and msg.agent != DEFAULT_AGENT:
            adapter = _adapter(msg.agent)
            if not adapter.speaks_claude_code:
                return self._route_agent(conn, msg, adapter)
            agent = adapter.name
        elif isinstance(msg, protocol.Relay):
            relayed = _relay_input(msg)
            guest = guest_at_claude_door(relayed)
            if guest is not None:
                return self._route_guest(conn, msg, guest)
        if isinstance(msg, protocol.Fire):
            prepared = self.pipeline.prepare(
                msg.event,
                msg.input,
                env=msg.env if msg.env is not None else conn.env,
                agent_pid=msg.agent_pid or conn.agent_pid,
                client=conn.client,
                # An answer rendered for Claude Code goes back to Claude Code, which caps
                # Stop loops itself (`hookctl fire --format claude` as a command hook).
                agent_caps_stop=msg.format == "claude",
                agent=agent,
                once=msg.once,
            )
        else:
            prepared = self.pipeline.prepare(
                msg.event,
                relayed if relayed is not None else _relay_input(msg),
                env=msg.env if msg.env is not None else conn.env,
                agent_pid=msg.pid or conn.agent_pid,
                client=conn.client or "hookd-relay",
                agent_caps_stop=True,  # the relay is a Claude Code hook: it caps Stop loops
                agent=agent,
            )
        deliver = _delivers(msg)
        if not (isinstance(msg, protocol.Fire) and msg.progress):
            result = self.pipeline.answer_now(prepared, deliver)
            if result is not None:
                return self._reply(msg, prepared, result)

        async def run() -> msgspec.Struct:
            return self._reply(msg, prepared, await self._run(conn, msg, prepared, deliver))

        return Later(run)

    def _route_guest(self, conn: Connection, msg: protocol.Relay, guest: Adapter) -> Answer:
        """Another agent's input at Claude Code's relay door (:mod:`hookd.agents.guests`):
        nothing runs when that agent's own door also gets this event, else it runs as
        that agent's event, answered in its dialect."""
        raw = _relay_input(msg)
        env = msg.env if msg.env is not None else conn.env
        cwd = raw.get("cwd")
        if guest.own_door_wired(msg.event, env, cwd if isinstance(cwd, str) else None):
            log.info(
                "another agent's event through Claude Code's wiring: its own door runs it",
                agent=guest.name,
                hook_event=msg.event,
            )
            return protocol.RelayReply(id=msg.id, stdout="", stderr="", exit_code=0)
        return self._route_agent(conn, msg, guest)

    def _route_agent(self, conn: Connection, msg: EventRequest, adapter: Adapter) -> Answer:
        """Another agent's door: its adapter decodes the native event into the canonical
        one, the pipeline runs that (degrading the result to what the agent can do),
        and the adapter encodes the answer the agent obeys."""
        raw = _relay_input(msg) if isinstance(msg, protocol.Relay) else msg.input
        try:
            agent_event = adapter.decode(msg.event, raw)
        except UnknownAgentEvent as exc:
            raise EventInputError(str(exc)) from None
        env = msg.env if msg.env is not None else conn.env
        if not agent_event.input.get("cwd") and env and env.get("PWD", "").startswith("/"):
            # Some agents name no directory on some events (Windsurf outside run_command,
            # Cline without workspaceRoots): the hook's own working directory is then the
            # workspace the agent ran it in, and the project whose hooks apply.
            agent_event.input["cwd"] = env["PWD"]
        prepared = self.pipeline.prepare(
            agent_event.event,
            agent_event.input,
            env=env,
            agent_pid=(msg.pid if isinstance(msg, protocol.Relay) else msg.agent_pid)
            or conn.agent_pid,
            client=conn.client or ("hookd-relay" if isinstance(msg, protocol.Relay) else ""),
            # Whether another agent caps Stop loops is not known for each one: hookd
            # applies its own cap, so a Stop hook can never loop an agent forever.
            agent_caps_stop=False,
            agent=adapter.name,
            agent_spec=agent_event.spec,
            once=isinstance(msg, protocol.Fire) and msg.once,
            workdir=adapter.hook_workdir(agent_event, env),
        )
        as_result = isinstance(msg, protocol.Fire) and msg.format == "result"
        deliver = as_result or _agent_carries_late_context(agent_event.spec)
        progress = isinstance(msg, protocol.Fire) and msg.progress

        def reply(result: FireResult) -> msgspec.Struct:
            out = adapter.encode(result if as_result else _late_as_context(result), agent_event)
            if isinstance(msg, protocol.Relay):
                return protocol.RelayReply(
                    id=msg.id, stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code
                )
            claude = None
            if msg.format == "claude":
                claude = protocol.ClaudeHookOutput(
                    stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code
                )
            return self._fire_reply(msg, prepared, result, claude)

        if not progress:
            now = self.pipeline.answer_now(prepared, deliver)
            if now is not None:
                return reply(now)

        async def run() -> msgspec.Struct:
            return reply(await self._run(conn, msg, prepared, deliver))

        return Later(run)

    def _reply(
        self, msg: EventRequest, prepared: PreparedEvent, result: FireResult
    ) -> msgspec.Struct:
        """A Claude Code event's reply: the relay's bytes, or a ``fire_reply``."""
        tool_name = _tool_name(prepared.event.raw)
        if isinstance(msg, protocol.Relay):
            out = render_claude(result, tool_name)
            return protocol.RelayReply(
                id=msg.id, stdout=out.stdout, stderr=out.stderr, exit_code=out.exit_code
            )
        claude = render_claude(result, tool_name) if msg.format == "claude" else None
        return self._fire_reply(msg, prepared, result, claude)

    def _fire_reply(
        self,
        msg: protocol.Fire,
        prepared: PreparedEvent,
        result: FireResult,
        claude: protocol.ClaudeHookOutput | None,
    ) -> protocol.FireReply:
        """The result, and what the caller should know about how it was judged: hooks
        held back by trust, a known session's project kept (``once`` fires)."""
        return protocol.FireReply(
            id=msg.id,
            result=result,
            claude=claude,
            held_back=self.pipeline.held_back(prepared),
            kept_project=prepared.kept_project,
        )

    async def _run(
        self, conn: Connection, msg: EventRequest, prepared: PreparedEvent, deliver: bool
    ) -> FireResult:
        if isinstance(msg, protocol.Relay):
            context = agent_context(prepared.agent_pid)
            return await self.pipeline.run(prepared, context=context, deliver_async=deliver)
        progress = _progress_sender(conn, msg.id) if msg.progress else None
        return await self.pipeline.run(
            prepared, context=msg.context, progress=progress, deliver_async=deliver
        )

    # --- async results ----------------------------------------------------------------

    def check_async(self, conn: Connection, msg: protocol.CheckAsync) -> Answer:
        return protocol.AsyncResultsReply(
            id=msg.id, data=self.async_delivery.collect(msg.session_id)
        )

    def subscribe_async(self, conn: Connection, msg: protocol.SubscribeAsync) -> Answer:
        """asyncRewake wake-ups are pushed to this connection from now on (until it closes).

        The reply goes first: results already waiting are pushed by ``subscribe``
        itself, and a client must see its subscription confirmed before them.
        """

        def push(entry: AsyncEntry) -> bool:
            if conn.closed:
                return False
            conn.send(
                protocol.AsyncResult(
                    session_id=entry.session_id,
                    process_id=entry.process_id,
                    hook=entry.hook_name,
                    event=entry.hook_event,
                    hook_kind=entry.kind,
                    exit_code=entry.exit_code,
                    state=entry.state,
                    messages=entry.messages,
                    rewake=entry.rewake,
                )
            )
            return not conn.closed

        conn.send(protocol.SubscribeReply(id=msg.id, data=protocol.Subscribed(subscribed=True)))
        self.async_delivery.subscribe(conn.agent_pid, msg.session_id, push, lambda: not conn.closed)
        return None


def _relay_input(msg: protocol.Relay) -> dict[str, Any]:
    """The hook's stdin, parsed here: the one door where the daemon reads raw JSON.

    msgspec raises ``UnicodeDecodeError`` (not ``DecodeError``) for a string that
    is not UTF-8 and ``RecursionError`` for nesting deeper than the stack: both
    are the input's fault, and must say so (``bad_input``), not ``internal``."""
    try:
        raw = msgspec.json.decode(msg.input)
    except msgspec.DecodeError as exc:
        raise EventInputError(f"hook input: {exc}") from None
    except UnicodeDecodeError as exc:
        raise EventInputError(f"hook input is not valid UTF-8: {exc}") from None
    except RecursionError:
        raise EventInputError("hook input is nested too deeply") from None
    if not isinstance(raw, dict):
        raise EventInputError("hook input is not an object")
    return raw


def _adapter(name: str) -> Adapter:
    try:
        return adapter_for(name)
    except UnknownAgent as exc:
        raise RequestError("bad_request", str(exc)) from None


def _delivers(msg: EventRequest) -> bool:
    """May this reply carry late async results to its reader?

    A ``fire`` answered as a result does (``async_results``).  A reply read as
    Claude Code's output (a relay, a ``fire`` in ``claude`` format) can pass them
    on only as additionalContext, so it takes them only on events whose output
    has it; otherwise they wait for a reply that can carry them.
    """
    if isinstance(msg, protocol.Fire) and msg.format == "result":
        return True
    return carries_late_context(msg.event)


def _agent_carries_late_context(spec: EventSpec) -> bool:
    """May another agent's answer on this event carry late async results?  Where it
    adds context to the model, on the events Claude Code's rule allows (never a stop:
    context there would make the agent go on)."""
    return spec.caps.add_context and carries_late_context(spec.canonical)


def _late_as_context(result: FireResult) -> FireResult:
    """Late async results, once delivered onto this reply, as ``additional_context``:
    the field every adapter encodes (not all of them know ``async_results``)."""
    if not result.async_results:
        return result
    return msgspec.structs.replace(
        result,
        additional_context=[*result.additional_context, *result.async_results],
        async_results=[],
    )


def _tool_name(raw: dict[str, Any]) -> str | None:
    """The input's ``tool_name``: Claude Code names tool events' hooks ``<Event>:<tool>``."""
    tool = raw.get("tool_name")
    return tool if isinstance(tool, str) else None


def _progress_sender(conn: Connection, request_id: int) -> ProgressFn:
    def progress(phase: str, ref: HookRef, run: HookRun | None, _inv: Invocation) -> None:
        conn.send(
            protocol.Progress(
                id=request_id,
                phase="started" if phase == "started" else "finished",
                hook=ref.name,
                source=ref.source,
                outcome=run.outcome if run else None,
            )
        )

    return progress

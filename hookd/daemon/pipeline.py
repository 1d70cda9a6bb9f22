"""One event from decoded input to result: the path every front door shares.

A ``fire`` from a client, a ``relay`` from ``hookd-relay`` and a POST from
Claude Code's http hooks all end here.  The pipeline does, in order:

1. :meth:`EventPipeline.prepare` — synchronously: validate the input against
   the event's Struct, find or create the session, take the project's config
   generation through the trust gate, select the hooks (the breaker gate
   drops paused ones) and open the event's audit record;
2. :meth:`EventPipeline.answer_now` — an event that selected no hook (most
   tool calls) is answered here without awaiting, so the front door can reply
   without starting a task;
3. :meth:`EventPipeline.run` — otherwise the engine runs the hooks; each
   finished run is accounted as it finishes (breaker, audit, the live view);
4. ``_finish`` — the event's accounting: its audit record, the session's
   waiting async results when the reply can carry them, counters, and the
   end of the session on ``SessionEnd``.

It never touches a socket: what goes back to whom is the front door's job.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
import trio

from hookd.agent_process import AgentLookup
from hookd.agents.base import Adapter, AgentEvent, EventSpec, UnknownAgentEvent
from hookd.agents.capabilities import degrade, report
from hookd.agents.guests import guest_at_claude_door
from hookd.agents.registry import DEFAULT_AGENT, adapter_for
from hookd.config.model import HookConfig
from hookd.config.schema import Handler
from hookd.config.skills import find_skill, invoked_skill, load_skill
from hookd.daemon.activity import Activity
from hookd.daemon.async_delivery import AsyncDelivery
from hookd.daemon.async_runner import AsyncOrigin, AsyncRunner
from hookd.daemon.audit import AuditLog, EventAudit
from hookd.daemon.limits import BufferBudget, EventCharge
from hookd.daemon.registry import ConfigRegistry
from hookd.daemon.sessions import Session, SessionTable
from hookd.daemon.telemetry import SpanIds, Telemetry
from hookd.daemon.trust import TrustGate
from hookd.engine.breaker import CircuitBreaker, breaker_key
from hookd.engine.engine import Engine, Plan, ProgressFn
from hookd.engine.selection import IndexedGroup
from hookd.handlers.base import Invocation
from hookd.logging import debug_enabled
from hookd_client import protocol
from hookd_client.events import DecodedEvent, EventInputError, decode_event
from hookd_client.paths import path_problem
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = ["AnswersAtOnce", "EventPipeline", "PreparedEvent"]

AnswersAtOnce = Callable[[Handler, str, bool], bool]
"""``(handler, project dir, project trusted)`` → the hook is answered in one synchronous
step (:meth:`hookd.handlers.python.PythonRunner.answers_at_once`)."""

log = structlog.get_logger("hookd.pipeline")

_PATH_FIELDS = ("transcript_path", "agent_transcript_path")
"""Event fields besides ``cwd`` that name a file (an empty one: none)."""


@dataclass(slots=True)
class PreparedEvent:
    """One event, validated and planned, waiting for its hooks to run.

    Not frozen: the http door learns the agent (``env``, ``agent_pid``) only after
    planning shows that hooks will run, and sets them then."""

    event: DecodedEvent
    session: Session
    config: HookConfig
    """The config the plan was made from: the project's, through the trust gate when some
    group matched the event (when none did, nothing of it runs and no verdict was asked:
    the project's config as it is)."""
    held_back: int
    """Hooks matching the event that the trust gate held back (the audit's ``untrusted``)."""
    plan: Plan
    audit: EventAudit
    env: dict[str, str] | None
    agent_pid: int | None
    agent_caps_stop: bool = False
    """The agent enforces its own cap on Stop loops (Claude Code's doors): hookd adds none."""
    agent_spec: EventSpec | None = None
    """Another agent's event (``hookd-relay --agent``): the result is degraded to what that
    agent can do on it (:func:`hookd.agents.capabilities.degrade`) before it is audited,
    so the audit log records every loss."""
    forget_session: bool = False
    """A ``once`` fire made this session: it is forgotten when the event is done."""
    kept_project: str | None = None
    """The session was known in another project than the input names (``fire_reply``)."""
    span: SpanIds | None = None
    """With telemetry on: the event's span, chosen before its hooks run (their spans
    name it as parent)."""

    @property
    def runs_hooks(self) -> bool:
        return bool(self.plan.units)


class EventPipeline:
    """Owns an event from decoded input to :class:`FireResult`, accounting included."""

    def __init__(
        self,
        *,
        engine: Engine,
        sessions: SessionTable,
        registry: ConfigRegistry,
        trust: TrustGate,
        breaker: CircuitBreaker,
        audit: AuditLog,
        async_runner: AsyncRunner,
        async_delivery: AsyncDelivery,
        activity: Activity,
        answers_at_once: AnswersAtOnce | None = None,
        budget: BufferBudget | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.engine = engine
        self.budget = budget
        """The buffer budget each event's hooks charge the output they keep to."""
        self.telemetry = telemetry
        """OpenTelemetry export (hookd/daemon/telemetry.py); None when off."""
        self.answers_at_once = answers_at_once
        self.sessions = sessions
        self.registry = registry
        self.trust = trust
        self.breaker = breaker
        self.audit = audit
        self.async_runner = async_runner
        self.async_delivery = async_delivery
        self.activity = activity
        self._reported: set[tuple[int, str]] = set()
        """(generation, agent) pairs whose capability warnings were logged."""

    async def fire(
        self,
        event_name: str,
        raw: dict[str, Any],
        *,
        agent: AgentLookup,
        client: str = "",
        deliver_async: bool = False,
        agent_caps_stop: bool = False,
        hangup: Callable[[], Awaitable[None]] | None = None,
    ) -> FireResult | bytes | None:
        """Prepare and run in one call (the http endpoint's door); raises EventInputError.

        Another agent's input (:mod:`hookd.agents.guests`: Copilot runs a project's
        ``.claude/settings.json`` hooks itself) is answered in that agent's words, as
        the body's bytes: nothing is run when its own door gets the event too.

        ``agent`` is asked only when something needs the agent: a session
        hookd does not know yet (its project is the agent's working directory)
        or hooks that run (their environment, the batch context, the async
        registry's owner).  A known session's event that runs no hook — most
        tool calls — never asks, so a connection that only carries those never
        pays for the ``/proc`` search behind it.

        ``deliver_async``: the caller can carry ``async_results`` (late async
        hook context) to its agent, so the session's waiting results are
        taken onto this reply; otherwise they keep waiting for one that can.

        ``hangup``: returns when nobody waits for the answer any more (the
        requester closed its connection); the running hooks are then cancelled
        and the result is None.  It is watched only while hooks run, and not for
        in-daemon policies (each is bounded by its own timeout, and nothing of it
        outlives the event): an event without a process to stop costs no task and
        no extra read.
        """
        session_id = raw.get("session_id")
        known = isinstance(session_id, str) and self.sessions.get(session_id) is not None
        info = None if known else await agent.resolve(event_name, raw)
        guest = guest_at_claude_door(raw)
        guest_event: AgentEvent | None = None
        if guest is not None:
            if info is None:
                info = await agent.resolve(event_name, raw)
            found = self._prepare_guest(guest, event_name, raw, info.env, info.pid, client)
            if found is None:
                return b""  # its own door runs the hooks: no opinion here
            prepared, guest_event = found
        else:
            prepared = self.prepare(
                event_name,
                raw,
                env=info.env if info is not None else None,
                agent_pid=info.pid if info is not None else None,
                client=client,
                agent_caps_stop=agent_caps_stop,
            )
        if info is None and prepared.runs_hooks:
            info = await agent.resolve(event_name, raw)
            prepared.env, prepared.agent_pid = info.env, info.pid
            if info.pid is not None:
                prepared.session.agent_pid = info.pid
        context = info.context if info is not None else "interactive"
        result = await self._run_watched(prepared, context, deliver_async, hangup)
        if guest is not None and guest_event is not None and result is not None:
            return guest.encode(result, guest_event).stdout.strip().encode()
        return result

    async def _run_watched(
        self,
        prepared: PreparedEvent,
        context: str,
        deliver_async: bool,
        hangup: Callable[[], Awaitable[None]] | None,
    ) -> FireResult | None:
        """:meth:`run`, cancelled when ``hangup`` returns (None then)."""
        if hangup is None or not prepared.runs_hooks or self._nothing_to_watch(prepared):
            return await self.run(prepared, context=context, deliver_async=deliver_async)
        result: FireResult | None = None

        async def run_hooks() -> None:
            nonlocal result
            result = await self.run(prepared, context=context, deliver_async=deliver_async)
            nursery.cancel_scope.cancel()

        async def watch() -> None:
            await hangup()
            nursery.cancel_scope.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_hooks)
            nursery.start_soon(watch)
        return result

    def _nothing_to_watch(self, prepared: PreparedEvent) -> bool:
        """Every hook of the event is answered in one synchronous step (an in-daemon
        policy that cannot suspend): nothing to cancel, so no hang-up to watch for."""
        at_once = self.answers_at_once
        if at_once is None:
            return False
        project, trusted = prepared.session.project, prepared.config.project_trusted
        return all(at_once(spec.handler, project, trusted) for spec in prepared.plan.hooks)

    def prepare(
        self,
        event_name: str,
        raw: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        agent_pid: int | None = None,
        client: str = "",
        agent_caps_stop: bool = False,
        agent: str = DEFAULT_AGENT,
        agent_spec: EventSpec | None = None,
        once: bool = False,
        workdir: str | None = None,
    ) -> PreparedEvent:
        """Everything before the hooks run, synchronously: validate the input, find
        the session and its config generation (trust applied), plan the hooks.

        ``agent`` names the session's agent (status, tail, audit); ``agent_spec`` is the
        agent's event when it is not Claude Code (``event_name`` and ``raw`` are then
        already the canonical event its adapter decoded).  ``once``: a one-shot fire
        (``protocol.Fire.once``) — a session made for it is forgotten afterwards.
        ``workdir``: where the hooks run, when the agent runs them elsewhere than the
        input's ``cwd`` (``Adapter.hook_workdir``)."""
        event = decode_event(raw, event_name)
        _check_paths(event_name, event, raw)
        event.workdir = workdir
        known = self.sessions.get(event.typed.session_id)
        named = (env or {}).get("CLAUDE_PROJECT_DIR") or event.typed.cwd
        # A known session keeps the project it started in (the table ignores
        # another); the check below then looks at the project actually used.
        project = (env or {}).get("CLAUDE_PROJECT_DIR") or (
            known.project if known is not None else event.typed.cwd
        )
        if known is None or project != known.project:  # a known one was checked already
            problem = path_problem(project, absolute=True)
            if problem is not None:
                raise EventInputError(f"{event_name}: the project directory {problem}")
        session = self.sessions.touch(event.typed.session_id, project, agent_pid, client, agent)
        full_config = self.registry.config_for(session.project)
        if agent_spec is not None:
            self._warn_losses(agent, full_config)
        extra = session.extra_groups()
        matched = self.engine.matched(full_config, event, extra)
        held_back = 0
        if matched:
            config = self.trust.apply(full_config, session.project)
            if config is not full_config:  # the project is not trusted: match again
                kept = self.engine.matched(config, event, extra)
                held_back = _hook_count(matched) - _hook_count(kept)
                matched = kept
            plan = self.engine.plan(config, event, extra, session.state, matched)
        else:
            # Nothing matches the event (most tool calls): the gate only takes groups
            # away, so no verdict is asked — no stat of the trust store — and there is
            # nothing to plan.
            config, plan = full_config, Plan([], [])
        if event_name == "PreToolUse" and raw.get("tool_name") == "Skill":
            # After planning: the skill's hooks apply from the next event on.
            self._activate_skill(session, raw.get("tool_input"))
        audit = self.audit.begin(
            event_name,
            raw,
            session.session_id,
            session.project,
            client,
            agent,
            agent_spec.native if agent_spec is not None else "",
            # One hook: its run's record waits for the event's and goes out with it —
            # nothing awaits between the two.  With more, each run is written when
            # it ends, so a crash while a sibling still runs loses none.
            batch_runs=len(plan.units) == 1 and len(plan.units[0].hooks) == 1,
        )
        return PreparedEvent(
            event,
            session,
            config,
            held_back,
            plan,
            audit,
            env,
            agent_pid,
            agent_caps_stop,
            agent_spec,
            forget_session=once and known is None,
            kept_project=known.project if known and named != known.project else None,
        )

    def _prepare_guest(
        self,
        guest: Adapter,
        event_name: str,
        raw: dict[str, Any],
        env: dict[str, str] | None,
        agent_pid: int | None,
        client: str,
    ) -> tuple[PreparedEvent, AgentEvent] | None:
        """Another agent's input at Claude Code's http door (:mod:`hookd.agents.guests`):
        None when that agent's own door also gets this event (it runs the hooks, once);
        else the event prepared as that agent's — its adapter decodes it (tool names
        mapped), its capabilities degrade the answer, its working directory is used —
        and the decoded event its adapter encodes the answer for."""
        cwd = raw.get("cwd")
        if guest.own_door_wired(event_name, env, cwd if isinstance(cwd, str) else None):
            log.info(
                "another agent's event through Claude Code's wiring: its own door runs it",
                agent=guest.name,
                hook_event=event_name,
            )
            return None
        try:
            agent_event = guest.decode(event_name, raw)
        except UnknownAgentEvent as exc:
            raise EventInputError(str(exc)) from None
        prepared = self.prepare(
            agent_event.event,
            agent_event.input,
            env=env,
            agent_pid=agent_pid,
            client=client,
            agent=guest.name,
            agent_spec=agent_event.spec,
            workdir=guest.hook_workdir(agent_event, env),
        )
        return prepared, agent_event

    def _warn_losses(self, agent: str, config: HookConfig) -> None:
        """The first event of ``agent`` on a config generation logs, once, every hook
        that agent cannot run as written (``capabilities.report``: warnings for an event
        it only has after the fact or a Stop block it cannot continue on; info for an
        event it never fires, an ask that becomes a deny, a matcher hookd applies).

        Here rather than at load time because only here is it known which agents use
        the daemon; ``hookctl explain`` and ``doctor`` give the full report on demand.
        """
        key = (config.generation, agent)
        if key in self._reported:
            return
        if len(self._reported) > 256:  # old generations: forget them, keep it bounded
            self._reported.clear()
        self._reported.add(key)
        for finding in report(adapter_for(agent), config.all_hooks()):
            (log.info if finding.severity == "info" else log.warning)(
                "agent cannot run a hook as written",
                agent=agent,
                hook_event=finding.event,
                hook=finding.hook,
                source=finding.source,
                why=finding.message,
                generation=config.generation,
            )

    def _activate_skill(self, session: Session, tool_input: object) -> None:
        """The agent invoked a skill: register its frontmatter hooks for this session
        (skill scope, for the rest of the session — config/skills.py).  A project's
        skill is project code: it needs the project trusted, like its hook files."""
        name = invoked_skill(tool_input) if isinstance(tool_input, dict) else None
        if name is None:
            return
        found = find_skill(self.registry.layout, session.project, name)
        if found is None:
            log.debug("skill without a SKILL.md here", skill=name, project=session.project)
            return
        path = found.path
        loaded, groups = load_skill(path)
        if found.in_project:
            # Decided on where it was found: a symlinked skill directory or SKILL.md that
            # leads out of the project is still the project's.  A pinned project's
            # fingerprint (which covers its skills) is computed afresh, with the bytes
            # just read standing for this skill's file: what is checked is what runs.
            read = {os.path.relpath(path, session.project): loaded.digest}
            verdict = self.trust.verdict(session.project, read=read)
            if not verdict.trusted:
                log.warning("skill hooks held back", skill=name, reason=verdict.reason)
                return
        if loaded.errors:
            log.warning(
                "skill hooks not applied", skill=name, errors=[str(e) for e in loaded.errors]
            )
            return
        session.hooks[str(path)] = groups
        log.info("skill hooks active", skill=name, session=session.session_id, hooks=len(groups))

    def answer_now(self, prepared: PreparedEvent, deliver_async: bool = False) -> FireResult | None:
        """The result of an event that runs no hook, computed without awaiting (None
        when hooks must run)."""
        if prepared.runs_hooks:
            return None
        result = self.engine.answer_without_hooks(
            prepared.config,
            prepared.event,
            prepared.plan,
            prepared.session.state,
            cap_stop=not prepared.agent_caps_stop,
        )
        return self._finish(prepared, result, deliver_async)

    async def run(
        self,
        prepared: PreparedEvent,
        *,
        context: str = "interactive",
        progress: ProgressFn | None = None,
        deliver_async: bool = False,
    ) -> FireResult:
        """Run the prepared event's hooks (or answer at once if it has none)."""
        now = self.answer_now(prepared, deliver_async)
        if now is not None:
            return now
        session = prepared.session
        session.in_flight += 1
        self.activity.event_started()
        charge = EventCharge(self.budget) if self.budget is not None else None
        origin = None
        if self.telemetry is not None:
            prepared.span = self.telemetry.event_span(prepared.env)
            origin = self._async_origin(prepared, self.telemetry)
        try:
            try:
                result = await self.engine.fire(
                    prepared.config,
                    prepared.event,
                    session=session.state,
                    extra_groups=session.extra_groups(),
                    env=prepared.env,
                    context=context,
                    async_sink=self.async_runner.sink(prepared.agent_pid, origin),
                    progress=self._progress(session, progress, prepared),
                    plan=prepared.plan,
                    cap_stop=not prepared.agent_caps_stop,
                    output_budget=charge,
                )
            finally:
                session.in_flight -= 1
                self.activity.event_finished()
                if charge is not None:
                    charge.close()
            return self._finish(prepared, result, deliver_async)
        except BaseException:
            # Cancelled (the requester hung up, the daemon stops) or a bug on the way
            # to the event's record: no event record, but the run that finished is.
            self.audit.flush(prepared.audit)
            if prepared.forget_session:
                self.sessions.end(session.session_id)
            raise

    def _finish(
        self, prepared: PreparedEvent, result: FireResult, deliver_async: bool
    ) -> FireResult:
        session, event_name = prepared.session, prepared.event.name
        if prepared.agent_spec is not None:
            result = degrade(result, prepared.agent_spec)
        for held in prepared.plan.held:  # paused fail-closed hooks: the blocks that stood in
            self.audit.run(prepared.audit, held.hook, held)
        self.audit.event(prepared.audit, result, prepared.held_back)
        received = None
        if deliver_async:
            received = self.async_delivery.attach(result, session.session_id)
        if self.telemetry is not None:
            self.telemetry.event(
                prepared.span, prepared.env, prepared.audit, result, prepared.held_back, received
            )
        session.events += 1
        session.last_event = event_name
        session.last_event_at = time.time()
        self.activity.counters["events"] += 1
        if result.hooks and debug_enabled():
            # At debug: the audit log has each event and each run, and the engine logs
            # at info the runs that went wrong.  Events that ran no hook (most tool
            # calls) log nothing: the audit log is their record.
            log.debug(
                "event",
                session=session.session_id,
                hook_event=event_name,
                agent_pid=prepared.agent_pid,
                hooks=len(result.hooks),
                decision=result.decision,
                generation=result.generation,
            )
        if event_name == "SessionEnd":
            self.sessions.end(session.session_id)
            self.prune_breakers()
        elif prepared.forget_session:
            self.sessions.end(session.session_id)
        return result

    def held_back(self, prepared: PreparedEvent) -> protocol.HeldBack | None:
        """What a reply says of the hooks the trust gate held back (None: none were)."""
        if not prepared.held_back:
            return None
        project = prepared.session.project
        return protocol.HeldBack(
            hooks=prepared.held_back, project=project, reason=self.trust.verdict(project).reason
        )

    @staticmethod
    def _async_origin(prepared: PreparedEvent, telemetry: Telemetry) -> AsyncOrigin:
        span = prepared.span
        assert span is not None
        prompt = prepared.event.raw.get("prompt_id")
        return AsyncOrigin(
            lambda: telemetry.async_span(span),
            prepared.session.agent,
            prompt if isinstance(prompt, str) else "",
        )

    def _progress(
        self, session: Session, extra: ProgressFn | None, prepared: PreparedEvent
    ) -> ProgressFn:
        activity = self.activity

        def on_progress(
            phase: str, ref: HookRef, run: HookRun | None, invocation: Invocation
        ) -> None:
            if phase == "started":
                activity.hook_started(ref, session.session_id, invocation)
            else:
                activity.hook_finished(ref, session.session_id, run, invocation, session.agent)
                if run is not None:
                    session.hook_runs += 1
                    session.outcomes[run.outcome] += 1
                    self._account(invocation, session.session_id, ref, run, prepared)
            if extra is not None:
                extra(phase, ref, run, invocation)

        return on_progress

    def _account(
        self,
        invocation: Invocation,
        session_id: str,
        ref: HookRef,
        run: HookRun,
        prepared: PreparedEvent,
    ) -> None:
        """Feed one finished run to the circuit breaker, the audit log and telemetry.

        A run the daemon could not start for want of resources is not counted
        (:attr:`HookRun.daemon_fault`), but counted apart and logged: it is the
        daemon's trouble, whoever caused it."""
        audit = prepared.audit
        self.audit.run(audit, ref, run)
        if self.telemetry is not None and prepared.span is not None:
            self.telemetry.run(prepared.span, audit, ref, run)
        if run.daemon_fault:
            self.activity.counters["daemon_faults"] += 1
            log.warning(
                "the daemon could not start a hook",
                hook=ref.name,
                session=session_id,
                error=run.error,
            )
        if self.breaker.record(invocation.spec, session_id, run) == "paused":
            key = breaker_key(invocation.spec, session_id)
            log.warning(
                "hook paused by the circuit breaker",
                hook=ref.name,
                key=key,
                session=session_id,
                error=run.error,
            )
            self.activity.counters["breaker_paused"] += 1
            self.audit.flush(audit)  # the run that tripped it goes first
            self.audit.breaker(key, ref.name, "paused", run.error)

    def prune_breakers(self) -> None:
        """Keep breakers only for hooks that exist now: every loaded project's config
        (policy and user hooks included) and every live session's own hooks.  Called
        when a reload or a session's end may have removed some."""
        live: set[str] = set()
        sessions: set[str] = set()
        for project in self.registry.projects():
            config = self.registry.config_for(project, use=False)
            live.update(spec.hook_id for spec in config.all_hooks())
        for session in self.sessions.all():
            sessions.add(session.session_id)
            for group in session.extra_groups():
                live.update(spec.hook_id for spec in group.hooks)
        dropped = self.breaker.retain(live, sessions)
        if dropped:
            log.info("breakers of removed hooks forgotten", count=len(dropped))

    def reset_breakers(self, pattern: str | None) -> list[str]:
        """Close breakers (``hookctl reset``); each reset is audited."""
        keys = self.breaker.reset(pattern)
        for key in keys:
            self.audit.breaker(key, key, "reset")
        return keys


def _check_paths(event_name: str, event: DecodedEvent, raw: dict[str, Any]) -> None:
    """The same rule as every path a request names (hookd_client/paths.py): a relative
    ``cwd`` would be resolved against the daemon's own directory — the hooks' working
    directory and, without ``CLAUDE_PROJECT_DIR``, the project; the paths python hooks'
    workers read may hold no NUL and no more than ``PATH_MAX``."""
    problem = path_problem(event.typed.cwd, absolute=True)
    if problem is not None:
        raise EventInputError(f"{event_name} input: `cwd` {problem}")
    for field in _PATH_FIELDS:
        value = raw.get(field)
        if isinstance(value, str) and value and (problem := path_problem(value)):
            raise EventInputError(f"{event_name} input: `{field}` {problem}")


def _hook_count(groups: tuple[IndexedGroup, ...]) -> int:
    return sum(len(g.group.hooks) for g in groups)

"""The engine: one event in, one aggregated answer out.

``Engine.fire`` selects the hooks (matchers, ``if``, dedup, ``once``, scope
rules), runs them — every matching hook in parallel, each with its own copy of
the input; a ``sequential`` group as one ordered chain — reads each result
(:mod:`hookd.engine.interpret`) and combines them (:mod:`hookd.engine.aggregate`).

The engine owns no long-lived state of its own: configuration arrives as an
immutable :class:`HookConfig` (so an event finishes on the generation it
started with), per-session memory (``once``, the Stop-block counter) as a
:class:`SessionState`, and background hooks go to an :class:`AsyncSink` that
its caller owns.  That keeps the one-shot CLI and the daemon on the same code.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
import structlog
import trio

from hookd.config.matching import IfMemo, if_rule_matches, tool_aliases
from hookd.config.model import GroupSpec, HookConfig, HookSpec
from hookd.config.schema import AgentHandler, CommandHandler, Handler, PromptHandler
from hookd.config.timeouts import hook_timeout
from hookd.engine.aggregate import aggregate
from hookd.engine.breaker import Pause
from hookd.engine.interpret import interpret, paused_run
from hookd.engine.selection import IndexedGroup, index_for, indexed_group
from hookd.handlers.base import (
    HandlerFn,
    HandlerResult,
    HttpPolicy,
    Invocation,
    RunAdopter,
    failed_with,
)
from hookd.handlers.process import OutputBudget
from hookd.logging import debug_enabled
from hookd.safe_names import file_name_for
from hookd_client.events import DecodedEvent, matcher_query
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = [
    "AsyncSink",
    "Engine",
    "EngineSettings",
    "Plan",
    "ProgressFn",
    "SessionState",
]

log = structlog.get_logger("hookd.engine")

ProgressFn = Callable[[str, HookRef, HookRun | None, Invocation], None]
"""Called with ``"started"`` (run is None) and ``"finished"`` for every hook run."""
Gate = Callable[[HookSpec, str], Pause | None]
"""Asked per selected hook and session id: the hook's pause (circuit breaker), or None."""


@dataclass
class SessionState:
    """What the engine remembers about one session between events."""

    once_done: set[str] = field(default_factory=set)
    stop_blocks: int = 0


class AsyncSink(Protocol):
    """Takes over a background (``async``/``asyncRewake``) hook; the caller owns it.

    ``start`` returns None when it took the hook, or a reason when it refused
    it (e.g. its queue is full): the event then reports the refusal as that
    hook's non-blocking error instead of pretending it runs.
    """

    def start(self, spec: HookSpec, invocation: Invocation, engine: Engine) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """The engine's options; built by ``hookd.daemon.options.engine_settings`` from the
    daemon's settings, where their defaults live."""

    stop_block_cap: int
    """Consecutive Stop/SubagentStop blocks before the block is overridden (0: no cap)."""
    spill_dir: str
    """Where hook strings past Claude Code's 10,000-character cap are saved."""
    env_file_dir: str
    """Where ``CLAUDE_ENV_FILE`` files go when the agent names none."""


@dataclass(frozen=True, slots=True)
class Plan:
    """The hooks one event will run (``units``) and the paused ones it does not run."""

    units: list[_Unit]
    skipped: list[str]
    """Why each paused hook did not run (the event's ``errors``)."""
    held: list[HookRun] = field(default_factory=list)
    """The blocks that stand for paused hooks which fail closed
    (:func:`hookd.engine.interpret.paused_run`): a pause never turns a block into an allow."""

    @property
    def hooks(self) -> list[HookSpec]:
        """Every hook the plan runs, in order."""
        return [spec for unit in self.units for spec in unit.hooks]


@dataclass(frozen=True, slots=True)
class _Unit:
    """What runs as one task: one hook, or one sequential chain."""

    hooks: tuple[HookSpec, ...]
    sequential: bool


class Engine:
    """Selects, runs, reads and merges; constructed with everything it runs.

    ``handlers`` is the handler table (:func:`hookd.handlers.registry.handler_table`):
    handler Struct type → runner; a kind missing from it fails as "not
    available".  ``gate`` is asked about every selected hook (the daemon's
    circuit breaker); None lets every hook run.
    """

    def __init__(
        self,
        handlers: Mapping[type[Any], HandlerFn],
        settings: EngineSettings,
        *,
        gate: Gate | None = None,
    ) -> None:
        self.settings = settings
        self.gate = gate
        self._handlers = dict(handlers)

    # --- selection ---------------------------------------------------------

    def matched(
        self,
        config: HookConfig,
        event: DecodedEvent,
        extra_groups: Sequence[GroupSpec] = (),
    ) -> tuple[IndexedGroup, ...]:
        """The groups whose matcher accepts ``event`` (the config's, then the session's
        own), before ``if`` rules, ``once`` and deduplication choose among their hooks.

        Empty for most events: nothing is configured for them.  A config with some
        hooks taken away (the trust gate's) matches a subset of these groups, so an
        event that matches none here runs nothing under any verdict.
        """
        index = index_for(config)
        groups = index.groups(event.name)
        # Session groups arrive for every event the session registered: keep this one's.
        own = [g for g in extra_groups if g.event == event.name] if extra_groups else []
        if not groups and not own:
            return ()  # the common case: nothing configured for this event
        extra = [indexed_group(config, g, event.name) for g in own]
        query = matcher_query(event)
        if query is not None:
            tool = event.raw.get("tool_name")
            candidates = tool_aliases(query) if isinstance(tool, str) else (query,)
            if isinstance(tool, str):
                candidates = (*candidates, *_other_names(event.raw))
            groups = index.matching(event.name, candidates)
            extra = [g for g in extra if g.matcher.matches(candidates)]
        return (*groups, *extra)

    def select(
        self,
        config: HookConfig,
        event: DecodedEvent,
        extra_groups: Sequence[GroupSpec] = (),
        session: SessionState | None = None,
        matched: tuple[IndexedGroup, ...] | None = None,
    ) -> list[_Unit]:
        """The hooks this event runs, in configuration order, deduplicated.

        Per-generation work (matchers, scope switches, dedup keys) comes from the
        config's :class:`~hookd.engine.selection.SelectionIndex`; only ``if``
        rules, ``once`` and deduplication are decided here, per event.
        ``matched``: :meth:`matched` of the same arguments, when the caller has it.
        """
        if matched is None:
            matched = self.matched(config, event, extra_groups)
        if not matched:
            return []
        index = index_for(config)
        chooser = _Chooser(event, session, index.if_memo)
        units: list[_Unit] = []
        for group in matched:
            chosen = chooser.choose(group)
            if not chosen:
                continue
            if group.group.sequential:
                units.append(_Unit(tuple(chosen), sequential=True))
            else:
                units.extend(_Unit((spec,), sequential=False) for spec in chosen)
        return units

    def plan(
        self,
        config: HookConfig,
        event: DecodedEvent,
        extra_groups: Sequence[GroupSpec] = (),
        session: SessionState | None = None,
        matched: tuple[IndexedGroup, ...] | None = None,
    ) -> Plan:
        """What the event will run: the selected units, minus those the gate pauses."""
        units = self.select(config, event, extra_groups, session, matched)
        if self.gate is None:
            return Plan(units, [])
        return _apply_gate(units, self.gate, event)

    def answer_without_hooks(
        self,
        config: HookConfig,
        event: DecodedEvent,
        plan: Plan,
        session: SessionState | None = None,
        cap_stop: bool = True,
    ) -> FireResult:
        """The answer to an event that runs no hook — synchronously, with no await.

        Most events match no hook; answering them without a task, a nursery or
        an environment copy is what lets the daemon reply to them inline.
        ``cap_stop``: see :meth:`fire`.
        """
        # No run: nothing to spill; a paused fail-closed hook's block is all there is.
        result = aggregate(event.name, plan.held)
        result.errors.extend(plan.skipped)
        result.generation = config.generation
        if cap_stop and session is not None and event.name in ("Stop", "SubagentStop"):
            self._stop_cap(result, session)
        return result

    # --- running -------------------------------------------------------------

    async def fire(
        self,
        config: HookConfig,
        event: DecodedEvent,
        *,
        session: SessionState | None = None,
        extra_groups: Sequence[GroupSpec] = (),
        env: Mapping[str, str] | None = None,
        context: str = "interactive",
        async_sink: AsyncSink | None = None,
        progress: ProgressFn | None = None,
        plan: Plan | None = None,
        cap_stop: bool = True,
        output_budget: OutputBudget | None = None,
    ) -> FireResult:
        """Run the event's hooks and aggregate; ``plan`` if the caller already made one.

        ``output_budget``: where the event's command hooks charge the output they keep.

        ``cap_stop``: apply ``stop_block_cap`` to Stop/SubagentStop blocks.  False
        when the agent enforces its own cap (Claude Code: the 9th consecutive block
        is overridden by Claude Code itself) — a second cap in hookd would end the
        loop with another result than the native run."""
        if plan is None:
            plan = self.plan(config, event, extra_groups, session)
        if not plan.units:
            return self.answer_without_hooks(config, event, plan, session, cap_stop)
        units, skipped, held = plan.units, plan.skipped, plan.held
        # Read-only for every handler (a command hook's runner copies it to add its own).
        base_env: Mapping[str, str] = dict(os.environ) if env is None else env
        project_dir = base_env.get("CLAUDE_PROJECT_DIR") or event.typed.cwd
        budget_end: float | None = None
        if event.name == "SessionEnd":
            budget_end = trio.current_time() + config.session_end_budget

        http_policy = HttpPolicy(config.allowed_http_hook_urls, config.http_hook_allowed_env_vars)
        flat: list[HookSpec] = [spec for unit in units for spec in unit.hooks]
        runs: list[HookRun | None] = [None] * len(flat)
        index_units: list[list[int]] = []
        position = 0
        for unit in units:
            index_units.append(list(range(position, position + len(unit.hooks))))
            position += len(unit.hooks)

        encoded: list[tuple[dict[str, Any], bytes]] = []

        def stdin_of(raw: dict[str, Any]) -> bytes:
            """The JSON a hook reads, encoded once per input: every hook of the event
            shares one copy (an 8 MiB input is not 8 MiB per hook); a sequential
            chain's rewritten input gets its own."""
            if encoded and encoded[0][0] is raw:
                return encoded[0][1]
            data = msgspec.json.encode(raw) + b"\n"
            encoded[:] = [(raw, data)]
            return data

        def invocation(
            spec: HookSpec,
            index: int,
            raw: dict[str, Any],
            background: bool,
            adopter: RunAdopter | None,
        ) -> Invocation:
            budget_left = None if budget_end is None else budget_end - trio.current_time()
            timeout = hook_timeout(spec, event.name, background=background, budget_left=budget_left)
            return Invocation(
                spec=spec,
                event_name=event.name,
                input=raw,
                stdin=stdin_of(raw),
                timeout=timeout,
                env=base_env,
                cwd=event.workdir or event.typed.cwd,
                project_dir=project_dir,
                session_id=event.typed.session_id,
                hook_index=index,
                env_file_dir=self.settings.env_file_dir,
                context=context,
                http_policy=http_policy,
                project_trusted=config.project_trusted,
                async_adopter=adopter,
                output_budget=output_budget,
            )

        # Duck-typed on purpose: isinstance() against a runtime-checkable Protocol
        # walks its attributes, tens of µs on every hook run.
        adopt: RunAdopter | None = getattr(async_sink, "adopt", None)

        async def run_unit(unit: _Unit, indexes: list[int]) -> None:
            raw = event.raw
            for spec, index in zip(unit.hooks, indexes, strict=True):
                handler = spec.handler
                background = async_sink is not None and _runs_in_background(handler, context)
                # A foreground command hook may still background itself ({"async": true}).
                adopter = adopt if not background and isinstance(handler, CommandHandler) else None
                inv = invocation(spec, index, raw, background, adopter)
                if background:
                    assert async_sink is not None
                    refused = async_sink.start(spec, inv, self)
                    runs[index] = (
                        HookRun(hook=spec.ref(), outcome="success", is_async=True)
                        if refused is None
                        else HookRun(hook=spec.ref(), outcome="non_blocking_error", error=refused)
                    )
                    continue
                run = await self.run_one(spec, inv, progress)
                runs[index] = run
                if run.outcome == "success" and handler.once and session is not None:
                    session.once_done.add(spec.hook_id)
                if not unit.sequential:
                    continue
                if run.outcome == "blocking" or _denies(run):
                    break  # the first block stops the chain
                updated = _updated_input(run)
                if updated is not None:
                    raw = {**raw, "tool_input": updated}

        if len(units) == 1:
            # One hook (or one sequential chain), the usual case: run it in this task
            # rather than in a nursery of one — a task start and a scheduler pass less.
            await run_unit(units[0], index_units[0])
        else:
            async with trio.open_nursery() as nursery:
                for unit, indexes in zip(units, index_units, strict=True):
                    nursery.start_soon(run_unit, unit, indexes)

        done = [r for r in runs if r is not None]
        kept_units = _renumber(index_units, runs)
        for run in held:  # after the runs, each its own unit
            kept_units.append([len(done)])
            done.append(run)
        result = aggregate(event.name, done, kept_units, spill=self._spiller(event))
        result.errors.extend(skipped)
        result.generation = config.generation
        if cap_stop and session is not None and event.name in ("Stop", "SubagentStop"):
            self._stop_cap(result, session)
        return result

    async def run_one(
        self, spec: HookSpec, inv: Invocation, progress: ProgressFn | None = None
    ) -> HookRun:
        """Run one hook and interpret its result; never raises for a hook's misbehaviour."""
        ref = spec.ref()
        if progress is not None:
            progress("started", ref, None, inv)
        started = time.perf_counter()
        fn = self._handlers.get(type(spec.handler))
        if fn is None:
            kind = ref.type
            result = HandlerResult(
                exit_code=None, failure=f"handler type `{kind}` is not available in this hookd"
            )
        elif inv.context == "batch" and isinstance(spec.handler, PromptHandler | AgentHandler):
            result = HandlerResult(exit_code=None, failure="unsupported in batch context")
        else:
            try:
                result = await fn(spec.handler, inv)
            except trio.Cancelled:
                # The event was cancelled (its requester hung up, the daemon stops):
                # the run leaves the running view; there is no result to record.
                if progress is not None:
                    progress("finished", ref, None, inv)
                raise
            except Exception as exc:  # a handler bug must not take the event down
                log.exception("handler crashed", hook=ref.name, source=ref.source)
                result = failed_with(f"handler error: {exc!r}", exc)
        duration = (time.perf_counter() - started) * 1000
        run = interpret(spec, inv.event_name, result, duration)
        run.launch = inv.launch
        # The audit log has every run; the daemon's log keeps the runs that went wrong
        # (a rendered, flushed line per run cost more than a fast policy's whole call).
        quiet = run.outcome in _QUIET_OUTCOMES
        if not quiet or debug_enabled():
            (log.debug if quiet else log.info)(
                "hook run",
                session=inv.session_id,
                hook_event=inv.event_name,
                hook=ref.name,
                source=ref.source,
                outcome=run.outcome,
                exit_code=run.exit_code,
                duration_ms=run.duration_ms,
            )
        if progress is not None:
            progress("finished", ref, run, inv)
        return run

    def _stop_cap(self, result: FireResult, session: SessionState) -> None:
        cap = self.settings.stop_block_cap
        if result.decision != "block":
            session.stop_blocks = 0
            return
        session.stop_blocks += 1
        if cap and session.stop_blocks > cap:
            result.decision = None
            result.reason = None
            result.blocking_messages = []
            result.system_messages.append(
                f"A hook blocked the turn from ending {session.stop_blocks} consecutive times"
                "—overriding and ending turn."
            )
            session.stop_blocks = 0

    def _spiller(self, event: DecodedEvent) -> Callable[[str], str]:
        def spill(text: str) -> str:
            directory = os.path.join(
                self.settings.spill_dir, file_name_for(event.typed.session_id, empty="none")
            )
            os.makedirs(directory, mode=0o700, exist_ok=True)
            path = os.path.join(directory, f"{event.name}-{uuid.uuid4().hex[:12]}.txt")
            # Owner-only: a spilled output is whatever the hook printed (secrets included).
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            return path

        return spill


_QUIET_OUTCOMES = frozenset({"success", "blocking"})
"""Outcomes that are a hook doing its job: logged at debug (the audit log keeps them)."""


class _Chooser:
    """The per-event part of selection (reference §5.2, §6): ``if`` rules, ``once``,
    and deduplication by identity key across every group the event matched."""

    __slots__ = ("cwd", "event", "memo", "once_done", "seen", "tool_input", "tool_name")

    def __init__(self, event: DecodedEvent, session: SessionState | None, memo: IfMemo) -> None:
        self.event = event.name
        self.cwd = event.typed.cwd
        self.tool_name = str(event.raw.get("tool_name") or "")
        self.tool_input = event.raw.get("tool_input")
        self.once_done = session.once_done if session is not None else None
        self.memo = memo
        self.seen: set[tuple[Any, ...]] = set()

    def choose(self, group: IndexedGroup) -> list[HookSpec]:
        chosen: list[HookSpec] = []
        for c in group.candidates:
            if c.rule is not None and not if_rule_matches(
                c.rule, self.event, self.tool_name, self.tool_input, self.cwd, self.memo
            ):
                continue
            if c.once_id is not None and self.once_done is not None and c.once_id in self.once_done:
                continue
            if c.key is not None:
                if c.key in self.seen:
                    continue
                self.seen.add(c.key)
            chosen.append(c.spec)
        return chosen


def _runs_in_background(handler: Handler, context: str) -> bool:
    """A config ``async``/``asyncRewake`` command hook goes to the async sink (reference §8);
    batch runs (``-p``) wait for asyncRewake hooks, as observed."""
    return (
        isinstance(handler, CommandHandler)
        and (handler.async_ or handler.asyncRewake)
        and not (handler.asyncRewake and context == "batch")
    )


def _denies(run: HookRun) -> bool:
    """The run's JSON answer denies or blocks (a sequential chain stops there)."""
    output = run.output
    if output is None:
        return False
    specific = output.hookSpecificOutput
    return (
        specific is not None and specific.permissionDecision == "deny"
    ) or output.decision == "block"


def _updated_input(run: HookRun) -> dict[str, Any] | None:
    """The tool input a run rewrote, which the next hook of a sequential chain sees."""
    specific = run.output.hookSpecificOutput if run.output is not None else None
    return specific.updatedInput if specific is not None else None


def _renumber(units: list[list[int]], runs: list[HookRun | None]) -> list[list[int]]:
    """Map unit indexes onto the list of runs that actually happened."""
    new_index: dict[int, int] = {}
    for i, run in enumerate(runs):
        if run is not None:
            new_index[i] = len(new_index)
    return [[new_index[i] for i in unit if i in new_index] for unit in units]


def _apply_gate(units: list[_Unit], gate: Gate, event: DecodedEvent) -> Plan:
    """Take the hooks ``gate`` pauses out of the plan; their reasons become the event's
    errors, and a paused hook that fails closed answers with a block (``Plan.held``).
    In a sequential chain that block ends the chain, as the hook's failure would have."""
    kept: list[_Unit] = []
    skipped: list[str] = []
    held: list[HookRun] = []
    session_id = event.typed.session_id
    for unit in units:
        hooks = []
        for spec in unit.hooks:
            pause = gate(spec, session_id)
            if pause is None:
                hooks.append(spec)
                continue
            skipped.append(f"{spec.ref().name}: {pause.reason}")
            block = paused_run(spec, event.name, pause.reason, pause.blocks)
            if block is not None:
                held.append(block)
                if unit.sequential:
                    break  # the first block stops the chain
        if hooks:
            kept.append(_Unit(tuple(hooks), unit.sequential))
    return Plan(kept, skipped, held)


def _other_names(raw: dict[str, Any]) -> tuple[str, ...]:
    """The other names an agent's tool may have (``tool_name_candidates``, set by an
    adapter whose agent names an MCP tool in a way that reads several ways): a matcher
    that accepts any of them fires, so a guard never misses its tool
    (:mod:`hookd.agents.mcp_names`)."""
    found = raw.get("tool_name_candidates")
    if not isinstance(found, list):
        return ()
    return tuple(name for name in found if isinstance(name, str))

"""Config requests: ``hooks``, ``validate``, ``reload``, ``register_session_hooks``,
``clear_session_hooks``.

What the daemon would run, whether a file is valid, re-reading every source,
and the hooks a client registers for one session (callbacks included: they
run on the connection that registered them).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from hookd.config.assemble import explicit_sources
from hookd.config.loader import load_source
from hookd.config.model import HookConfig, HookSpec, Scope
from hookd.config.schema import CallbackHandler, handler_label
from hookd.daemon.connection import Connection
from hookd.daemon.registry import ConfigRegistry, session_groups
from hookd.daemon.sessions import SessionTable
from hookd.daemon.trust import TrustGate, Verdict, needs_trust
from hookd.engine.breaker import CircuitBreaker
from hookd_client import protocol

from .answers import Answer, RequestError

__all__ = ["ConfigRequests"]


class ConfigRequests:
    def __init__(
        self,
        registry: ConfigRegistry,
        sessions: SessionTable,
        trust: TrustGate,
        breaker: CircuitBreaker,
        reload: Callable[[], bool],
    ) -> None:
        self.registry = registry
        self.sessions = sessions
        self.trust = trust
        self.breaker = breaker
        self._reload = reload
        """Re-read every source (the server's: it also tells systemd)."""

    def reload(self, conn: Connection, msg: protocol.Reload) -> Answer:
        changed = self._reload()
        return protocol.ReloadReply(
            id=msg.id,
            data=protocol.Reloaded(
                changed=changed,
                generation=self.registry.generation,
                errors=self.registry.errors(),
            ),
        )

    def validate(self, conn: Connection, msg: protocol.Validate) -> Answer:
        files = []
        for spec in explicit_sources(msg.files):
            loaded = load_source(spec)
            files.append(
                protocol.ValidatedFile(
                    file=str(spec.path),
                    exists=loaded.exists,
                    hooks=sum(len(g.hooks) for _, _, g in loaded.groups),
                    errors=[str(e) for e in loaded.errors],
                    warnings=[str(w) for w in loaded.warnings],
                )
            )
        return protocol.ValidateReply(id=msg.id, data=files)

    def hooks(self, conn: Connection, msg: protocol.Hooks) -> Answer:
        project = msg.cwd
        session = self.sessions.get(msg.session_id) if msg.session_id else None
        if session is not None:
            project = session.project
        config = self.registry.config_for(project)
        verdict = self.trust.verdict(project)
        # Listed from the full config (held-back hooks show, with why), judged by the config
        # that runs: an untrusted project's disableAllHooks does not switch off user hooks.
        gated = self.trust.apply(config, project)
        hooks = []
        extra = session.extra_groups() if session else []
        for event in sorted({*config.groups, *(g.event for g in extra)}):
            for group in (*config.groups_for(event), *(g for g in extra if g.event == event)):
                for spec in group.hooks:
                    why = self._why_not(gated, spec, project, verdict, msg.session_id)
                    hooks.append(
                        protocol.ListedHook(
                            event=event,
                            matcher=group.matcher,
                            type=spec.ref().type,
                            hook=handler_label(spec.handler),
                            scope=spec.scope.label,
                            source=spec.source,
                            timeout=spec.timeout,
                            runs=not why,
                            why=why or None,
                            on_failure=spec.handler.onFailure,
                        )
                    )
        return protocol.HooksReply(
            id=msg.id,
            data=protocol.HookListing(project=project, generation=config.generation, hooks=hooks),
        )

    def _why_not(
        self,
        config: HookConfig,
        spec: HookSpec,
        project: str,
        verdict: Verdict,
        session_id: str | None,
    ) -> str | None:
        """Why the hook does not run (scope switches, trust, the breaker), or None."""
        why: str | None = None
        if not config.scope_allowed(spec.scope):
            why = "disabled by disableAllHooks or allowManagedHooksOnly"
        elif not verdict.trusted and needs_trust(spec):
            why = verdict.reason
        else:
            why = self.breaker.skip_reason(spec, session_id or "")
        return why

    def register(self, conn: Connection, msg: protocol.RegisterSessionHooks) -> Answer:
        scope = Scope.SKILL if msg.scope == "skill" else Scope.SESSION
        groups, errors = session_groups(msg.source, scope, msg.hooks)
        if errors:
            raise RequestError("bad_request", "; ".join(str(e) for e in errors))
        existing = self.sessions.get(msg.session_id)
        project = existing.project if existing else (msg.project or os.getcwd())
        session = self.sessions.touch(msg.session_id, project, conn.agent_pid, conn.client)
        session.hooks[msg.source] = groups
        for group in groups:
            for spec in group.hooks:
                if isinstance(spec.handler, CallbackHandler):
                    session.callback_owners[spec.handler.callback_id] = conn
        count = sum(len(g.hooks) for g in groups)
        return protocol.RegisterReply(id=msg.id, data=protocol.Registered(registered=count))

    def clear(self, conn: Connection, msg: protocol.ClearSessionHooks) -> Answer:
        session = self.sessions.get(msg.session_id)
        removed = 0
        if session is not None:
            keys = [msg.source] if msg.source is not None else list(session.hooks)
            for key in keys:
                removed += sum(len(g.hooks) for g in session.hooks.pop(key, []))
        return protocol.ClearReply(id=msg.id, data=protocol.Removed(removed=removed))

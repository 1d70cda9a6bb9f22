"""Control requests: ``shutdown``, ``reset_breakers``, ``status_line``.

Steering the daemon (stop it, let paused hooks run again) and running the
project's ``statusLine`` / ``fileSuggestion`` command for Claude Code.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from hookd.config.timeouts import command_setting_timeout
from hookd.daemon.connection import Connection
from hookd.daemon.lifecycle import Lifecycle
from hookd.daemon.registry import ConfigRegistry
from hookd.daemon.trust import TrustGate
from hookd.handlers.statusline import run_file_suggestion, run_status_line
from hookd_client import protocol
from hookd_client.paths import path_problem

from .answers import Answer, Later, RequestError

__all__ = ["ControlRequests"]


class ControlRequests:
    def __init__(
        self,
        lifecycle: Lifecycle,
        reset_breakers: Callable[[str | None], list[str]],
        registry: ConfigRegistry,
        trust: TrustGate,
    ) -> None:
        self.lifecycle = lifecycle
        self._reset_breakers = reset_breakers
        self.registry = registry
        self.trust = trust

    def shutdown(self, conn: Connection, msg: protocol.Shutdown) -> Answer:
        """Answered before the stop begins, so the client learns it was heard."""
        conn.send(
            protocol.ShutdownReply(
                id=msg.id, data=protocol.Stopping(stopping=True, pid=os.getpid())
            )
        )
        self.lifecycle.request_stop()
        return None

    def reset_breakers(self, conn: Connection, msg: protocol.ResetBreakers) -> Answer:
        reset = self._reset_breakers(msg.hook)
        return protocol.ResetBreakersReply(id=msg.id, data=protocol.BreakersReset(reset=reset))

    def status_line(self, conn: Connection, msg: protocol.StatusLine) -> Answer:
        """statusLine / fileSuggestion: the command of the project's config, 5 s by default.

        Like hooks, they are off under ``disableAllHooks`` and need a trusted project
        when they come from a project file.
        """
        project = (msg.env or {}).get("CLAUDE_PROJECT_DIR") or msg.cwd
        problem = path_problem(project)
        if problem is not None:
            raise RequestError("bad_request", f"CLAUDE_PROJECT_DIR {problem}")
        config = self.trust.apply(self.registry.config_for(project), project)
        setting = config.status_line if msg.which == "statusLine" else config.file_suggestion
        disabled = config.policy_disables_all or config.disable_all_hooks
        if setting is None or disabled:
            empty = (
                protocol.StatusLineText(line=None)
                if msg.which == "statusLine"
                else protocol.FileSuggestions(paths=[])
            )
            return protocol.StatusLineReply(id=msg.id, data=empty)
        command, timeout = setting.command, command_setting_timeout(setting)

        async def run() -> protocol.StatusLineReply:
            if msg.which == "statusLine":
                line = await run_status_line(command, msg.input, timeout, cwd=msg.cwd, env=msg.env)
                return protocol.StatusLineReply(id=msg.id, data=protocol.StatusLineText(line=line))
            paths = await run_file_suggestion(command, msg.input, timeout, cwd=msg.cwd, env=msg.env)
            return protocol.StatusLineReply(id=msg.id, data=protocol.FileSuggestions(paths=paths))

        return Later(run)

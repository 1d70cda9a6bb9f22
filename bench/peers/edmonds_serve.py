"""Run the Edmonds claude-code-hooks-daemon in the foreground for bench/peers.py.

Run with the peer's own interpreter (``/work/peers/edmonds/.venv/bin/python``):
``edmonds_serve.py PROJECT SOCKET``; ``edmonds_serve.py --config none|deny PROJECT`` first
writes ``PROJECT/.claude/hooks-daemon.yaml`` with every built-in handler disabled
(``none``) or all but ``destructive_git`` (``deny``: it denies ``git reset --hard``).
The daemon part does what the peer's ``cli start`` does after daemonising — load
``PROJECT/.claude/hooks-daemon.yaml``, initialise the controller with the configured
handlers, serve ``HooksDaemon`` on ``SOCKET`` — without the double fork, so the benchmark
owns the process and reads its RSS.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from claude_code_hooks_daemon.config.models import Config  # type: ignore[import-not-found]
from claude_code_hooks_daemon.daemon.controller import (  # type: ignore[import-not-found]
    DaemonController,
)
from claude_code_hooks_daemon.daemon.server import HooksDaemon  # type: ignore[import-not-found]

EVENTS = (
    "pre_tool_use",
    "post_tool_use",
    "session_start",
    "session_end",
    "pre_compact",
    "user_prompt_submit",
    "permission_request",
    "notification",
    "stop",
    "subagent_stop",
)


def write_config(mode: str, project: Path) -> None:
    from claude_code_hooks_daemon.config.validator import (  # type: ignore[import-not-found]
        ConfigValidator,
    )

    lines = ["version: '2.0'", "daemon:", "  idle_timeout_seconds: 1000000", "  log_level: WARNING"]
    lines.append("handlers:")
    for event in EVENTS:
        lines.append(f"  {event}:")
        for name in sorted(ConfigValidator.get_available_handlers(event)):
            keep = mode == "deny" and event == "pre_tool_use" and name == "destructive_git"
            lines.append(f"    {name}: {{enabled: {'true' if keep else 'false'}}}")
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "hooks-daemon.yaml").write_text("\n".join(lines) + "\n")


def main() -> None:
    if sys.argv[1] == "--config":
        write_config(sys.argv[2], Path(sys.argv[3]))
        return
    project, socket_path = Path(sys.argv[1]), sys.argv[2]
    config = Config.find_and_load(project)
    controller = DaemonController()
    handlers = {
        event: {
            k: v.model_dump() if hasattr(v, "model_dump") else v  # enable_tags is a plain list
            for k, v in getattr(config.handlers, event).items()
        }
        for event in EVENTS
    }
    controller.initialise(
        handlers,
        workspace_root=project,
        plugins_config=config.plugins,
        project_handlers_config=config.project_handlers,
        project_languages=config.daemon.languages,
        pseudo_events_config=config.pseudo_events or None,
        plan_workflow=config.plan_workflow,
    )
    daemon_config = config.daemon
    daemon_config.socket_path = socket_path
    daemon_config.pid_file_path = socket_path + ".pid"
    asyncio.run(HooksDaemon(daemon_config, controller).start())


if __name__ == "__main__":
    main()

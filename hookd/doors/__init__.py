"""The doors an agent reaches at run time: how real agent sessions get their events to hookd.

This package changes when an agent's wire changes (a new transport, a new
payload field, a credential); :mod:`hookd.installers` changes when an agent's
*files* change.  Besides the daemon's own Unix socket (:mod:`hookd.daemon`),
the doors are one per hook transport Claude Code offers:

* :mod:`hookd.doors.http_endpoint` — ``http`` hooks posting to a loopback
  endpoint (fast: one keep-alive connection, no process per event);
* ``hookd-relay`` (:mod:`hookd_client.relay`) — a tiny ``command`` hook for the
  events where Claude Code runs no http hooks (SessionStart, Setup) and for
  events whose verdict only an exit code can carry;
* the Claude Code mod (``claude_mod/``, a plugin folder shipped as package
  data) — in process, posting the per-tool-call events to the same http API
  on the daemon's owner-only Unix socket; :mod:`hookd.doors.mod_answer` puts
  the answer into a mod's result shape (``install --transport mod``);
* opencode's plugin (``opencode_plugin/``, package data too) — opencode has no
  command hooks, so hookd's in-process plugin runs the relay per hook call and
  applies the answer :mod:`hookd.agents.opencode` encodes (throw, rewrite the
  arguments, add context).

What every door shares: :mod:`hookd.doors.tcp_peer` (the agent process behind
a loopback connection) and :mod:`hookd.doors.agent_env` (the hook environment
that agent would have given its hooks).
"""

from hookd.doors.http_endpoint import (
    FireFn,
    load_or_create_token,
    open_http_listeners,
    render_http,
    serve_http,
    token_path,
)

__all__ = [
    "DEFAULT_HTTP_PORT",
    "FireFn",
    "load_or_create_token",
    "open_http_listeners",
    "render_http",
    "serve_http",
    "token_path",
]

DEFAULT_HTTP_PORT = 47470
"""The endpoint's default loopback port (``hookd serve --http-port`` overrides it)."""

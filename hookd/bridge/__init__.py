"""The Claude Code bridge: how real Claude Code sessions run their hooks through hookd.

The doors into the daemon, one per hook transport Claude Code offers:

* :mod:`hookd.bridge.http_endpoint` — ``http`` hooks posting to a loopback
  endpoint (fast: one keep-alive connection, no process per event);
* ``hookd-relay`` (:mod:`hookd_client.relay`) — a tiny ``command`` hook for the
  events where Claude Code runs no http hooks (SessionStart, Setup) and for
  events whose verdict only an exit code can carry;
* the Claude Code mod (``claude_mod/``, a plugin folder shipped as package
  data) — in process, posting the per-tool-call events to the same http API
  on the daemon's owner-only Unix socket; :mod:`hookd.bridge.mod_answer` puts
  the answer into a mod's result shape (``install --transport mod``).

:mod:`hookd.bridge.claude_settings` rewrites Claude Code's settings files so
that every event reaches hookd, moving the user's own hooks into hookd's
config (``hookctl claude install``).
"""

from hookd.bridge.http_endpoint import (
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

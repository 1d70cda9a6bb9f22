"""What many test suites need, written once: processes, event inputs, a daemon's config.

``processes``: is a pid alive (zombies count as gone), which processes carry a
marker in their environment.  ``events``: a recorded Claude Code input with
fields changed.  ``daemon``: the handle of an in-process daemon (the
``daemon_factory`` fixture's), its factory's type, and "write this config and
reload now".  ``fake_http``: the loopback h11 server under every fake model API
(Messages, Responses, Gemini).  ``together``: two awaitables at once, both results kept
(a real-CLI scenario's native and through-hookd runs).
"""

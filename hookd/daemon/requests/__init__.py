"""The socket's requests: one dispatcher, one module per request family.

:mod:`~hookd.daemon.requests.dispatch` reads a connection's frames, keeps its
handshake and routes each request through one table (request type → handler)
to a family:

- :mod:`~hookd.daemon.requests.events` — ``fire``, ``relay``, ``check_async``,
  ``subscribe_async``: the event route (answered now, or run in a task);
- :mod:`~hookd.daemon.requests.config` — ``hooks``, ``validate``, ``reload``,
  ``register_session_hooks``, ``clear_session_hooks``;
- :mod:`~hookd.daemon.requests.inspection` — ``status``, ``sessions``,
  ``tail``, ``async_list``;
- :mod:`~hookd.daemon.requests.control` — ``shutdown``, ``reset_breakers``,
  ``status_line``.

Each family is given only the services it uses; :mod:`~hookd.daemon.requests.answers`
says how a handler answers.
"""

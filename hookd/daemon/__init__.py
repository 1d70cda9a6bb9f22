"""The daemon: the server, the socket's requests, the event pipeline and the state they share.

:mod:`hookd.daemon.server` is the top (it builds every part and serves);
:mod:`hookd.daemon.requests` answers the socket's requests;
:mod:`hookd.daemon.pipeline` takes one event from input to result.
"""

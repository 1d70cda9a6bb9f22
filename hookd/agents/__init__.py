"""Agent adapters: every coding agent's hooks run through hookd, each at its own door.

:mod:`hookd.agents.base` says what an adapter is; one module per agent
(``claude``, ``codex``, ``gemini``, ``copilot``, …) is that agent's whole
difference from Claude Code; :mod:`hookd.agents.capabilities` decides what
happens to an answer an agent cannot carry out; :mod:`hookd.agents.registry`
is the one table from an agent's name to its adapter.  The package sits
between the bridge (which installs and serves) and the engine (which runs
hooks on canonical events): it imports the engine, never the daemon.
"""

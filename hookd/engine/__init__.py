"""The hook engine: matching, running, interpreting and aggregating one event."""

from hookd.engine.engine import AsyncSink, Engine, EngineSettings, SessionState

__all__ = ["AsyncSink", "Engine", "EngineSettings", "SessionState"]

"""hookd: the persistent hook runtime for AI coding agents."""

__version__ = "0.1.0"

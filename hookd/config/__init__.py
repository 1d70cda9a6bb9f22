"""Hook configuration: schema, sources, loading and the immutable config model."""

from hookd.config.loader import LoadedSource, build_config, load_source, parse_source_text
from hookd.config.model import ConfigError, GroupSpec, HookConfig, HookSpec, Scope
from hookd.config.sources import SourceLayout, SourceSpec

__all__ = [
    "ConfigError",
    "GroupSpec",
    "HookConfig",
    "HookSpec",
    "LoadedSource",
    "Scope",
    "SourceLayout",
    "SourceSpec",
    "build_config",
    "load_source",
    "parse_source_text",
]

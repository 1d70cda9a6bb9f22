"""The handler-test rig: a real engine with real handlers, data files, a scripted server."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from handlers.scripted_server import Reply, ScriptedServer
from hookd.config.loader import build_config, parse_source_text
from hookd.config.model import HookConfig, Scope
from hookd.config.sources import SourceSpec
from hookd.engine.engine import Engine, SessionState
from hookd.handlers.registry import Handlers
from hookd_client.events import decode_event
from hookd_client.results import FireResult

HANDLER_DATA = Path(__file__).resolve().parent.parent / "data" / "handlers"
CC_FIXTURES = Path(__file__).resolve().parent.parent / "data" / "cc-fixtures"
API_KEY = "sk-test-handlers-key"


def data_reply(name: str, status: int = 200, delay: float = 0.0) -> Reply:
    """A canned HTTP reply whose body is a file under tests/data/handlers/http."""
    body = (HANDLER_DATA / "http" / name).read_bytes()
    kind = "application/json" if name.endswith(".json") else "text/plain"
    return Reply(status=status, body=body, content_type=kind, delay=delay)


def message_reply(name: str, delay: float = 0.0, **substitutions: str) -> Reply:
    """A canned Messages API answer from tests/data/handlers/messages (``@KEY@`` filled in)."""
    text = (HANDLER_DATA / "messages" / name).read_text(encoding="utf-8")
    for key, value in substitutions.items():
        text = text.replace(f"@{key}@", value)
    return Reply(body=text.encode(), delay=delay)


def fixture_input(name: str) -> dict[str, Any]:
    """A recorded Claude Code input, or a synthetic one from tests/data/handlers/events."""
    path = CC_FIXTURES / name
    if not path.exists():
        path = HANDLER_DATA / "events" / name
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@dataclass
class Rig:
    engine: Engine
    handlers: Handlers
    server: ScriptedServer
    project: Path
    tmp: Path

    def config(self, name: str, **substitutions: str) -> HookConfig:
        path = HANDLER_DATA / "configs" / name
        text = path.read_text(encoding="utf-8")
        values = {
            "SERVER": self.server.url,
            "DATA": str(HANDLER_DATA),
            "PROJECT": str(self.project),
            "TMP": str(self.tmp),
            **substitutions,
        }
        for key, value in values.items():
            text = text.replace(f"@{key}@", value)
        kind: Literal["toml", "settings"] = "toml" if name.endswith(".toml") else "settings"
        loaded = parse_source_text(SourceSpec(path=path, scope=Scope.PROJECT, kind=kind), text)
        assert loaded.ok, [str(e) for e in loaded.errors]
        return build_config([loaded])

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp),
            "CLAUDE_PROJECT_DIR": str(self.project),
            "ANTHROPIC_API_KEY": API_KEY,
            **extra,
        }

    async def fire(
        self,
        config: HookConfig,
        fixture: str,
        *,
        env: dict[str, str] | None = None,
        context: str = "interactive",
        session: SessionState | None = None,
        **overrides: Any,
    ) -> FireResult:
        raw = {**fixture_input(fixture), "cwd": str(self.project), **overrides}
        return await self.engine.fire(
            config,
            decode_event(raw),
            session=session or SessionState(),
            env=self.env() if env is None else env,
            context=context,
        )

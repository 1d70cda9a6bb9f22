"""hookd's thin client: event models, the wire protocol and clients for agents.

Depends on msgspec only, so any agent can embed it.
"""

from hookd_client.events import EVENT_NAMES, EVENTS, DecodedEvent, EventInputError, decode_event
from hookd_client.results import FireResult, HookRef, HookRun

__all__ = [
    "EVENTS",
    "EVENT_NAMES",
    "DecodedEvent",
    "EventInputError",
    "FireResult",
    "HookRef",
    "HookRun",
    "decode_event",
]

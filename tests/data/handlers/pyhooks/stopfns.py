"""Stop functions (seed 004): given the conversation, may the agent stop?"""

from __future__ import annotations

from typing import Any


def _texts(conversation: list[dict[str, Any]]) -> list[str]:
    texts: list[str] = []
    for entry in conversation:
        content = (entry.get("message") or {}).get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    return texts


def require_tests(conversation: list[dict[str, Any]]) -> bool | tuple[bool, str]:
    if any("all tests pass" in text for text in _texts(conversation)):
        return True
    return (False, f"Run the tests before stopping ({len(conversation)} entries read)")


def plain_false(conversation: list[dict[str, Any]]) -> bool:
    return False


def wrong_type(conversation: list[dict[str, Any]]) -> str:
    return "yes"

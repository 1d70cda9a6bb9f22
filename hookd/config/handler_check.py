"""Every problem of one handler mapping, not only the first one msgspec meets.

msgspec stops decoding at the first bad field, so a handler with a misspelt
``comand`` and a ``timeout`` of ``"5"`` showed only the timeout; fix it, run
``validate`` again, see the next one.  :func:`handler_problems` decodes the
handler field by field instead and reports each bad one with its JSON path,
and a missing required field together with the unknown key that most resembles
it (``comand`` → ``command``).  :func:`misspelt_keys` finds the same kind of
slip in a handler that decodes — an optional key such as ``timout`` is ignored
the way Claude Code ignores every unknown key, so it is only a warning, but
nothing else would ever say it.
"""

from __future__ import annotations

import difflib
from typing import Any

import msgspec

from hookd.config.schema import Handler

__all__ = ["Problem", "handler_problems", "misspelt_keys"]

Problem = tuple[str, str]
"""``(JSON path below the handler, e.g. ".timeout", what is wrong)``."""

_KINDS: dict[str, type[msgspec.Struct]] = {
    cls.__struct_config__.tag: cls for cls in Handler.__args__
}


def _field_names(kind: type[msgspec.Struct]) -> dict[str, bool]:
    """The handler kind's keys as written in settings files → required."""
    return {
        f.encode_name: f.required for f in msgspec.structs.fields(kind) if f.encode_name != "type"
    }


def _closest(name: str, candidates: list[str]) -> str | None:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    return close[0] if close else None


def handler_problems(handler: object) -> list[Problem]:
    """Every bad field of ``handler`` (empty when it decodes)."""
    try:
        msgspec.convert(handler, Handler, strict=True)
    except msgspec.ValidationError as exc:
        first = str(exc)
    else:
        return []
    if not isinstance(handler, dict):
        return [_split(first)]
    tag = handler.get("type")
    kind = _KINDS.get(tag) if isinstance(tag, str) else None
    if kind is None:  # no known `type`: that is the one problem
        guess = _closest(tag, list(_KINDS)) if isinstance(tag, str) else None
        path, message = _split(first)
        return [(path, f"{message} (did you mean {guess!r}?)" if guess else message)]
    fields = _field_names(kind)
    unknown = [key for key in handler if key not in fields and key != "type"]
    problems: list[Problem] = []
    placeholder: dict[str, Any] = {"type": handler["type"]}
    for name, required in fields.items():
        if name in handler:
            continue
        if required:
            guess = _closest(name, unknown)
            hint = f" (`{guess}` is not a field: did you mean `{name}`?)" if guess else ""
            problems.append(("", f"Object missing required field `{name}`{hint}"))
            placeholder[name] = ""  # every required handler field is a string
    for name, value in handler.items():
        if name not in fields:
            continue
        try:
            msgspec.convert({**placeholder, name: value}, kind, strict=True)
        except msgspec.ValidationError as exc:
            problems.append(_split(str(exc)))
    return problems or [_split(first)]


def misspelt_keys(handler: dict[str, Any]) -> list[Problem]:
    """Unknown keys of a handler that decodes, each with the known key it resembles."""
    tag = handler.get("type")
    kind = _KINDS.get(tag) if isinstance(tag, str) else None
    if kind is None:
        return []
    fields = list(_field_names(kind))
    found = []
    for key in handler:
        if key == "type" or key in fields:
            continue
        guess = _closest(key, fields)
        if guess is not None:
            found.append((f".{key}", f"unknown key `{key}` is ignored (did you mean `{guess}`?)"))
    return found


def _split(message: str) -> Problem:
    """msgspec's ``… - at `$.timeout``` → ``(".timeout", "…")``."""
    head, sep, tail = message.rpartition(" - at `$")
    if not sep:
        return "", message
    return tail.rstrip("`"), head

"""The ``http`` handler (and the seeds' ``webhook``): POST the event JSON to a URL.

Reference §1.3 and §4.5.  What the handler decides, and what it leaves to
:mod:`hookd.engine.interpret`:

* the URL must pass ``allowedHttpHookUrls`` (``*`` wildcards; an empty list
  allows nothing; scheme and host compared case-insensitively, a trailing dot
  on the host ignored).  A refused URL is a *failure*: the hook could not run;
* header values may reference ``$VAR`` / ``${VAR}``; only variables listed in
  the hook's ``allowedEnvVars`` (intersected with ``httpHookAllowedEnvVars``
  when that is set) are substituted, every other reference becomes an empty
  string.  ``Content-Length`` and ``Transfer-Encoding`` from the config are
  dropped: httpx computes them from the body;
* 2xx with an empty body is "no output"; 2xx with JSON is the answer (checked
  by the shared interpreter like any command stdout); 2xx with anything else
  is a failure ("HTTP hook must return JSON"); any other status, a refused
  connection or a protocol error is a failure; the deadline is a timeout.

Redirects are not followed: a 3xx is "not 2xx", and following it could leave
the allowlist.  Header values are secrets: they never reach a log line, an
error text or a :class:`HookRef` label (which shows the URL only).  One
``httpx.AsyncClient`` is shared by every http hook (keep-alive); it belongs to
:func:`hookd.handlers.registry.open_handlers`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import msgspec
import structlog
import trio

from hookd.config.schema import HttpHandler
from hookd.handlers.base import HandlerResult, Invocation, failed_with
from hookd.handlers.http_client import SharedHttpClient

__all__ = ["HttpRunner", "interpolate_header", "url_allowed"]

log = structlog.get_logger("hookd.handlers.http")

_DROPPED_HEADERS = frozenset({"content-length", "transfer-encoding"})
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_URL_PARTS = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#]*)(.*)$", re.DOTALL)


def _normalise(url: str) -> str:
    """Lower-case scheme and authority; drop a trailing dot from the host."""
    match = _URL_PARTS.match(url.strip())
    if match is None:
        return url.strip()
    scheme, authority, rest = match.groups()
    userinfo, at, hostport = authority.rpartition("@")
    host, colon, port = hostport, "", ""
    if not hostport.startswith("[") and hostport.count(":") == 1:
        host, colon, port = hostport.partition(":")
    host = host.rstrip(".") if host not in (".", "") else host
    return f"{scheme.lower()}{userinfo}{at}{host.lower()}{colon}{port}{rest}"


def url_allowed(url: str, patterns: Iterable[str] | None) -> bool:
    """``allowedHttpHookUrls``: ``None`` allows everything, ``()`` nothing.

    A pattern matches the whole URL; ``*`` stands for any run of characters
    (including ``/``), everything else is literal.
    """
    if patterns is None:
        return True
    target = _normalise(url)
    for pattern in patterns:
        regex = ".*".join(re.escape(part) for part in _normalise(pattern).split("*"))
        if re.fullmatch(regex, target, re.DOTALL):
            return True
    return False


def interpolate_header(value: str, env: Mapping[str, str], allowed: frozenset[str]) -> str:
    """Substitute ``$VAR``/``${VAR}`` for allowed variables; the rest become ``""``."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, "") if name in allowed else ""

    return _VAR.sub(one, value)


def _allowed_vars(handler: HttpHandler, inv: Invocation) -> frozenset[str]:
    own = frozenset(handler.allowedEnvVars)
    policy = inv.http_policy.allowed_env_vars
    return own if policy is None else own & frozenset(policy)


class HttpRunner:
    """Runs http hooks on one shared client; one instance per daemon."""

    def __init__(self, client: SharedHttpClient, body_cap: int) -> None:
        self.client = client
        self.body_cap = body_cap

    def headers(self, handler: HttpHandler, inv: Invocation) -> dict[str, str]:
        allowed = _allowed_vars(handler, inv)
        headers = {"Content-Type": "application/json"}
        for name, value in handler.headers.items():
            if name.lower() in _DROPPED_HEADERS:
                continue
            if name.lower() == "content-type":
                headers.pop("Content-Type", None)
            # Stripped: a reference that became "" must not leave an illegal trailing space.
            headers[name] = interpolate_header(value, inv.env, allowed).strip()
        return headers

    async def run(self, handler: HttpHandler, inv: Invocation) -> HandlerResult:
        if not url_allowed(handler.url, inv.http_policy.allowed_urls):
            return HandlerResult(
                exit_code=None, failure=f"URL {handler.url} is not in allowedHttpHookUrls"
            )
        body = inv.stdin.rstrip(b"\n")
        status = 0
        chunks: list[bytes] = []
        size = 0
        truncated = False
        client = self.client.get()
        import httpx  # imported by get(): only a daemon that runs http hooks loads it

        with trio.move_on_after(inv.timeout) as deadline:
            try:
                async with client.stream(
                    handler.method,
                    handler.url,
                    content=body,
                    headers=self.headers(handler, inv),
                    follow_redirects=False,
                ) as response:
                    status = response.status_code
                    async for chunk in response.aiter_bytes():
                        room = self.body_cap - size
                        if len(chunk) > room:
                            chunks.append(chunk[: max(room, 0)])
                            truncated = True
                            break
                        chunks.append(chunk)
                        size += len(chunk)
            except httpx.HTTPError as exc:
                # The exception text names the URL and the error, never headers.
                log.info("http hook transport error", url=handler.url, error=type(exc).__name__)
                return failed_with(f"HTTP request failed: {type(exc).__name__}: {exc}", exc)
        if deadline.cancelled_caught:
            return HandlerResult(exit_code=None, timed_out=True)
        text = b"".join(chunks).decode("utf-8", errors="replace")
        if not 200 <= status < 300:
            first = text.strip().splitlines()[0][:200] if text.strip() else ""
            detail = f"HTTP hook returned status {status}"
            return HandlerResult(
                exit_code=None,
                stderr=text,
                truncated=truncated,
                failure=f"{detail}: {first}" if first else detail,
            )
        if not text.strip():
            return HandlerResult(exit_code=0, json_output=None)
        try:
            answer = msgspec.json.decode(text)
        except (msgspec.DecodeError, UnicodeError, RecursionError):
            return HandlerResult(
                exit_code=None,
                stdout=text,
                truncated=truncated,
                failure="HTTP hook must return JSON",
            )
        return HandlerResult(exit_code=0, stdout=text, truncated=truncated, json_output=answer)

"""The one ``httpx.AsyncClient`` shared by http hooks and the Messages API, made on first use.

Most daemons never run an http, prompt or agent hook; importing httpx (and
building its client and SSL context) costs ~2.5 MB of resident memory and tens
of milliseconds of start-up that such a daemon never uses.  So the client —
and the import — happen at the first call that needs them, and the client is
closed with the handlers (:func:`hookd.handlers.registry.open_handlers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["SharedHttpClient"]


class SharedHttpClient:
    """Keep-alive connections for every http hook; created lazily, closed once."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self._client: httpx.AsyncClient | None = None
        self._closed = False

    @property
    def started(self) -> bool:
        """Whether the client exists (tests read it: no http hook, no client)."""
        return self._client is not None

    def get(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError("the shared http client is closed")
        if self._client is None:
            import httpx

            limits = httpx.Limits(max_connections=self.max_connections)
            self._client = httpx.AsyncClient(timeout=None, limits=limits, follow_redirects=False)
        return self._client

    async def aclose(self) -> None:
        self._closed = True
        if self._client is not None:
            await self._client.aclose()

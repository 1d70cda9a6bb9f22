"""A scripted HTTP server on 127.0.0.1 for http hooks and the Messages API.

A real ``ThreadingHTTPServer`` on a real socket (keep-alive, HTTP/1.1), run in
a thread so it keeps answering however busy the trio loop under test is.

* ``routes`` maps a path to a :class:`Reply` (status, body, delay);
* ``POST /v1/messages`` answers with the next message of ``messages`` (the
  last one repeats forever when ``repeat_last`` is set; otherwise an exhausted
  script is a 500);
* every request is recorded (method, path, headers, body) for assertions.

A delayed reply waits on an event that :meth:`ScriptedServer.stop` sets, so
teardown never waits for a "hanging" endpoint.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int = 0
    """The peer's port: equal ports mean one kept-alive connection."""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class ScriptedServer:
    routes: dict[str, Reply] = field(default_factory=dict)
    messages: list[Reply] = field(default_factory=list)
    repeat_last: bool = False
    requests: list[Recorded] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def next_reply(self, path: str) -> Reply:
        with self.lock:
            if path.startswith("/v1/messages"):
                if not self.messages:
                    return Reply(status=500, body=b'{"error": "script exhausted"}')
                if len(self.messages) == 1 and self.repeat_last:
                    return self.messages[0]
                return self.messages.pop(0)
            return self.routes.get(path, Reply(status=404, body=b"no such route"))

    def message_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.startswith("/v1/messages")]


def _handler_class(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with server.lock:
                server.requests.append(
                    Recorded(
                        self.command,
                        self.path,
                        dict(self.headers.items()),
                        body,
                        self.client_address[1],
                    )
                )
            reply = server.next_reply(self.path)
            if reply.delay:
                server.release.wait(reply.delay)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_POST = _serve
        do_PUT = _serve
        do_GET = _serve

    return Handler


@contextmanager
def scripted_server() -> Iterator[ScriptedServer]:
    state = ScriptedServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)

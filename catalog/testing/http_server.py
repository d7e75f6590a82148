"""A real HTTP/1.1 server on 127.0.0.1 for tests, with scripted faults.

::

    with LoopbackServer() as server:
        ok = server.add("/a.bin", b"payload")                 # honours Range: bytes=N-
        cut = server.add("/b.bin", b"payload", fault=Fault(kind="truncate", at=3, times=1))
        flaky = server.add("/c.bin", b"payload", fault=Fault(kind="status", statuses=(500, 200)))
        slow = server.add("/d.bin", b"payload", fault=Fault(kind="stall", at=2))
        drip = server.add("/e.bin", b"payload", fault=Fault(kind="drip", interval=0.01))
        ...
        server.release()                                      # let stalled/held requests go
    assert server.requests[0].headers["User-Agent"].startswith("catalog/")

Nothing leaves the machine and nothing sleeps long: every fault is decided per request, up
front; a request that must wait (``stall``, ``hold``, ``hang``) waits on an event the test sets
with :meth:`LoopbackServer.release` (and :meth:`LoopbackServer.stop` sets it too); a ``drip``
waits ``interval`` seconds (or until released) between bytes.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = ["HTML_PAGE", "Fault", "FaultKind", "LoopbackServer", "RecordedRequest"]

FaultKind = Literal["truncate", "drop", "status", "html", "stall", "hold", "drip", "hang"]

#: What an ``html`` fault serves instead of the file, like a CDN's rate-limit page.
HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>429 Too Many Requests</title></head>"
    b"<body><h1>You have been rate limited</h1></body></html>\n"
)

_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


@dataclass(frozen=True)
class Fault:
    """What a route does wrong, to its first ``times`` requests (every request if None).

    - ``truncate``: announce the full Content-Length, send only ``at`` bytes, close.
      (The client sees a broken transfer.)
    - ``drop``: send no Content-Length, ``at`` bytes, close. (The client sees a short body.)
    - ``status``: the i-th request to the route gets ``statuses[i]`` with a short text body
      (and a ``Retry-After: retry_after`` header if given); an entry equal to the route's
      status, and every request past the end, is served normally.
    - ``html``: status 200 with :data:`HTML_PAGE` as text/html instead of the body.
    - ``stall``: send the headers and ``at`` bytes, then wait for :meth:`LoopbackServer.release`
      and close: slower than any client's read timeout.
    - ``hold``: wait for :meth:`LoopbackServer.release` before answering, then answer normally.
    - ``drip``: announce the full Content-Length, send ``at`` bytes, then one byte every
      ``interval`` seconds (all at once after :meth:`LoopbackServer.release`): a server slow
      enough to starve a download while never tripping a read timeout.
    - ``hang``: send the whole body without a Content-Length, then keep the connection open
      until :meth:`LoopbackServer.release`: only the byte count tells the body is complete.

    Faults apply to what a request would get: with ``Range: bytes=N-`` that is the rest of the
    body from byte N.
    """

    kind: FaultKind
    at: int = 0
    statuses: Sequence[int] = ()
    times: int | None = None
    retry_after: str | None = None
    interval: float = 0.01  # seconds between the bytes of a ``drip``

    def __post_init__(self) -> None:
        object.__setattr__(self, "statuses", tuple(self.statuses))  # hashable, immutable
        if self.at < 0:
            raise ValueError(f"Fault.at must be >= 0, got {self.at}")
        if (self.kind == "status") != bool(self.statuses):
            raise ValueError("Fault.statuses is required for kind='status' and only for it")
        if self.kind == "status" and self.times is not None:
            raise ValueError("Fault.times does not apply to kind='status': statuses say it")
        if self.interval <= 0:
            raise ValueError(f"Fault.interval must be > 0, got {self.interval}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"Fault.times must be >= 1 or None, got {self.times}")

    def applies(self, index: int) -> bool:
        """Whether the route's ``index``-th request (from 0) gets this fault."""
        if self.kind == "status":
            return index < len(self.statuses)
        return self.times is None or index < self.times


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str  # as sent, query string included (an absolute URL when sent to a proxy)
    headers: dict[str, str]


@dataclass(frozen=True)
class _Route:
    body: bytes
    status: int
    content_type: str
    fault: Fault | None
    ranges: bool


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: LoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner

    def handle_error(self, request: Any, client_address: Any) -> None:
        """The client hung up mid-response (often on purpose): its side of the test reports it."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # backstop for an idle keep-alive connection; stop() closes them anyway
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep stderr quiet."""

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, open_=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, open_=False)

    def do_GET(self) -> None:
        self._respond(send_body=True)

    def do_HEAD(self) -> None:
        self._respond(send_body=False)

    def _respond(self, *, send_body: bool) -> None:
        owner = self.server.owner
        owner._record(RecordedRequest(self.command, self.path, dict(self.headers.items())))
        route, index = owner._hit(urlsplit(self.path).path)
        if route is None:
            self._send(404, b"not found\n", "text/plain", send_body)
            return
        fault = route.fault if route.fault is not None and route.fault.applies(index) else None
        if fault is not None and fault.kind == "hold":
            owner._released.wait()
            fault = None
        if fault is not None and fault.kind == "status" and fault.statuses[index] != route.status:
            status = fault.statuses[index]
            extra = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._send(status, f"HTTP {status}\n".encode(), "text/plain", send_body, extra)
            return
        if fault is not None and fault.kind == "html":
            self._send(200, HTML_PAGE, "text/html; charset=utf-8", send_body)
            return
        status, body, headers = self._ranged(route)
        if fault is None or fault.kind == "status" or status == 416:
            self._send(status, body, route.content_type, send_body, headers)
            return
        # truncate, drop, stall, drip or hang: part of the body, slowly or then nothing
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", route.content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        if fault.kind not in ("drop", "hang"):
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if send_body:
            self.wfile.write(body if fault.kind == "hang" else body[: fault.at])
            self.wfile.flush()
        if fault.kind == "drip" and send_body:
            for i in range(fault.at, len(body)):
                owner._released.wait(fault.interval)
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
        if fault.kind in ("stall", "hang"):
            owner._released.wait()

    def _ranged(self, route: _Route) -> tuple[int, bytes, dict[str, str]]:
        """Status, body and headers for this request, honouring ``Range: bytes=N-[M]``."""
        if not route.ranges or route.status != 200:
            return route.status, route.body, {}
        total = len(route.body)
        match = _RANGE.fullmatch(self.headers.get("Range", "").strip())
        if match is None:
            return 200, route.body, {"Accept-Ranges": "bytes"}
        start = int(match[1])
        end = min(int(match[2]) if match[2] else total - 1, total - 1)
        if start >= total or end < start:
            return 416, b"", {"Content-Range": f"bytes */{total}"}
        return 206, route.body[start : end + 1], {"Content-Range": f"bytes {start}-{end}/{total}"}

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        send_body: bool,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)


class LoopbackServer:
    """Threaded HTTP/1.1 server on 127.0.0.1, port 0 (OS-chosen).

    Context manager: starts on ``__enter__``, shuts down and joins its thread on ``__exit__``.
    Routes are added once it runs (their URLs need the port): ``server.add(path, body)``.
    It also serves as an HTTP proxy: a request for an absolute URL is routed by its path.
    """

    def __init__(self) -> None:
        self.base_url = ""
        self.requests: list[RecordedRequest] = []
        self._routes: dict[str, _Route] = {}
        self._hits: dict[str, int] = {}
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._released = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("LoopbackServer is already running")
        self._released.clear()
        self._server = _Server(self)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._released.set()  # stalled and held requests finish
        server.shutdown()  # no new connections
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # wake handlers idling on keep-alive connections
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> LoopbackServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def url(self, path: str) -> str:
        """``base_url + path``; ``path`` starts with "/"."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        if not self.base_url:
            raise RuntimeError("LoopbackServer is not started: use it as a context manager")
        return self.base_url + path

    def add(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = "application/octet-stream",
        fault: Fault | None = None,
        ranges: bool = True,
    ) -> str:
        """Serve ``body`` at ``path`` (replacing any route there) and return its URL.

        ``ranges=False`` makes the route ignore Range headers (always 200 and the whole body),
        like a server without range support.
        """
        url = self.url(path)
        with self._lock:
            self._routes[path] = _Route(body, status, content_type, fault, ranges)
            self._hits[path] = 0
        return url

    def release(self) -> None:
        """Let every stalled or held request (and any later one) go on."""
        self._released.set()

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until the server has received ``count`` requests; False on timeout."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    # Called from handler threads.

    def _record(self, request: RecordedRequest) -> None:
        with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()

    def _hit(self, path: str) -> tuple[_Route | None, int]:
        """The route at ``path`` and how many requests it had before this one."""
        with self._lock:
            route = self._routes.get(path)
            if route is None:
                return None, 0
            index = self._hits[path]
            self._hits[path] = index + 1
            return route, index

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

"""The one fake S3 of the tests: moto's standalone server on 127.0.0.1 behind a proxy that
records the requests it forwards and can answer some with a fault instead, as a real bucket
under load or a policy would; and a static HTTP server of a directory that honours Range and
If-Match (what nginx, a CDN or a bucket's website endpoint do). The ``s3`` fixture
(tests/conftest.py) is a fresh server with a bucket ``data``; or, by hand::

    with S3Server() as s3:                      # moto on a free port, its buckets emptied
        s3.environ(monkeypatch)                 # AWS_ENDPOINT_URL, fake keys, region
        s3.make_bucket("data")
        s3.faults.append(S3Fault("slowdown", match="gen-", times=2))  # via the proxy

Clients of the code under test go through the proxy (`S3Server.url`, set by `env`/`environ`,
so subprocesses such as the CLI use it too); `S3Server.client` talks to moto directly, so a
test's own setup and checks are neither counted nor faulted. A fault is either an `S3Fault`
(``drop`` sends half of the response body and closes the connection, ``slowdown`` answers 503
SlowDown, ``denied`` 403 AccessDenied, each for the first ``times`` requests whose path and
query contain ``match``) or a rule ``(method, path) -> (status, S3 error code) | None``.
``S3Server.requests`` lists (method, path and query) of every request forwarded: `count`
(GETs), `puts` (writes) and `queries` read it.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import http.client
import logging
import os
import re
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

import pytest

FaultKind = Literal["drop", "slowdown", "denied"]
#: A fault rule: (method, path without the query) -> None to forward the request, or
#: (status, S3 error code) to answer it with.
FaultRule = Callable[[str, str], "tuple[int, str] | None"]


@dataclass
class S3Fault:
    kind: FaultKind
    match: str = ""  # a substring of the request path (and query)
    times: int | None = None  # None: every matching request
    method: str = "GET"
    seen: int = field(default=0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


_START_SECONDS = 60

_ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
    "<Message>{message}</Message><RequestId>0</RequestId></Error>"
)


class S3Server:
    """moto's S3 server and the fault proxy in front of it (see the module docstring)."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
        # Port 0: the server binds a free port itself. (A port found free beforehand can be
        # taken by another process before moto binds it; moto's thread then dies and its
        # start() waits forever for it: a whole CI run hung so.)
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._moto_port = 0  # known once it has started
        self.faults: list[S3Fault | FaultRule] = []
        #: (method, path and query) of every request forwarded to moto, in order
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._proxy = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(self))
        self._proxy.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._proxy.server_address[1]}"

    def __enter__(self) -> S3Server:
        starting = threading.Thread(target=self._moto.start, daemon=True)
        starting.start()
        starting.join(_START_SECONDS)  # start() itself waits without end if the server fails
        if starting.is_alive():
            raise RuntimeError(f"moto's S3 server did not start in {_START_SECONDS} s")
        self._moto_port = self._moto.get_host_and_port()[1]
        # moto keeps its buckets in this process, shared by every server it starts: empty them
        reset = http.client.HTTPConnection("127.0.0.1", self._moto_port, timeout=30)
        reset.request("POST", "/moto-api/reset")
        assert reset.getresponse().status == 200
        reset.close()
        threading.Thread(target=self._proxy.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._proxy.shutdown()
        self._proxy.server_close()
        self._moto.stop()

    def env(self) -> dict[str, str]:
        """The environment a client of this server needs (fake credentials)."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_CONFIG_FILE": os.devnull,
        }

    def environ(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        for name, value in self.env().items():
            monkeypatch.setenv(name, value)

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{self._moto_port}",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )

    def make_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> dict[str, int]:
        """Every object under `prefix`: key -> size."""
        found = {}
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        for page in pages:
            found.update((o["Key"], o["Size"]) for o in page.get("Contents", ()))
        return found

    def upload_dir(self, folder: Path, bucket: str, prefix: str) -> None:
        """Every file under `folder` to ``s3://bucket/prefix/<relative path>``."""
        client = self.client()
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                key = f"{prefix}/{path.relative_to(folder).as_posix()}"
                client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

    @property
    def queries(self) -> list[str]:
        """The path and query of every request forwarded so far."""
        with self._lock:
            return [path for _, path in self.requests]

    def count(self, match: str) -> int:
        """GET requests forwarded so far whose path (and query) contains `match`."""
        with self._lock:
            return sum(1 for method, path in self.requests if method == "GET" and match in path)

    def puts(self, contains: str = "") -> list[str]:
        """The paths (and queries) of the writes (PUT, POST) forwarded so far, multipart parts
        included."""
        with self._lock:
            return [p for m, p in self.requests if m in ("PUT", "POST") and contains in p]

    def _fault(self, method: str, path: str) -> S3Fault | tuple[int, str] | None:
        """The fault that answers this request, if any; else the request is recorded."""
        with self._lock:
            for fault in list(self.faults):
                if isinstance(fault, S3Fault):
                    matches = fault.method == method and fault.match in path
                    if matches and (fault.times is None or fault.seen < fault.times):
                        fault.seen += 1
                        if fault.kind == "drop":
                            break
                        return fault
                    continue
                answer = fault(method, urlsplit(path).path)
                if answer is not None:
                    return answer
            else:
                fault = None
            self.requests.append((method, path))
            return fault


def forget_filesystems() -> None:
    """catalog keeps one file system per process and protocol: the next server is another."""
    from catalog.storage import remote

    remote._FILESYSTEMS.clear()  # the write file systems too (catalog.storage.bucket_io)


@contextlib.contextmanager
def serve_s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    """A fresh server with the standard variables pointing at it (undone by `monkeypatch`),
    a bucket ``data``, and catalog's file systems forgotten before and after."""
    with S3Server() as server:
        server.environ(monkeypatch)
        server.make_bucket("data")
        forget_filesystems()
        try:
            yield server
        finally:
            forget_filesystems()


def _proxy_handler(server: S3Server) -> type[BaseHTTPRequestHandler]:
    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _forward(self) -> None:
            body = b""
            if "Content-Length" in self.headers:
                body = self.rfile.read(int(self.headers["Content-Length"]))
            fault = server._fault(self.command, self.path)
            if isinstance(fault, tuple) or (fault is not None and fault.kind != "drop"):
                status, code = (
                    fault
                    if isinstance(fault, tuple)
                    else (503, "SlowDown")
                    if fault.kind == "slowdown"
                    else (403, "AccessDenied")
                )
                self._answer(status, _ERROR.format(code=code, message=code).encode())
                return
            upstream = http.client.HTTPConnection("127.0.0.1", server._moto_port, timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
            upstream.close()
            self.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(name, value)
            # a HEAD's body is empty: its length is the object's, as the server said
            length = response.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if self.command == "HEAD":
                return
            if isinstance(fault, S3Fault) and fault.kind == "drop" and len(data) > 1:
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(data)

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    return Proxy


_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class StaticServer:
    """A directory served over HTTP on 127.0.0.1 as a static web server does: symlinks
    followed, ``Range`` honoured (206), an ``ETag`` per file version, ``If-Match`` checked
    (412). ``missing_ranges`` makes it ignore Range (answer 200 with the whole file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: Counter[str] = Counter()
        self.ignore_ranges = False
        outer = self

        class Handler(SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                outer.requests[self.path] += 1
                path = Path(self.translate_path(self.path))
                if not path.is_file():
                    super().do_GET()  # directory listings and 404s as http.server does them
                    return
                data = path.read_bytes()
                st = path.stat()
                etag = '"' + hashlib.md5(f"{st.st_ino}-{st.st_mtime_ns}".encode()).hexdigest() + '"'
                if self.headers.get("If-Match") not in (None, etag, "*"):
                    self._send(412, b"precondition failed", etag)
                    return
                match = _RANGE.match(self.headers.get("Range", ""))
                if match and not outer.ignore_ranges:
                    start = int(match[1])
                    stop = min(int(match[2]) + 1 if match[2] else len(data), len(data))
                    self._send(206, data[start:stop], etag, (start, stop - 1, len(data)))
                else:
                    self._send(200, data, etag)

            def do_HEAD(self) -> None:
                path = Path(self.translate_path(self.path))
                if not path.is_file():
                    super().do_HEAD()
                    return
                st = path.stat()
                etag = '"' + hashlib.md5(f"{st.st_ino}-{st.st_mtime_ns}".encode()).hexdigest() + '"'
                self.send_response(200)
                self.send_header("Content-Length", str(st.st_size))
                self.send_header("ETag", etag)
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
                self.end_headers()

            def _send(
                self, status: int, body: bytes, etag: str, span: tuple[int, int, int] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.send_header("Accept-Ranges", "bytes")
                if span:
                    self.send_header("Content-Range", f"bytes {span[0]}-{span[1]}/{span[2]}")
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StaticServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

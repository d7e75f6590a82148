"""A real S3 server for the tests: moto's standalone server on 127.0.0.1, behind a small proxy
that counts the requests it forwards and can answer some of them with a fault instead (503
SlowDown, 403 AccessDenied), as a real bucket under load or a policy would.

The tests point every S3 client at it through the standard variables (`S3Server.env`:
``AWS_ENDPOINT_URL``, fake keys, a region), so subprocesses (the CLI) use it too.
"""

from __future__ import annotations

import http.client
import logging
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

#: A fault rule: (method, path) -> None to forward the request, or (status, S3 error code).
Fault = Callable[[str, str], "tuple[int, str] | None"]


class S3Server:
    """moto's S3 server behind a counting, fault-injecting proxy (use as a context manager)."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request forwarded
        self.queries: list[str] = []  # the path and query of each of them
        self.faults: list[Fault] = []
        self._proxy: ThreadingHTTPServer | None = None

    def __enter__(self) -> S3Server:
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        # moto keeps its buckets in this process, shared by every server it starts: empty them
        reset = http.client.HTTPConnection(host, port, timeout=30)
        reset.request("POST", "/moto-api/reset")
        assert reset.getresponse().status == 200
        reset.close()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urlsplit(self.path).path
                for fault in list(server.faults):
                    answer = fault(self.command, path)
                    if answer is not None:
                        status, code = answer
                        payload = f"<Error><Code>{code}</Code><Message>{code}</Message></Error>"
                        self.send_response(status)
                        self.send_header("Content-Type", "application/xml")
                        self.send_header("Content-Length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload.encode())
                        return
                server.requests.append((self.command, path))
                server.queries.append(self.path)
                upstream = http.client.HTTPConnection(host, port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                headers["Host"] = f"{host}:{port}"
                upstream.request(self.command, self.path, body=body, headers=headers)
                reply = upstream.getresponse()
                data = reply.read()
                self.send_response(reply.status)
                for key, value in reply.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                length = reply.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self._proxy = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._proxy.daemon_threads = True
        threading.Thread(target=self._proxy.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._proxy is not None
        self._proxy.shutdown()
        self._proxy.server_close()
        self._moto.stop()

    @property
    def endpoint(self) -> str:
        assert self._proxy is not None
        return f"http://127.0.0.1:{self._proxy.server_address[1]}"

    def env(self) -> dict[str, str]:
        """The standard AWS variables pointing a client at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_CONFIG_FILE": os.devnull,
        }

    def client(self):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
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
        for page in (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        ):
            found.update((o["Key"], o["Size"]) for o in page.get("Contents", ()))
        return found

    def puts(self, contains: str = "") -> list[str]:
        """The paths of the object PUTs forwarded so far (multipart parts included)."""
        return [p for m, p in self.requests if m in ("PUT", "POST") and contains in p]


def serve_s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Server]:
    """The body of an ``s3`` fixture: a fresh S3 server with the standard variables pointing
    at it, and a bucket ``data``."""
    with S3Server() as server:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        server.make_bucket("data")
        server.requests.clear()
        server.queries.clear()
        _forget_filesystems()
        yield server
        _forget_filesystems()


def _forget_filesystems() -> None:
    """catalog keeps one file system per process and protocol: the next server is another."""
    from catalog.storage import remote

    remote._FILESYSTEMS.clear()  # the write file systems too (catalog.storage.bucket_io)

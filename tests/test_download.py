"""Tests of catalog.download against a real loopback HTTP server (never the internet)."""

from __future__ import annotations

import hashlib
import http.client
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.download import Resource, cache_path, download, download_all
from catalog.errors import ChecksumError, DownloadError, SpecError
from catalog.testing.http_server import HTML_PAGE, Fault, LoopbackServer

BODY = bytes(range(256)) * 40 + b"tail"  # 10244 bytes, not a multiple of anything tidy
SHA256 = hashlib.sha256(BODY).hexdigest()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def resource(*urls: str, body: bytes = BODY, filename: str = "data.bin") -> Resource:
    return Resource(urls, len(body), hashlib.sha256(body).hexdigest(), filename)


def refused_url() -> str:
    """A URL on a port nothing listens on (bound by us a moment ago, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/data.bin"


def test_download_writes_verified_file_at_cache_path(
    server: LoopbackServer, tmp_path: Path
) -> None:
    res = resource(server.add("/data.bin", BODY))
    path = download(res, tmp_path)
    assert path == tmp_path / f"{SHA256[:16]}-data.bin" == cache_path(res, tmp_path)
    assert path.read_bytes() == BODY
    assert list(tmp_path.iterdir()) == [path]  # no .part file left behind


def test_download_creates_missing_download_dir(server: LoopbackServer, tmp_path: Path) -> None:
    path = download(resource(server.add("/data.bin", BODY)), tmp_path / "a" / "b")
    assert path.read_bytes() == BODY


def test_cached_file_is_reused_without_network(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        res = resource(server.add("/data.bin", BODY))
        first = download(res, tmp_path)
    assert len(server.requests) == 1
    assert download(res, tmp_path) == first  # the server is gone: only the cache can answer
    assert len(server.requests) == 1


def test_corrupted_cached_file_is_replaced(server: LoopbackServer, tmp_path: Path) -> None:
    res = resource(server.add("/data.bin", BODY))
    cache_path(res, tmp_path).write_bytes(BODY[:-1] + b"X")  # right size, wrong bytes
    path = download(res, tmp_path)
    assert path.read_bytes() == BODY
    assert len(server.requests) == 1
    assert list(tmp_path.iterdir()) == [path]


def test_flipped_byte_raises_checksum_error(server: LoopbackServer, tmp_path: Path) -> None:
    corrupt = bytearray(BODY)
    corrupt[100] ^= 0xFF
    url = server.add("/data.bin", bytes(corrupt))
    with pytest.raises(ChecksumError) as info:
        download(resource(url), tmp_path)
    message = str(info.value)
    assert url in message
    assert f"sha256 mismatch: expected {SHA256}, got {hashlib.sha256(corrupt).hexdigest()}" in (
        message
    )
    assert str(cache_path(resource(url), tmp_path)) in message  # says where to put the file
    assert list(tmp_path.iterdir()) == []


def test_short_body_raises_checksum_error(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="drop", at=1000))
    with pytest.raises(ChecksumError, match=f"expected {len(BODY)} bytes, got 1000"):
        download(resource(url), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_oversized_body_raises_checksum_error(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY + b"extra")
    with pytest.raises(ChecksumError, match=f"expected {len(BODY)} bytes, got {len(BODY) + 5}"):
        download(resource(url), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_truncated_transfer_raises_download_error(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="truncate", at=1000))
    with pytest.raises(DownloadError, match="transfer interrupted after 1000 bytes") as info:
        download(resource(url), tmp_path)
    assert url in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_html_page_is_named_as_such(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="html"))
    with pytest.raises(DownloadError, match="HTML page instead of the file") as info:
        download(resource(url), tmp_path)
    assert not isinstance(info.value, ChecksumError)  # a rate limit is not a changed file
    assert list(tmp_path.iterdir()) == []


def test_expected_html_file_is_not_mistaken_for_an_error_page(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/page.html", HTML_PAGE, content_type="text/html")
    path = download(resource(url, body=HTML_PAGE, filename="page.html"), tmp_path)
    assert path.read_bytes() == HTML_PAGE


def test_404_then_mirror(server: LoopbackServer, tmp_path: Path) -> None:
    missing = server.add("/gone.bin", b"not found", status=404)
    mirror = server.add("/mirror/data.bin", BODY)
    path = download(resource(missing, mirror), tmp_path)
    assert path.read_bytes() == BODY
    assert [r.path for r in server.requests] == ["/gone.bin", "/mirror/data.bin"]


def test_status_fault_then_success_on_next_try(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="status", statuses=[500, 200]))
    assert download(resource(url, url), tmp_path).read_bytes() == BODY
    assert len(server.requests) == 2


def test_refused_connection_raises_download_error(tmp_path: Path) -> None:
    url = refused_url()
    with pytest.raises(DownloadError, match="connection failed") as info:
        download(resource(url), tmp_path)
    assert f"{url}: connection failed" in str(info.value)
    assert len(str(info.value).splitlines()) == 3  # header, one line per URL, what to do
    assert list(tmp_path.iterdir()) == []


def test_500_on_only_url_raises_download_error(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", b"oops", status=500)
    with pytest.raises(DownloadError, match="HTTP 500") as info:
        download(resource(url), tmp_path)
    assert not isinstance(info.value, ChecksumError)
    assert list(tmp_path.iterdir()) == []


def test_mixed_failures_list_every_url(server: LoopbackServer, tmp_path: Path) -> None:
    refused = refused_url()
    wrong = server.add("/wrong.bin", b"x" * len(BODY))
    with pytest.raises(DownloadError) as info:
        download(resource(refused, wrong), tmp_path)
    assert not isinstance(info.value, ChecksumError)  # one URL failed for another reason
    lines = str(info.value).splitlines()
    assert lines[0] == "could not download data.bin:"
    assert lines[1].startswith(f"  {refused}: connection failed")
    assert lines[2].startswith(f"  {wrong}: sha256 mismatch")


def test_no_urls_raises_download_error_with_cache_path(tmp_path: Path) -> None:
    res = resource()
    with pytest.raises(DownloadError, match="no URL") as info:
        download(res, tmp_path)
    assert str(cache_path(res, tmp_path)) in str(info.value)


def test_user_agent(server: LoopbackServer, tmp_path: Path) -> None:
    download(resource(server.add("/data.bin", BODY)), tmp_path)
    assert server.requests[0].headers["User-Agent"].startswith("catalog/")


def test_download_all_shares_cache_by_content(server: LoopbackServer, tmp_path: Path) -> None:
    other = b"other bytes"
    paths = download_all(
        {
            "a": resource(server.add("/a.bin", BODY)),
            "b": resource(server.add("/b.bin", other), body=other, filename="b.bin"),
            "a_again": resource(server.add("/a2.bin", BODY)),
        },
        tmp_path,
    )
    assert paths["a"] == paths["a_again"]
    assert paths["b"].read_bytes() == other
    assert [r.path for r in server.requests] == ["/a.bin", "/b.bin"]  # /a2.bin: cached


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"filename": "../escape.bin"}, "plain file name"),
        ({"sha256": "ABC"}, "64 lowercase hex"),
        ({"size": -1}, "size must be"),
        ({"urls": "http://example.invalid/a"}, "not one string"),
    ],
)
def test_resource_rejects_bad_fields(kwargs: dict[str, object], match: str) -> None:
    fields: dict[str, object] = {"urls": (), "size": 1, "sha256": SHA256, "filename": "a.bin"}
    with pytest.raises(SpecError, match=match):
        Resource(**{**fields, **kwargs})  # type: ignore[arg-type]


# The server itself.


def _get(server: LoopbackServer, method: str, path: str) -> tuple[int, str, bytes]:
    host, port = server.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Length", ""), response.read()
    finally:
        conn.close()


def test_server_unknown_path_is_404_and_head_has_no_body(server: LoopbackServer) -> None:
    server.add("/a.bin", BODY)
    assert _get(server, "GET", "/nope")[0] == 404
    assert _get(server, "HEAD", "/a.bin") == (200, str(len(BODY)), b"")
    assert _get(server, "GET", "/a.bin?x=1") == (200, str(len(BODY)), BODY)
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/nope"),
        ("HEAD", "/a.bin"),
        ("GET", "/a.bin?x=1"),
    ]


def test_server_stop_closes_idle_keep_alive_connections() -> None:
    with LoopbackServer() as server:
        server.add("/a.bin", BODY)
        host, port = server.base_url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/a.bin")
        assert conn.getresponse().read() == BODY
        # conn stays open (keep-alive): leaving the block must not wait for it.
    conn.close()


def test_fault_validation() -> None:
    with pytest.raises(ValueError, match="statuses"):
        Fault(kind="status")
    with pytest.raises(ValueError, match="at must be"):
        Fault(kind="drop", at=-1)

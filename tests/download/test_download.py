"""Tests of catalog.download against a real loopback HTTP server (never the internet).

Each fault a user meets in the field has a test here: dead and missing hosts, rate limits
(429 + Retry-After), 5xx, HTML pages served with status 200, interrupted and truncated
bodies (resumed with Range), servers that ignore Range, stalled servers, concurrent
processes, offline machines, local mirror directories and the manual dir. No test sleeps:
backoff goes through a recording fake, stalls wait on events the tests set.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import json
import multiprocessing
import random
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from catalog.download import (
    USER_AGENT,
    DownloadConfig,
    DownloadManager,
    Resource,
    cache_path,
    resolve_config,
)
from catalog.download.progress import Progress
from catalog.errors import ChecksumError, DownloadError, SpecError
from catalog.testing.http_server import HTML_PAGE, Fault, LoopbackServer

BODY = bytes(range(256)) * 40 + b"tail"  # 10244 bytes, not a multiple of anything tidy
SHA256 = hashlib.sha256(BODY).hexdigest()


class Sleeps(list[float]):
    """A fake sleep that records what it was asked to wait."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def resource(*urls: str, body: bytes = BODY, filename: str = "data.bin") -> Resource:
    return Resource(urls, len(body), hashlib.sha256(body).hexdigest(), filename)


def manager(tmp_path: Path, sleeps: Sleeps | None = None, **options: Any) -> DownloadManager:
    """A manager on tmp_path/dl with no backoff, no output and no mirrors unless asked."""
    fields: dict[str, Any] = {
        "download_dir": tmp_path / "dl",
        "manual_dir": tmp_path / "manual",
        "mirrors": (),
        "offline": False,
        "backoff": 0.0,
        "progress": "none",
        **options,
    }
    return DownloadManager(DownloadConfig(**fields), sleep=Sleeps() if sleeps is None else sleeps)


def visible(download_dir: Path) -> list[str]:
    """The cache's files (not its .meta records and locks)."""
    return sorted(p.name for p in download_dir.iterdir() if not p.name.startswith("."))


def parts(download_dir: Path) -> list[Path]:
    return sorted((download_dir / ".meta").glob("*.part")) if download_dir.exists() else []


def refused_url(path: str = "/data.bin") -> str:
    """A URL on a port nothing listens on (bound by us a moment ago, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


# The cache.


def test_download_writes_verified_file_and_record(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY)
    res = resource(url)
    file = manager(tmp_path).download(res)
    assert (
        file.path == tmp_path / "dl" / f"{SHA256[:16]}-data.bin" == cache_path(res, tmp_path / "dl")
    )
    assert file.path.read_bytes() == BODY
    assert (file.size, file.sha256, file.url) == (len(BODY), SHA256, url)
    assert visible(tmp_path / "dl") == [file.path.name]
    assert parts(tmp_path / "dl") == []
    record = json.loads((tmp_path / "dl" / ".meta" / f"{file.path.name}.json").read_text())
    assert record["url"] == url and record["size"] == len(BODY) and record["sha256"] == SHA256
    assert record["filename"] == "data.bin" and record["downloaded_at"].startswith("20")


def test_cached_file_is_reused_without_network(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        res = resource(server.add("/data.bin", BODY))
        first = manager(tmp_path).download(res)
    assert manager(tmp_path).download(res) == first  # the server is gone: only the cache answers
    assert len(server.requests) == 1


def test_an_untouched_cached_file_is_not_hashed_again_a_changed_one_is(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache record keeps the file's inode, size and mtime from when it was hashed: an
    unchanged file is trusted (a big download costs a stat to reuse), a file written since is
    hashed again, and damage found then is fetched anew."""
    import catalog.download.cache as cache

    res = resource(server.add("/data.bin", BODY))
    first = manager(tmp_path).download(res)
    hashed: list[Path] = []
    of_file = cache.Digest.of_file
    monkeypatch.setattr(
        cache.Digest, "of_file", classmethod(lambda cls, p: hashed.append(Path(p)) or of_file(p))
    )
    assert manager(tmp_path).download(res) == first and hashed == []
    first.path.write_bytes(BODY[:-1] + b"X")  # same size and inode, new mtime, wrong bytes
    assert manager(tmp_path).download(res).path.read_bytes() == BODY
    assert hashed == [first.path] and len(server.requests) == 2


def test_corrupted_cached_file_is_replaced(server: LoopbackServer, tmp_path: Path) -> None:
    res = resource(server.add("/data.bin", BODY))
    path = cache_path(res, tmp_path / "dl")
    path.parent.mkdir()
    path.write_bytes(BODY[:-1] + b"X")  # right size, wrong bytes
    assert manager(tmp_path).download(res).path.read_bytes() == BODY
    assert len(server.requests) == 1


def test_same_bytes_are_fetched_once_for_several_names(
    server: LoopbackServer, tmp_path: Path
) -> None:
    other = b"other bytes"
    files = manager(tmp_path).download_all(
        {
            "a": resource(server.add("/a.bin", BODY)),
            "b": resource(server.add("/b.bin", other), body=other, filename="b.bin"),
            "a_again": resource(server.add("/a2.bin", BODY)),
        }
    )
    assert files["a"] == files["a_again"] and files["b"].path.read_bytes() == other
    assert sorted(r.path for r in server.requests) == ["/a.bin", "/b.bin"]


def test_downloaded_archive_is_extracted_once_beside_the_cache(
    server: LoopbackServer, tmp_path: Path
) -> None:
    archive = gzip.compress(BODY)
    dm = manager(tmp_path)
    file = dm.download(
        resource(server.add("/data.bin.gz", archive), body=archive, filename="data.bin.gz")
    )
    out = dm.extract(file)
    assert out == tmp_path / "dl" / "extracted" / f"{file.sha256[:16]}-data.bin.gz"
    assert (out / "data.bin").read_bytes() == BODY and dm.extract(file) == out


# Verification: size and sha256, always.


def test_flipped_byte_raises_checksum_error(server: LoopbackServer, tmp_path: Path) -> None:
    corrupt = bytearray(BODY)
    corrupt[100] ^= 0xFF
    url = server.add("/data.bin", bytes(corrupt))
    with pytest.raises(ChecksumError) as info:
        manager(tmp_path).download(resource(url))
    message = str(info.value)
    assert f"{url}: sha256 mismatch: expected {SHA256}, got " in message
    assert str(tmp_path / "manual" / "data.bin") in message  # says where to put the file
    assert visible(tmp_path / "dl") == [] and parts(tmp_path / "dl") == []


def test_oversized_body_raises_checksum_error(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY + b"extra")
    with pytest.raises(ChecksumError, match=f"expected {len(BODY)} bytes, got {len(BODY) + 5}"):
        manager(tmp_path).download(resource(url))
    assert visible(tmp_path / "dl") == [] and parts(tmp_path / "dl") == []


def test_html_page_with_status_200_is_named_then_next_url(
    server: LoopbackServer, tmp_path: Path
) -> None:
    html = server.add("/data.bin", BODY, fault=Fault(kind="html"))
    with pytest.raises(DownloadError, match="the server sent an HTML page") as info:
        manager(tmp_path).download(resource(html))
    assert not isinstance(info.value, ChecksumError)  # a rate limit is not a changed file
    assert visible(tmp_path / "dl") == [] and parts(tmp_path / "dl") == []
    good = server.add("/mirror/data.bin", BODY)
    assert manager(tmp_path).download(resource(html, good)).path.read_bytes() == BODY


def test_expected_html_file_is_not_mistaken_for_an_error_page(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/page.html", HTML_PAGE, content_type="text/html")
    file = manager(tmp_path).download(resource(url, body=HTML_PAGE, filename="page.html"))
    assert file.path.read_bytes() == HTML_PAGE


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"filename": "../escape.bin"}, "plain file name"),
        ({"sha256": "ABC"}, "64 lowercase hex"),
        ({"size": -1}, "size must be"),
        ({"size": None}, "both size and sha256"),
        ({"urls": "http://example.invalid/a"}, "not one string"),
    ],
)
def test_resource_rejects_bad_fields(kwargs: dict[str, object], match: str) -> None:
    fields: dict[str, object] = {"urls": (), "size": 1, "sha256": SHA256, "filename": "a.bin"}
    with pytest.raises(SpecError, match=match):
        Resource(**{**fields, **kwargs})  # type: ignore[arg-type]


def test_unregistered_file_is_refused_outside_register_mode(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="--register-checksums"):
        manager(tmp_path).download(Resource(("http://127.0.0.1:9/x",), None, None, "x.bin"))


# Resume.


def test_dropped_connection_is_resumed_with_range(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="truncate", at=4000, times=1))
    sleeps = Sleeps()
    file = manager(tmp_path, sleeps).download(resource(url))
    assert file.path.read_bytes() == BODY
    assert "Range" not in server.requests[0].headers
    assert server.requests[1].headers["Range"] == "bytes=4000-"
    assert len(server.requests) == 2 and len(sleeps) == 1
    assert parts(tmp_path / "dl") == []


def test_short_body_without_length_is_resumed(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="drop", at=1000, times=1))
    assert manager(tmp_path).download(resource(url)).path.read_bytes() == BODY
    assert server.requests[1].headers["Range"] == "bytes=1000-"


def test_server_ignoring_range_restarts_cleanly(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add(
        "/data.bin", BODY, fault=Fault(kind="truncate", at=4000, times=1), ranges=False
    )
    assert manager(tmp_path).download(resource(url)).path.read_bytes() == BODY
    assert server.requests[1].headers["Range"] == "bytes=4000-"  # asked, answered with 200


def test_truncated_body_keeps_its_bytes_for_the_next_run(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="truncate", at=9500))
    with pytest.raises(DownloadError, match="transfer interrupted after 9500 bytes") as info:
        manager(tmp_path, retries=0).download(resource(url))
    assert url in str(info.value) and visible(tmp_path / "dl") == []
    [part] = parts(tmp_path / "dl")
    assert part.read_bytes() == BODY[:9500]
    server.add("/data.bin", BODY)  # the host is healthy again: the next run resumes at 95%
    assert manager(tmp_path).download(resource(url)).path.read_bytes() == BODY
    assert server.requests[-1].headers["Range"] == "bytes=9500-"
    assert parts(tmp_path / "dl") == []


def test_resumed_bytes_that_do_not_verify_start_over(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/data.bin", BODY)
    res = resource(url)
    part = tmp_path / "dl" / ".meta" / f"{cache_path(res, tmp_path).name}.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * 3000)  # left by a run against a file that has changed since
    assert manager(tmp_path).download(res).path.read_bytes() == BODY
    assert [r.headers.get("Range") for r in server.requests] == ["bytes=3000-", None]


# Retries: bounded, backoff with jitter, Retry-After, never on 403/404.


def test_500_then_success(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="status", statuses=[500, 200]))
    sleeps = Sleeps()
    dm = manager(tmp_path, sleeps, backoff=0.5)
    assert dm.download(resource(url)).path.read_bytes() == BODY
    assert len(server.requests) == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5  # base 0.5 s, jitter in [50%, 100%]


def test_retry_after_is_honoured(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add(
        "/data.bin", BODY, fault=Fault(kind="status", statuses=[429, 503], retry_after="7")
    )
    sleeps = Sleeps()
    assert manager(tmp_path, sleeps).download(resource(url)).path.read_bytes() == BODY
    assert sleeps == [7.0, 7.0]


def test_retry_after_is_capped(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add(
        "/data.bin", BODY, fault=Fault(kind="status", statuses=[503], retry_after="3600")
    )
    sleeps = Sleeps()
    manager(tmp_path, sleeps, max_backoff=5.0).download(resource(url))
    assert sleeps == [5.0]


def test_retries_are_bounded_with_capped_exponential_backoff(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/data.bin", b"busy", status=503)
    sleeps = Sleeps()
    dm = DownloadManager(
        DownloadConfig(
            download_dir=tmp_path / "dl", mirrors=(), offline=False, progress="none",
            retries=4, backoff=1.0, max_backoff=3.0,
        ),
        sleep=sleeps, rng=random.Random(0),
    )  # fmt: skip
    with pytest.raises(DownloadError, match=r"HTTP 503 Service Unavailable \(5 attempts\)"):
        dm.download(resource(url))
    assert len(server.requests) == 5 and len(sleeps) == 4
    for n, slept in enumerate(sleeps):
        ceiling = min(3.0, 2.0**n)
        assert ceiling / 2 <= slept <= ceiling, (n, slept)


@pytest.mark.parametrize("status", [403, 404, 410])
def test_client_errors_are_not_retried(server: LoopbackServer, tmp_path: Path, status: int) -> None:
    url = server.add("/data.bin", b"no", status=status)
    sleeps = Sleeps()
    with pytest.raises(DownloadError, match=f"{url}: HTTP {status}"):
        manager(tmp_path, sleeps).download(resource(url))
    assert len(server.requests) == 1 and sleeps == []


def test_refused_connection_is_retried_then_reported(tmp_path: Path) -> None:
    url = refused_url()
    sleeps = Sleeps()
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, sleeps, retries=1).download(resource(url))
    assert f"{url}: connection failed" in str(info.value)
    assert "(2 attempts)" in str(info.value) and len(sleeps) == 1
    assert visible(tmp_path / "dl") == [] and parts(tmp_path / "dl") == []


def test_a_dead_host_moves_on_to_the_mirror_without_waiting(
    server: LoopbackServer, tmp_path: Path
) -> None:
    sleeps = Sleeps()
    mirror = server.add("/mirror/data.bin", BODY)
    assert manager(tmp_path, sleeps).download(resource(refused_url(), mirror)).path.is_file()
    assert sleeps == []


def test_server_slower_than_the_read_timeout(server: LoopbackServer, tmp_path: Path) -> None:
    silent = server.add("/silent.bin", BODY, fault=Fault(kind="hold"))  # never answers
    with pytest.raises(DownloadError, match="timed out") as info:
        manager(tmp_path, read_timeout=0.2, retries=0).download(resource(silent))
    assert f"{silent}: timed out" in str(info.value)
    # A transfer that stalls midway times out too, and the next attempt resumes it.
    stalled = server.add("/stalled.bin", BODY, fault=Fault(kind="stall", at=2000, times=1))
    file = manager(tmp_path, read_timeout=0.2, retries=1).download(resource(stalled))
    assert file.path.read_bytes() == BODY
    assert server.requests[-1].headers["Range"] == "bytes=2000-"


# Mirrors.


def test_user_mirrors_come_first_in_wget_layout(server: LoopbackServer, tmp_path: Path) -> None:
    original = server.add("/files/data.bin", BODY)
    host = original.split("/")[2]  # 127.0.0.1:<port>
    server.add(f"/second/{host}/files/data.bin", BODY)
    mirrors = (server.url("/first"), server.url("/second/"))
    file = manager(tmp_path, mirrors=mirrors).download(resource(original))
    assert file.path.read_bytes() == BODY and file.url == server.url(
        f"/second/{host}/files/data.bin"
    )
    assert [r.path for r in server.requests] == [
        f"/first/{host}/files/data.bin",  # 404 on the first mirror: next one at once
        f"/second/{host}/files/data.bin",
    ]


def test_local_directory_mirror_is_used_without_network(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/files/data.bin", b"never served")
    copy = tmp_path / "mirror" / url.split("/")[2] / "files" / "data.bin"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(BODY)
    for mirror in (str(tmp_path / "mirror"), (tmp_path / "mirror").as_uri()):
        file = manager(tmp_path / mirror[-6:], mirrors=[mirror]).download(resource(url))
        assert file.path.read_bytes() == BODY and file.url == str(copy)
    assert server.requests == []


def test_a_mirror_dir_tells_urls_apart_by_their_query(tmp_path: Path) -> None:
    """Google Drive's ``uc?export=download&id=...`` URLs differ only in their query: a mirror
    dir holds each as ``<host>/<path>?<query>`` (``<host>/<path>`` still works for one)."""
    other = b"the other file" * 10
    urls = [f"https://drive.google.com/uc?export=download&id={i}" for i in ("A1", "B2")]
    mirror = tmp_path / "mirror"
    for url, body in zip(urls, (BODY, other), strict=True):
        copy = mirror / url.split("://", 1)[1]
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(body)
    dm = manager(tmp_path, mirrors=[str(mirror)], offline=True)
    assert dm.download(resource(urls[0])).path.read_bytes() == BODY
    got = dm.download(resource(urls[1], body=other, filename="other.bin"))
    assert got.path.read_bytes() == other
    plain = tmp_path / "plain"
    (plain / "drive.google.com").mkdir(parents=True)
    (plain / "drive.google.com" / "uc").write_bytes(BODY)
    only = manager(tmp_path / "p", mirrors=[str(plain)], offline=True)
    assert only.download(resource(urls[0])).path.read_bytes() == BODY


def test_mirrors_and_offline_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATALOG_MIRRORS", f" {tmp_path / 'a'}\n  https://mirror.example/x ")
    monkeypatch.setenv("CATALOG_OFFLINE", "1")
    config = resolve_config(DownloadConfig(download_dir=tmp_path))
    assert config.mirrors == (str(tmp_path / "a"), "https://mirror.example/x")
    assert config.offline is True and config.manual_dir == tmp_path / "manual"
    # An argument wins over the environment.
    assert resolve_config(DownloadConfig(offline=False, mirrors=())).offline is False
    monkeypatch.setenv("CATALOG_OFFLINE", "maybe")
    with pytest.raises(ValueError, match="CATALOG_OFFLINE='maybe'"):
        resolve_config()


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"mirrors": ["ftp://mirror.example/"]}, "mirror 'ftp://mirror.example/'"),
        ({"mirrors": "https://mirror.example/"}, "not a string"),
        ({"retries": -1}, "retries must be >= 0"),
        ({"read_timeout": 0}, "read_timeout must be > 0"),
        ({"progress": "fancy"}, "progress must be one of"),
    ],
)
def test_config_rejects_bad_options(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        DownloadConfig(**options)


def test_failure_lists_every_source_tried(server: LoopbackServer, tmp_path: Path) -> None:
    flaky = server.add("/data.bin", b"oops", status=500)
    mirror = server.url("/mirror")
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, mirrors=[str(tmp_path / "nomirror"), mirror], retries=1).download(
            resource(flaky)
        )
    host = flaky.split("/")[2]
    lines = str(info.value).splitlines()
    assert lines[0] == "could not download data.bin:"
    assert lines[1] == (
        f"  {tmp_path / 'nomirror' / host / 'data.bin'}: not found: the mirror dir "
        f"{tmp_path / 'nomirror'} does not exist"
    )
    assert lines[2] == f"  {mirror}/{host}/data.bin: HTTP 404 Not Found"
    assert lines[3] == f"  {flaky}: HTTP 500 Internal Server Error (2 attempts)"
    assert "--mirror" in lines[4] and "--offline" in lines[4]
    assert f"into {tmp_path / 'manual'}/ (the manual dir)" in lines[4]


def test_no_urls_says_where_to_put_the_file(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="no URL is registered") as info:
        manager(tmp_path).download(resource())
    assert str(tmp_path / "manual" / "data.bin") in str(info.value)


# Offline and the manual dir.


def test_offline_uses_the_cache_and_never_the_network(
    server: LoopbackServer, tmp_path: Path
) -> None:
    res = resource(server.add("/data.bin", BODY))
    first = manager(tmp_path).download(res)
    assert manager(tmp_path, offline=True).download(res) == first
    assert len(server.requests) == 1


def test_offline_without_the_file_names_it_and_how_to_provide_it(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/data.bin", BODY)
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, offline=True, mirrors=[str(tmp_path / "m")]).download(resource(url))
    message = str(info.value)
    assert message.startswith("data.bin is needed but catalog is offline")
    assert f"{cache_path(resource(url), tmp_path / 'dl')} (cache): not found" in message
    assert f"{tmp_path / 'manual' / 'data.bin'} (manual dir): not found" in message
    assert f"{tmp_path / 'm' / url.split('/')[2] / 'data.bin'}: not found" in message
    assert f"download {url} ({len(BODY)} bytes, sha256 {SHA256})" in message
    assert "--manual-dir" in message and "--mirror" in message and "CATALOG_OFFLINE" in message
    assert server.requests == []


def test_manual_dir_file_is_used_after_verification(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY)
    (tmp_path / "manual").mkdir()
    placed = tmp_path / "manual" / "data.bin"
    placed.write_bytes(BODY)
    assert manager(tmp_path, offline=True).download(resource(url)).path == placed
    placed.write_bytes(BODY[::-1])  # same size, wrong bytes: reported, never used
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, offline=True).download(resource(url))
    assert f"{placed} (manual dir): sha256 mismatch: expected {SHA256}" in str(info.value)
    assert manager(tmp_path).download(resource(url)).path.read_bytes() == BODY  # online: fetched
    assert len(server.requests) == 1


# Concurrency.


def test_files_of_a_dataset_download_concurrently(server: LoopbackServer, tmp_path: Path) -> None:
    others = [bytes([i]) * 5000 for i in range(3)]
    resources = {
        f"f{i}": resource(
            server.add(f"/f{i}.bin", body, fault=Fault(kind="hold")),
            body=body,
            filename=f"f{i}.bin",
        )
        for i, body in enumerate(others)
    }
    result: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: result.update(manager(tmp_path, max_workers=3).download_all(resources))
    )
    worker.start()
    try:
        # Every request is held until all three are in flight: only parallel downloads get here.
        assert server.wait_for_requests(3, timeout=10)
    finally:
        server.release()
        worker.join(timeout=30)
    assert [result[f"f{i}"].path.read_bytes() for i in range(3)] == others


def test_failures_of_several_files_are_reported_together(
    server: LoopbackServer, tmp_path: Path
) -> None:
    a = resource(server.add("/a.bin", b"x" * len(BODY)), filename="a.bin")
    b = resource(server.add("/b.bin", b"y" * len(BODY)), filename="b.bin")
    with pytest.raises(ChecksumError) as info:
        manager(tmp_path).download_all({"a": a, "b": b})
    message = str(info.value)
    assert message.startswith("2 of 2 files could not be fetched")
    assert "could not download a.bin" in message and "could not download b.bin" in message


def _download_in_child(url: str, download_dir: str, lines: Any) -> None:
    class ToQueue:  # stderr, line by line, to the test
        def write(self, text: str) -> None:
            if text.strip():
                lines.put(text.strip())

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return False

    sys.stderr = ToQueue()  # type: ignore[assignment]
    config = DownloadConfig(download_dir=Path(download_dir), mirrors=(), offline=False)
    with DownloadManager(config) as dm:
        path = dm.download(resource(url)).path
    lines.put(f"done {hashlib.sha256(path.read_bytes()).hexdigest()}")


def test_two_processes_download_the_same_file_once(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data.bin", BODY, fault=Fault(kind="hold", times=1))
    ctx = multiprocessing.get_context("spawn")
    lines = ctx.Queue()
    first = ctx.Process(target=_download_in_child, args=(url, str(tmp_path), lines))
    first.start()
    second = None
    try:
        assert server.wait_for_requests(1, timeout=60)  # the first holds the lock, mid-GET
        second = ctx.Process(target=_download_in_child, args=(url, str(tmp_path), lines))
        second.start()
        seen: list[str] = []
        while not any(line.startswith("waiting for another process") for line in seen):
            seen.append(lines.get(timeout=60))  # the second waits on the lock
    finally:
        server.release()
        for process in (first, second):
            if process is not None:
                process.join(timeout=60)
    assert first.exitcode == 0 and second is not None and second.exitcode == 0
    while len([line for line in seen if line.startswith("done")]) < 2:
        seen.append(lines.get(timeout=10))
    assert [line for line in seen if line.startswith("done")] == [f"done {SHA256}"] * 2
    assert len(server.requests) == 1
    assert visible(tmp_path) == [f"{SHA256[:16]}-data.bin"] and parts(tmp_path) == []
    lines.close()
    lines.join_thread()


# Progress and HTTP.


def test_progress_is_one_line_per_file_when_not_a_terminal(
    server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.add("/data.bin", BODY)
    manager(tmp_path, progress="auto").download(resource(url))
    err = capsys.readouterr().err
    deadline = "deadline 1 min (at least 32.0 KiB/s)"
    assert err == f"downloading data.bin (10.0 KiB) from {url}; {deadline}\n"
    manager(tmp_path / "quiet", progress="none").download(resource(url))
    assert capsys.readouterr().err == ""


def test_progress_shows_bars_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert Progress("auto").mode == "bars"
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert Progress("auto").mode == "lines"


def test_requests_name_catalog_and_ask_for_identity(server: LoopbackServer, tmp_path: Path) -> None:
    manager(tmp_path).download(resource(server.add("/data.bin", BODY)))
    headers = server.requests[0].headers
    assert headers["User-Agent"] == USER_AGENT and USER_AGENT.startswith("catalog/")
    assert headers["Accept-Encoding"] == "identity"


def test_proxy_comes_from_the_environment(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add("/data.bin", BODY)
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, server.base_url)  # the loopback server answers as a proxy
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "")
    file = manager(tmp_path).download(resource("http://dataset-host.invalid/data.bin"))
    assert file.path.read_bytes() == BODY
    assert server.requests[0].path == "http://dataset-host.invalid/data.bin"


def test_an_unreachable_proxy_is_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = refused_url("")
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "")
    sleeps = Sleeps()
    with pytest.raises(DownloadError, match="could not reach the proxy"):
        manager(tmp_path, sleeps).download(resource("http://dataset-host.invalid/data.bin"))
    assert sleeps == []


# The server itself.


def _get(server: LoopbackServer, method: str, path: str, **headers: str) -> tuple[int, Any, bytes]:
    host, port = server.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_server_unknown_path_is_404_and_head_has_no_body(server: LoopbackServer) -> None:
    server.add("/a.bin", BODY)
    assert _get(server, "GET", "/nope")[0] == 404
    status, headers, body = _get(server, "HEAD", "/a.bin")
    assert (status, headers["Content-Length"], body) == (200, str(len(BODY)), b"")
    assert _get(server, "GET", "/a.bin?x=1")[2] == BODY
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/nope"),
        ("HEAD", "/a.bin"),
        ("GET", "/a.bin?x=1"),
    ]


def test_server_ranges(server: LoopbackServer) -> None:
    server.add("/a.bin", BODY)
    server.add("/plain.bin", BODY, ranges=False)
    status, headers, body = _get(server, "GET", "/a.bin", Range="bytes=10-")
    assert (status, headers["Content-Range"], body) == (
        206,
        f"bytes 10-10243/{len(BODY)}",
        BODY[10:],
    )
    assert _get(server, "GET", "/a.bin", Range=f"bytes={len(BODY)}-")[0] == 416
    assert _get(server, "GET", "/plain.bin", Range="bytes=10-")[::2] == (200, BODY)


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
    with pytest.raises(ValueError, match="times must be"):
        Fault(kind="drop", times=0)


def test_wait_for_requests_times_out(server: LoopbackServer) -> None:
    assert not server.wait_for_requests(1, timeout=0.01)

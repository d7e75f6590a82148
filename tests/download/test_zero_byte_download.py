"""A registered zero-byte file (size 0, the sha256 of nothing) downloads, from a real loopback
HTTP server, into the cache like any other file; a second download reuses it; a server that
sends bytes for it is a size mismatch."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from catalog.download import DownloadConfig, DownloadManager, Resource, cache_path
from catalog.errors import ChecksumError, DownloadError
from catalog.testing.http_server import LoopbackServer

EMPTY = hashlib.sha256(b"").hexdigest()


def manager(tmp_path: Path) -> DownloadManager:
    config = DownloadConfig(
        download_dir=tmp_path / "dl",
        manual_dir=tmp_path / "manual",
        mirrors=(),
        offline=False,
        backoff=0.0,
        retries=0,
        progress="none",
    )
    return DownloadManager(config, sleep=lambda seconds: None)


def test_a_registered_empty_file_is_fetched_and_cached(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/empty.txt", b"")
    res = Resource((url,), 0, EMPTY, "empty.txt")
    file = manager(tmp_path).download(res)
    assert file.path == cache_path(res, tmp_path / "dl")
    assert file.path.read_bytes() == b"" and (file.size, file.sha256) == (0, EMPTY)
    assert len(server.requests) == 1
    assert not list((tmp_path / "dl" / ".meta").glob("*.part"))
    again = manager(tmp_path).download(res)  # from the cache, no request
    assert again == file and len(server.requests) == 1


def test_an_empty_file_the_server_sends_bytes_for_is_a_size_mismatch(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/empty.txt", b"not empty")
    res = Resource((url,), 0, EMPTY, "empty.txt")
    with pytest.raises((ChecksumError, DownloadError), match="size mismatch: expected 0 bytes"):
        manager(tmp_path).download(res)
    assert not cache_path(res, tmp_path / "dl").exists()

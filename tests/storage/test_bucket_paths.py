"""Where downloads and scratch space go when the data dir is a bucket: downloads cannot go into
a bucket, so the download dir defaults to the user cache dir (or $CATALOG_DOWNLOAD_DIR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.storage import paths
from catalog.storage.remote import remote_dir


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    return tmp_path / "cache" / "catalog" / "downloads"


def test_a_bucket_data_dir_downloads_into_the_user_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert paths.download_dir(None, "s3://data/team") == cache
    assert paths.download_dir(None, remote_dir("s3://data/team")) == cache
    monkeypatch.setenv("CATALOG_DATA_DIR", "s3://data/team")
    assert paths.download_dir() == cache
    monkeypatch.setenv("CATALOG_DOWNLOAD_DIR", str(tmp_path / "big-disk"))
    assert paths.download_dir() == tmp_path / "big-disk"  # the variable still decides
    assert paths.download_dir(tmp_path / "given") == tmp_path / "given"


def test_a_local_data_dir_keeps_its_downloads_beside_it(cache: Path, tmp_path: Path) -> None:
    assert paths.download_dir(None, tmp_path / "data") == tmp_path / "data" / "downloads"


@pytest.mark.parametrize(
    ("text", "scheme"),
    [
        ("s3://bucket/prefix", "s3"),
        ("GS://bucket", "gs"),
        ("https://host/data", "https"),
        ("git+ssh://host/x", "git+ssh"),
        ("data/dir", ""),
        ("./odd://name", ""),  # a local path that holds "://" is still a path
        ("://nothing", ""),
        ("", ""),
    ],
)
def test_one_rule_tells_urls_from_paths(text: str, scheme: str) -> None:
    from catalog.storage.data_dir import scheme_of
    from catalog.storage.remote import is_url, url_scheme

    assert url_scheme(text) == scheme
    assert scheme_of(text) == scheme
    assert is_url(text) is bool(scheme)

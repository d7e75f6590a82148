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

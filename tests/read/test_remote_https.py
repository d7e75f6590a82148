"""An https data dir: a static mirror of a local data dir (a web server that follows the
``<version>`` symlink; here python's http.server with Range, ETag and If-Match, as nginx or a
CDN answer), read by both backends; faults of a web server that is not a data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import NotPreparedError, StorageError
from catalog.storage import remote

from remote_fixtures import prepare_local
from s3server import StaticServer

COUNT = 150


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("mirror"), COUNT)


@pytest.fixture
def mirror(prepared: tuple[Path, Path]) -> Iterator[StaticServer]:
    data_dir = prepared[0].parent.parent  # <data dir>/tiny/1.0.0.gen-... -> <data dir>
    remote._FILESYSTEMS.clear()
    with StaticServer(data_dir) as server:
        yield server


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "2")


@pytest.mark.parametrize("mode", ["cache", "range"])
def test_a_static_mirror_of_a_data_dir_reads_like_the_local_copy(
    mirror: StaticServer, prepared: tuple[Path, Path], mode: str
) -> None:
    local = catalog.data_source(str(prepared[0]), split="train")
    ds = catalog.data_source(str(prepared[1]), data_dir=mirror.url, split="train", remote_read=mode)
    assert str(ds.path) == f"{mirror.url}/tiny/1.0.0"  # the mirror follows the symlink
    for i in (0, 77, COUNT - 1):
        got, expected = ds[i], local[i]
        assert all(np.array_equal(got[k], expected[k]) for k in ("image", "label"))
    assert [int(e["label"]) for e in ds] == [int(e["label"]) for e in local]
    shard = next(p for p in mirror.requests if "array_record" in p)
    # the cache fetches the shard once; ranges: its index, 3 records, the iteration's chunk
    assert mirror.requests[shard] == (1 if mode == "cache" else 5)
    assert mirror.requests["/tiny/1.0.0/dataset_info.json"] == 1


def test_an_https_data_dir_without_the_dataset_says_so(
    mirror: StaticServer, prepared: tuple[Path, Path]
) -> None:
    b = catalog.builder(str(prepared[1]), data_dir=f"{mirror.url}/nothing-here")
    with pytest.raises(NotPreparedError, match=r"not prepared in http://127\.0\.0\.1:\d+/nothing"):
        b.as_data_source("train")
    with pytest.raises(NotPreparedError, match="no prepared dataset at"):
        catalog.data_source(f"{mirror.url}/nothing/1.0.0", split="train")


def test_a_server_that_ignores_ranges_is_one_clear_error_for_range_reads(
    mirror: StaticServer, prepared: tuple[Path, Path]
) -> None:
    mirror.ignore_ranges = True
    ds = catalog.data_source(f"{mirror.url}/tiny/1.0.0", split="train", remote_read="range")
    with pytest.raises(StorageError, match="ignores byte ranges.*remote_read='cache'"):
        ds[3]


def test_an_https_data_dir_is_read_only(mirror: StaticServer) -> None:
    with pytest.raises(StorageError, match="read-only"):
        remote.write_pointer(remote.remote_dir(f"{mirror.url}/tiny"), "1.0.0", "x.gen-1")

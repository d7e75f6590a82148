"""The shard cache of remote data dirs (`catalog.storage.shard_cache`), against a real S3 server
on 127.0.0.1: verified shards, LRU eviction under a size limit, shards in use never evicted,
a full cache said plainly, several processes sharing one cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import ShardError
from catalog.storage.shard_cache import CacheFullError

from remote_fixtures import prepare_local, publish_to_bucket, shard_files
from s3server import S3Server

ROOT = Path(__file__).resolve().parents[2]
COUNT = 300  # 3 shards of 100 records, 192 KiB each


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("cache"), COUNT, shard_size=120_000)


@pytest.fixture
def url(s3: S3Server, prepared: tuple[Path, Path]) -> str:
    s3.make_bucket("cached")
    return publish_to_bucket(s3, prepared[0], "cached", "p") + "/tiny/1.0.0"


def shard_size(prepared: tuple[Path, Path]) -> int:
    sizes = {(prepared[0] / f).stat().st_size for f in shard_files(prepared[0])}
    assert len(sizes) == 1
    return sizes.pop()


def cached(cache: Path) -> set[str]:
    return {p.name for p in (cache / "shards").iterdir()}


def test_least_recently_used_shards_are_evicted_to_stay_under_the_limit(
    url: str, prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    size, cache = shard_size(prepared), tmp_path / "cache"
    local = catalog.data_source(str(prepared[0]), split="train")
    ds = catalog.data_source(url, split="train", cache_dir=cache, cache_size=2 * size + size // 2)
    sha = [s.sha256 for s in ds.info.splits["train"].shards]
    for first in (0, 100, 0, 200):  # shard 0, 1, 0 again (used last), then 2: evicts 1
        assert np.array_equal(ds[first + 5]["image"], local[first + 5]["image"])
        ds.close()  # lets the cache evict what this source read
    assert cached(cache) == {sha[0], sha[2]}
    assert sum(p.stat().st_size for p in (cache / "shards").iterdir()) <= 2 * size + size // 2
    assert not list((cache / "tmp").iterdir())


def test_shards_in_use_are_never_evicted_and_a_full_cache_says_so(
    url: str, prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    size, cache = shard_size(prepared), tmp_path / "cache"
    ds = catalog.data_source(url, split="train", cache_dir=cache, cache_size=2 * size + size // 2)
    ds[5], ds[105]  # both held by this source
    with pytest.raises(CacheFullError, match=r"no room .*shards in use .*cache_size=.*range"):
        ds[205]
    assert len(cached(cache)) == 2 and not list((cache / "tmp").iterdir())
    local = catalog.data_source(str(prepared[0]), split="train")
    assert np.array_equal(ds[5]["image"], local[5]["image"])  # what it holds is still read
    with pytest.raises(CacheFullError, match="larger than the shard cache's limit"):
        catalog.data_source(url, split="train", cache_dir=cache, cache_size=size // 2)[205]


def test_a_shard_that_does_not_match_its_recorded_hash_is_never_cached(
    s3: S3Server, prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    s3.make_bucket("corrupt")
    base = publish_to_bucket(s3, prepared[0], "corrupt", "p")
    shard = shard_files(prepared[0])[0]
    body = bytearray((prepared[0] / shard).read_bytes())
    body[1000] ^= 0xFF  # same size, one byte flipped: uploaded before anyone read it
    s3.client().put_object(
        Bucket="corrupt", Key=f"p/tiny/{prepared[0].name}/{shard}", Body=bytes(body)
    )
    ds = catalog.data_source(f"{base}/tiny/1.0.0", split="train", cache_dir=tmp_path / "c")
    with pytest.raises(ShardError, match="do not match what was prepared.*catalog verify"):
        ds[0]
    assert not cached(tmp_path / "c") and not list((tmp_path / "c" / "tmp").iterdir())
    assert int(ds[150]["label"]) >= 0  # the healthy shards are read


SHARE = """\
import sys, catalog
ds = catalog.data_source(sys.argv[1], split="train")
print(sum(int(e["label"]) for e in ds))
"""


def test_processes_sharing_a_cache_fetch_each_shard_once(
    s3: S3Server, url: str, prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    total = sum(int(e["label"]) for e in catalog.data_source(str(prepared[0]), split="train"))
    before = s3.count("cached/p/tiny/") - s3.count("dataset_info") - s3.count("pointer")
    env = {**os.environ, **s3.env(), "CATALOG_CACHE_DIR": str(tmp_path / "shared")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", SHARE, url], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [run.communicate(timeout=60)[0].strip() for run in runs]
    assert outputs == [str(total)] * 3
    after = s3.count("cached/p/tiny/") - s3.count("dataset_info") - s3.count("pointer")
    assert after - before == 3  # three shards, each downloaded by one process
    assert len(cached(tmp_path / "shared")) == 3


def test_cached_shards_once_verified_are_mapped_again_without_hashing(
    url: str, prepared: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Marking a cached shard as used leaves the shard's own file as it was: a second data
    source over the bucket in this process, and a copy of the first (a pipeline's worker
    gets one), map the cached shards without hashing them again, as they do local shards."""
    import hashlib
    import pickle

    from catalog.read.mapped_shard import MappedShard

    cache = tmp_path / "cache"
    ds = catalog.data_source(url, split="train", cache_dir=cache)
    everything = list(range(COUNT))
    want = ds.read_batch(everything)["image"]  # maps and verifies every cached shard
    assert all(isinstance(m, MappedShard) for m in ds._records.maps)
    stamps = {p.name: p.stat() for p in (cache / "shards").iterdir()}
    blob = pickle.dumps(ds)
    hashed: list[str] = []
    real = hashlib.sha256
    monkeypatch.setattr(
        "catalog.read.mapped_shard.hashlib.sha256", lambda data: hashed.append("x") or real(data)
    )
    for again in (catalog.data_source(url, split="train", cache_dir=cache), pickle.loads(blob)):
        np.testing.assert_array_equal(again.read_batch(everything)["image"], want)
        assert all(isinstance(m, MappedShard) for m in again._records.maps)
    assert hashed == []
    for name, before in stamps.items():  # the shard files themselves never touched
        after = (cache / "shards" / name).stat()
        assert (after.st_mtime_ns, after.st_ctime_ns) == (before.st_mtime_ns, before.st_ctime_ns)

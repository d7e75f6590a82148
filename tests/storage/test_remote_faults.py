"""Faults of a network file system, each against a real server on 127.0.0.1 (moto's S3 server
behind a fault-injecting proxy, `tests/s3server.py`): each one clear CatalogError or a bounded
retry, never a hang and never wrong data."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import NotPreparedError, StorageError
from catalog.storage import remote
from catalog.storage.remote_reads import ObjectChangedError

from remote_fixtures import prepare_local, publish_to_bucket, shard_files
from s3server import S3Fault, S3Server

COUNT = 120


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return prepare_local(tmp_path_factory.mktemp("faults"), COUNT)


@pytest.fixture
def url(s3: S3Server, prepared: tuple[Path, Path], request: pytest.FixtureRequest) -> str:
    """A fresh bucket holding the dataset, for each test (tests change objects)."""
    bucket = "b-" + request.node.name.lower().replace("_", "-")[:40].strip("-[]")
    bucket = "".join(c if c.isalnum() or c == "-" else "-" for c in bucket)
    s3.make_bucket(bucket)
    s3.faults.clear()
    return publish_to_bucket(s3, prepared[0], bucket, "p")


@pytest.fixture(autouse=True)
def _short_deadline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "3")
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(tmp_path / "cache"))


def local(prepared: tuple[Path, Path]) -> catalog.DataSource:
    return catalog.data_source(str(prepared[0]), split="train")


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("mode", ["range", "cache"])
def test_a_connection_dropped_mid_read_is_retried_and_gives_the_right_bytes(
    s3: S3Server, url: str, prepared: tuple[Path, Path], mode: str
) -> None:
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read=mode)
    s3.faults.append(S3Fault("drop", match="array_record", times=2))
    assert same(ds[7], local(prepared)[7])
    assert s3.faults[0].seen == 2


@pytest.mark.parametrize("mode", ["range", "cache"])
def test_a_connection_dropped_every_time_is_an_error_within_the_deadline(
    s3: S3Server, url: str, mode: str, tmp_path: Path
) -> None:
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read=mode)
    s3.faults.append(S3Fault("drop", match="array_record"))
    started = time.monotonic()
    with pytest.raises(StorageError, match="kept failing for 3 s") as caught:
        ds[7]
    assert time.monotonic() - started < 20
    assert "array_record" in str(caught.value)
    assert not list((tmp_path / "cache" / "shards").glob("*")) if mode == "cache" else True


def test_slowdown_is_retried_with_backoff_then_read(
    s3: S3Server, url: str, prepared: tuple[Path, Path]
) -> None:
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    s3.faults.append(S3Fault("slowdown", match="array_record", times=4))
    assert same(ds[3], local(prepared)[3])
    assert s3.faults[0].seen == 4


def test_slowdown_without_end_is_an_error_at_the_deadline(s3: S3Server, url: str) -> None:
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    s3.faults.append(S3Fault("slowdown", match="array_record"))
    started = time.monotonic()
    with pytest.raises(StorageError, match="kept failing .*CATALOG_REMOTE_DEADLINE"):
        ds[3]
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("mode", ["range", "cache"])
def test_an_object_replaced_under_a_reader_is_refused_never_read(
    s3: S3Server, url: str, prepared: tuple[Path, Path], mode: str
) -> None:
    ds = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read=mode)
    if mode == "range":
        ds[0]  # the shard's index is read at the version listed when the source was made
    generation = str(ds.path).split("://", 1)[1]
    bucket, key = generation.split("/", 1)
    shard = shard_files(prepared[0])[0]
    body = bytearray((prepared[0] / shard).read_bytes())
    body[70_000:70_100] = bytes(100)  # same size, other bytes
    s3.client().put_object(Bucket=bucket, Key=f"{key}/{shard}", Body=bytes(body))
    with pytest.raises(ObjectChangedError, match="changed after this data source first read it"):
        ds[COUNT - 1]


def test_a_reader_keeps_its_generation_when_the_dataset_is_prepared_again(
    s3: S3Server, url: str, prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    old = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    unread = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    again, _ = prepare_local(tmp_path / "again", COUNT // 2)
    bucket, prefix = url.split("://", 1)[1].split("/", 1)
    publish_to_bucket(s3, again, bucket, prefix)
    new = catalog.data_source(f"{url}/tiny/1.0.0", split="train", remote_read="range")
    assert len(old) == COUNT and len(new) == COUNT // 2 and old.path != new.path
    assert same(old[COUNT - 1], local(prepared)[COUNT - 1])
    s3.client().delete_object(  # the old generation collected under its reader
        Bucket=bucket, Key=f"{str(old.path).split('/', 3)[3]}/{shard_files(prepared[0])[0]}"
    )
    for source in (old, unread):  # a shard open (its index read) and one never opened
        with pytest.raises(NotPreparedError, match="does not exist any more: .*prepared again"):
            source[5]


def test_missing_credentials_are_one_clear_error(
    s3: S3Server, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setattr(remote, "_FILESYSTEMS", {})
    with pytest.raises(StorageError, match="no credentials for s3://.*AWS_ACCESS_KEY_ID"):
        catalog.data_source(f"{url}/tiny/1.0.0", split="train")


@pytest.mark.parametrize("bucket", ["no-such-bucket", "absent"])  # the word in the name or not
def test_a_bucket_that_does_not_exist_is_one_clear_error(s3: S3Server, bucket: str) -> None:
    with pytest.raises(StorageError, match=f"bucket '{bucket}' does not exist"):
        catalog.data_source(f"s3://{bucket}/p/tiny/1.0.0", split="train")


def test_access_denied_is_one_clear_error(s3: S3Server, url: str) -> None:
    s3.faults.append(S3Fault("denied", match="/p/"))
    with pytest.raises(StorageError, match="access denied"):
        catalog.data_source(f"{url}/tiny/1.0.0", split="train")


def test_a_data_dir_without_the_dataset_says_it_is_not_prepared(
    s3: S3Server, url: str, prepared: tuple[Path, Path]
) -> None:
    b = catalog.builder(str(prepared[1]), data_dir=url.replace("/p", "/elsewhere"))
    assert not b.is_prepared
    with pytest.raises(NotPreparedError, match="is not prepared in s3://.*/elsewhere"):
        b.as_data_source("train")


@pytest.mark.parametrize("value", ["0", "-5", "soon", "nan"])
def test_a_deadline_that_is_not_a_positive_number_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    from catalog.storage import remote_reads

    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", value)
    with pytest.raises(StorageError, match="CATALOG_REMOTE_DEADLINE.*positive number"):
        remote_reads.deadline()
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "2.5")
    assert remote_reads.deadline() == remote_reads.deadline(120.0) == 2.5
    monkeypatch.delenv("CATALOG_REMOTE_DEADLINE")
    assert remote_reads.deadline(120.0) == 120.0

"""Faults of a bucket while preparing into it, each against a real S3 server on 127.0.0.1: a
bucket that does not exist, no credentials, access denied (one clear line each, no traceback),
and 503 SlowDown during the upload (retried with backoff; bounded by a deadline)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import catalog
from catalog.errors import StorageError
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder
from s3server import S3Server

SHARD = 60_000
URL = "s3://data/team"


def prepare(folder: Path, url: str = URL) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", "prepare", str(folder), "--data-dir", url, "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("catalog: error:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize("bucket", ["no-such-bucket", "absent"])  # the word in the name or not
def test_a_bucket_that_does_not_exist_is_one_clear_error(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, bucket: str
) -> None:
    folder = idx_builder(tmp_path, server, 30)
    result = prepare(folder, f"s3://{bucket}/team")
    assert result.returncode == 2  # a usage error, found before anything is downloaded
    line = one_line(result)
    assert f"'{bucket}' does not exist" in line and "--data-dir" in line
    assert not (tmp_path / "downloads").exists() or not any((tmp_path / "downloads").iterdir())


def test_a_bucket_named_with_the_word_bucket_is_not_taken_for_a_missing_one(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    """A key that is not there yet (a fresh prefix) is not a bucket that is not there, though
    its path says "bucket"."""
    s3.make_bucket("team-bucket")
    result = prepare(idx_builder(tmp_path, server, 30), "s3://team-bucket/fresh")
    assert result.returncode == 0, result.stderr
    assert any(key.endswith(".pointer") for key in s3.keys("team-bucket", "fresh/"))


def test_missing_credentials_are_one_clear_error(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = idx_builder(tmp_path, server, 30)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = prepare(folder)
    assert result.returncode == 2
    line = one_line(result)
    assert "no credentials found" in line and "AWS_ACCESS_KEY_ID" in line
    assert s3.puts() == []


def test_access_denied_is_one_clear_error_and_writes_nothing(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 30)
    # a policy that lets these credentials read the bucket but not write to it
    s3.faults.append(lambda method, path: (403, "AccessDenied") if method == "PUT" else None)
    result = prepare(folder)
    assert result.returncode == 2  # an unusable data dir
    line = one_line(result)
    assert "access denied" in line and URL in line
    assert s3.keys("data") == {}


def test_slow_down_during_the_upload_is_retried(
    tmp_path: Path, server: LoopbackServer, s3: S3Server
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    refused: dict[str, int] = {}

    def slow_down(method: str, path: str) -> tuple[int, str] | None:
        # more refusals than s3fs tries a request: catalog's own retries (with backoff) finish
        if method == "PUT" and ".array_record-" in path and refused.get(path, 0) < 4:
            refused[path] = refused.get(path, 0) + 1
            return 503, "SlowDown"
        return None

    s3.faults.append(slow_down)
    b = catalog.builder(folder, data_dir=URL)
    info = b.download_and_prepare(shard_size=SHARD)
    shards = info.splits["train"].shards
    assert len(shards) == 5 and set(refused.values()) == {4}  # every shard: refused 4 times
    keys = s3.keys("data", "team/")
    assert all(keys[f"team/tiny/{k}"] == s.num_bytes for k, s in _in_generation(keys, shards))


def _in_generation(keys: dict[str, int], shards: tuple[object, ...]) -> list[tuple[str, object]]:
    (generation,) = {k.split("/")[2] for k in keys if ".gen-" in k}
    return [(f"{generation}/{s.file}", s) for s in shards]  # type: ignore[attr-defined]


def test_a_server_that_keeps_answering_slow_down_fails_by_the_deadline(
    tmp_path: Path, server: LoopbackServer, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = idx_builder(tmp_path, server, 300)
    b = catalog.builder(folder, data_dir=URL)
    b.download_and_prepare(shard_size=SHARD, max_examples_per_split=1)  # downloads cached
    s3.faults.append(lambda method, path: (503, "SlowDown") if ".array_record-" in path else None)
    monkeypatch.setenv("CATALOG_REMOTE_DEADLINE", "3")  # writes honour it as reads do
    start = time.monotonic()
    with pytest.raises(StorageError, match=r"still failed after \d+ tries") as raised:
        b.download_and_prepare(shard_size=SHARD)
    assert time.monotonic() - start < 20
    assert "$CATALOG_REMOTE_DEADLINE, 3 s now" in str(raised.value)
    assert "tiny-train.array_record-00000-of-00005" in str(raised.value)
    # the failed prepare left no generation and no marker; the first copy is still published
    keys = s3.keys("data", "team/")
    assert not [k for k in keys if ".incomplete-" in k or k.endswith(".lock")]
    assert len({k.split("/")[2] for k in keys if ".gen-" in k}) == 1

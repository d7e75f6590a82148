"""The publish protocol in a bucket (catalog.storage.bucket_publish, bucket_lock) against moto's
S3 server: the lock (a conditional PUT), its stale holders and a takeover found out; begin
resuming a marker's generation and never writing into a published one; the grace rule."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from catalog.errors import StorageError
from catalog.features import FeaturesDict, Scalar
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo, SplitInfo
from catalog.storage import bucket_lock, bucket_publish
from catalog.storage.bucket_io import put_bytes
from catalog.storage.remote import RemoteDir

from s3server import S3Server

DATASET = RemoteDir("s3://data/team/tiny")


def test_a_second_preparer_waits_for_the_lock(s3: S3Server) -> None:
    order: list[str] = []
    with bucket_lock.bucket_lock(DATASET, "1.0.0") as first:
        assert not first.waited

        def second() -> None:
            with bucket_lock.bucket_lock(DATASET, "1.0.0") as held:
                order.append(f"second holds it (waited={held.waited})")

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(2.5)
        order.append("first releases it")
    thread.join(30)
    assert order == ["first releases it", "second holds it (waited=True)"]
    assert "team/tiny/1.0.0.lock" not in s3.keys("data")


def test_the_lock_of_a_process_that_is_gone_is_taken_over_at_once(s3: S3Server) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    import socket

    body = {"token": "old", "host": socket.gethostname(), "pid": int(dead), "refreshed": 0}
    put_bytes(json.dumps(body).encode(), DATASET / "1.0.0.lock")
    start = time.monotonic()
    with bucket_lock.bucket_lock(DATASET, "1.0.0") as held:
        assert not held.waited and held.still_ours()
    assert time.monotonic() - start < 5


def test_a_lock_on_another_host_is_stale_only_after_its_lease(
    s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"token": "theirs", "host": "another-host", "pid": 1, "refreshed": 0}
    put_bytes(json.dumps(body).encode(), DATASET / "1.0.0.lock")
    got: list[bool] = []

    def take() -> None:
        with bucket_lock.bucket_lock(DATASET, "1.0.0") as held:
            got.append(held.waited)

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    thread.join(2.5)
    assert thread.is_alive() and not got  # within its lease: waited for
    monkeypatch.setattr(bucket_lock, "LEASE", 1.0)  # now older than the lease: taken over
    thread.join(30)
    assert got == [True]


def test_a_holder_finds_out_that_its_lock_was_taken_over(s3: S3Server) -> None:
    with bucket_lock.bucket_lock(DATASET, "1.0.0") as held:
        held.check()
        other = {"token": "other", "host": "another-host", "pid": 1, "refreshed": time.time()}
        put_bytes(json.dumps(other).encode(), DATASET / "1.0.0.lock")
        with pytest.raises(StorageError, match="another process took over the prepare lock"):
            held.check()
    assert "team/tiny/1.0.0.lock" in s3.keys("data")  # the other's lock is left alone


def info_of(shards: list[ShardInfo]) -> DatasetInfo:
    splits = {"train": SplitInfo("train", sum(s.num_examples for s in shards), tuple(shards))}
    return DatasetInfo(
        name="tiny", version="1.0.0", features=FeaturesDict({"x": Scalar("int64")}), splits=splits
    )


def upload(tmp_path: Path, generation: RemoteDir, name: str, data: bytes) -> ShardInfo:
    import hashlib

    local = tmp_path / name
    local.write_bytes(data)
    shard = ShardInfo(name, 1, len(data), hashlib.sha256(data).hexdigest())
    bucket_publish.put_shard(str(local), generation, shard)
    return shard


def test_begin_resumes_its_plan_and_never_writes_into_a_published_generation(
    s3: S3Server, tmp_path: Path
) -> None:
    first = bucket_publish.begin(DATASET, "1.0.0", "plan-a", 100)
    shard = upload(tmp_path, first, "s-00000-of-00002", b"a" * 10)
    assert bucket_publish.begin(DATASET, "1.0.0", "plan-a", 100) == first  # resumed
    assert bucket_publish.stored_shards(first) == {shard.file: shard}
    # another plan drops the unfinished generation of the first
    other = bucket_publish.begin(DATASET, "1.0.0", "plan-b", 200)
    assert other != first and bucket_publish.listing(first) == {}
    assert list(bucket_publish.markers(DATASET, "1.0.0")) == ["1.0.0.incomplete-plan-b"]
    # complete but never published (killed between dataset_info.json and the pointer):
    # no reader saw it, so the same plan resumes it
    done = upload(tmp_path, other, "s-00000-of-00001", b"b" * 10)
    put_bytes(b"{}", other / INFO_FILE)
    assert bucket_publish.begin(DATASET, "1.0.0", "plan-b", 200) == other
    # published, then killed before removing its marker: never resumed, never removed
    put_bytes(json.dumps({"generation": other.name}).encode(), DATASET / "1.0.0.pointer")
    again = bucket_publish.begin(DATASET, "1.0.0", "plan-b", 200)
    assert again != other
    assert bucket_publish.stored_shards(other) == {done.file: done}  # left whole
    assert INFO_FILE in bucket_publish.listing(other)
    bucket_publish.discard(DATASET, "1.0.0", "plan-b", other)  # a failure never removes it
    assert INFO_FILE in bucket_publish.listing(other)
    # fresh=True (--overwrite) starts a new generation even for the same plan
    assert bucket_publish.begin(DATASET, "1.0.0", "plan-b", 200, fresh=True) != again


def test_publish_checks_the_shards_then_moves_the_pointer_and_collects(
    s3: S3Server, tmp_path: Path
) -> None:
    published = []
    for n in range(3):
        generation = bucket_publish.begin(DATASET, "1.0.0", f"plan-{n}", 100)
        shard = upload(tmp_path, generation, "s-00000-of-00001", bytes([n]) * 10)
        bucket_publish.publish(DATASET, "1.0.0", f"plan-{n}", generation, info_of([shard]))
        published.append(generation.name)
        time.sleep(1.1)  # LastModified has one-second resolution
    current = bucket_publish.published(DATASET, "1.0.0")
    assert current is not None and current[0].name == published[2]
    left = {k.split("/")[2] for k in s3.keys("data") if ".gen-" in k}
    assert left == {published[1], published[2]}  # the grace rule: current and previous
    # a shard missing or not as written: nothing is published
    generation = bucket_publish.begin(DATASET, "1.0.0", "plan-x", 100)
    wrong = ShardInfo("s-00000-of-00001", 1, 10, "0" * 64)
    upload(tmp_path, generation, "s-00000-of-00001", b"z" * 10)
    with pytest.raises(StorageError, match="it was written as 10 bytes, sha256 0000"):
        bucket_publish.publish(DATASET, "1.0.0", "plan-x", generation, info_of([wrong]))
    assert bucket_publish.published(DATASET, "1.0.0")[0].name == published[2]  # type: ignore[index]
    # an unfinished generation no marker names (a killed discard) is collected
    s3.client().delete_object(Bucket="data", Key="team/tiny/1.0.0.incomplete-plan-x")
    assert generation.name in bucket_publish.collect(DATASET, "1.0.0")


def test_pointers_are_found_without_listing_any_generation(s3: S3Server) -> None:
    client = s3.client()
    keys = ["1.0.0.pointer", "cfg/2.0.0.pointer", "cfg/2.0.0.gen-b/dataset_info.json"]
    keys += [f"1.0.0.gen-a/tiny-train.array_record-{i:05d}" for i in range(30)]
    keys += [".hidden/3.0.0.pointer", "cfg/deeper/4.0.0.pointer", "1.0.0.gen-a/5.0.0.pointer"]
    for key in keys:
        client.put_object(Bucket="data", Key=f"team/tiny/{key}", Body=b"{}")
    s3.requests.clear()
    assert bucket_publish.pointers(DATASET) == ["1.0.0", "cfg/2.0.0"]
    # a level each (team/tiny/ and team/tiny/cfg/), no generation listed, nor read
    assert len(s3.queries) == 2 and all("delimiter=%2F" in q for q in s3.queries)
    assert not [q for q in s3.queries if "gen-" in q]
    assert bucket_publish.pointers(RemoteDir("s3://data/team/none")) == []

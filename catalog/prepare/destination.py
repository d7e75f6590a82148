"""Where a prepare publishes: a local data dir or a bucket, behind one set of steps.

The driver (`catalog.prepare.driver`) runs the same steps for both: check the copy there, take
the lock, plan, run the units into a local work dir, publish a new generation. They differ in
where the shards end up:

- `LocalDestination`: the work dir is beside the target and becomes the new generation by a
  rename (`catalog.storage.generations`).
- `BucketDestination` (s3://, gs://): the work dir is local scratch space
  (``<download dir>/scratch/<bucket>/<prefix>/<name>[/<config>]/``); each unit uploads its
  shard into the generation `catalog.storage.bucket_publish.begin` names as soon as it is
  written and deletes it, so scratch holds only the shards being written (one per worker);
  publishing uploads dataset_info.json and moves the pointer (`bucket_publish.publish`).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from catalog.info.dataset_info import DatasetInfo, ShardInfo
from catalog.prepare.reuse import reusable
from catalog.spec.model import BuilderSpec
from catalog.storage import bucket_publish
from catalog.storage.bucket_io import probe
from catalog.storage.bucket_lock import Held, bucket_lock
from catalog.storage.generations import collect, publish
from catalog.storage.locking import dataset_lock, work_dirs
from catalog.storage.paths import DATA_DIR_ENV, usable_dir
from catalog.storage.remote import RemoteDir

__all__ = ["BucketDestination", "Destination", "LocalDestination", "destination"]


class LocalDestination:
    """A dataset version in a local data dir."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.local = target  # where work dirs go: beside the target

    def leftovers(self) -> bool:
        return bool(work_dirs(self.target))

    def reusable(self, spec: BuilderSpec, limit: int | None) -> DatasetInfo | None:
        return reusable(spec, self.target, limit)

    def check(self) -> None:
        usable_dir(self.target.parent, "the data dir", f"--data-dir or ${DATA_DIR_ENV}")

    @contextlib.contextmanager
    def lock(self) -> Iterator[bool]:
        with dataset_lock(self.target) as waited:
            collect(self.target)  # generations left to readers that are gone now
            yield waited

    def resumable_plans(self) -> list[tuple[str, int]]:
        return []  # the local work dirs' plans say (`driver._resumable_size`)

    def begin(self, key: str, shard_bytes: int, fresh: bool) -> RemoteDir | None:
        return None  # units write into the work dir itself

    def stored(self, upload: RemoteDir | None) -> dict[str, ShardInfo]:
        return {}

    def publish(self, work: Path, key: str, upload: RemoteDir | None, info: DatasetInfo) -> None:
        info.write(work)
        publish(work, self.target)

    def discard(self, key: str, upload: RemoteDir | None) -> None:
        pass


class BucketDestination:
    """A dataset version in a bucket (`catalog.storage.bucket_publish`); `scratch` is the local
    folder its work dirs go in."""

    def __init__(self, target: RemoteDir, scratch: Path) -> None:
        self.target = target
        self.dataset = RemoteDir(target.url.rsplit("/", 1)[0])
        self.version = target.name
        self.local = scratch / target.protocol / target.path
        self.held: Held | None = None

    def leftovers(self) -> bool:
        return bool(bucket_publish.markers(self.dataset, self.version))

    def reusable(self, spec: BuilderSpec, limit: int | None) -> DatasetInfo | None:
        return reusable(spec, self.target, limit)

    def check(self) -> None:
        probe(self.dataset)

    @contextlib.contextmanager
    def lock(self) -> Iterator[bool]:
        with bucket_lock(self.dataset, self.version) as held:
            self.held = held
            bucket_publish.collect(self.dataset, self.version)
            yield held.waited

    def resumable_plans(self) -> list[tuple[str, int]]:
        """(plan key, shard size) of the prepares under way in the bucket."""
        notes = bucket_publish.markers(self.dataset, self.version).values()
        return [
            (str(n.get("plan")), n["shard_bytes"])
            for n in notes
            if isinstance(n.get("shard_bytes"), int)
        ]

    def begin(self, key: str, shard_bytes: int, fresh: bool) -> RemoteDir | None:
        return bucket_publish.begin(self.dataset, self.version, key, shard_bytes, fresh=fresh)

    def stored(self, upload: RemoteDir | None) -> dict[str, ShardInfo]:
        """The shards already uploaded whole into the generation (by an earlier run)."""
        assert upload is not None
        return bucket_publish.stored_shards(upload)

    def publish(self, work: Path, key: str, upload: RemoteDir | None, info: DatasetInfo) -> None:
        assert upload is not None
        assert self.held is not None
        self.held.check()  # another preparer took the lock over: publish nothing
        bucket_publish.publish(self.dataset, self.version, key, upload, info)
        shutil.rmtree(work, ignore_errors=True)

    def discard(self, key: str, upload: RemoteDir | None) -> None:
        if upload is not None:
            bucket_publish.discard(self.dataset, self.version, key, upload)


Destination = LocalDestination | BucketDestination


def destination(target: Path | RemoteDir, scratch: Path | None) -> Destination:
    """The destination of a prepare into `target`; `scratch`: local space for a bucket's."""
    if isinstance(target, RemoteDir):
        assert scratch is not None, "a bucket destination needs local scratch space"
        return BucketDestination(target, scratch)
    return LocalDestination(target)

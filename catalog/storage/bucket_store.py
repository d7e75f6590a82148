"""A data dir in object storage (``s3://``, ``gs://``) or on a web server (``https://``,
read-only): the `catalog.storage.data_dir.Store` protocol over a pointer object per dataset
version (`catalog.storage.remote`), the bucket publish protocol (`bucket_publish`), the
preparers' lock (`bucket_lock`) and checked, retried reads (`remote_reads`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog._util.hashing import Stamp
from catalog.errors import CatalogError, NotPreparedError, SpecError, StorageError
from catalog.info.dataset_info import INFO_FILE, DatasetInfo, ShardInfo
from catalog.storage import bucket_publish
from catalog.storage.bucket_io import probe
from catalog.storage.bucket_lock import Held, bucket_lock
from catalog.storage.bucket_shards import BucketShards
from catalog.storage.data_dir import (
    Leftover,
    Opened,
    OpenFile,
    OpenRanges,
    Prepared,
    RemoteRead,
    Removal,
    ShardSink,
    parts_of,
)
from catalog.storage.remote import RemoteDir, remote_dir
from catalog.storage.remote_reads import cat, copy_to, list_objects, resolve_generation, stat

__all__ = ["BucketPublisher", "BucketStore", "read_remote_info", "remote_dataset"]


def _remote(location: Path | RemoteDir) -> RemoteDir:
    assert isinstance(location, RemoteDir), location
    return location


def _split(target: RemoteDir) -> tuple[RemoteDir, str]:
    """(``<data dir>/<name>[/<config>]``, version) of a target."""
    return RemoteDir(target.url.rsplit("/", 1)[0]), target.name


class BucketStore:
    """A data dir named by URL (see `catalog.storage.data_dir`)."""

    def __init__(self, root: str | os.PathLike[str] | RemoteDir, *, check: bool = True) -> None:
        self.root: RemoteDir = root if isinstance(root, RemoteDir) else remote_dir(os.fspath(root))
        self.read_only = self.root.read_only

    def __repr__(self) -> str:
        return f"BucketStore({self.root.url!r})"

    def target(self, name: str, version_dir: str) -> RemoteDir:
        return self.root.joinpath(*parts_of(name), version_dir)

    # -- reading ---------------------------------------------------------------------------
    def open(self, target: Path | RemoteDir) -> Opened | None:
        found = remote_dataset(_remote(target))
        return None if found is None else Opened(found[0], found[1])

    def shard_sizes(self, opened: Opened) -> dict[str, int]:
        if self.read_only:  # a web server has no listing: the sizes dataset_info.json records
            splits = opened.info.splits.values()
            return {shard.file: shard.num_bytes for split in splits for shard in split.shards}
        listed = bucket_publish.listing(_remote(opened.folder))
        return {name: entry.size for name, entry in listed.items()}

    def usage(self, opened: Opened) -> int:
        return sum(s.num_bytes for s in opened.info.splits.values())  # as recorded

    def source_options(
        self, remote_read: str, cache_dir: Any, cache_size: Any
    ) -> Mapping[str, Any]:
        from catalog.storage.shard_cache import ShardCache

        cache = ShardCache(cache_dir, cache_size) if remote_read == "cache" else None
        return {"remote_read": remote_read, "cache": cache}

    def shards(
        self,
        folder: Path | RemoteDir,
        info: DatasetInfo,
        open_file: OpenFile,
        open_ranges: OpenRanges,
        remote_read: RemoteRead = "cache",
        cache: Any = None,
    ) -> BucketShards:
        return BucketShards(_remote(folder), info, open_file, open_ranges, remote_read, cache)

    def shard_files(self, opened: Opened) -> Iterator[tuple[ShardInfo, Path | None]]:
        """Each shard fetched into a temporary file, one at a time (bounded disk), the
        objects listed once; None for a shard that is not there."""
        generation = _remote(opened.folder)
        listed = list_objects(generation)
        with tempfile.TemporaryDirectory(prefix="catalog-verify-") as scratch:
            for split in opened.info.splits.values():
                for shard in split.shards:
                    try:
                        obj = (
                            listed.get(shard.file)
                            if listed is not None
                            else stat(generation / shard.file)
                        )
                    except CatalogError:
                        obj = None
                    if obj is None:
                        yield shard, None
                        continue
                    local = Path(scratch) / shard.file
                    with open(local, "wb") as out:
                        copy_to(obj, out)
                    try:
                        yield shard, local
                    finally:
                        local.unlink(missing_ok=True)

    def found(self, name: str) -> list[str]:
        """``<version>`` and ``<config>/<version>`` published under `name` (their pointers)."""
        if self.read_only:
            return []
        return bucket_publish.pointers(self.root.joinpath(*parts_of(name)))

    def unnamed(self, name: str) -> list[str]:
        """None: a bucket's removal takes every generation with the pointer (no reader can
        hold one there, `remove`)."""
        return []

    def prepared(self) -> list[Prepared]:
        found = []
        for name, version, _ in bucket_publish.prepared(self.root):
            published = bucket_publish.published(self.root / name, version)
            if published is not None:
                found.append(Prepared(name, version, str(self.root / name / version), published[1]))
        return found

    def leftovers(self, target: Path | RemoteDir) -> list[Leftover]:
        if self.read_only:
            return []
        dataset, version = _split(_remote(target))
        return [Leftover(str(dataset / n)) for n in bucket_publish.markers(dataset, version)]

    # -- writing ---------------------------------------------------------------------------
    def _writable(self) -> None:
        if self.read_only:
            raise StorageError(
                f"{self.root} is read-only ({self.root.protocol}://): prepare, import and rm "
                "write into a local data dir, s3:// or gs://"
            )

    def lock(self, target: Path | RemoteDir) -> contextlib.AbstractContextManager[Held]:
        self._writable()
        return bucket_lock(*_split(_remote(target)))

    def publisher(self, target: Path | RemoteDir, scratch: Path | None) -> BucketPublisher:
        self._writable()
        assert scratch is not None, "a bucket destination needs local scratch space"
        return BucketPublisher(_remote(target), scratch)

    def check_writable(self, target: Path | RemoteDir) -> None:
        self._writable()
        probe(_split(_remote(target))[0])

    def remove(self, target: Path | RemoteDir, dry_run: bool = False) -> Removal:
        """The pointer first, then every generation and the markers of interrupted prepares,
        under the preparers' lock. Readers cannot hold a generation in a bucket: one still
        reading the dataset finds its objects gone and says so."""
        self._writable()
        target = _remote(target)
        dataset, version = _split(target)
        with bucket_lock(dataset, version):
            sizes = bucket_publish.generation_sizes(dataset, version)
            markers = bucket_publish.markers(dataset, version)
            prepared = bucket_publish.published(dataset, version) is not None
            if not (prepared or sizes or markers):
                return Removal(False)
            size = sum(sizes.values())
            leftovers = [str(dataset / m) for m in markers]
            removal = Removal(True, str(target) if prepared else "", leftovers, size, size)
            if not dry_run:
                bucket_publish.remove(dataset, version)
            return removal


class BucketPublisher:
    """A dataset version in a bucket (`catalog.storage.bucket_publish`): the work dir is local
    scratch space (``<scratch>/<scheme>/<bucket>/<prefix>/<name>[/<config>]/``); each unit
    uploads its shard into the generation `begin` names as soon as it is written."""

    def __init__(self, target: RemoteDir, scratch: Path) -> None:
        self.target = target
        self.dataset, self.version = _split(target)
        self.local = scratch / target.protocol / target.path
        self.held: Held | None = None

    def leftovers(self) -> bool:
        return bool(bucket_publish.markers(self.dataset, self.version))

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

    def begin(self, key: str, shard_bytes: int, fresh: bool, work: Path) -> BucketSink:
        generation = bucket_publish.begin(self.dataset, self.version, key, shard_bytes, fresh=fresh)
        return BucketSink(generation)

    def publish(self, work: Path, key: str, sink: ShardSink, info: DatasetInfo) -> None:
        assert isinstance(sink, BucketSink) and self.held is not None
        self.held.check()  # another preparer took the lock over: publish nothing
        bucket_publish.publish(self.dataset, self.version, key, sink.generation, info)
        shutil.rmtree(work, ignore_errors=True)

    def discard(self, key: str, sink: ShardSink | None) -> None:
        if isinstance(sink, BucketSink):
            bucket_publish.discard(self.dataset, self.version, key, sink.generation)


@dataclass(frozen=True)
class BucketSink:
    """A bucket prepare's shards: uploaded one by one into the generation `begin` made, as
    soon as each is written (`catalog.storage.data_dir.ShardSink`); checked on publish."""

    generation: RemoteDir

    def put(self, written: Path, shard: ShardInfo, stamp: Stamp | None = None) -> None:
        """Upload the finished shard, then drop the local copy: scratch stays small (the
        bucket's publish checks every shard's sha256: `stamp` is not needed)."""
        bucket_publish.put_shard(str(written), self.generation, shard)
        written.unlink(missing_ok=True)

    def finished(self, file: str, record: ShardInfo | None) -> ShardInfo | None:
        """The shard as uploaded whole (by this run, a killed one, or a worker elsewhere)."""
        return bucket_publish.stored_shard(self.generation, file)

    def stored(self, records: Mapping[str, ShardInfo | None]) -> dict[str, ShardInfo]:
        """Every shard uploaded whole into the generation, by file name (one listing)."""
        return bucket_publish.stored_shards(self.generation)

    def check(self, shard: ShardInfo) -> str | None:
        return None  # `publish` checks every shard in the bucket

    def scratch_bytes(self, sizes: list[int], at_once: int) -> int:
        return sum(sorted(sizes, reverse=True)[:at_once])  # one shard per writer at a time


def read_remote_info(generation: RemoteDir) -> DatasetInfo:
    """The dataset_info.json of the remote `generation` (one request)."""
    where = generation / INFO_FILE
    data = cat(where)
    try:
        return DatasetInfo.from_json(json.loads(data))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise SpecError(
            f"{where} is unreadable ({type(error).__name__}: {error}); prepare the dataset "
            "again with --overwrite"
        ) from None


def remote_dataset(target: RemoteDir) -> tuple[RemoteDir, DatasetInfo] | None:
    """The generation that `target` (``<data dir>/<name>[/<config>]/<version>``) names and its
    info, or None when nothing is prepared there. A `target` that is itself a generation
    (it holds a dataset_info.json) is read as it is."""
    parent_url, _, version = target.url.rpartition("/")
    if "://" not in parent_url or parent_url.endswith("://") or not version:
        return None
    generation = resolve_generation(RemoteDir(parent_url), version)
    try:
        return generation, read_remote_info(generation)
    except NotPreparedError:
        if generation.name == version:  # no pointer, and no dataset in <version>/ either
            return None
        raise NotPreparedError(  # the pointer names a generation that is gone
            f"{target} names generation {generation.name}, which is not there (removed, or "
            "the upload was interrupted): prepare the dataset again"
        ) from None

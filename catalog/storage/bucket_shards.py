"""The shards of one generation in a bucket (s3://, gs://) or on a web server (https://), as
the record layer opens them (`catalog.storage.data_dir.Shards`), in one of two ways the user
chooses (``remote_read=``):

- ``"cache"`` (the default): each shard is fetched whole into the local shard cache
  (`catalog.storage.shard_cache`: verified against the size and sha256 dataset_info.json
  recorded at prepare time, LRU, shared by processes) and read there like a local shard,
  memory maps included: after the first epoch, reads cost what local reads cost.
- ``"range"``: single records by byte ranges, through the reader `catalog.read` hands in
  (`catalog.read.remote_shard.RangeShard`: array_record's index fetched once per shard and
  process, each record checked against its chunk's hash), for sparse access to datasets too
  large for the local disk.

The objects of a generation are listed once when the data source is made (their sizes checked
against dataset_info.json, their ETags kept and pickled along to worker processes, which then
read the same versions); an https data dir has no listing: each shard is checked (HEAD) when
a process first opens it. Held cache files are per process: a forked child holds its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from catalog.errors import NotPreparedError
from catalog.info.dataset_info import DatasetInfo
from catalog.storage.data_dir import REMOTE_READS, OpenFile, OpenRanges, RemoteRead
from catalog.storage.remote import RemoteDir
from catalog.storage.remote_reads import RemoteObject, list_objects, stat
from catalog.storage.shard_cache import Held, ShardCache
from catalog.storage.shards import shard_error

__all__ = ["BucketShards", "gone_means_prepared_again"]


@contextlib.contextmanager
def gone_means_prepared_again(where: RemoteDir) -> Iterator[None]:
    """A shard of the generation a data source pinned that is no longer there: the dataset
    was prepared again and the old generation collected (NotPreparedError saying so)."""
    try:
        yield
    except NotPreparedError as error:
        if "prepared again" in str(error):
            raise
        raise NotPreparedError(
            f"{where} does not exist any more: the dataset was prepared again (--overwrite) "
            "after this data source was made, and the generation it reads was removed; make "
            "a new data source (catalog.data_source(...)) to read the new one"
        ) from None


class BucketShards:
    """The shards of the remote generation `folder` (module docstring): `paths` are their
    URLs; `open` gives a reader, `local_path` the cached file a memory map may read (None when
    reading by ranges)."""

    def __init__(
        self,
        folder: RemoteDir,
        info: DatasetInfo,
        open_file: OpenFile,
        open_ranges: OpenRanges,
        mode: RemoteRead = "cache",
        cache: ShardCache | None = None,
    ) -> None:
        if mode not in REMOTE_READS:
            known = ", ".join(repr(m) for m in REMOTE_READS)
            raise ValueError(f"remote_read must be one of {known}, got {mode!r}")
        self.folder = folder
        self.mode = mode
        self.ranged = mode == "range"
        self.cache = cache if cache is not None or mode == "range" else ShardCache()
        self._open_file = open_file
        self._open_ranges = open_ranges
        self.shards = [s for split in info.splits.values() for s in split.shards]
        self.paths = [str(folder / s.file) for s in self.shards]
        self._objects: list[RemoteObject | None] = [None] * len(self.shards)
        self._setup_process_state()

    def _setup_process_state(self) -> None:
        self._pid = os.getpid()
        self._held: dict[int, Held] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_held"], state["_pid"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup_process_state()

    def check(self) -> None:
        """Every shard must be in the generation with the size it was written with (one
        listing; for https, checked when each shard is first opened)."""
        listed = list_objects(self.folder)
        if listed is None:
            return
        for i, shard in enumerate(self.shards):
            obj = listed.get(shard.file)
            if obj is None:
                raise NotPreparedError(
                    f"shard {self.paths[i]} is missing: the generation was removed or only "
                    "partly uploaded; make a new data source, or prepare the dataset again"
                )
            self._objects[i] = self._checked(i, obj)

    def stamp(self) -> None:
        return None  # a generation in a bucket is immutable

    def _checked(self, shard: int, obj: RemoteObject) -> RemoteObject:
        if obj.size != self.shards[shard].num_bytes:
            written = self.shards[shard].num_bytes
            raise shard_error(obj.where, f"it has {obj.size} bytes, but {written} were written")
        return obj

    def _object(self, shard: int) -> RemoteObject:
        obj = self._objects[shard]
        if obj is None:
            obj = self._objects[shard] = self._checked(
                shard, stat(self.folder / self.shards[shard].file)
            )
        return obj

    def _in_process(self) -> None:
        if self._pid != os.getpid():  # forked: the parent's holds stay the parent's
            _inherited.extend(self._held.values())
            self._setup_process_state()

    def open(self, shard: int) -> Any:
        """A reader of shard `shard`: the cached file through the record format, or ranges."""
        self._in_process()
        if self.ranged:
            with gone_means_prepared_again(self.folder / self.shards[shard].file):
                return self._open_ranges(self._object(shard), self.shards[shard].num_examples)
        path = self.local_path(shard)
        assert path is not None
        return self._open_file(path)

    def local_path(self, shard: int) -> str | None:
        """The cached copy of shard `shard` (fetched and verified first), held while this
        process reads it; None when reading by ranges."""
        self._in_process()
        if self.cache is None:
            return None
        held = self._held.get(shard)
        if held is None:
            with gone_means_prepared_again(self.folder / self.shards[shard].file):
                held = self.cache.get(self._object(shard), self.shards[shard].sha256)
            self._held[shard] = held
        return str(held.path)

    def close(self) -> None:
        """Let the cache evict this process's shards again (they are held again on use)."""
        if self._pid == os.getpid():
            for held in self._held.values():
                held.close()
        self._held = {}


_inherited: list[object] = []  # a forked child never closes what its parent holds

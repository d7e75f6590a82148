"""Record backends for shards in a remote data dir (s3://, gs://, https://).

`RemoteShards` opens the shards of one remote generation for `catalog.read.records`, in one of
two ways the user chooses (``remote_read=``):

- ``"cache"`` (the default): each shard is fetched whole into the local shard cache
  (`catalog.storage.shard_cache`: verified against the size and sha256 dataset_info.json
  recorded at prepare time, LRU, shared by processes) and read there like a local shard, memory
  maps included: after the first epoch, reads cost what local reads cost.
- ``"range"``: single records by byte ranges (`RangeShard`), for sparse access to datasets too
  large for the local disk. A shard's index (the ArrayRecord footer, `catalog.read.mapped_shard`)
  is fetched once per shard and process (one request, two when the footer is large); a record
  is then one range read of its chunk, its chunk header checked against the index and its
  data against the hash in that header (`catalog.read.chunk_hash`: a corrupt byte is a
  ShardError naming the shard, the chunk and the record, never a wrong value); the
  records of a batch are sorted, neighbours less than `COALESCE` bytes apart fetched in one
  request, the requests in flight together. Every request names the object's version
  (If-Match): a shard replaced under a reader is an error, never another version's bytes.

The objects of a generation are listed once when the data source is made (their sizes checked
against dataset_info.json, their ETags kept and pickled along to worker processes, which then
read the same versions); an https data dir has no listing: each shard is checked (HEAD) when
a process first opens it. Handles, held cache files and request threads are per process: a
forked child makes its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any, Literal, overload

import numpy as np

from catalog.errors import NotPreparedError, ShardError
from catalog.info.dataset_info import DatasetInfo
from catalog.read.chunk_hash import chunk_hasher
from catalog.read.mapped_shard import CorruptChunk, chunk_index, record_span, split_record
from catalog.read.record_format import RecordFormat, ShardReader
from catalog.storage.remote import RemoteDir
from catalog.storage.remote_reads import (
    RemoteObject,
    list_objects,
    open_object,
    read_ranges,
    stat,
)
from catalog.storage.shard_cache import Held, ShardCache
from catalog.storage.shards import shard_error

__all__ = ["COALESCE", "MAX_SPAN", "REMOTE_READS", "RangeShard", "RemoteRead", "RemoteShards"]

RemoteRead = Literal["cache", "range"]
REMOTE_READS: tuple[str, ...] = ("cache", "range")
COALESCE = 64 << 10  # records closer than this are fetched in one request
MAX_SPAN = 8 << 20  # the most one coalesced request fetches
_BLOCK = 1 << 16


class _Tail:
    """Bytes fetched from `base` to the end of a file of `size` bytes, sliced by file
    position (what `catalog.read.mapped_shard` parses)."""

    def __init__(self, data: bytes, base: int, size: int) -> None:
        self.data, self.base, self.size = data, base, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice) -> bytes:
        start, stop = key.start - self.base, key.stop - self.base
        if start < 0 or stop > len(self.data):
            raise IndexError("outside the bytes fetched")
        return self.data[start:stop]


class RangeShard:
    """One remote shard read record by record through byte ranges (a `ShardReader`, with
    `read_many` for batches). Not thread-safe (`catalog.read.records` locks)."""

    def __init__(self, obj: RemoteObject, expected_records: int) -> None:
        self.obj = obj
        self._hash = chunk_hasher()  # every record is checked against its chunk's hash
        self._handle = open_object(obj)
        self._position = 0
        size = obj.size
        # the footer holds about 8 bytes a record; one request for it and the postscript
        guess = min(size, _BLOCK + 4096 + 16 * expected_records)
        tail = _Tail(read_ranges(self._handle, obj, [(size - guess, size)])[0], size - guess, size)
        index = chunk_index(tail)
        if index is None and guess < size:  # a larger footer than guessed: fetch all of it
            tail = _Tail(read_ranges(self._handle, obj, [(0, size)])[0], 0, size)
            index = chunk_index(tail)
        if index is None:
            raise shard_error(
                obj.where,
                "its index is not that of catalog's shards (uncompressed, one record per "
                "chunk), which range reads need: read it through the shard cache "
                "(remote_read='cache')",
            )
        self._offsets, self._lengths = index
        self.lengths = self._lengths  #: every record's size (`catalog.read.records` checks them)
        spans = [record_span(int(o), int(n)) for o, n in zip(*index, strict=True)]
        self._starts = np.array([s for s, _ in spans], np.int64)
        self._stops = np.array([e for _, e in spans], np.int64)
        if len(spans) and int(self._stops.max()) > size:
            raise shard_error(obj.where, "its index points past the end of the file")
        self.requests = 0  # range requests made for records (for tests and benchmarks)

    def num_records(self) -> int:
        return len(self._offsets)

    def seek(self, index: int) -> None:
        self._position = index

    @overload
    def read(self) -> bytes: ...
    @overload
    def read(self, start: int, stop: int) -> list[bytes]: ...
    def read(self, start: int | None = None, stop: int | None = None) -> bytes | list[bytes]:
        if start is None:
            return self.read_many([self._position])[0]
        return self.read_many(range(start, stop if stop is not None else start))

    def read_many(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> list[bytes]:
        """The records at `rows` (in range), in order: neighbours coalesced into one request,
        the requests in flight together."""
        index = np.asarray(rows, np.int64)
        if not len(index):
            return []
        if index.min() < 0 or index.max() >= len(self._offsets):
            raise IndexError(f"record {int(index.max())} is not in {self.obj.where}")
        unique = np.unique(index)
        starts, stops = self._starts[unique], self._stops[unique]
        groups = _coalesce(starts, stops)
        spans = [(int(starts[a]), int(stops[b - 1])) for a, b in groups]
        with _gone_means_prepared_again(self.obj.where):
            fetched = read_ranges(self._handle, self.obj, spans)
        self.requests += len(spans)
        found: dict[int, bytes] = {}
        for (a, b), (base, _), data in zip(groups, spans, fetched, strict=True):
            view = _Tail(data, base, self.obj.size)
            for row in unique[a:b].tolist():
                offset = int(self._offsets[row])
                try:
                    record = split_record(view, offset, int(self._lengths[row]), self._hash)
                except CorruptChunk as corrupt:
                    raise shard_error(
                        self.obj.where,
                        f"record {row} (chunk {row}, at byte {offset}) is corrupt: {corrupt} "
                        "(the object was damaged in storage or on the way)",
                    ) from None
                if record is None:
                    raise ShardError(
                        f"shard {self.obj.where}: record {row} is not where its index says "
                        "(the object changed, or the server answered with other bytes); make "
                        "a new data source, and run 'catalog verify' on the data dir"
                    )
                found[row] = record
        return [found[row] for row in index.tolist()]

    def close(self) -> None:
        self._handle = None


@contextlib.contextmanager
def _gone_means_prepared_again(where: RemoteDir) -> Iterator[None]:
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


def _coalesce(starts: np.ndarray[Any, Any], stops: np.ndarray[Any, Any]) -> list[tuple[int, int]]:
    """Groups ``[a, b)`` of the (sorted) spans that one request fetches: a gap under
    `COALESCE` bytes joins, a request never grows past `MAX_SPAN` bytes."""
    groups, first = [], 0
    for i in range(1, len(starts)):
        if starts[i] - stops[i - 1] > COALESCE or stops[i] - starts[first] > MAX_SPAN:
            groups.append((first, i))
            first = i
    groups.append((first, len(starts)))
    return groups


class RemoteShards:
    """How `catalog.read.records` opens the shards of a remote generation (module docstring):
    `paths` are their URLs; `open` gives a reader, `local_path` the cached file a memory map
    may read (None when reading by ranges)."""

    def __init__(
        self,
        generation: RemoteDir,
        info: DatasetInfo,
        record_format: RecordFormat,
        mode: RemoteRead = "cache",
        cache: ShardCache | None = None,
    ) -> None:
        if mode not in REMOTE_READS:
            known = ", ".join(repr(m) for m in REMOTE_READS)
            raise ValueError(f"remote_read must be one of {known}, got {mode!r}")
        self.generation = generation
        self.info = info
        self.mode = mode
        self.cache = cache if cache is not None or mode == "range" else ShardCache()
        self._format = record_format
        self.shards = [s for split in info.splits.values() for s in split.shards]
        self.paths = [str(generation / s.file) for s in self.shards]
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
        listed = list_objects(self.generation)
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

    def _checked(self, shard: int, obj: RemoteObject) -> RemoteObject:
        if obj.size != self.shards[shard].num_bytes:
            written = self.shards[shard].num_bytes
            raise shard_error(obj.where, f"it has {obj.size} bytes, but {written} were written")
        return obj

    def _object(self, shard: int) -> RemoteObject:
        obj = self._objects[shard]
        if obj is None:
            obj = self._objects[shard] = self._checked(
                shard, stat(self.generation / self.shards[shard].file)
            )
        return obj

    def _in_process(self) -> None:
        if self._pid != os.getpid():  # forked: the parent's holds stay the parent's
            _inherited.extend(self._held.values())
            self._setup_process_state()

    def open(self, shard: int) -> ShardReader:
        """A reader of shard `shard`: the cached file through the record format, or ranges."""
        self._in_process()
        if self.mode == "range":
            with _gone_means_prepared_again(self.generation / self.shards[shard].file):
                return RangeShard(self._object(shard), self.shards[shard].num_examples)
        path = self.local_path(shard)
        assert path is not None
        return self._format.open(path, self.info)

    def local_path(self, shard: int) -> str | None:
        """The cached copy of shard `shard` (fetched and verified first), held while this
        process reads it; None when reading by ranges."""
        self._in_process()
        if self.cache is None:
            return None
        held = self._held.get(shard)
        if held is None:
            with _gone_means_prepared_again(self.generation / self.shards[shard].file):
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

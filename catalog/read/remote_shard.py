"""Reading one remote shard record by record through byte ranges (``remote_read="range"``).

`RangeShard` is the reader the bucket's shard opener (`catalog.storage.bucket_shards`) is
handed for range reads, for sparse access to datasets too large for the local disk. A shard's
index (the ArrayRecord footer, `catalog.read.mapped_shard`) is fetched once per shard and
process (one request, two when the footer is large); a record is then one range read of its
chunk (with the records sharing it, when small records share chunks:
`catalog.storage.shards`), its chunk header checked against the index and its data against the
hash in that header (`catalog.storage.chunk_hash`: a corrupt byte is a ShardError naming the
shard, the chunk and the record, never a wrong value); the chunks of a batch are sorted,
neighbours less than `COALESCE` bytes apart fetched in one request, the requests in flight
together. Every request names the object's version (If-Match): a shard replaced under a reader
is an error, never another version's bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from catalog.errors import ShardError
from catalog.read.shard_layout import CorruptChunk, chunk_index, chunk_records
from catalog.storage.bucket_shards import gone_means_prepared_again
from catalog.storage.chunk_hash import chunk_hasher
from catalog.storage.remote_reads import RemoteObject, open_object, read_ranges
from catalog.storage.shards import shard_error

__all__ = ["COALESCE", "MAX_SPAN", "RangeShard"]

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
                "its index is not that of catalog's shards (uncompressed chunks), which range "
                "reads need: read it through the shard cache (remote_read='cache')",
            )
        if len(index.ends) and int(index.ends.max()) > size:
            raise shard_error(obj.where, "its index points past the end of the file")
        self._index = index
        #: every record's size when the footer gives it (`catalog.read.records` checks them)
        self.lengths = index.lengths
        self.requests = 0  # range requests made for records (for tests and benchmarks)

    def num_records(self) -> int:
        return int(self._index.firsts[-1])

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
        held = self.num_records()
        if index.min() < 0 or index.max() >= held:
            raise IndexError(f"record {int(index.max())} is not in {self.obj.where}")
        chunk_index = self._index
        chunks = np.unique(chunk_index.chunk_of(index))
        starts, stops = chunk_index.offsets[chunks], chunk_index.ends[chunks]
        groups = _coalesce(starts, stops)
        spans = [(int(starts[a]), int(stops[b - 1])) for a, b in groups]
        with gone_means_prepared_again(self.obj.where):
            fetched = read_ranges(self._handle, self.obj, spans)
        self.requests += len(spans)
        found: dict[int, list[bytes]] = {}
        for (a, b), (base, _), data in zip(groups, spans, fetched, strict=True):
            view = _Tail(data, base, self.obj.size)
            for chunk in chunks[a:b].tolist():
                found[chunk] = self._chunk(view, chunk)
        firsts = chunk_index.firsts
        out = []
        for row, chunk in zip(index.tolist(), chunk_index.chunk_of(index).tolist(), strict=True):
            out.append(found[chunk][row - int(firsts[chunk])])
        return out

    def _chunk(self, view: _Tail, chunk: int) -> list[bytes]:
        """The records of chunk `chunk`, fetched in `view`, checked (module docstring)."""
        index = self._index
        offset, first = int(index.offsets[chunk]), int(index.firsts[chunk])
        count = int(index.counts[chunk])
        try:
            records = chunk_records(view, offset, count, self._hash)
        except CorruptChunk as corrupt:
            rows = f"record {first}" if count == 1 else f"records {first}..{first + count - 1}"
            raise shard_error(
                self.obj.where,
                f"{rows} (chunk {chunk}, at byte {offset}) is corrupt: {corrupt} "
                "(the object was damaged in storage or on the way)",
            ) from None
        if records is None:
            raise ShardError(
                f"shard {self.obj.where}: record {first} is not where its index says "
                "(the object changed, or the server answered with other bytes); make "
                "a new data source, and run 'catalog verify' on the data dir"
            )
        return records

    def close(self) -> None:
        self._handle = None


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

"""Batched reads of a shard a process has not mapped whole yet: only the chunks a batch touches.

Mapping a whole shard (`catalog.read.mapped_shard`) locates every record and hashes the whole
file first (about 1 ms per MB), and array_record's reader parses the whole index when it opens
(about 14 ms for a shard of 700,000 short rows): a fresh process's first batch of 128 random
rows of a table of a few shards cost as much as a few thousand reads. A shard whose chunks all
hold the dataset's ``group_size`` records (the last one the rest), as catalog writes them
(`catalog.storage.shards.writer_options`), needs neither: record i is in chunk
``i // group_size``, whose entry in the footer is found from the footer's one-byte entry sizes
(`catalog.read.shard_layout.FooterEntries`; the count ending every entry is checked, so no
chunk is taken for another). A batch then decodes the entries of the chunks it touches,
checks their headers against them (`catalog.read.mapped_shard.locate`) and each chunk's data
against the HighwayHash in its header (`catalog.storage.chunk_hash`, as array_record checks it on
every read), once per chunk and process, and slices its records from a memory map.

`chunk_shard` returns None for anything else (another layout, highwayhash-cffi missing): the
caller reads through array_record then. `ChunkedShard.read` returns None when a chunk's data
does not match its hash, and the shard is not read so again: array_record's reader names the
corrupt record while the healthy ones stay readable.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from catalog.errors import CatalogError, ShardError
from catalog.read.mapped_shard import Located, locate
from catalog.read.shard_layout import (
    BLOCK,
    FooterEntries,
    NotLaidOut,
    ShardFile,
    join_pieces,
    physical,
)
from catalog.storage.chunk_hash import chunk_hash64
from catalog.storage.shards import shard_error

__all__ = ["ChunkedShard", "chunk_shard"]


class ChunkedShard:
    """The records of one shard, read a batch's chunks at a time (see the module docstring)."""

    def __init__(
        self,
        path: str,
        fd: int,
        mapping: mmap.mmap,
        entries: FooterEntries,
        hash64: Callable[[bytes], int],
    ) -> None:
        self.path = path
        self._fd = fd
        self._map = mapping
        self._size = len(mapping)
        self._array = np.frombuffer(mapping, np.uint8)
        self._entries = entries
        self._hash64 = hash64
        self._hashed = np.zeros(len(entries), bool)  # chunks whose data matched their hash
        self.failed = False  # a chunk did not match its hash: read through array_record

    def read(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> list[bytes] | None:
        """The records at `rows` (positions in this shard, in range), in order; None when a
        chunk they are in does not match its hash (see the module docstring)."""
        if self.failed:
            return None
        if os.fstat(self._fd).st_size < self._size:
            raise shard_error(
                self.path, "the file was truncated while it was being read (it is mapped)"
            )
        index = np.asarray(rows, np.int64)
        group = self._entries.group
        chunks = index // group
        touched = np.sort(chunks)
        if len(touched) > 1:
            touched = touched[np.concatenate(([True], touched[1:] != touched[:-1]))]
        try:
            found = locate(self._array, self._entries.rows(touched))
        except NotLaidOut:
            self.failed = True
            return None
        unhashed = np.flatnonzero(~self._hashed[touched])
        if len(unhashed) and not self._hash(found, unhashed):
            self.failed = True
            return None
        self._hashed[touched[unhashed]] = True
        # each row's record among those of the touched chunks (all `group` long but the last)
        at = np.searchsorted(touched, chunks) * group + (index - chunks * group)
        starts = found.starts[at]
        ends = (starts + found.lengths[at]).tolist()
        mapping = self._map
        records = [mapping[a:b] for a, b in zip(starts.tolist(), ends, strict=True)]
        if found.pieced:  # records stored in two pieces around a block header
            for i, record in enumerate(at.tolist()):
                if record in found.pieced:
                    length = int(found.lengths[record])
                    records[i] = join_pieces(mapping, found.pieced[record], length)
        return records

    def _hash(self, found: Located, chunks: np.ndarray[Any, Any]) -> bool:
        """Whether the data of `chunks` (of `found`) matches the hashes in their headers."""
        mapping, hash64 = self._map, self._hash64
        coordinates, sizes = found.data[chunks], found.data_sizes[chunks]
        starts = physical(coordinates)
        whole = starts % BLOCK + sizes <= BLOCK  # not interrupted by a block header
        expected = found.hashes[chunks].copy().view("<u8")[:, 0].tolist()
        for start, size, at, alone, want in zip(
            starts.tolist(), sizes.tolist(), coordinates.tolist(), whole.tolist(), expected,
            strict=True,
        ):  # fmt: skip
            data = mapping[start : start + size] if alone else join_pieces(mapping, at, size)
            if hash64(data) != want:
                return False
        return True

    def close(self) -> None:
        self._array = np.zeros(0, np.uint8)
        with contextlib.suppress(BufferError):  # a NumPy view of it is alive: the GC closes it
            self._map.close()
        os.close(self._fd)


def chunk_shard(path: str, records: int, group: int) -> ChunkedShard | None:
    """`path` opened for reading a batch's chunks at a time, or None when it is not laid out
    in chunks of `group` records or chunk hashes cannot be checked here (read it through
    array_record then). ShardError when it cannot be opened."""
    try:
        hash64 = chunk_hash64()
    except CatalogError:  # highwayhash-cffi is not installed
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as error:
        raise shard_error(path, error.strerror or str(error)) from None
    mapping = None
    try:
        size = os.fstat(fd).st_size
        if size < BLOCK:
            raise NotLaidOut("too short")
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        file = ShardFile(memoryview(mapping))
        try:
            entries = FooterEntries(file, group, records, hash64)
        finally:
            file.view.release()
        return ChunkedShard(path, fd, mapping, entries, hash64)
    except (NotLaidOut, OSError, ValueError, IndexError, ShardError):
        if mapping is not None:
            with contextlib.suppress(BufferError):
                mapping.close()
        os.close(fd)
        return None

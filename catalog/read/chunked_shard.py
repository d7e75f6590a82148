"""Batched reads of a shard a process has not mapped whole yet: only the chunks a batch touches.

Mapping a whole shard (`catalog.read.mapped_shard`) locates every record and hashes the whole
file first (about 1 ms per MB), and array_record's reader parses the whole index when it opens
(about 14 ms for a shard of 700,000 short rows): a fresh process's first batch of 128 random
rows of a table of a few shards cost as much as a few thousand reads. A shard whose chunks all
hold the dataset's ``group_size`` records (the last one the rest), as catalog writes them
(`catalog.storage.shards.writer_options`), needs neither: record i is in chunk
``i // group_size``, whose entry in the footer is at a fixed place in a shard catalog's
writer wrote (entries of one width, `catalog.read.fixed_footer.FixedEntries`: the footer
opened without reading its other entries, each entry used checked by where its chunk ends),
and is found from the footer's one-byte entry sizes in another writer's
(`catalog.read.shard_layout.FooterEntries`: the whole footer hashed, the count ending every
entry checked, so no chunk is taken for another). A batch then decodes the entries of the
chunks it touches, checks their headers against them (`catalog.read.mapped_shard.locate`) and
each chunk's data against the HighwayHash in its header (`catalog.storage.chunk_hash`, as
array_record checks it on every read), once per chunk and process, and slices its records from
a memory map. A batch
touching a few chunks (`FEW_CHUNKS`; ~20 a shard for 128 random rows of a table) makes the
same checks one chunk at a time on its entry, header and data as Python ints and bytes, which
costs less than `locate`'s fixed few dozen NumPy calls: where its entries say the chunk ends
(`FixedEntries.bounds`), it is read in one piece with its header, by ``pread`` or from the map
(`catalog.read.shard_bytes.ShardBytes`: no page fault a record in a fresh process). A larger
batch makes the checks with NumPy.

`chunk_shard` returns None for anything else (another layout, highwayhash-cffi missing): the
caller reads through array_record then. `ChunkedShard.read` returns None when a chunk's data
does not match its hash, and the shard is not read so again: array_record's reader names the
corrupt record while the healthy ones stay readable.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from catalog._util.varints import decode_varints, read_varint
from catalog.errors import CatalogError, ShardError
from catalog.read.fixed_footer import FixedEntries
from catalog.read.mapped_shard import Located, locate, sliced
from catalog.read.shard_bytes import ShardBytes
from catalog.read.shard_layout import (
    BLOCK,
    CHUNK_HEADER,
    SIMPLE,
    FooterEntries,
    NotLaidOut,
    ShardFile,
    chunk_end_at,
    join_pieces,
    physical,
    usable_at,
)
from catalog.storage.chunk_hash import chunk_hash64
from catalog.storage.shards import shard_error

__all__ = ["FEW_CHUNKS", "ChunkedShard", "chunk_shard"]

#: A read touching at most this many chunks checks them one at a time in Python (`_read_few`);
#: more, all at once with NumPy (`locate`): measured, ~5 us a chunk against ~300 us a call.
FEW_CHUNKS = 48
# a chunk header: header_hash, data_size, data_hash, chunk_type, num_records (7 bytes),
# decoded_data_size
_HEADER = struct.Struct("<8xQQB7sQ")


class ChunkedShard:
    """The records of one shard, read a batch's chunks at a time (see the module docstring)."""

    def __init__(
        self,
        path: str,
        fd: int,
        mapping: mmap.mmap,
        entries: FooterEntries | FixedEntries,
        hash64: Callable[[bytes], int],
        source: ShardBytes,
    ) -> None:
        self.path = path
        self._fd = fd
        self._map = mapping
        self._bytes = source  # the few chunks of a batch: by pread or from the map
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
            if len(touched) <= FEW_CHUNKS:
                records = self._read_few(index.tolist(), touched.tolist())
                if records is None:
                    self.failed = True
                return records
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
        return sliced(self._map, found.starts, found.lengths, found.pieced, at)

    def _read_few(self, rows: list[int], touched: list[int]) -> list[bytes] | None:
        """`read` of `rows` in the few chunks `touched`, one chunk at a time: the checks
        `locate` makes with NumPy, made on each chunk's entry, header and data as Python ints
        and bytes (a NumPy call costs about what a chunk's checks do here). A chunk whose end
        its entries give is read in one piece with its header, which must end it there. None
        when a chunk does not match its hash; NotLaidOut when it is not laid out as its entry
        says."""
        group, hashed, source = self._entries.group, self._hashed, self._bytes
        parsed: dict[int, tuple[bytes, bytes | list[int], int]] = {}
        for chunk, (offset, decoded, count, end) in zip(
            touched, self._entries.spans(touched), strict=True
        ):
            begin = usable_at(offset)
            most = CHUNK_HEADER + 11 + 10 * count + decoded  # its sizes and records, at most
            if end < 0:  # not known: the header says
                whole = join_pieces(source, begin, CHUNK_HEADER)
            elif CHUNK_HEADER <= (size := usable_at(end) - begin) <= most:
                whole = join_pieces(source, begin, size)
            else:
                raise NotLaidOut("a chunk that does not end where the next one begins")
            data_size, want, kind, held, in_header = _HEADER.unpack_from(whole)
            if kind != SIMPLE or held != count.to_bytes(7, "little") or in_header != decoded:
                raise NotLaidOut("a chunk that is not uncompressed records")
            if CHUNK_HEADER + data_size > most:  # more than its sizes and records take
                raise NotLaidOut("a chunk whose sizes do not add up")  # (never read so much)
            if end < 0:
                data = join_pieces(source, begin + CHUNK_HEADER, data_size)
            elif chunk_end_at(begin + CHUNK_HEADER + data_size) == end:
                data = whole[CHUNK_HEADER:]
            else:
                raise NotLaidOut("a chunk that does not end where the next one begins")
            if not hashed[chunk]:
                if self._hash64(data) != want:
                    return None
                hashed[chunk] = True
            parsed[chunk] = (data, *_record_sizes(data, count, decoded))
        records = []
        for row in rows:
            chunk, within = divmod(row, group)
            data, sizes, begin = parsed[chunk]
            start = begin + sum(sizes[:within])
            records.append(data[start : start + sizes[within]])
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


def _record_sizes(data: bytes, count: int, decoded: int) -> tuple[bytes | list[int], int]:
    """The sizes of the `count` records of a simple chunk's `data` (bytes when each is one
    byte, the most; ints otherwise) and where the first record begins: record i is
    ``data[begin + sum(sizes[:i]):][:sizes[i]]``. NotLaidOut unless it is uncompressed and its
    sizes are `count` varints adding up to `decoded` bytes, which end where the records
    begin."""
    if not data or data[0] != 0:
        raise NotLaidOut("a chunk that is not uncompressed records")
    if len(data) > 1 and data[1] < 0x80:  # the sizes' size in one byte: the most
        sizes_size, at = data[1], 2
    else:
        try:
            sizes_size, at = read_varint(data, 1)
        except (IndexError, ValueError):
            raise NotLaidOut("a bad varint") from None
    end = at + sizes_size
    if sizes_size < count or end + decoded != len(data):
        raise NotLaidOut("a chunk whose sizes do not add up")
    raw = data[at:end]
    sizes: bytes | list[int] = raw
    if sizes_size != count or (raw and max(raw) >= 0x80):  # some size of several bytes
        try:
            sizes = decode_varints(np.frombuffer(raw, np.uint8)).tolist()
        except ValueError:
            raise NotLaidOut("a bad varint") from None
    if len(sizes) != count or sum(sizes) != decoded:
        raise NotLaidOut("a chunk whose sizes do not add up")
    return sizes, end


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
        source = ShardBytes(fd, mapping)
        entries: FooterEntries | FixedEntries
        try:  # written by catalog: entries of one width, opened without reading the others
            array = np.frombuffer(mapping, np.uint8)
            entries = FixedEntries(array, group, records, hash64, source)
        except NotLaidOut:  # another writer's: the whole footer decoded and hashed
            file = ShardFile(memoryview(mapping))
            try:
                entries = FooterEntries(file, group, records, hash64)
            finally:
                file.view.release()
        return ChunkedShard(path, fd, mapping, entries, hash64, source)
    except (NotLaidOut, OSError, ValueError, IndexError, ShardError):
        if mapping is not None:
            with contextlib.suppress(BufferError):
                mapping.close()
        os.close(fd)
        return None

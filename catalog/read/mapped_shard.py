"""Batched reads of catalog's shards through a memory map, without a call per record.

Reading a batch through array_record costs a Python call to ``seek`` and one to ``read`` per
record (about 2 us each pair), which is most of an epoch over small examples; array_record's
own batched ``read(indices)`` is slower still. catalog's shards are written uncompressed
(`catalog.storage.shards`), so every record is stored as it is, alone in its chunk or after
its neighbours in a chunk of several (`catalog.read.shard_layout`): once the record positions
are known, a batch is a slice of a memory map per record (about 0.2 us).

The positions come from the file's own index (its footer, parsed once per shard and process)
and each chunk's header and record sizes, parsed with NumPy (no loop per chunk or record) the
first time one of its records is read. `map_shard` returns None for anything else (compressed
chunks, an index it does not recognise, a file too short to hold one): the caller reads
through array_record then. Before a mapped record is returned, its chunk is checked: against
the hash in the chunk's header, once per chunk and process, when highwayhash-cffi is there
(`catalog.read.chunk_hash`; a fresh process's first batch costs what any batch costs); else
the whole file against the sha256 its dataset_info.json records, when it is mapped (about
0.5 ms per MB). A chunk or shard that does not match is read through array_record, whose
per-chunk hashes name the corrupt record while the healthy ones stay readable. A shard that
shrinks while mapped raises ShardError on the next read instead of crashing the process (a
read past the end of a file mapping is SIGBUS).

A process that has mapped and verified a shard can hand what it found to another (`ShardIndex`,
pickled with a `DataSource` for a pipeline's worker processes): the other maps the same file
without parsing or hashing it again, as long as it is the same file, unchanged (device, inode,
size and modification time equal to those seen when it was verified).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import mmap
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog._util.varints import decode_varints
from catalog.errors import ShardError
from catalog.read.shard_layout import (
    BLOCK,
    CHUNK_HEADER,
    SIMPLE,
    CorruptChunk,
    NotLaidOut,
    ShardFile,
    footer,
    join_pieces,
    physical,
    usable,
)
from catalog.storage.shards import shard_error

__all__ = ["MappedShard", "ShardIndex", "map_shard"]

_U64 = np.dtype("<u8")


@dataclass
class _Layout:
    """Where every record of a shard is, found a chunk at a time: the footer gives each
    chunk's place and record count; a chunk's header and record sizes are parsed the first
    time one of its records is read (all of them at once for a shard verified whole), and with
    a hasher its data is checked against the hash in its header then."""

    at: np.ndarray[Any, Any]  # where each chunk begins (usable bytes)
    counts: np.ndarray[Any, Any]  # records in each chunk
    decoded: np.ndarray[Any, Any]  # their bytes, as the footer says
    firsts: np.ndarray[Any, Any]  # each chunk's first record; then the total
    starts: np.ndarray[Any, Any]  # each record's first byte in the file (of parsed chunks)
    lengths: np.ndarray[Any, Any]  # each record's size (of parsed chunks)
    pieced: dict[int, int]  # records in two pieces around a block header: their usable start
    parsed: np.ndarray[Any, Any]  # bool per chunk
    data_size: np.ndarray[Any, Any]  # per parsed chunk
    hashes: np.ndarray[Any, Any]  # the data_hash in each parsed chunk's header
    unchecked: np.ndarray[Any, Any]  # bool per chunk: not checked against its hash yet
    unparsed_left: int
    unchecked_left: int

    @classmethod
    def of(cls, chunks: np.ndarray[Any, Any]) -> _Layout:
        n, records = len(chunks), int(chunks[:, 2].sum())
        firsts = np.zeros(n + 1, np.int64)
        np.cumsum(chunks[:, 2], out=firsts[1:])
        return cls(
            usable(chunks[:, 0]), chunks[:, 2].copy(), chunks[:, 1].copy(), firsts,
            np.zeros(records, np.int64), np.zeros(records, np.uint32), {},
            np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, np.uint64),
            np.ones(n, bool), n, n,
        )  # fmt: skip

    def copy(self) -> _Layout:
        """Another layout, of the same chunks, that parsing and checking may change."""
        return dataclasses.replace(
            self,
            starts=self.starts.copy(),
            lengths=self.lengths.copy(),
            pieced=dict(self.pieced),
            parsed=self.parsed.copy(),
            data_size=self.data_size.copy(),
            hashes=self.hashes.copy(),
            unchecked=self.unchecked.copy(),
        )


@dataclass(frozen=True)
class ShardIndex:
    """What mapping a shard found, for another process to map it without doing that again
    (see the module docstring): where its records are, as far as it read them."""

    identity: tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns when verified
    layout: _Layout
    by_chunk: bool  # checked chunk by chunk as read (else the whole file's sha256 matched)


def _identity(fd: int) -> tuple[int, int, int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _spread(starts: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``starts[k] + 0, starts[k] + 1, ..., starts[k] + counts[k] - 1`` for every k, in one
    array (no loop per k)."""
    total = int(counts.sum())
    firsts = np.cumsum(counts) - counts
    spread: np.ndarray[Any, Any] = np.repeat(starts - firsts, counts) + np.arange(total)
    return spread


class MappedShard:
    """The records of one shard, read as slices of a memory map (see the module docstring)."""

    def __init__(
        self,
        path: str,
        fd: int,
        mapping: mmap.mmap,
        layout: _Layout,
        hasher: Callable[[bytes], bytes] | None = None,
    ) -> None:
        self.path = path
        self._fd = fd
        self._map = mapping
        self._size = len(mapping)
        self.identity = _identity(fd)
        self._array = np.frombuffer(mapping, np.uint8)
        self._layout = layout
        self._hasher = hasher
        self._windows: dict[int, np.ndarray[Any, Any]] = {}

    @property
    def starts(self) -> np.ndarray[Any, Any]:
        """Where every record begins in the file (every chunk parsed first)."""
        self._parse_all()
        return self._layout.starts

    @property
    def lengths(self) -> np.ndarray[Any, Any]:
        """Every record's size (every chunk parsed first)."""
        self._parse_all()
        return self._layout.lengths

    @property
    def _pieced_at(self) -> dict[int, int]:
        self._parse_all()
        return self._layout.pieced

    def _parse_all(self) -> None:
        if self._layout.unparsed_left:
            self._parse(np.flatnonzero(~self._layout.parsed))

    def _parse(self, todo: np.ndarray[Any, Any]) -> None:
        """Parse chunks `todo` (see `_Layout`): NotLaidOut when one is not as the index says."""
        layout, array, size = self._layout, self._array, self._size
        at, counts = layout.at[todo], layout.counts[todo]

        def pick(coordinates: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
            """The bytes at usable-byte `coordinates`."""
            positions = physical(coordinates)
            if positions.size and int(positions.max()) >= size:
                raise NotLaidOut("a chunk past the end of the file")
            picked: np.ndarray[Any, Any] = array[positions]
            return picked

        def header(start: int, width: int) -> np.ndarray[Any, Any]:
            """Bytes start..start+width-1 of every chunk, as an (n, width) array."""
            return pick(at[:, None] + np.arange(start, start + width))

        fields = header(0, CHUNK_HEADER + 3)
        data_size = fields[:, 8:16].copy().view(_U64)[:, 0].astype(np.int64)
        held = np.concatenate([fields[:, 25:32], np.zeros((len(at), 1), np.uint8)], axis=1)
        decoded = fields[:, 32:40].copy().view(_U64)[:, 0].astype(np.int64)
        # the varint size of the record sizes: one or two bytes (up to 16383 bytes of sizes)
        first, second = fields[:, CHUNK_HEADER + 1].astype(np.int64), fields[:, -1].astype(np.int64)
        long = first >= 0x80
        sizes_size = np.where(long, (first & 0x7F) | (second << 7), first)
        varint = 1 + long
        if (
            (fields[:, 24] != SIMPLE).any()
            or (held.view(_U64)[:, 0].astype(np.int64) != counts).any()
            or (fields[:, CHUNK_HEADER] != 0).any()  # uncompressed
            or (long & (second >= 0x80)).any()
            or (decoded != layout.decoded[todo]).any()
            or (sizes_size < counts).any()
            or (data_size != 1 + varint + sizes_size + decoded).any()
        ):
            raise NotLaidOut("a chunk that is not uncompressed records")
        # every record's size, from the sizes of every chunk decoded in one go; each chunk's
        # sizes must be its own count of varints adding up to its records' bytes
        sizes_at = at + CHUNK_HEADER + 1 + varint
        raw = pick(_spread(sizes_at, sizes_size))
        if len(at) and (
            raw[-1] >= 0x80
            or (
                np.add.reduceat((raw < 0x80).astype(np.int64), np.cumsum(sizes_size) - sizes_size)
                != counts
            ).any()
        ):
            raise NotLaidOut("a chunk whose sizes do not add up")
        try:
            lengths = decode_varints(raw).astype(np.int64)
        except ValueError:
            raise NotLaidOut("a bad varint") from None
        firsts = np.cumsum(counts) - counts
        if len(at) and (np.add.reduceat(lengths, firsts) != decoded).any():
            raise NotLaidOut("a chunk whose sizes do not add up")
        if len(lengths) and int(lengths.max()) >= 1 << 32:
            raise NotLaidOut("a record of 4 GiB or more")
        # Where each record's bytes begin and how many there are; the few records
        # interrupted by a block header, stored in two pieces, are listed with where they
        # begin in usable bytes.
        before = np.cumsum(lengths) - lengths  # record bytes before each, in these chunks
        begin = np.repeat(sizes_at + sizes_size - before[firsts], counts) + before
        starts = physical(begin)
        ends = physical(begin + np.maximum(lengths - 1, 0)) + 1
        if len(ends) and int(ends.max()) > size:
            raise NotLaidOut("a record past the end of the file")
        rows = _spread(layout.firsts[todo], counts)
        layout.starts[rows], layout.lengths[rows] = starts, lengths
        pieced = np.flatnonzero((ends - starts != lengths) & (lengths > 0))
        layout.pieced.update(zip(rows[pieced].tolist(), begin[pieced].tolist(), strict=True))
        layout.data_size[todo] = data_size
        layout.hashes[todo] = fields[:, 16:24].copy().view(_U64)[:, 0]
        layout.parsed[todo] = True
        layout.unparsed_left -= len(todo)

    def _ready(self, index: np.ndarray[Any, Any]) -> None:
        """The chunks of the records at `index` parsed and (with a hasher) checked against
        their hashes, once each: CorruptChunk when one is not what it should be."""
        layout, hasher = self._layout, self._hasher
        check = hasher is not None and layout.unchecked_left > 0
        if not (layout.unparsed_left or check):
            return
        chunks = np.searchsorted(layout.firsts, index, side="right") - 1
        if layout.unparsed_left:
            todo = np.unique(chunks[~layout.parsed[chunks]])
            if len(todo):
                try:
                    self._parse(todo)
                except NotLaidOut as error:
                    raise CorruptChunk(f"a chunk is not as the index says: {error}") from None
        if check and hasher is not None:
            todo = np.unique(chunks[layout.unchecked[chunks]])
            if not len(todo):
                return
            at = layout.at[todo] + CHUNK_HEADER
            size = layout.data_size[todo]
            begin = physical(at)
            whole = (physical(at + np.maximum(size - 1, 0)) + 1 - begin == size).tolist()
            expected = layout.hashes[todo].astype(_U64).tobytes()
            mapping = self._map
            for k, (a, n, one) in enumerate(
                zip(begin.tolist(), size.tolist(), whole, strict=True)
            ):  # a chunk's data: one slice of the map, or in pieces around block headers
                data = mapping[a : a + n] if one else join_pieces(mapping, int(at[k]), n)
                if hasher(data) != expected[8 * k : 8 * k + 8]:
                    layout.unchecked[todo[:k]] = False
                    layout.unchecked_left -= k
                    chunk = int(todo[k])
                    raise CorruptChunk(f"chunk {chunk} does not match the hash in its header")
            layout.unchecked[todo] = False
            layout.unchecked_left -= len(todo)

    def __len__(self) -> int:
        return len(self._layout.starts)

    def read(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> list[bytes]:
        """The records at `rows` (positions in this shard, in range), in order."""
        self._check_size()
        index = np.asarray(rows, np.int64)
        self._ready(index)
        layout = self._layout
        starts = layout.starts[index]
        ends = (starts + layout.lengths[index]).tolist()
        mapping = self._map
        records = [mapping[a:b] for a, b in zip(starts.tolist(), ends, strict=True)]
        if layout.pieced:  # records stored in two pieces around a block header
            for i, row in enumerate(index.tolist()):
                if row in layout.pieced:
                    records[i] = self._pieced(row)
        return records

    def gather(
        self, rows: Sequence[int] | np.ndarray[Any, Any], size: int
    ) -> np.ndarray[Any, Any] | None:
        """The records at `rows` as the rows of a new ``(n, size)`` uint8 array: one NumPy
        gather from the map (no object per record). None when one of them is not `size`
        bytes long (read them one by one then)."""
        self._check_size()
        index = np.asarray(rows, np.int64)
        self._ready(index)
        layout = self._layout
        if (layout.lengths[index] != size).any():
            return None
        window = self._windows.get(size)
        if window is None:
            whole_file = np.frombuffer(self._map, np.uint8)
            window = np.lib.stride_tricks.sliding_window_view(whole_file, size)
            self._windows[size] = window
        out: np.ndarray[Any, Any] = window[layout.starts[index]]  # (np.take would copy it all)
        if layout.pieced:  # records stored in two pieces around a block header
            for i, row in enumerate(index.tolist()):
                if row in layout.pieced:
                    out[i] = np.frombuffer(self._pieced(row), np.uint8)
        return out

    def _check_size(self) -> None:
        if os.fstat(self._fd).st_size < self._size:
            raise shard_error(
                self.path, "the file was truncated while it was being read (it is mapped)"
            )

    def _pieced(self, row: int) -> bytes:
        layout = self._layout
        return join_pieces(self._map, layout.pieced[row], int(layout.lengths[row]))

    def index(self) -> ShardIndex:
        """What this process found, for another to map the same file (`map_shard`)."""
        return ShardIndex(self.identity, self._layout.copy(), self._hasher is not None)

    def close(self) -> None:
        self._windows.clear()
        self._array = np.zeros(0, np.uint8)
        with contextlib.suppress(BufferError):  # a NumPy view of it is alive: the GC closes it
            self._map.close()
        os.close(self._fd)


def map_shard(
    path: str,
    expected_records: int,
    sha256: str,
    known: ShardIndex | None = None,
    hasher: Callable[[bytes], bytes] | None = None,
) -> MappedShard | None:
    """`path` mapped for batched reads, or None when it is not laid out as catalog writes
    shards or its content does not have the `sha256` its dataset records (read it through
    array_record then: its per-chunk hashes name a corrupt record). ShardError when it
    cannot be opened. With `known` (another process's `MappedShard.index()`) and the same
    file, unchanged, nothing is parsed or hashed again.

    With `hasher` (`catalog.read.chunk_hash.chunk_hasher`) the whole file is not hashed:
    each chunk is checked against the hash in its header the first time one of its records is
    read (`MappedShard.read` and `gather` raise CorruptChunk for one that differs), so the
    first batch of a fresh process costs what a batch costs, not a pass over the shard."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as error:
        raise shard_error(path, error.strerror or str(error)) from None
    try:
        identity = _identity(fd)
        size = identity[2]
        if size < BLOCK:
            raise NotLaidOut("too short")
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    except (NotLaidOut, OSError, ValueError):
        os.close(fd)
        return None
    if (
        known is not None
        and known.identity == identity
        and int(known.layout.firsts[-1]) == expected_records
        and (not known.by_chunk or hasher is not None)
    ):
        return MappedShard(
            path, fd, mapping, known.layout.copy(), hasher if known.by_chunk else None
        )
    try:
        file = ShardFile(memoryview(mapping))
        try:
            chunks = footer(file)[0]
        finally:
            file.view.release()
        if int(chunks[:, 2].sum()) != expected_records:
            raise NotLaidOut("another number of records")
        shard = MappedShard(path, fd, mapping, _Layout.of(chunks), hasher)
        if hasher is None:  # the whole file's sha256, then every chunk at once
            if hashlib.sha256(mapping).hexdigest() != sha256:
                shard.close()
                return None
            shard._parse_all()
        return shard
    except (NotLaidOut, ValueError, IndexError, ShardError):
        with contextlib.suppress(BufferError):
            mapping.close()
        os.close(fd)
        return None

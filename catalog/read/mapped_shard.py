"""Batched reads of catalog's shards through a memory map, without a call per record.

Reading a batch through array_record costs a Python call to ``seek`` and one to ``read`` per
record (about 2 us each pair), which is most of an epoch over small examples; array_record's
own batched ``read(indices)`` is slower still. catalog's shards are written uncompressed
(`catalog.storage.shards`), so every record is stored as it is, alone in its chunk or after
its neighbours in a chunk of several (`catalog.read.shard_layout`): once the record positions
are known, a batch is a slice of a memory map per record (about 0.2 us).

The positions come from the file's own index and every chunk's record sizes, parsed once per
shard and process with NumPy (no loop per chunk or record). `map_shard` returns None for
anything else (compressed chunks, an index it does not recognise, a file too short to hold
one): the caller reads through array_record then. Every chunk header is checked against the
index, and the whole file against the sha256 its dataset_info.json records, before the map is
used (once per shard and process: about 0.5 ms per MB); a shard that does not match is read
through array_record, whose per-chunk hashes name the corrupt record while the healthy ones
stay readable. A shard that shrinks while mapped raises ShardError on the next read instead of
crashing the process (a read past the end of a file mapping is SIGBUS).

A process that has mapped and verified a shard can hand what it found to another (`ShardIndex`,
pickled with a `DataSource` for a pipeline's worker processes): the other maps the same file
without parsing or hashing it again, as long as it is the same file, unchanged (device, inode,
size, modification and change times equal to those seen when it was verified; any write
changes the change time, which cannot be set back). A process keeps what it verified itself
the same way, for the next data source over the same files (a new `data_source()` of a
dataset already read): the most recent indexes, up to `_MAX_VERIFIED_BYTES` of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog._util.varints import decode_varints
from catalog.errors import ShardError
from catalog.read.shard_layout import (
    BLOCK,
    CHUNK_HEADER,
    SIMPLE,
    NotLaidOut,
    ShardFile,
    footer,
    join_pieces,
    physical,
    usable,
)
from catalog.storage.shards import shard_error

__all__ = [
    "Located",
    "MappedShard",
    "ShardIndex",
    "forget_verified",
    "locate",
    "map_shard",
    "sliced",
]

_U64 = np.dtype("<u8")


@dataclass(frozen=True)
class ShardIndex:
    """What mapping and verifying a shard found, for another process to map it without doing
    that again (see the module docstring): where each record starts and how long it is."""

    identity: tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, mtime and ctime (ns)
    starts: np.ndarray[Any, Any]
    lengths: np.ndarray[Any, Any]
    pieced: dict[int, int]

    @property
    def nbytes(self) -> int:
        return int(self.starts.nbytes + self.lengths.nbytes) + 64 * len(self.pieced)


def _identity(fd: int) -> tuple[int, int, int, int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


#: What this process verified, by the shard's sha256 (see the module docstring), least
#: recently used first, and the bytes of those indexes.
_VERIFIED: OrderedDict[str, ShardIndex] = OrderedDict()
_MAX_VERIFIED_BYTES = 128 << 20
_verified_lock = threading.Lock()
_verified_bytes = 0


def _verified(sha256: str) -> ShardIndex | None:
    with _verified_lock:
        index = _VERIFIED.get(sha256)
        if index is not None:
            _VERIFIED.move_to_end(sha256)
        return index


def forget_verified() -> None:
    """Forget what this process verified: the next map of each shard parses and hashes it, as
    a new process would (benchmarks of a fresh open)."""
    global _verified_bytes
    with _verified_lock:
        _VERIFIED.clear()
        _verified_bytes = 0


def _remember(sha256: str, index: ShardIndex) -> None:
    global _verified_bytes
    if index.nbytes > _MAX_VERIFIED_BYTES // 4:
        return
    with _verified_lock:
        old = _VERIFIED.pop(sha256, None)
        _verified_bytes += index.nbytes - (old.nbytes if old is not None else 0)
        _VERIFIED[sha256] = index
        while _verified_bytes > _MAX_VERIFIED_BYTES:
            _verified_bytes -= _VERIFIED.popitem(last=False)[1].nbytes


def _spread(starts: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``starts[k] + 0, starts[k] + 1, ..., starts[k] + counts[k] - 1`` for every k, in one
    array (no loop per k)."""
    total = int(counts.sum())
    firsts = np.cumsum(counts) - counts
    spread: np.ndarray[Any, Any] = np.repeat(starts - firsts, counts) + np.arange(total)
    return spread


_WINDOW_SLACK = 4  # a window gather may read this many times the bytes asked for


def _pick(
    array: np.ndarray[Any, Any], starts: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """`counts[k]` bytes of `array` from usable-byte coordinate `starts[k]` on, for every k,
    joined in order; NotLaidOut when they run past its end.

    Each run is gathered as one row of a sliding window as wide as the longest run (one
    index a run, not one a byte: a shard's 60,000 chunk headers are 2.6 MB gathered, where
    an index a byte made 20 MB of temporaries); the few runs a block header interrupts, or
    too near the end of the file for the window, byte by byte."""
    size, n = len(array), len(starts)
    if not n:
        return np.zeros(0, np.uint8)
    width = int(counts.max())
    total = int(counts.sum())
    if width == 0:
        return np.zeros(0, np.uint8)
    if width * n > _WINDOW_SLACK * total + 4096 or width > size:  # runs of very unlike sizes
        return _pick_bytes(array, starts, counts)
    begins = physical(starts)
    whole = (begins % BLOCK + counts <= BLOCK) & (begins + width <= size)
    window = np.lib.stride_tricks.sliding_window_view(array, width)
    broken = ~whole
    if broken.any():
        rows = np.empty((n, width), np.uint8)
        rows[whole] = window[begins[whole]]
        pieces = np.zeros((int(broken.sum()), width), np.uint8)
        wanted = counts[broken]
        pieces[np.arange(width) < wanted[:, None]] = _pick_bytes(array, starts[broken], wanted)
        rows[broken] = pieces
    else:
        rows = window[begins]  # (np.take would copy the whole window)
    if (counts == width).all():
        return rows.reshape(-1)
    picked: np.ndarray[Any, Any] = rows[np.arange(width) < counts[:, None]]
    return picked


def _pick_bytes(
    array: np.ndarray[Any, Any], starts: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """`_pick` with one index a byte (runs across block headers)."""
    positions = physical(_spread(starts, counts))
    if positions.size and int(positions.max()) >= len(array):
        raise NotLaidOut("a chunk past the end of the file")
    picked: np.ndarray[Any, Any] = array[positions]
    return picked


@dataclass(frozen=True)
class Located:
    """Where the records of some chunks are (`locate`), in the order of those chunks."""

    starts: np.ndarray[Any, Any]  # the file position of each record's first byte
    lengths: np.ndarray[Any, Any]  # uint32
    pieced: dict[int, int]  # record -> usable-byte coordinate, for those in two pieces
    data: np.ndarray[Any, Any]  # usable-byte coordinate of each chunk's data
    data_sizes: np.ndarray[Any, Any]
    hashes: np.ndarray[Any, Any]  # each chunk header's data_hash, as (n, 8) bytes


def locate(array: np.ndarray[Any, Any], chunks: np.ndarray[Any, Any]) -> Located:
    """Where the records of `chunks` (footer rows ``(chunk_offset, decoded_data_size,
    num_records)``, any of a shard's) are in the file whose bytes are `array`, every chunk
    header checked against its row, with NumPy (no loop per chunk or record). NotLaidOut
    when a chunk is not simple uncompressed records or does not match its row."""
    size = len(array)
    at = usable(chunks[:, 0])
    counts = chunks[:, 2]
    width = CHUNK_HEADER + 3  # the header, then the data's first bytes
    head = _pick(array, at, np.full(len(at), width)).reshape(-1, width)
    data_size = head[:, 8:16].copy().view(_U64)[:, 0].astype(np.int64)
    kind_and_count = head[:, 24:32]
    decoded = head[:, 32:40].copy().view(_U64)[:, 0].astype(np.int64)
    held = np.concatenate([kind_and_count[:, 1:], np.zeros((len(head), 1), np.uint8)], axis=1)
    # the varint size of the record sizes: one or two bytes (up to 16383 bytes of sizes)
    first, second = head[:, CHUNK_HEADER + 1 :].astype(np.int64).T
    long = first >= 0x80
    sizes_size = np.where(long, (first & 0x7F) | (second << 7), first)
    varint = 1 + long
    if (
        (kind_and_count[:, 0] != SIMPLE).any()
        or (held.view(_U64)[:, 0].astype(np.int64) != counts).any()
        or (head[:, CHUNK_HEADER] != 0).any()  # uncompressed
        or (long & (second >= 0x80)).any()
        or (decoded != chunks[:, 1]).any()
        or (sizes_size < counts).any()
        or (data_size != 1 + varint + sizes_size + decoded).any()
    ):
        raise NotLaidOut("a chunk that is not uncompressed records")
    # every record's size, from the sizes of every chunk decoded in one go; each chunk's
    # sizes must be its own count of varints adding up to its records' bytes
    sizes_at = at + CHUNK_HEADER + 1 + varint
    raw = _pick(array, sizes_at, sizes_size)
    ends_in = np.cumsum(sizes_size) - sizes_size
    if len(at) and (
        raw[-1] >= 0x80 or (np.add.reduceat((raw < 0x80).astype(np.int64), ends_in) != counts).any()
    ):
        raise NotLaidOut("a chunk whose sizes do not add up")
    try:
        lengths = decode_varints(raw).astype(np.int64)
    except ValueError:
        raise NotLaidOut("a bad varint") from None
    firsts = np.cumsum(counts) - counts
    if len(at) and (np.add.reduceat(lengths, firsts) != decoded).any():
        raise NotLaidOut("a chunk whose sizes do not add up")
    # Where each record's bytes begin and how many there are (about 12 bytes a record);
    # the few records interrupted by a block header, stored in two pieces, are listed
    # with where they begin in usable bytes.
    if len(lengths) and int(lengths.max()) >= 1 << 32:
        raise NotLaidOut("a record of 4 GiB or more")
    before = np.cumsum(lengths) - lengths  # record bytes before each, in these chunks
    begin = np.repeat(sizes_at + sizes_size - before[firsts], counts) + before
    starts = physical(begin)
    ends = physical(begin + np.maximum(lengths - 1, 0)) + 1
    if len(ends) and int(ends.max()) > size:
        raise NotLaidOut("a record past the end of the file")
    pieced = np.flatnonzero((ends - starts != lengths) & (lengths > 0))
    return Located(
        starts,
        lengths.astype(np.uint32),
        dict(zip(pieced.tolist(), begin[pieced].tolist(), strict=True)),
        at + CHUNK_HEADER,
        data_size,
        head[:, 16:24],
    )


def sliced(
    mapping: Any,
    starts: np.ndarray[Any, Any],
    lengths: np.ndarray[Any, Any],
    pieced: dict[int, int],
    records: np.ndarray[Any, Any],
) -> list[bytes]:
    """The `records` (indices into `starts` and `lengths`) as slices of `mapping`; those stored
    in two pieces around a block header (`pieced`: record -> usable-byte coordinate) joined."""
    first = starts[records]
    ends = (first + lengths[records]).tolist()
    out = [mapping[a:b] for a, b in zip(first.tolist(), ends, strict=True)]
    if pieced:
        for i, record in enumerate(records.tolist()):
            if record in pieced:
                out[i] = join_pieces(mapping, pieced[record], int(lengths[record]))
    return out


class MappedShard:
    """The records of one shard, read as slices of a memory map (see the module docstring)."""

    def __init__(self, path: str, fd: int, mapping: mmap.mmap, chunks: np.ndarray[Any, Any]):
        """`chunks`: the footer's ``(chunk_offset, decoded_data_size, num_records)`` rows."""
        self.path = path
        self._fd = fd
        self._map = mapping
        self._size = len(mapping)
        self.identity = _identity(fd)
        found = locate(np.frombuffer(mapping, np.uint8), chunks)
        self.starts, self.lengths, self._pieced_at = found.starts, found.lengths, found.pieced
        self._windows: dict[int, np.ndarray[Any, Any]] = {}

    def __len__(self) -> int:
        return len(self.starts)

    def read(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> list[bytes]:
        """The records at `rows` (positions in this shard, in range), in order."""
        self._check_size()
        index = np.asarray(rows, np.int64)
        return sliced(self._map, self.starts, self.lengths, self._pieced_at, index)

    def gather(
        self, rows: Sequence[int] | np.ndarray[Any, Any], size: int
    ) -> np.ndarray[Any, Any] | None:
        """The records at `rows` as the rows of a new ``(n, size)`` uint8 array: one NumPy
        gather from the map (no object per record). None when one of them is not `size`
        bytes long (read them one by one then)."""
        self._check_size()
        index = np.asarray(rows, np.int64)
        if (self.lengths[index] != size).any():
            return None
        window = self._windows.get(size)
        if window is None:
            whole_file = np.frombuffer(self._map, np.uint8)
            window = np.lib.stride_tricks.sliding_window_view(whole_file, size)
            self._windows[size] = window
        out: np.ndarray[Any, Any] = window[self.starts[index]]  # (np.take would copy it all)
        if self._pieced_at:  # records stored in two pieces around a block header
            for i, row in enumerate(index.tolist()):
                if row in self._pieced_at:
                    out[i] = np.frombuffer(self._pieced(row), np.uint8)
        return out

    def _check_size(self) -> None:
        if os.fstat(self._fd).st_size < self._size:
            raise shard_error(
                self.path, "the file was truncated while it was being read (it is mapped)"
            )

    def _pieced(self, row: int) -> bytes:
        return join_pieces(self._map, self._pieced_at[row], int(self.lengths[row]))

    def index(self) -> ShardIndex:
        """What this process verified, for another to map the same file (`map_shard`)."""
        return ShardIndex(self.identity, self.starts, self.lengths, dict(self._pieced_at))

    @classmethod
    def _from_index(cls, path: str, fd: int, mapping: mmap.mmap, index: ShardIndex) -> MappedShard:
        shard = cls.__new__(cls)
        shard.path, shard._fd, shard._map, shard._size = path, fd, mapping, len(mapping)
        shard.identity = index.identity
        shard.starts, shard.lengths = index.starts, index.lengths
        shard._pieced_at, shard._windows = dict(index.pieced), {}
        return shard

    def close(self) -> None:
        self._windows.clear()
        with contextlib.suppress(BufferError):  # a NumPy view of it is alive: the GC closes it
            self._map.close()
        os.close(self._fd)


def map_shard(
    path: str, expected_records: int, sha256: str, known: ShardIndex | None = None
) -> MappedShard | None:
    """`path` mapped for batched reads, or None when it is not laid out as catalog writes
    shards or its content does not have the `sha256` its dataset records (read it through
    array_record then: its per-chunk hashes name a corrupt record). ShardError when it
    cannot be opened. With `known` (another process's `MappedShard.index()`), or what this
    process verified of a file of that `sha256` before, and the same file, unchanged, nothing
    is parsed or hashed again."""
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
    for index in (known, _verified(sha256)):
        if (
            index is not None
            and index.identity == identity
            and len(index.starts) == expected_records
        ):
            return MappedShard._from_index(path, fd, mapping, index)
    try:
        file = ShardFile(memoryview(mapping))
        try:
            chunks = footer(file)[0]
        finally:
            file.view.release()
        if int(chunks[:, 2].sum()) != expected_records:
            raise NotLaidOut("another number of records")
        shard = MappedShard(path, fd, mapping, chunks)
        if hashlib.sha256(mapping).hexdigest() != sha256:
            shard.close()
            return None
        _remember(sha256, shard.index())
        return shard
    except (NotLaidOut, ValueError, IndexError, ShardError):
        with contextlib.suppress(BufferError):
            mapping.close()
        os.close(fd)
        return None

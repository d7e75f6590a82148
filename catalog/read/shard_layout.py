"""The layout of catalog's ArrayRecord shards, parsed with NumPy: the index, and a chunk's records.

An ArrayRecord file is a Riegeli/records file (riegeli's ``doc/riegeli_records_file_format.md``
and array_record's ``cpp/layout.proto``): a 24-byte block header interrupts the chunks at
every 64 KiB; each chunk has a 40-byte header (``data_size``, ``data_hash``, ``chunk_type``,
``num_records``, ``decoded_data_size``); the last 64 KiB block holds a postscript chunk whose
records give the offset of the footer chunk, whose records are a metadata message and then
one ``ArrayRecordFooter {chunk_offset, decoded_data_size, num_records}`` per data chunk.
A simple uncompressed chunk's data is a compression byte (0), the varint size of the record
sizes, the sizes (one varint per record), then the records, one after the other: a record is
found without reading its neighbours, whatever the chunk's ``group_size``.

`chunk_index` gives where each chunk begins and ends and how many records it holds (from the
footer alone, which a remote shard fetches in one request); `FooterEntries` finds the entries
of a few chunks without decoding the others (each entry is a record of the footer chunk, whose
one-byte sizes locate it); `chunk_records` splits one chunk
into its records, its header checked against the index and, with a hasher
(`catalog.storage.chunk_hash`), its data against the hash in its header. `catalog.read.mapped_shard`
locates every record of a whole file at once from the same pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog._util.varints import decode_varints, read_varint

__all__ = [
    "BLOCK",
    "CHUNK_HEADER",
    "SIMPLE",
    "ChunkIndex",
    "CorruptChunk",
    "FooterEntries",
    "NotLaidOut",
    "ShardFile",
    "chunk_end_at",
    "chunk_ends",
    "chunk_index",
    "chunk_records",
    "footer",
    "join_pieces",
    "physical",
    "physical_at",
    "usable",
    "usable_at",
]

BLOCK = 1 << 16
_BLOCK_HEADER = 24
_USABLE = BLOCK - _BLOCK_HEADER
CHUNK_HEADER = 40
SIMPLE = 0x72  # chunk_type 'r': a simple chunk with records
_U64 = np.dtype("<u8")
_FIELDS = np.array([8, 16, 24], _U64)  # ArrayRecordFooter's tags: fields 1, 2, 3, varints


class NotLaidOut(Exception):
    """The file is not laid out as catalog writes shards (compressed chunks, an index of
    another shape, too short): read it through array_record."""


class CorruptChunk(Exception):
    """A chunk's data does not match the hash in its header (`chunk_records`)."""


def usable(position: Any) -> Any:
    """The usable-byte coordinate of physical `position` (block headers excluded); a position
    at a block's start counts as just after its header (where a chunk starting there begins)."""
    return (position // BLOCK) * _USABLE + np.maximum(position % BLOCK - _BLOCK_HEADER, 0)


def physical(coordinate: Any) -> Any:
    """The physical position of usable-byte coordinate `coordinate`."""
    return (coordinate // _USABLE) * BLOCK + _BLOCK_HEADER + coordinate % _USABLE


def usable_at(position: int) -> int:
    """`usable` of one position, in Python ints (cheaper than NumPy's calls for one)."""
    return (position // BLOCK) * _USABLE + max(position % BLOCK - _BLOCK_HEADER, 0)


def physical_at(coordinate: int) -> int:
    """`physical` of one coordinate, in Python ints."""
    return (coordinate // _USABLE) * BLOCK + _BLOCK_HEADER + coordinate % _USABLE


def chunk_ends(coordinate: Any) -> Any:
    """The file position where a chunk ending at usable-byte `coordinate` ends: a block's
    boundary when it fills its block (the next chunk counts as beginning there)."""
    within = coordinate % _USABLE
    return (coordinate // _USABLE) * BLOCK + np.where(within == 0, 0, _BLOCK_HEADER + within)


def chunk_end_at(coordinate: int) -> int:
    """`chunk_ends` of one coordinate, in Python ints."""
    within = coordinate % _USABLE
    return (coordinate // _USABLE) * BLOCK + (_BLOCK_HEADER + within if within else 0)


def join_pieces(buf: Any, coordinate: int, length: int) -> bytes:
    """`length` bytes of `buf` from usable-byte `coordinate` on, skipping the block headers in
    between; NotLaidOut when they run past its end."""
    position = physical_at(coordinate)
    if position % BLOCK + length <= BLOCK and position + length <= len(buf):  # the most: one
        return bytes(buf[position : position + length])  # piece (an mmap's slice is bytes)
    out = []
    while length > 0:
        position = physical_at(coordinate)
        take = min(length, BLOCK - position % BLOCK)
        if position + take > len(buf):
            raise NotLaidOut("a chunk runs past the end of the file")
        out.append(buf[position : position + take])
        coordinate += take
        length -= take
    return b"".join(out)


def _varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    try:
        return read_varint(buf, pos)
    except (IndexError, ValueError):
        raise NotLaidOut("a bad varint") from None


@dataclass(frozen=True)
class _Chunk:
    """One simple uncompressed chunk: its header's fields and its data."""

    header: bytes
    num_records: int
    data: bytes


class ShardFile:
    """The bytes of a file, addressed chunk by chunk (block headers skipped): a memory map,
    or any buffer sliced by file position whose ``len`` is the file's size (the parts of a
    remote file fetched by range, `catalog.read.remote_shard`)."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.size = len(view)

    def chunk_bytes(self, chunk: int, start: int, length: int) -> bytes:
        """`length` bytes from `start` bytes into the chunk that begins at `chunk`."""
        return join_pieces(self.view, int(usable(chunk)) + start, length)

    def _chunk(self, chunk: int) -> _Chunk:
        header = self.chunk_bytes(chunk, 0, CHUNK_HEADER)
        data_size = int.from_bytes(header[8:16], "little")
        if header[24] != SIMPLE or data_size > self.size:
            raise NotLaidOut("not a simple chunk")
        num_records = int.from_bytes(header[25:32], "little")
        return _Chunk(header, num_records, self.chunk_bytes(chunk, CHUNK_HEADER, data_size))

    def simple_chunk(self, chunk: int) -> tuple[int, list[int], bytes]:
        """(num_records, record sizes, records) of the uncompressed simple chunk at `chunk`."""
        found = self._chunk(chunk)
        sizes, records = _split(found.data, found.num_records)
        return found.num_records, sizes, records


def _split(data: bytes, num_records: int) -> tuple[list[int], bytes]:
    """The record sizes and the records of an uncompressed simple chunk's `data`."""
    if not data or data[0] != 0:
        raise NotLaidOut("a compressed chunk")
    sizes_size, pos = _varint(data, 1)
    end = pos + sizes_size
    if end > len(data):
        raise NotLaidOut("a chunk whose sizes do not add up")
    try:  # a footer lists one size per chunk: tens of thousands, decoded in one go
        sizes = decode_varints(np.frombuffer(data, np.uint8, sizes_size, pos)).tolist()
    except ValueError:
        raise NotLaidOut("a bad varint") from None
    if len(sizes) != num_records or end + sum(sizes) != len(data):
        raise NotLaidOut("a chunk whose sizes do not add up")
    return sizes, data[end:]


def footer_offset(file: ShardFile) -> int:
    """Where the footer chunk begins, from the postscript in the file's last block."""
    if file.size < BLOCK or file.size % BLOCK:
        raise NotLaidOut("no postscript block")
    _, sizes, records = file.simple_chunk(file.size - BLOCK)
    offset = None
    if sizes:
        postscript = records[: sizes[0]]
        if postscript[:1] == b"\x08":  # field 1: footer_offset
            offset = _varint(postscript, 1)[0]
    if offset is None or offset >= file.size:
        raise NotLaidOut("no footer offset in the postscript")
    return offset


def footer(file: ShardFile) -> tuple[np.ndarray[Any, Any], int]:
    """The footer's ``(chunk_offset, decoded_data_size, num_records)`` rows (int64), one per
    data chunk, and where the footer begins (where the last data chunk ends)."""
    at = footer_offset(file)
    count, sizes, records = file.simple_chunk(at)
    if count < 1:
        raise NotLaidOut("an empty footer")
    # one ArrayRecordFooter per chunk after the metadata: fields 1, 2, 3, all varints
    values = decode_varints(np.frombuffer(records, np.uint8, offset=sizes[0])).reshape(-1, 6)
    if len(values) != count - 1 or (values[:, ::2] != _FIELDS).any():
        raise NotLaidOut("an index of another shape")
    if (values[:, 5] < 1).any() or (values[:, 1] >= at).any():
        raise NotLaidOut("an index of another shape")
    rows: np.ndarray[Any, Any] = values[:, 1::2].astype(np.int64)
    if len(rows) > 1 and (np.diff(rows[:, 0]) <= 0).any():
        raise NotLaidOut("chunks out of order")
    return rows, at


@dataclass(frozen=True)
class ChunkIndex:
    """Where each data chunk of a shard begins (`offsets`) and ends (`ends`: where the next
    begins, the footer for the last), how many records it holds (`counts`), and the position
    of its first record in the shard (`firsts`, one more: the total at the end)."""

    offsets: np.ndarray[Any, Any]
    ends: np.ndarray[Any, Any]
    counts: np.ndarray[Any, Any]
    firsts: np.ndarray[Any, Any]
    #: Each record's size when every chunk holds one (the footer says it), else None.
    lengths: np.ndarray[Any, Any] | None

    def chunk_of(self, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The chunk holding each record of `rows` (positions in the shard, in range)."""
        found: np.ndarray[Any, Any] = np.searchsorted(self.firsts, rows, side="right") - 1
        return found


def chunk_index(view: Any) -> ChunkIndex | None:
    """The `ChunkIndex` of a shard from its footer; `view` is sliced by file position (see
    `ShardFile`) and needs to hold only the footer and the last block. None when the file is
    not laid out so."""
    try:
        rows, at = footer(ShardFile(view))
    except (NotLaidOut, ValueError, IndexError):
        return None
    offsets, decoded, counts = rows[:, 0], rows[:, 1], rows[:, 2]
    ends = np.append(offsets[1:], at)
    firsts = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=firsts[1:])
    lengths = decoded if (counts == 1).all() else None
    return ChunkIndex(offsets, ends, counts, firsts, lengths)


def chunk_records(view: Any, offset: int, count: int, hasher: Any = None) -> list[bytes] | None:
    """The `count` records of the chunk at `offset` of `view` (sliced by file position), its
    header checked against the index; None when it does not match (the file is not the one
    indexed). With `hasher` (`catalog.storage.chunk_hash`) the chunk's data is checked against
    the hash in its header first: CorruptChunk when it differs."""
    try:
        found = ShardFile(view)._chunk(offset)
    except (NotLaidOut, IndexError, ValueError):
        return None
    if found.num_records != count:
        return None
    if hasher is not None and hasher(found.data) != found.header[16:24]:
        raise CorruptChunk("its data does not match the hash in its chunk header")
    try:
        sizes, records = _split(found.data, count)
    except NotLaidOut:
        return None
    if sum(sizes) != int.from_bytes(found.header[32:40], "little"):
        return None
    out, start = [], 0
    for size in sizes:
        out.append(records[start : start + size])
        start += size
    return out


class FooterEntries:
    """The footer of a shard whose chunks hold `group` records each (the last one the rest),
    read without decoding every entry: record i is in chunk ``i // group``, whose entry
    `rows` decodes. An entry is a record of the footer chunk of at most 33 bytes, so its size
    is one byte and the sizes locate every entry with one cumulative sum; the count that ends
    each entry is checked for all chunks at once (a single byte when `group` < 128), so no
    chunk is taken for another, and the footer's data against the hash in its header. NotLaidOut
    for a file that is not laid out so."""

    def __init__(
        self, file: ShardFile, group: int, records: int, hash64: Callable[[bytes], int]
    ) -> None:
        """`hash64`: `catalog.storage.chunk_hash.chunk_hash64`'s, the footer checked with it."""
        if not 0 < group < 0x80 or records < 1:
            raise NotLaidOut("chunks of 128 records or more, or none")
        found = file._chunk(footer_offset(file))
        if hash64(found.data) != int.from_bytes(found.header[16:24], "little"):
            raise NotLaidOut("a footer that does not match its hash")
        data = np.frombuffer(found.data, np.uint8)
        chunks = -(-records // group)
        if found.num_records != chunks + 1 or not len(data) or data[0] != 0:
            raise NotLaidOut("a footer of another shape")
        sizes_size, at = _varint(found.data, 1)
        if sizes_size != found.num_records or at + sizes_size > len(data):
            raise NotLaidOut("a footer of another shape")
        sizes = data[at : at + sizes_size]
        ends = np.cumsum(sizes, dtype=np.int64)
        ends += at + sizes_size  # where each entry ends; the first is the metadata
        if sizes.max() >= 0x80 or int(ends[-1]) != len(data):
            raise NotLaidOut("a footer of another shape")
        # each entry ends with field 3's tag and a one-byte count: `group` but in the last
        counts = data[ends[1:] - 1]
        if (
            (data[ends[1:] - 2] != 0x18).any()
            or (counts[:-1] != group).any()
            or int(counts[-1]) != records - group * (chunks - 1)
        ):
            raise NotLaidOut("chunks of another number of records")
        self.group = group
        self._data = data
        self._starts = ends[:-1]  # where each chunk's entry begins
        self._sizes = sizes[1:]  # (uint8: widened only for the entries `rows` decodes)

    def __len__(self) -> int:
        """The number of data chunks."""
        return len(self._sizes)

    def spans(self, chunks: list[int]) -> list[tuple[int, int, int, int]]:
        """`rows` of `chunks` as Python ints, each with -1 for where its chunk ends (the
        footer's hash vouches for the entries; the chunk's header says)."""
        return [(*row, -1) for row in self.rows(np.asarray(chunks, np.int64)).tolist()]

    def rows(self, chunks: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The ``(chunk_offset, decoded_data_size, num_records)`` rows (int64) of `chunks`."""
        starts, sizes = self._starts[chunks], self._sizes[chunks].astype(np.int64)
        firsts = np.cumsum(sizes) - sizes
        raw = self._data[np.repeat(starts - firsts, sizes) + np.arange(int(sizes.sum()))]
        try:
            values = decode_varints(raw).reshape(-1, 6)
        except ValueError:
            raise NotLaidOut("a bad varint") from None
        if len(values) != len(chunks) or (values[:, ::2] != _FIELDS).any():
            raise NotLaidOut("an index of another shape")
        found: np.ndarray[Any, Any] = values[:, 1::2].astype(np.int64)
        return found

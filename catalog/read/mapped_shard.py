"""Batched reads of catalog's shards through a memory map, without a call per record.

Reading a batch through array_record costs a Python call to ``seek`` and one to ``read`` per
record (about 2 us each pair), which is most of an epoch over small examples; array_record's
own batched ``read(indices)`` is slower still. catalog's shards are written
``group_size:1,uncompressed`` (`catalog.storage.shards`), so every record is stored as it is, in one
chunk of its own: once the record positions are known, a batch is a slice of a memory map
per record (about 0.2 us).

The positions come from the file's own index, parsed once per shard and process with NumPy.
An ArrayRecord file is a Riegeli/records file (riegeli's ``doc/riegeli_records_file_format.md``
and array_record's ``cpp/layout.proto``): a 24-byte block header interrupts the chunks at
every 64 KiB; each chunk has a 40-byte header (``data_size``, ``chunk_type``,
``num_records``, ``decoded_data_size``, hashes); the last 64 KiB block holds a postscript
chunk whose records give the offset of the footer chunk, whose records are a metadata message
and then one ``ArrayRecordFooter {chunk_offset, decoded_data_size, num_records}`` per chunk.
A simple uncompressed chunk's data is a compression byte (0), the varint size of the record
sizes, the sizes, then the records.

`map_shard` returns None for anything else (compressed chunks, several records per chunk, an
index it does not recognise, a file too short to hold one): the caller reads through
array_record then. Every chunk header is checked against the index, and the whole file
against the sha256 its dataset_info.json records, before the map is used (once per shard and
process: about 0.5 ms per MB); a shard that does not match is read through array_record,
whose per-chunk hashes name the corrupt record while the healthy ones stay readable. A shard
that shrinks while mapped raises ShardError on the next read instead of crashing the process
(a read past the end of a file mapping is SIGBUS).

A process that has mapped and verified a shard can hand what it found to another (`ShardIndex`,
pickled with a `DataSource` for a pipeline's worker processes): the other maps the same file
without parsing or hashing it again, as long as it is the same file, unchanged (device, inode,
size and modification time equal to those seen when it was verified).
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog._util.varints import decode_varints, read_varint
from catalog.errors import ShardError
from catalog.storage.shards import shard_error

__all__ = [
    "CorruptChunk",
    "MappedShard",
    "ShardIndex",
    "chunk_index",
    "map_shard",
    "record_span",
    "split_record",
]

_BLOCK = 1 << 16
_BLOCK_HEADER = 24
_USABLE = _BLOCK - _BLOCK_HEADER
_CHUNK_HEADER = 40
_SIMPLE = 0x72  # chunk_type 'r': a simple chunk with records
_U64 = np.dtype("<u8")


class _NotMappable(Exception):
    """The file is not laid out as `map_shard` expects: read it through array_record."""


@dataclass(frozen=True)
class ShardIndex:
    """What mapping and verifying a shard found, for another process to map it without doing
    that again (see the module docstring): where each record starts and how long it is."""

    identity: tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns when verified
    starts: np.ndarray[Any, Any]
    lengths: np.ndarray[Any, Any]
    pieced: dict[int, int]


def _identity(fd: int) -> tuple[int, int, int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _usable(position: Any) -> Any:
    """The usable-byte coordinate of physical `position` (block headers excluded); a position
    at a block's start counts as just after its header (where a chunk starting there begins)."""
    return (position // _BLOCK) * _USABLE + np.maximum(position % _BLOCK - _BLOCK_HEADER, 0)


def _physical(usable: Any) -> Any:
    """The physical position of usable-byte coordinate `usable`."""
    return (usable // _USABLE) * _BLOCK + _BLOCK_HEADER + usable % _USABLE


def _join_pieces(buf: Any, usable: int, length: int) -> bytes:
    """`length` bytes of `buf` from usable-byte coordinate `usable` on, skipping the block
    headers in between; _NotMappable when they run past its end."""
    out = []
    while length > 0:
        position = int(_physical(usable))
        take = min(length, _BLOCK - position % _BLOCK)
        if position + take > len(buf):
            raise _NotMappable("a chunk runs past the end of the file")
        out.append(buf[position : position + take])
        usable += take
        length -= take
    return b"".join(out)


def _varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    try:
        return read_varint(buf, pos)
    except (IndexError, ValueError):
        raise _NotMappable("a bad varint") from None


class _File:
    """The bytes of a file, addressed chunk by chunk (block headers skipped): a memory map,
    or any buffer sliced by file position whose ``len`` is the file's size (the parts of a
    remote file fetched by range, `catalog.read.remote_shard`)."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.size = len(view)

    def chunk_bytes(self, chunk: int, start: int, length: int) -> bytes:
        """`length` bytes from `start` bytes into the chunk that begins at `chunk`."""
        return _join_pieces(self.view, int(_usable(chunk)) + start, length)

    def simple_chunk(self, chunk: int) -> tuple[int, list[int], bytes]:
        """(num_records, record sizes, records) of the uncompressed simple chunk at `chunk`."""
        header = self.chunk_bytes(chunk, 0, _CHUNK_HEADER)
        data_size = int.from_bytes(header[8:16], "little")
        kind = header[24]
        num_records = int.from_bytes(header[25:32], "little")
        if kind != _SIMPLE or data_size > self.size:
            raise _NotMappable("not a simple chunk")
        data = self.chunk_bytes(chunk, _CHUNK_HEADER, data_size)
        if not data or data[0] != 0:
            raise _NotMappable("a compressed chunk")
        sizes_size, pos = _varint(data, 1)
        end = pos + sizes_size
        if end > len(data):
            raise _NotMappable("a chunk whose sizes do not add up")
        try:  # a footer lists one size per chunk: tens of thousands, decoded in one go
            sizes = decode_varints(np.frombuffer(data, np.uint8, sizes_size, pos)).tolist()
        except ValueError:
            raise _NotMappable("a bad varint") from None
        if len(sizes) != num_records or end + sum(sizes) != len(data):
            raise _NotMappable("a chunk whose sizes do not add up")
        return num_records, sizes, data[end:]


def _chunk_offsets(file: _File) -> np.ndarray[Any, Any]:
    """The offset of every data chunk, from the postscript and the footer (module docstring);
    each of them must hold one record."""
    return _footer(file)[:, 1].astype(np.int64)


def footer_offset(file: _File) -> int:
    """Where the footer chunk begins, from the postscript in the file's last block."""
    if file.size < _BLOCK or file.size % _BLOCK:
        raise _NotMappable("no postscript block")
    _, sizes, records = file.simple_chunk(file.size - _BLOCK)
    offset = None
    if sizes:
        postscript = records[: sizes[0]]
        if postscript[:1] == b"\x08":  # field 1: footer_offset
            offset = _varint(postscript, 1)[0]
    if offset is None or offset >= file.size:
        raise _NotMappable("no footer offset in the postscript")
    return offset


def chunk_index(view: Any) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """(chunk offsets, record lengths) of a shard of one record per chunk, from its footer;
    `view` is sliced by file position (see `_File`) and needs to hold only the footer and
    the last block. None when the file is not laid out so."""
    try:
        values = _footer(_File(view))
    except (_NotMappable, ValueError, IndexError):
        return None
    return values[:, 1].astype(np.int64), values[:, 3].astype(np.int64)


def record_span(offset: int, length: int) -> tuple[int, int]:
    """The file positions (start, stop) of the chunk at `offset` holding one uncompressed
    record of `length` bytes: its header, and the record, with any block header between."""
    usable = int(_usable(offset))
    size_bytes = len(_varint_bytes(length))
    last = usable + _CHUNK_HEADER + 2 + size_bytes + max(length, 1) - 1
    return offset, int(_physical(last)) + 1


class CorruptChunk(Exception):
    """A chunk's data does not match the hash in its header (`split_record`)."""


def split_record(
    view: Any, offset: int, length: int, hasher: Callable[[bytes], bytes] | None = None
) -> bytes | None:
    """The record of `length` bytes in the chunk at `offset` of `view` (sliced by file
    position), its chunk header checked against the index; None when it does not match
    (the file is not the one indexed). With `hasher` (`catalog.read.chunk_hash`) the
    chunk's data is checked against the hash in its header: CorruptChunk when it differs."""
    file = _File(view)
    size_bytes = len(_varint_bytes(length))
    try:
        header = file.chunk_bytes(offset, 0, _CHUNK_HEADER)
        data_size = int.from_bytes(header[8:16], "little")
        if (
            header[24] != _SIMPLE
            or int.from_bytes(header[25:32], "little") != 1
            or int.from_bytes(header[32:40], "little") != length
            or data_size != length + 2 + size_bytes
        ):
            return None
        data = file.chunk_bytes(offset, _CHUNK_HEADER, data_size)
    except (_NotMappable, IndexError, ValueError):
        return None
    if hasher is not None and hasher(data) != header[16:24]:
        raise CorruptChunk("its data does not match the hash in its chunk header")
    if data[0] != 0 or data[1] != size_bytes or data[2 : 2 + size_bytes] != _varint_bytes(length):
        return None
    return data[2 + size_bytes :]


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _footer(file: _File) -> np.ndarray[Any, Any]:
    """The footer's ``(1, chunk_offset, 2, decoded_data_size, 3, num_records)`` rows, one per
    data chunk, each of one record."""
    count, sizes, records = file.simple_chunk(footer_offset(file))
    if count < 1:
        raise _NotMappable("an empty footer")
    # one ArrayRecordFooter per chunk after the metadata: fields 1, 2, 3, all varints
    values = decode_varints(np.frombuffer(records, np.uint8, offset=sizes[0])).reshape(-1, 6)
    if len(values) != count - 1 or (values[:, ::2] != np.array([8, 16, 24], _U64)).any():
        raise _NotMappable("an index of another shape")
    if (values[:, 5] != 1).any():
        raise _NotMappable("chunks of several records")
    return values


class MappedShard:
    """The records of one shard, read as slices of a memory map (see the module docstring)."""

    def __init__(self, path: str, fd: int, mapping: mmap.mmap, chunks: np.ndarray[Any, Any]):
        self.path = path
        self._fd = fd
        self._map = mapping
        self._size = len(mapping)
        self.identity = _identity(fd)
        array = np.frombuffer(mapping, np.uint8)
        usable = _usable(chunks)

        def header(start: int, width: int) -> np.ndarray[Any, Any]:
            """Bytes start..start+width-1 of every chunk, as an (n, width) array."""
            positions = _physical(usable[:, None] + np.arange(start, start + width))
            if len(positions) and int(positions.max()) >= self._size:
                raise _NotMappable("a chunk header past the end of the file")
            picked: np.ndarray[Any, Any] = array[positions]
            return picked

        fields = header(8, 8).view(_U64)[:, 0], header(24, 8), header(32, 8).view(_U64)[:, 0]
        data_size, kind_and_count, decoded = fields
        sizes_size = header(_CHUNK_HEADER + 1, 1)[:, 0].astype(np.int64)
        kinds, counts = kind_and_count[:, 0], kind_and_count[:, 1:]
        if (
            (kinds != _SIMPLE).any()
            or (counts[:, 0] != 1).any()
            or counts[:, 1:].any()
            or (header(_CHUNK_HEADER, 1)[:, 0] != 0).any()  # uncompressed
            or (sizes_size >= 0x80).any()
            or (data_size != decoded + 2 + sizes_size.astype(np.uint64)).any()
        ):
            raise _NotMappable("a chunk that is not one uncompressed record")
        # Where each record's bytes begin and how many there are (about 12 bytes a record);
        # the few records interrupted by a block header, stored in two pieces, are listed
        # with where they begin in usable bytes.
        lengths = decoded.astype(np.int64)
        if len(lengths) and int(lengths.max()) >= 1 << 32:
            raise _NotMappable("a record of 4 GiB or more")
        first = usable + _CHUNK_HEADER + 2 + sizes_size
        self.starts = _physical(first)
        ends = _physical(first + np.maximum(lengths - 1, 0)) + 1
        if len(ends) and int(ends.max()) > self._size:
            raise _NotMappable("a record past the end of the file")
        self.lengths = lengths.astype(np.uint32)
        pieced = np.flatnonzero((ends - self.starts != lengths) & (lengths > 0))
        self._pieced_at = dict(zip(pieced.tolist(), first[pieced].tolist(), strict=True))
        self._windows: dict[int, np.ndarray[Any, Any]] = {}

    def __len__(self) -> int:
        return len(self.starts)

    def read(self, rows: Sequence[int] | np.ndarray[Any, Any]) -> list[bytes]:
        """The records at `rows` (positions in this shard, in range), in order."""
        self._check_size()
        index = np.asarray(rows, np.int64)
        starts = self.starts[index]
        ends = (starts + self.lengths[index]).tolist()
        mapping = self._map
        records = [mapping[a:b] for a, b in zip(starts.tolist(), ends, strict=True)]
        if self._pieced_at:  # records stored in two pieces around a block header
            for i, row in enumerate(index.tolist()):
                if row in self._pieced_at:
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
        return _join_pieces(self._map, self._pieced_at[row], int(self.lengths[row]))

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
    cannot be opened. With `known` (another process's `MappedShard.index()`) and the same
    file, unchanged, nothing is parsed or hashed again."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as error:
        raise shard_error(path, error.strerror or str(error)) from None
    try:
        identity = _identity(fd)
        size = identity[2]
        if size < _BLOCK:
            raise _NotMappable("too short")
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    except (_NotMappable, OSError, ValueError):
        os.close(fd)
        return None
    if known is not None and known.identity == identity and len(known.starts) == expected_records:
        return MappedShard._from_index(path, fd, mapping, known)
    try:
        file = _File(memoryview(mapping))
        try:
            chunks = _chunk_offsets(file)
        finally:
            file.view.release()
        if len(chunks) != expected_records:
            raise _NotMappable("another number of records")
        shard = MappedShard(path, fd, mapping, chunks)
        if hashlib.sha256(mapping).hexdigest() != sha256:
            shard.close()
            return None
        return shard
    except (_NotMappable, ValueError, IndexError, ShardError):
        with contextlib.suppress(BufferError):
            mapping.close()
        os.close(fd)
        return None

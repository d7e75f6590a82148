"""Writing a shard of small records with NumPy: the file array_record's writer gives, byte for byte.

array_record's Python binding takes one record per call and encodes a chunk every
``group_size`` records; for a table of short rows that was most of a prepare (about 0.45 us a
record and 1.8 us a chunk here, measured). `ShardWriter` writes the same file as
``ArrayRecordWriter(path, "group_size:G,uncompressed,max_parallelism:1")`` (the options
`catalog.storage.shards.writer_options` gives small records) from whole batches of records:
the chunks of a batch are laid out by a few NumPy operations, and each chunk costs a copy of its
records and two HighwayHash calls (`catalog.storage.chunk_hash`). The file's size and sha256
are taken as it is written (`ShardWriter.digest`): a prepare does not read its shards again to
hash them.

The layout (Riegeli's ``doc/riegeli_records_file_format.md``, array_record's
``cpp/array_record_writer.cc``; `catalog.read.shard_layout` reads it):

- a 24-byte block header at every 64 KiB (the HighwayHash of the next 16 bytes; the distance
  back to the beginning of the chunk the boundary falls in, and on to its end); a chunk may
  begin at a boundary, and counts as beginning there;
- a chunk: a 40-byte header (the hash of the next 32 bytes; ``data_size``, the hash of the data,
  the chunk type with ``num_records`` in its upper 56 bits, ``decoded_data_size``), then its
  data, with block headers in between wherever boundaries fall;
- the file: a signature chunk, one simple chunk per ``group_size`` records (data: compression
  0, the varint size of the record sizes, one varint size per record, the records), a footer
  chunk (records: a ``RiegeliFooterMetadata``, then ``ArrayRecordFooter {chunk_offset,
  decoded_data_size, num_records}`` per chunk), padding to a block boundary, a postscript chunk
  (three ``RiegeliPostscript {footer_offset, magic}``), padding to a block boundary. Padding
  is a chunk of zeros, one block longer when less than a chunk header is left in the block.

`tests/storage/test_shard_writer.py` holds the bytes to array_record's for record sizes
around every varint and block boundary.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from array_record.python.array_record_module import ArrayRecordWriter

from catalog._util.hashing import Digest, file_stamp
from catalog._util.varints import encode_varint, put_varints, varint_sizes
from catalog.storage.chunk_hash import hash_in

__all__ = ["RecordWriter", "ShardWriter", "open_shard_writer", "written_group"]

BLOCK = 1 << 16
_BLOCK_HEADER = 24
_USABLE = BLOCK - _BLOCK_HEADER
_CHUNK_HEADER = 40
_SIGNATURE, _SIMPLE, _PADDING = ord("s"), ord("r"), ord("p")
_MAGIC = 0x71930E704FDAE05E  # RiegeliPostscript.magic
_VERSION = 1  # ArrayRecordMetadata.version
_BUFFERED = 4096  # records `write` holds before laying them out as a batch
_I64 = np.int64


def written_group(options: str) -> int | None:
    """The ``group_size`` of writer `options` that `ShardWriter` writes (exactly
    ``group_size``, ``uncompressed`` and ``max_parallelism:1``, group size above 1), or None:
    write those through array_record's writer."""
    names = {}
    for option in options.split(","):
        name, _, value = option.strip().partition(":")
        names[name] = value
    if set(names) != {"group_size", "uncompressed", "max_parallelism"}:
        return None
    group, parallelism = names["group_size"], names["max_parallelism"]
    if names["uncompressed"] or parallelism != "1" or not group.isdigit() or int(group) < 2:
        return None
    return int(group)


class RecordWriter(Protocol):
    """What writes a shard's records: `ShardWriter`, or array_record's writer for other
    options (`open_shard_writer`)."""

    def write(self, record: bytes) -> None: ...

    def write_packed(self, data: Any, starts: np.ndarray[Any, Any]) -> None: ...

    def close(self) -> None: ...

    @property
    def digest(self) -> Digest | None:
        """The written file's size and sha256 once closed, taken as it was written; None
        where the writer does not know them (hash the file)."""


def open_shard_writer(path: str | Path, options: str) -> RecordWriter:
    """A writer of a shard at `path` with writer `options`: `ShardWriter` for the options it
    writes (`written_group`), array_record's own writer for the others (one record per chunk:
    records too large to share one, where a call per record costs little beside the record).
    RuntimeError, ValueError or OSError when the file cannot be created."""
    if written_group(options) is not None:
        return ShardWriter(path, options)
    return _ArrayRecordShard(ArrayRecordWriter(str(path), options))


class _ArrayRecordShard:
    """array_record's writer as a `RecordWriter`."""

    def __init__(self, writer: Any) -> None:
        self.write = writer.write
        self.close = writer.close

    @property
    def digest(self) -> Digest | None:
        return None  # array_record writes the file itself

    def write_packed(self, data: Any, starts: np.ndarray[Any, Any]) -> None:
        view, bounds = memoryview(data).cast("B"), np.asarray(starts).tolist()
        deque(map(self.write, (bytes(view[a:b]) for a, b in pairwise(bounds))), maxlen=0)


class ShardWriter:
    """A shard written as array_record writes it with `options` (see the module docstring).

    Args:
        path: the file to write (created or truncated).
        options: writer options `written_group` accepts.
        fixed_footer: write every entry of the footer with the same width (each field's
            varint as wide as the widest of that field: a valid varint that protobuf, and so
            array_record and Grain, read as the shorter one), so that a reader finds chunk
            ``k``'s entry at a fixed place without decoding the others
            (`catalog.read.fixed_footer`). False: array_record's bytes to the last byte.

    Raises:
        ValueError: options it does not write.
        OSError: the file cannot be written.
    """

    def __init__(self, path: str | Path, options: str, *, fixed_footer: bool = True) -> None:
        group = written_group(options)
        if group is None:
            raise ValueError(f"ShardWriter does not write options {options!r}")
        self._group, self._fixed = group, fixed_footer
        self._options = (
            f"group_size:{group},transpose:false,pad_to_block_boundary:false,uncompressed,"
            "max_parallelism:1"
        )
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._hashed: Digest | None = Digest()  # of every byte written, in order
        self._digest: Digest | None = None  # the whole file's, once closed
        self._pos = 0  # the file's length: where the next chunk begins
        self._offsets: list[np.ndarray[Any, Any]] = []  # each chunk's beginning
        self._decoded: list[np.ndarray[Any, Any]] = []  # its records' bytes
        self._counts: list[np.ndarray[Any, Any]] = []  # its records
        self._buffered: list[bytes] = []
        self._carry = np.zeros(0, np.uint8)  # records not yet in a chunk, and their sizes
        self._carry_sizes = np.zeros(0, _I64)
        self._closed = False
        self._emit(*_chunk(np.zeros(0, np.uint8), _SIGNATURE, 0, 0))

    def write(self, record: bytes) -> None:
        """Append one record."""
        self._buffered.append(record)
        if len(self._buffered) >= _BUFFERED:
            self._flush_buffered()

    def write_many(self, records: Sequence[bytes]) -> None:
        """Append `records`, in order."""
        self._flush_buffered()
        sizes = np.fromiter(map(len, records), _I64, len(records))
        self._add(np.frombuffer(b"".join(records), np.uint8), sizes)

    def write_packed(self, data: Any, starts: np.ndarray[Any, Any]) -> None:
        """Append the records ``data[starts[i]:starts[i+1]]`` (`data`: bytes or a uint8 array;
        `starts`: one more entry than there are records), in order, without a ``bytes``
        object per record."""
        self._flush_buffered()
        starts = np.asarray(starts, _I64)
        array = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
        self._add(array[starts[0] : starts[-1]], np.diff(starts))

    def close(self) -> None:
        """Write the last chunk, the footer and the postscript, and close the file."""
        if self._closed:
            return
        self._closed = True
        try:
            self._flush_buffered()
            if len(self._carry_sizes):
                self._chunks(self._carry, self._carry_sizes, np.array([len(self._carry_sizes)]))
            offsets, decoded, counts = (
                np.concatenate([np.zeros(0, _I64), *pieces]).astype(_I64)
                for pieces in (self._offsets, self._decoded, self._counts)
            )
            footer_offset = self._pos
            data, sizes = _footer(offsets, decoded, counts, self._options, self._fixed)
            self._emit(*_encode(data, sizes, np.array([len(sizes)])))
            self._pad()
            postscript = _tag(1, footer_offset) + _tag(2, _MAGIC)
            data = np.frombuffer(postscript * 3, np.uint8)
            self._emit(*_encode(data, np.full(3, len(postscript)), np.array([3])))
            self._pad()
            self._file.flush()
            self._seal(os.fstat(self._file.fileno()))
        finally:
            self._file.close()

    @property
    def digest(self) -> Digest | None:
        """The file's size and sha256 as written (``stamp``: the file's `file_stamp` when the
        last byte was written), once `close` has written it whole; None before, or after a
        failed write."""
        return self._digest

    def _seal(self, stat: os.stat_result) -> None:
        hashed, self._hashed = self._hashed, None
        if hashed is not None and hashed.size == self._pos == stat.st_size:
            hashed.stamp = file_stamp(stat)
            self._digest = hashed

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _flush_buffered(self) -> None:
        if self._buffered:
            records, self._buffered = self._buffered, []
            self.write_many(records)

    def _add(self, data: np.ndarray[Any, Any], sizes: np.ndarray[Any, Any]) -> None:
        if len(self._carry_sizes):
            data = np.concatenate([self._carry, data])
            sizes = np.concatenate([self._carry_sizes, sizes])
        group = self._group
        chunks = len(sizes) // group
        whole = int(sizes[: chunks * group].sum())
        if chunks:
            self._chunks(data[:whole], sizes[: chunks * group], np.full(chunks, group))
        self._carry, self._carry_sizes = data[whole:].copy(), sizes[chunks * group :].copy()

    def _chunks(
        self,
        data: np.ndarray[Any, Any],
        sizes: np.ndarray[Any, Any],
        counts: np.ndarray[Any, Any],
    ) -> None:
        out, starts, decoded = _encode(data, sizes, counts)
        self._offsets.append(self._emit(out, starts, counts))
        self._decoded.append(decoded)
        self._counts.append(counts)

    def _emit(
        self, out: np.ndarray[Any, Any], starts: np.ndarray[Any, Any], counts: Any
    ) -> np.ndarray[Any, Any]:
        """Write the chunks laid out in `out` (chunk i: ``out[starts[i]:starts[i+1]]``) at the
        end of the file, with the block headers in between; their beginnings in the file."""
        first = _usable(self._pos)
        begins: np.ndarray[Any, Any] = _physical(first + starts[:-1])
        ends = _physical(first + starts[1:])
        if np.any(ends < begins + counts):  # pragma: no cover - a simple chunk holds a size
            raise ValueError("a chunk shorter than its records' count")  # byte per record
        view, write = out.data, self._write
        pos, cursor, end = self._pos, 0, int(ends[-1])
        boundary = -(-pos // BLOCK) * BLOCK
        while boundary < end:
            write(view[cursor : cursor + boundary - pos])
            cursor += boundary - pos
            i = int(np.searchsorted(begins, boundary, "right")) - 1
            write(_block_header(boundary - int(begins[i]), int(ends[i]) - boundary))
            pos, boundary = boundary + _BLOCK_HEADER, boundary + BLOCK
        write(view[cursor:])
        self._pos = end
        return begins

    def _write(self, data: Any) -> None:
        try:
            self._file.write(data)
        except BaseException:
            self._hashed = None  # what is in the file is no longer known
            raise
        if self._hashed is not None:
            self._hashed.update(data)

    def _pad(self) -> None:
        """A padding chunk up to the next block boundary (riegeli's ``PadToBlockBoundary``)."""
        length = -self._pos % BLOCK
        if length == 0:
            return
        if length < _CHUNK_HEADER:
            length += BLOCK
        size = int(_usable(self._pos + length) - _usable(self._pos)) - _CHUNK_HEADER
        self._emit(*_chunk(np.zeros(size, np.uint8), _PADDING, 0, 0))


def _usable(position: Any) -> Any:
    """The usable-byte coordinate of file `position` (block headers left out)."""
    return (position // BLOCK) * _USABLE + np.maximum(position % BLOCK - _BLOCK_HEADER, 0)


def _physical(coordinate: Any) -> Any:
    """The file position of usable-byte `coordinate`; a block's first usable byte is its
    boundary (where a chunk beginning there begins)."""
    within = coordinate % _USABLE
    return (coordinate // _USABLE) * BLOCK + np.where(within == 0, 0, _BLOCK_HEADER + within)


def _block_header(previous: int, following: int) -> bytes:
    distances = struct.pack("<2Q", previous, following)
    return hash_in(bytearray(distances), [0], [16]).astype("<u8").tobytes() + distances


def _chunk(
    data: np.ndarray[Any, Any], chunk_type: int, records: int, decoded: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """One chunk of `data` as it is (a signature's or padding's): (bytes, bounds, counts)."""
    out = np.zeros(_CHUNK_HEADER + len(data), np.uint8)
    out[_CHUNK_HEADER:] = data
    data_hash = int(hash_in(out, [_CHUNK_HEADER], [len(data)])[0])
    fields = (len(data), data_hash, chunk_type | records << 8, decoded)
    out[8:_CHUNK_HEADER] = np.frombuffer(struct.pack("<4Q", *fields), np.uint8)
    out[:8] = hash_in(out, [8], [32]).astype("<u8").view(np.uint8)
    return out, np.array([0, len(out)], _I64), np.array([records])


def _encode(
    data: np.ndarray[Any, Any], sizes: np.ndarray[Any, Any], counts: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Simple uncompressed chunks of the records ``data`` holds one after the other (`sizes`
    bytes each), `counts` records a chunk: (their bytes, where each begins and the end, the
    records' bytes of each)."""
    sizes, counts = np.asarray(sizes, _I64), np.asarray(counts, _I64)
    k = len(counts)
    bounds = np.zeros(k + 1, _I64)
    np.cumsum(counts, out=bounds[1:])
    size_bytes = varint_sizes(sizes)
    before = np.zeros(len(sizes) + 1, _I64)  # varint bytes of the records before each
    np.cumsum(size_bytes, out=before[1:])
    offset = np.zeros(len(sizes) + 1, _I64)  # its records' bytes before each
    np.cumsum(sizes, out=offset[1:])
    listed = before[bounds[1:]] - before[bounds[:-1]]  # bytes of each chunk's sizes
    decoded = offset[bounds[1:]] - offset[bounds[:-1]]
    listed_bytes = varint_sizes(listed)
    data_size = 1 + listed_bytes + listed + decoded
    starts = np.zeros(k + 1, _I64)
    np.cumsum(_CHUNK_HEADER + data_size, out=starts[1:])
    out = np.zeros(int(starts[-1]), np.uint8)  # compression byte 0 at each chunk's data
    head = starts[:-1]
    put_varints(out, head + _CHUNK_HEADER + 1, listed, listed_bytes)
    first_size = head + _CHUNK_HEADER + 1 + listed_bytes  # where each chunk's sizes begin
    chunk = np.repeat(np.arange(k), counts)
    put_varints(out, (first_size - before[bounds[:-1]])[chunk] + before[:-1], sizes, size_bytes)
    view, source = out.data, data.data
    into = (first_size + listed).tolist()
    for at, a, b in zip(
        into, offset[bounds[:-1]].tolist(), offset[bounds[1:]].tolist(), strict=True
    ):
        view[at : at + b - a] = source[a:b]
    fields = np.empty((k, 4), "<u8")
    fields[:, 0] = data_size
    fields[:, 1] = hash_in(out, head + _CHUNK_HEADER, data_size)
    fields[:, 2] = _SIMPLE | (counts.astype(np.uint64) << np.uint64(8))
    fields[:, 3] = decoded
    out[(head[:, None] + np.arange(8, _CHUNK_HEADER))] = fields.view(np.uint8).reshape(k, 32)
    header_hashes = hash_in(out, head + 8, np.full(k, 32)).astype("<u8")
    out[(head[:, None] + np.arange(8))] = header_hashes.view(np.uint8).reshape(k, 8)
    return out, starts, decoded


def _tag(field: int, value: int) -> bytes:
    """A protobuf varint field."""
    return encode_varint(field << 3) + encode_varint(value)


def _footer(
    offsets: np.ndarray[Any, Any],
    decoded: np.ndarray[Any, Any],
    counts: np.ndarray[Any, Any],
    options: str,
    fixed: bool,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The footer chunk's records: the ``RiegeliFooterMetadata``, then an ``ArrayRecordFooter``
    per chunk (fields 1-3, varints; `fixed`: every entry of the same width), as (their bytes
    one after the other, their sizes)."""
    text = options.encode()
    metadata = (
        _tag(1, _VERSION) + _tag(2, len(offsets)) + _tag(3, int(counts.sum()))
        + encode_varint(4 << 3 | 2) + encode_varint(len(text)) + text
    )  # fmt: skip
    metadata = encode_varint(1 << 3 | 2) + encode_varint(len(metadata)) + metadata
    fields = [offsets, decoded, counts]
    widths = [varint_sizes(values) for values in fields]
    if fixed:  # each field as wide as its widest: overlong varints, as protobuf allows
        widths = [np.full(len(width), int(width.max(initial=1))) for width in widths]
    sizes = 3 + widths[0] + widths[1] + widths[2]
    starts = np.zeros(len(sizes) + 1, _I64)
    np.cumsum(sizes, out=starts[1:])
    out = np.zeros(len(metadata) + int(starts[-1]), np.uint8)
    out[: len(metadata)] = np.frombuffer(metadata, np.uint8)
    at = starts[:-1] + len(metadata)
    for number, values, width in zip((1, 2, 3), fields, widths, strict=True):
        out[at] = number << 3  # the field's tag (a varint of one byte)
        put_varints(out, at + 1, values, width)
        at = at + 1 + width
    return out, np.concatenate([[len(metadata)], sizes]).astype(_I64)

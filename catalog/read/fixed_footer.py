"""The footer of a shard catalog wrote, read in constant time: chunk k's entry at a fixed place.

catalog's writer (`catalog.storage.shard_writer`) writes every ``ArrayRecordFooter`` entry of
a shard with the same width (each field's varint as wide as that field's widest), so entry k
begins ``k * width`` bytes after the footer's metadata. `FixedEntries` opens such a footer
from its header, its one byte of size per entry and its metadata (no entry decoded, nothing
hashed but the 32 bytes of the footer's header: about the cost of a few entries where
`catalog.read.shard_layout.FooterEntries` decodes and hashes the whole footer), then `rows`
decodes the entries of the chunks a batch touches (with NumPy), or `bounds` one chunk's entry
and the next one's offset (in Python ints: its varints unpacked a few bit operations at once).

What the footer's hash guards is checked chunk by chunk instead, so that no chunk is taken
for another: each entry's fields and their tags must be where the width puts them, its
count the group's (the last chunk: the rest); and the chunk its offset points to must end
where the next entry's chunk begins (the last one where the footer begins), the end computed
from that chunk's header (its ``data_size``), whose other fields `catalog.read.mapped_shard.
locate` checks against the entry. A wrong offset that lands on another chunk's header would
have to point at a chunk of the same size and records that ends where the next chunk begins:
the chunk itself. Anything else is NotLaidOut: the caller reads the shard another way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from catalog._util.varints import read_varint
from catalog.read.shard_layout import (
    BLOCK,
    CHUNK_HEADER,
    SIMPLE,
    NotLaidOut,
    ShardFile,
    chunk_end_at,
    chunk_ends,
    footer_offset,
    join_pieces,
    physical,
    physical_at,
    usable,
    usable_at,
)

__all__ = ["FixedEntries"]

_U64 = np.dtype("<u8")
_TAGS = (0x08, 0x10, 0x18)  # ArrayRecordFooter's fields 1-3, varints
#: At most this many chunks' entries are read in Python ints, more with NumPy.
_FEW = 48


class FixedEntries:
    """The footer of a shard whose entries are all of one width and whose chunks hold `group`
    records each (the last one the rest), opened in constant time (see the module
    docstring). NotLaidOut for any other file.

    Args:
        array: the file's bytes (a uint8 array over its memory map).
        group: the records of every chunk but the last.
        records: the shard's records.
        hash64: `catalog.storage.chunk_hash.chunk_hash64`'s: the footer header checked.
    """

    def __init__(
        self,
        array: np.ndarray[Any, Any],
        group: int,
        records: int,
        hash64: Callable[[bytes], int],
        source: Any = None,
    ) -> None:
        if group < 1 or records < 1:
            raise NotLaidOut("no records")
        view = self._view = array.data if source is None else source
        self._array, self.group, self._records = array, group, records
        self._chunks = chunks = -(-records // group)
        try:
            at = self._footer = footer_offset(ShardFile(view))
            start = int(usable(at))
            header = join_pieces(view, start, CHUNK_HEADER)
            if hash64(header[8:]) != int.from_bytes(header[:8], "little"):
                raise NotLaidOut("a footer header that does not match its hash")
            data_size = int.from_bytes(header[8:16], "little")
            if header[24] != SIMPLE or int.from_bytes(header[25:32], "little") != chunks + 1:
                raise NotLaidOut("a footer of another shape")
            data = start + CHUNK_HEADER
            head = join_pieces(view, data, 11)
            sizes_size, sizes_at = read_varint(head, 1)
            if head[0] != 0 or sizes_size != chunks + 1:
                raise NotLaidOut("a footer of another shape")
            sizes = join_pieces(view, data + sizes_at, sizes_size)
            meta, width = sizes[0], sizes[1]
            if max(meta, width) >= 0x80 or sizes.count(sizes[1:2], 1) != chunks:
                raise NotLaidOut("footer entries of different widths")
            values = data + sizes_at + sizes_size
            if data_size != sizes_at + sizes_size + meta + chunks * width:
                raise NotLaidOut("a footer of another shape")
            self._check_metadata(join_pieces(view, values, meta))
            self._first = values + meta  # usable-byte coordinate of the first entry
            self._width = width
            self._fields = self._layout(join_pieces(view, self._first, width))
        except (IndexError, ValueError) as error:
            raise NotLaidOut(f"a footer of another shape ({error})") from None
        self._checks = (self._shape(2), self._shape(1))  # (mask, value): two entries, one
        last = records - group * (chunks - 1)
        self._counts = (_spread(group, self._fields[2][1]), _spread(last, self._fields[2][1]))
        self._slots = [
            (8 * at, _spread((1 << 7 * size) - 1, size), size) for at, size in self._fields
        ]

    def __len__(self) -> int:
        """The number of data chunks."""
        return self._chunks

    def _check_metadata(self, metadata: bytes) -> None:
        """The metadata record: ``RiegeliFooterMetadata {array_record_metadata {version,
        num_chunks, num_records, ...}}``, its counts this shard's."""
        if metadata[:1] != b"\x0a":
            raise NotLaidOut("no ArrayRecord metadata")
        _, at = read_varint(metadata, 1)
        found: dict[int, int] = {}
        while at < len(metadata) and len(found) < 3:
            tag, at = read_varint(metadata, at)
            if tag & 7 != 0:
                break
            found[tag >> 3], at = read_varint(metadata, at)
        if found.get(2) != self._chunks or found.get(3) != self._records:
            raise NotLaidOut("metadata of another shard")

    def _layout(self, entry: bytes) -> list[tuple[int, int]]:
        """(where, how many bytes) of each field's varint in an entry, from the first one."""
        fields, at = [], 0
        for tag in _TAGS:
            if entry[at] != tag:
                raise NotLaidOut("an entry of another shape")
            _, end = read_varint(entry, at + 1)
            fields.append((at + 1, end - at - 1))
            at = end
        if at != self._width:
            raise NotLaidOut("an entry of another shape")
        return fields

    def _shape(self, entries: int) -> tuple[int, int]:
        """(mask, value): the bits of `entries` consecutive entries (read as one little-endian
        int) that are their tags and their varints' continuation bits, and what they must be."""
        mask = value = 0
        for entry in range(entries):
            base = entry * self._width
            for (at, size), tag in zip(self._fields, _TAGS, strict=True):
                mask |= 0xFF << 8 * (base + at - 1)
                value |= tag << 8 * (base + at - 1)
                for i in range(size):
                    mask |= 0x80 << 8 * (base + at + i)
                    value |= (0x80 if i < size - 1 else 0) << 8 * (base + at + i)
        return mask, value

    def _decode(self, chunks: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The ``(chunk_offset, decoded_data_size, num_records)`` entries of `chunks`, every
        tag and continuation bit where the width puts them."""
        width = self._width
        coordinates = self._first + chunks[:, None] * width + np.arange(width)
        positions = physical(coordinates)
        if positions.size and int(positions.max()) >= len(self._array):
            raise NotLaidOut("an entry past the end of the file")
        raw = self._array[positions].astype(np.uint64)
        rows = np.empty((len(chunks), 3), np.int64)
        for column, ((at, size), tag) in enumerate(zip(self._fields, _TAGS, strict=True)):
            part = raw[:, at : at + size]
            more = part >= 0x80
            if (raw[:, at - 1] != tag).any() or more[:, -1].any() or not more[:, :-1].all():
                raise NotLaidOut("an entry of another shape")
            shifts = np.arange(size, dtype=np.uint64) * np.uint64(7)
            rows[:, column] = ((part & np.uint64(0x7F)) << shifts).sum(axis=1).astype(np.int64)
        return rows

    def rows(self, chunks: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """The ``(chunk_offset, decoded_data_size, num_records)`` rows (int64) of `chunks`,
        each checked as the module docstring says."""
        chunks = np.asarray(chunks, np.int64)
        if len(chunks) and (int(chunks.min()) < 0 or int(chunks.max()) >= self._chunks):
            raise NotLaidOut("no such chunk")
        if len(chunks) <= _FEW:
            return np.array([self._row(k) for k in chunks.tolist()], np.int64).reshape(-1, 3)
        following = chunks + 1
        last = following == self._chunks
        rows = self._decode(np.concatenate([chunks, following[~last]]))
        found, after = rows[: len(chunks)], rows[len(chunks) :]
        counts = np.where(chunks == self._chunks - 1, self._records - self.group * chunks, 0)
        counts[counts == 0] = self.group
        if (found[:, 2] != counts).any():
            raise NotLaidOut("chunks of another number of records")
        ends = np.full(len(chunks), self._footer, np.int64)
        ends[~last] = after[:, 0]
        begins = usable(found[:, 0])
        header = physical(begins[:, None] + np.arange(8, 16))
        if header.size and int(header.max()) >= len(self._array):
            raise NotLaidOut("a chunk past the end of the file")
        data_size = self._array[header].copy().view(_U64)[:, 0].astype(np.int64)
        if (chunk_ends(begins + CHUNK_HEADER + data_size) != ends).any():
            raise NotLaidOut("a chunk that does not end where the next one begins")
        return found

    def bounds(self, chunk: int) -> tuple[int, int, int, int]:
        """``(chunk_offset, decoded_data_size, num_records, end)`` of `chunk`: its entry's
        fields, and where its chunk must end (the next entry's offset; the footer's for the
        last chunk). Both entries' tags and continuation bits and this one's count are
        checked, from one read and one int (cheaper than NumPy's calls for a few chunks);
        whoever reads the chunk checks that its header ends it at `end` (`_row` does)."""
        if not 0 <= chunk < self._chunks:
            raise NotLaidOut("no such chunk")
        last = chunk == self._chunks - 1
        width = self._width
        at, size = self._first + chunk * width, width if last else 2 * width
        position = physical_at(at)
        if position % BLOCK + size <= BLOCK:  # the most: in one block
            entry = int.from_bytes(self._view[position : position + size], "little")
        else:
            entry = int.from_bytes(join_pieces(self._view, at, size), "little")
        mask, value = self._checks[last]
        if entry & mask != value:
            raise NotLaidOut("an entry of another shape")
        (at, bits, size), (decoded_at, decoded_bits, decoded_size), counted = self._slots
        if (entry >> counted[0]) & counted[1] != self._counts[last]:
            raise NotLaidOut("chunks of another number of records")
        offset = _septets((entry >> at) & bits, size)
        decoded = _septets((entry >> decoded_at) & decoded_bits, decoded_size)
        end = self._footer if last else _septets((entry >> at + 8 * width) & bits, size)
        return offset, decoded, self.group if not last else self._records - self.group * chunk, end

    def spans(self, chunks: list[int]) -> list[tuple[int, int, int, int]]:
        """`bounds` of each of `chunks`."""
        return [self.bounds(chunk) for chunk in chunks]

    def _row(self, chunk: int) -> tuple[int, int, int]:
        """`rows` of one chunk, in Python ints: `bounds`, and its chunk's header read to
        check where the chunk ends."""
        offset, decoded, count, end = self.bounds(chunk)
        begin = usable_at(offset)
        data_size = int.from_bytes(join_pieces(self._view, begin + 8, 8), "little")
        if chunk_end_at(begin + CHUNK_HEADER + data_size) != end:
            raise NotLaidOut("a chunk that does not end where the next one begins")
        return offset, decoded, count


def _spread(value: int, size: int) -> int:
    """`value` as the `size` bytes of its varint with the continuation bits cleared (as a
    little-endian int); -1 (which no field equals) when it does not fit."""
    if value >> 7 * size:
        return -1
    return sum(((value >> 7 * i) & 0x7F) << 8 * i for i in range(size))


_LOW_BYTES = int.from_bytes(b"\xff\x00" * 8, "little")
_HIGH_BYTES = _LOW_BYTES << 8
_LOW_PAIRS = int.from_bytes(b"\xff\xff\x00\x00" * 4, "little")
_HIGH_PAIRS = _LOW_PAIRS << 16
_LOW_QUADS = int.from_bytes(b"\xff" * 4 + b"\x00" * 4, "little") * (1 + (1 << 64))
_HIGH_QUADS = _LOW_QUADS << 32
_LOW_64 = (1 << 64) - 1


def _septets(bits: int, size: int) -> int:
    """The value of a varint of `size` bytes (at most 16) given as a little-endian int with
    its continuation bits cleared: its 7-bit groups packed together, in pairs, then fours,
    then eights (only the steps `size` needs)."""
    bits = (bits & _LOW_BYTES) | ((bits & _HIGH_BYTES) >> 1)
    if size > 2:
        bits = (bits & _LOW_PAIRS) | ((bits & _HIGH_PAIRS) >> 2)
        if size > 4:
            bits = (bits & _LOW_QUADS) | ((bits & _HIGH_QUADS) >> 4)
            if size > 8:
                bits = (bits & _LOW_64) | ((bits >> 64) << 56)
    return bits

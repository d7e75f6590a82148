"""Protobuf varints: one at a time (`read_varint`), or whole runs with NumPy (`decode_varints`,
no loop per value).

A varint stores 7 bits per byte, least significant group first; every byte but the last of a
value has its high bit set. Used for tf.train.Example's packed Int64Lists and for the record
index array_record keeps at the end of a shard; one at a time for protobuf field tags and
lengths (tf.train.Example, array_record's chunk headers).

>>> read_varint(bytes([0x96, 0x01, 0x7F]), 0)
(150, 2)

>>> decode_varints(np.frombuffer(bytes([1, 0x96, 0x01, 0x7F]), np.uint8)).tolist()
[1, 150, 127]
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "decode_varints",
    "encode_varint",
    "encode_varints",
    "put_varints",
    "read_varint",
    "varint_sizes",
]


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """The varint starting at `pos` in `buf`, and the position after it. IndexError when `buf`
    ends inside it, ValueError when it is longer than 10 bytes."""
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    result, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = buf[pos]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos + 1
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 10 bytes")


def decode_varints(raw: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Every varint in the uint8 array `raw`, as uint64; ValueError when `raw` does not hold
    whole varints (it ends inside one, or one is longer than 10 bytes)."""
    if not raw.size:
        return np.zeros(0, np.uint64)
    last = raw < 0x80
    if not last[-1]:
        raise ValueError("the bytes end inside a varint")
    if last.all():
        return raw.astype(np.uint64)
    ends = np.flatnonzero(last)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if (ends - starts).max() > 9:
        raise ValueError("a varint longer than 10 bytes")
    position = np.arange(len(raw)) - np.repeat(starts, ends - starts + 1)
    parts = (raw & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    result: np.ndarray[Any, Any] = np.bitwise_or.reduceat(parts, starts)
    return result


def encode_varint(value: int) -> bytes:
    """`value` as a varint (a negative int as its 64-bit two's complement, as protobuf's int64).

    >>> encode_varint(150).hex(), encode_varint(-1).hex()
    ('9601', 'ffffffffffffffffff01')
    """
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_sizes(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """How many bytes each of the integer array `values` takes as a varint (negative ones as
    their 64-bit two's complement)."""
    unsigned = values.astype(np.int64, copy=False).view(np.uint64)
    sizes = np.ones(len(unsigned), np.int64)
    if not len(unsigned) or int(unsigned.max()) < 0x80:  # the most (sizes of short records)
        return sizes
    for shift in range(7, 64, 7):
        sizes += unsigned >= np.uint64(1 << shift)
    return sizes


def put_varints(
    out: np.ndarray[Any, Any],
    at: np.ndarray[Any, Any],
    values: np.ndarray[Any, Any],
    sizes: np.ndarray[Any, Any],
) -> None:
    """Write each of `values` as a varint of `sizes` bytes (`varint_sizes`) into the uint8
    array `out` at the positions `at`, a few NumPy operations per byte of the longest."""
    unsigned = values.astype(np.int64, copy=False).view(np.uint64)
    widest = int(sizes.max()) if len(sizes) else 0
    if widest == 1:  # every value one byte: no masks
        out[at] = unsigned
        return
    for byte in range(widest):
        here = sizes > byte
        part = (unsigned[here] >> np.uint64(7 * byte)) & np.uint64(0x7F)
        more = np.where(sizes[here] > byte + 1, 0x80, 0).astype(np.uint64)
        out[at[here] + byte] = part | more


def encode_varints(values: np.ndarray[Any, Any]) -> bytes:
    """Every one of the integer array `values` as a varint, one after the other.

    >>> encode_varints(np.array([1, 150, 127])).hex()
    '0196017f'
    """
    sizes = varint_sizes(values)
    out = np.zeros(int(sizes.sum()), np.uint8)
    put_varints(out, np.cumsum(sizes) - sizes, values, sizes)
    return out.tobytes()

"""``tf.train.Example`` and ``SequenceExample`` in protobuf wire format, without TensorFlow.

An Example maps feature keys to one of three lists: ``Int64List`` (returned as an int64
array), ``FloatList`` (a float32 array) or ``BytesList`` (a list of bytes). A SequenceExample
adds ``feature_lists``: keys mapped to lists of such values, one per step.

This is a small hand-written decoder and encoder of exactly these messages (the wire format
is public and stable: feature.proto and example.proto in TensorFlow). Against protobuf's upb
backend with the same messages built from descriptors, it decodes the Examples catalog meets
faster once the values are turned into NumPy, which both need (see benchmarks/
bench_tfrecord.py), and it keeps protobuf out of catalog's dependencies. Packed int64 lists
are decoded with a few NumPy calls when long; unknown fields are skipped, as protobuf does.

>>> data = encode_example({"label": [3], "image": [b"\\x00\\x01"], "score": [0.5]})
>>> parsed = parse_example(data)
>>> parsed["label"], parsed["image"], parsed["score"]
(array([3]), [b'\\x00\\x01'], array([0.5], dtype=float32))
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

import numpy as np

from catalog._util.varints import decode_varints, encode_varint, encode_varints
from catalog._util.varints import read_varint as _varint
from catalog.errors import SourceFormatError

__all__ = [
    "Value",
    "encode_example",
    "encode_sequence_example",
    "parse_example",
    "parse_sequence_example",
]

#: A decoded feature: an int64 array, a float32 array, or a list of bytes. A Feature with
#: no list set at all decodes to an empty list.
Value: TypeAlias = "np.ndarray[Any, Any] | list[bytes]"

_INT64 = np.dtype(np.int64)
_FLOAT = np.dtype("<f4")
_UNTYPED = (
    "cannot tell which list to store it in: give ints, floats or bytes (an empty list needs "
    "a typed NumPy array, e.g. np.array([], np.int64) or np.array([], 'S') for bytes)"
)
_SHORT = 24  # packed varint lists up to this many bytes are decoded in Python


class _Truncated(Exception):
    pass


def _skip(buf: bytes, pos: int, wire: int) -> int:
    """The position after a field of wire type `wire` whose tag ended at `pos`."""
    if wire == 0:
        return _varint(buf, pos)[1]
    if wire == 1:
        return pos + 8
    if wire == 2:
        length, pos = _varint(buf, pos)
        return pos + length
    if wire == 5:
        return pos + 4
    raise _Truncated(f"wire type {wire} (groups are not used by Example)")


def _varints(buf: bytes, start: int, end: int) -> np.ndarray[Any, Any]:
    """A packed run of varints as int64 (two's complement, as protobuf stores int64)."""
    if end - start <= _SHORT:
        values = []
        pos = start
        while pos < end:
            value, pos = _varint(buf, pos)
            values.append(value - (1 << 64) if value >> 63 else value)
        if pos != end:
            raise _Truncated("a packed int64 list ends inside a value")
        return np.array(values, _INT64)
    try:
        return decode_varints(np.frombuffer(buf, np.uint8, end - start, start)).view(_INT64)
    except ValueError as error:
        raise _Truncated(f"a packed int64 list: {error}") from None


def _list(buf: bytes, pos: int, end: int, kind: int) -> Value:
    """The values of a BytesList (1), FloatList (2) or Int64List (3) in buf[pos:end]."""
    if kind == 1:
        if pos < end and buf[pos] == 0x0A:  # one item filling the list: the usual case
            length, start = _varint(buf, pos + 1)
            if start + length == end:
                return [buf[start:end]]
        out: list[bytes] = []
        while pos < end:
            tag, pos = _varint(buf, pos)
            if tag == 0x0A:
                length, pos = _varint(buf, pos)
                out.append(buf[pos : pos + length])
                pos += length
            else:
                pos = _skip(buf, pos, tag & 7)
        return out
    if kind == 3 and end - pos == 3 and buf[pos] == 0x0A and buf[pos + 1] == 1:
        value = buf[pos + 2]  # Int64List{value: [v]} with 0 <= v < 128
        if value < 0x80:
            return np.array((value,), _INT64)
    chunks: list[np.ndarray[Any, Any]] = []
    singles: list[float] = []
    while pos < end:
        tag, pos = _varint(buf, pos)
        if tag == 0x0A:  # packed
            length, pos = _varint(buf, pos)
            if pos + length > end:
                raise _Truncated("a packed list runs past its message")
            if kind == 2:
                if length % 4:
                    raise _Truncated("a packed float list of a length not divisible by 4")
                chunks.append(np.frombuffer(buf, _FLOAT, length // 4, pos))
            else:
                chunks.append(_varints(buf, pos, pos + length))
            pos += length
        elif kind == 2 and tag == 0x0D:  # one unpacked float
            singles.append(struct.unpack_from("<f", buf, pos)[0])
            pos += 4
        elif kind == 3 and tag == 0x08:  # one unpacked int64
            value, pos = _varint(buf, pos)
            singles.append(value - (1 << 64) if value >> 63 else value)
        else:
            pos = _skip(buf, pos, tag & 7)
    dtype = _FLOAT if kind == 2 else _INT64
    if singles:
        chunks.append(np.array(singles, dtype))
    if len(chunks) == 1:
        # _varints and np.array give fresh arrays; frombuffer views of `buf` are read-only
        chunk = chunks[0]
        return chunk if chunk.flags.writeable else chunk.astype(dtype, copy=True)
    return np.concatenate(chunks).astype(dtype) if chunks else np.empty(0, dtype)


def _feature(buf: bytes, pos: int, end: int) -> Value:
    """A Feature message in buf[pos:end]: its one list (the last one set, as protobuf)."""
    if pos + 1 < end and buf[pos] in (0x0A, 0x12, 0x1A):  # the usual layout: one list
        length = buf[pos + 1]
        if length < 0x80 and pos + 2 + length == end:
            return _list(buf, pos + 2, end, buf[pos] >> 3)
    value: Value = []
    while pos < end:
        tag, pos = _varint(buf, pos)
        kind = tag >> 3
        if tag & 7 == 2 and 1 <= kind <= 3:
            length, pos = _varint(buf, pos)
            value = _list(buf, pos, pos + length, kind)
            pos += length
        else:
            pos = _skip(buf, pos, tag & 7)
    return value


def _entry(buf: bytes, pos: int, end: int) -> tuple[str, int, int]:
    """A map entry in buf[pos:end]: its key and where its value message lies."""
    key, vstart, vend = "", end, end
    while pos < end:
        tag, pos = _varint(buf, pos)
        if tag == 0x0A:
            length, pos = _varint(buf, pos)
            key = buf[pos : pos + length].decode()
            pos += length
        elif tag == 0x12:
            length, pos = _varint(buf, pos)
            vstart, vend = pos, pos + length
            pos = vend
        else:
            pos = _skip(buf, pos, tag & 7)
    return key, vstart, vend


def _features(buf: bytes, pos: int, end: int) -> dict[str, Value]:
    """A Features message: map<string, Feature> (a later entry for a key wins)."""
    out: dict[str, Value] = {}
    while pos < end:
        if buf[pos] != 0x0A:  # not a map entry (field 1, length-delimited): skip it
            tag, pos = _varint(buf, pos)
            pos = _skip(buf, pos, tag & 7)
            continue
        length = buf[pos + 1]
        if length < 0x80:  # one-byte varints are read inline: the common case, much faster
            pos += 2
        else:
            length, pos = _varint(buf, pos + 1)
        stop = pos + length
        # The usual layout, read inline: key (short), then value (ending the entry).
        if length > 2 and buf[pos] == 0x0A and buf[pos + 1] < 0x80:
            key_end = pos + 2 + buf[pos + 1]
            if key_end < stop and buf[key_end] == 0x12:
                vlen = buf[key_end + 1]
                if vlen < 0x80:
                    vstart = key_end + 2
                else:
                    vlen, vstart = _varint(buf, key_end + 1)
                if vstart + vlen == stop:
                    out[buf[pos + 2 : key_end].decode()] = _feature(buf, vstart, stop)
                    pos = stop
                    continue
        key, vstart, vend = _entry(buf, pos, stop)
        out[key] = _feature(buf, vstart, vend)
        pos = stop
    if pos != end:
        raise _Truncated("a message runs past its end")
    return out


def _message(buf: bytes, field: int) -> list[tuple[int, int]]:
    """Where the (length-delimited) occurrences of `field` lie in a top-level message."""
    found, pos = [], 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        if tag == (field << 3 | 2):
            length, pos = _varint(buf, pos)
            found.append((pos, pos + length))
            pos += length
        else:
            pos = _skip(buf, pos, tag & 7)
    if pos != len(buf):
        raise _Truncated("a field runs past the end of the message")
    return found


def _error(what: str, error: Exception) -> SourceFormatError:
    reason = "it ends too early" if isinstance(error, IndexError) else str(error)
    return SourceFormatError(f"not a serialized {what}: {reason}")


def parse_example(data: bytes) -> dict[str, Value]:
    """Decode a serialized ``tf.train.Example`` into ``{key: value}``.

    Raises SourceFormatError when `data` is not a well-formed Example.
    """
    try:
        out: dict[str, Value] = {}
        for start, end in _message(data, 1):  # repeated occurrences merge, as protobuf
            out.update(_features(data, start, end))
        return out
    except (_Truncated, IndexError, UnicodeDecodeError, ValueError) as error:
        raise _error("tf.train.Example", error) from None


def parse_sequence_example(data: bytes) -> tuple[dict[str, Value], dict[str, list[Value]]]:
    """Decode a serialized ``tf.train.SequenceExample`` into ``(context, feature_lists)``:
    ``{key: value}`` and ``{key: [value per step]}``."""
    try:
        context: dict[str, Value] = {}
        for start, end in _message(data, 1):
            context.update(_features(data, start, end))
        lists: dict[str, list[Value]] = {}
        for start, end in _message(data, 2):
            pos = start
            while pos < end:
                tag, pos = _varint(data, pos)
                if tag != 0x0A:
                    pos = _skip(data, pos, tag & 7)
                    continue
                length, pos = _varint(data, pos)
                key, vstart, vend = _entry(data, pos, pos + length)
                pos += length
                steps = []
                while vstart < vend:
                    tag, vstart = _varint(data, vstart)
                    if tag == 0x0A:
                        flen, vstart = _varint(data, vstart)
                        steps.append(_feature(data, vstart, vstart + flen))
                        vstart += flen
                    else:
                        vstart = _skip(data, vstart, tag & 7)
                lists[key] = steps
        return context, lists
    except (_Truncated, IndexError, UnicodeDecodeError, ValueError) as error:
        raise _error("tf.train.SequenceExample", error) from None


# -- encoding -------------------------------------------------------------------------------
def _field(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + encode_varint(len(payload)) + payload


def _bytes_feature(items: Iterable[Any]) -> bytes:
    payload = b"".join(
        _field(0x0A, item.encode() if isinstance(item, str) else bytes(item)) for item in items
    )
    return _field(0x0A, payload)


def _feature_message(value: Any) -> bytes:
    """A Feature message holding `value`: ints -> Int64List, floats -> FloatList,
    bytes/str -> BytesList (a scalar is a list of one)."""
    if isinstance(value, (bytes, str)) or (
        isinstance(value, (list, tuple)) and value and isinstance(value[0], (bytes, str))
    ):
        return _bytes_feature([value] if isinstance(value, (bytes, str)) else value)
    if isinstance(value, (list, tuple)) and not value:
        raise TypeError(_UNTYPED)
    array = np.asarray(value)
    if array.dtype.kind in "SUO":  # typed bytes/str arrays, empty ones included
        return _bytes_feature(list(array.reshape(-1)))
    if array.dtype.kind in "iub":
        packed = encode_varints(array.reshape(-1))
        return _field(0x1A, _field(0x0A, packed) if packed else b"")
    if array.dtype.kind == "f":
        floats = array.reshape(-1).astype(_FLOAT).tobytes()
        return _field(0x12, _field(0x0A, floats) if floats else b"")
    raise TypeError(f"{value!r}: {_UNTYPED}")


def _features_message(features: Mapping[str, Any]) -> bytes:
    return b"".join(
        _field(0x0A, _field(0x0A, key.encode()) + _field(0x12, _feature_message(value)))
        for key, value in features.items()
    )


def encode_example(features: Mapping[str, Any]) -> bytes:
    """Serialize ``{key: value}`` as a ``tf.train.Example`` (keys in the given order)."""
    return _field(0x0A, _features_message(features))


def encode_sequence_example(
    context: Mapping[str, Any], feature_lists: Mapping[str, Iterable[Any]]
) -> bytes:
    """Serialize a ``tf.train.SequenceExample``: context features and, per key, a list of
    values, one per step."""
    lists = b"".join(
        _field(
            0x0A,
            _field(0x0A, key.encode())
            + _field(0x12, b"".join(_field(0x0A, _feature_message(v)) for v in steps)),
        )
        for key, steps in feature_lists.items()
    )
    return _field(0x0A, _features_message(context)) + _field(0x12, lists)

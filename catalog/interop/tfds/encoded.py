"""Tensors TFDS stores as bytes: ``Tensor(..., encoding="bytes")`` and ``encoding="zlib"``.

TFDS writes such a tensor as one item of a BytesList: its values' raw bytes in its dtype
(``ndarray.tobytes()``: row-major, in the machine's byte order, read here as little-endian,
that of the x86 and ARM machines TFDS runs on), compressed with zlib for ``"zlib"``. A tensor
with more than one unknown dimension is two keys, ``<key>/shape`` (an Int64List of its
dimensions) and ``<key>/value`` (the bytes). In a Sequence, each element is one item of the
BytesList; a Sequence of tensors with more than one unknown dimension is refused (TFDS itself
reads one back only when all its elements have one shape), as are nested Sequences of them.

The bytes were written by other code, so nothing in them is trusted: the number of bytes
must be exactly what the shape and dtype hold (a zlib stream is inflated no further than
that, or than `MAX_INFLATED` when an unknown dimension leaves the size open), a bool byte
must be 0 or 1, a stored shape must agree with the feature's known dimensions; anything else
is `catalog.interop.tfrecord.checked.Mismatch`, which the codec names with the feature, and
the data source with the file and the record.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features import Feature, Scalar, Tensor
from catalog.interop.tfrecord import checked
from catalog.interop.tfrecord.example import Value

__all__ = ["ENCODINGS", "is_dynamic", "sequence_getter", "sequence_putter", "tensor_getter",
           "tensor_putter"]  # fmt: skip

#: TFDS's ``tfds.features.Encoding`` values: "none" is the plain Int64List/FloatList layout.
ENCODINGS = ("none", "bytes", "zlib")

#: The most a zlib stream of an element whose size its shape does not fix (an unknown
#: dimension) may inflate to; one of a known size inflates to exactly that size, no further.
MAX_INFLATED = 1 << 30

Parsed = Mapping[str, Value]
Getter = Callable[[Parsed], Any]
Putter = Callable[[Any, dict[str, Any]], None]
_SHAPE, _VALUE = "shape", "value"


def is_dynamic(shape: tuple[int | None, ...]) -> bool:
    """Whether TFDS stores a tensor of `shape` with its shape beside it (two unknown dims+)."""
    return sum(d is None for d in shape) > 1


def _check_feature(feature: Feature, key: str, encoding: str) -> tuple[int | None, ...]:
    if encoding not in ENCODINGS[1:]:
        raise FeatureError(f"feature {key!r}: TFDS tensor encoding {encoding!r} is not one of "
                           f"{', '.join(ENCODINGS)}")  # fmt: skip
    if not isinstance(feature, (Tensor, Scalar)):
        raise FeatureError(f"feature {key!r}: {feature!r} is not a Tensor stored as bytes")
    return tuple(feature.shape)


def _inflate(data: bytes, limit: int | None) -> bytes:
    """`data` inflated (zlib), never past `limit` + 1 bytes (`MAX_INFLATED` + 1 when the
    size is not known)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, (MAX_INFLATED if limit is None else limit) + 1)
    except zlib.error as error:
        raise checked.Mismatch(f"not a zlib stream ({error})") from None
    if limit is not None and len(out) > limit:
        raise checked.Mismatch(f"its zlib stream holds more than the {limit} bytes expected")
    if limit is None and len(out) > MAX_INFLATED:
        raise checked.Mismatch(f"its zlib stream inflates to more than {MAX_INFLATED} bytes")
    if not inflater.eof:
        raise checked.Mismatch("its zlib stream is cut short")
    return out


def _array(
    data: bytes, feature: Tensor | Scalar, shape: tuple[int | None, ...], encoding: str
) -> np.ndarray[Any, Any]:
    """One element's bytes as an array of `shape` (at most one None) and the feature's dtype."""
    dtype = feature.dtype
    known = math.prod(d for d in shape if d is not None) * dtype.itemsize
    fixed = None not in shape
    raw = _inflate(data, known if fixed else None) if encoding == "zlib" else data
    if fixed and len(raw) != known:
        raise checked.Mismatch(
            f"expected {known} bytes ({math.prod(shape)} {dtype.name} values of shape "  # type: ignore[arg-type]
            f"{shape}), got {len(raw)}"
        )
    if not fixed and (known == 0 or len(raw) % known):
        raise checked.Mismatch(
            f"{len(raw)} bytes cannot fill shape {shape} of {dtype.name} values "
            f"({known} bytes per row)"
        )
    if dtype.kind == "b":
        flags = np.frombuffer(raw, np.uint8)
        if len(flags) and flags.max() > 1:
            raise checked.Mismatch(f"byte value {flags.max()} is not a bool (0 or 1)")
    array = np.frombuffer(bytearray(raw), dtype).reshape([-1 if d is None else d for d in shape])
    return array if isinstance(feature, Scalar) else feature.validate(array)


def _stored_shapes(
    value: Value, shape: tuple[int | None, ...], count: int
) -> list[tuple[int, ...]]:
    """`count` shapes stored as one Int64List, each agreeing with `shape`'s known dims."""
    dims = checked.number_list(value, np.dtype(np.int64), count * len(shape))
    if len(dims) and dims.min() < 0:
        raise checked.Mismatch(f"a stored shape holds a negative dimension ({dims.min()})")
    shapes = [tuple(int(d) for d in row) for row in dims.reshape(count, len(shape))]
    for got in shapes:
        if any(want is not None and want != d for want, d in zip(shape, got, strict=True)):
            raise checked.Mismatch(f"stored shape {got} does not fit {shape}")
    return shapes


def tensor_getter(feature: Feature, key: str, encoding: str) -> Getter:
    """The getter of a Tensor (or Scalar) stored as bytes under `key`."""
    shape = _check_feature(feature, key, encoding)
    assert isinstance(feature, (Tensor, Scalar))
    if is_dynamic(shape):

        def dynamic(p: Parsed) -> Any:
            (stored,) = _stored_shapes(p[f"{key}/{_SHAPE}"], shape, 1)
            return _array(checked.one_bytes(p[f"{key}/{_VALUE}"]), feature, stored, encoding)

        return dynamic
    if isinstance(feature, Scalar):
        return lambda p: _array(checked.one_bytes(p[key]), feature, (), encoding)[()]
    return lambda p: _array(checked.one_bytes(p[key]), feature, shape, encoding)


def sequence_getter(feature: Feature, key: str, encoding: str, length: int | None) -> Getter:
    """The getter of a Sequence of a Tensor stored as bytes: one item per element; elements
    of one shape stack into an array of (n, *shape), others come back as a list."""
    shape = _check_feature(feature, key, encoding)
    assert isinstance(feature, (Tensor, Scalar))
    if is_dynamic(shape):
        raise FeatureError(
            f"feature {key!r}: a Sequence of {feature!r} stored as {encoding!r} (TFDS itself "
            "cannot read its elements back unless they all have one shape)"
        )
    stacked = None not in shape

    def sequence(p: Parsed) -> Any:
        items = checked.byte_items(p.get(key, []), length)
        values = [_array(bytes(b), feature, shape, encoding) for b in items]
        if not stacked:
            return values
        if not values:
            return np.empty((0, *shape), feature.dtype)
        return np.stack(values)

    return sequence


def _to_bytes(feature: Tensor | Scalar, value: Any, encoding: str) -> tuple[tuple[int, ...], bytes]:
    if isinstance(feature, Scalar):
        array = np.frombuffer(feature.encode(value), feature.dtype)
    else:
        array = feature.validate(value)
    data = array.tobytes()
    return array.shape, zlib.compress(data) if encoding == "zlib" else data


def tensor_putter(feature: Feature, key: str, encoding: str) -> Putter:
    """The putter writing a Tensor as TFDS stores it with `encoding` ("bytes" or "zlib")."""
    shape = _check_feature(feature, key, encoding)
    assert isinstance(feature, (Tensor, Scalar))

    def put(value: Any, out: dict[str, Any]) -> None:
        stored_shape, data = _to_bytes(feature, value, encoding)
        if is_dynamic(shape):
            out[f"{key}/{_SHAPE}"] = np.array(stored_shape, np.int64)
            out[f"{key}/{_VALUE}"] = [data]
        else:
            out[key] = [data]

    return put


def sequence_putter(feature: Feature, key: str, encoding: str) -> Putter:
    """The putter of a Sequence of a Tensor stored as bytes (one BytesList item each)."""
    shape = _check_feature(feature, key, encoding)
    assert isinstance(feature, (Tensor, Scalar))
    if is_dynamic(shape):
        raise FeatureError(f"feature {key!r}: a Sequence of {feature!r} stored as {encoding!r}")

    def put(value: Any, out: dict[str, Any]) -> None:
        items = [_to_bytes(feature, v, encoding)[1] for v in value]
        out[key] = np.array(items, dtype=object) if items else np.empty(0, dtype=object)

    return put

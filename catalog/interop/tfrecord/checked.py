"""The lists of a parsed ``tf.train.Example`` checked against the feature they must fill.

Records written by other people's code (a TFDS directory, TFRecord files a builder reads) may
hold anything under a key: a FloatList where a class index belongs, an Int64List where image
bytes belong, a million values where one is declared. Every function here checks the list's
kind (BytesList, Int64List, FloatList), its length and its values' range against the feature
BEFORE anything is made from the values (``bytes(n)`` of an int would allocate n bytes), and
raises `Mismatch` (a ValueError) saying what was expected and what the record holds. Callers
name the file, the record and the feature (`catalog.interop.tfds.codec` for TFDS directories,
`catalog.formats.shards.tfrecord` for the ``tfrecord`` source format).

The feature's own validation does the rest: `ClassLabel.int2str` the label range,
`Tensor.validate` (and BBox's) the values, `Image.check_file` / `Image.decode_file` an image
file's header (size, channels, format, pixel count) before its pixels are decoded.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features import ClassLabel, Image, Tensor
from catalog.features.text import RawText
from catalog.interop.tfrecord.example import Value

__all__ = [
    "Mismatch",
    "as_dtype",
    "byte_items",
    "class_labels",
    "describe",
    "element_count",
    "image",
    "number_list",
    "one_bytes",
    "one_label",
    "reason",
    "tensor",
    "text",
]

_INT, _FLOAT = np.dtype(np.int64), np.dtype(np.float32)


class Mismatch(ValueError):
    """A list of a record that does not fit its feature (the message says how)."""


def describe(value: Value) -> str:
    """What a record holds under a key: ``an Int64List of 3 values``."""
    if isinstance(value, list):
        kind = "BytesList"
    elif value.dtype == _FLOAT:
        kind = "FloatList"
    else:
        kind = "Int64List"
    n = len(value)
    shown = ""
    if n and not isinstance(value, list):
        shown = f" ({', '.join(str(v) for v in value[:3].tolist())}{', ...' if n > 3 else ''})"
    return f"a{'n' if kind[0] == 'I' else ''} {kind} of {n} value{'' if n == 1 else 's'}{shown}"


def _count(value: Value, count: int | None, what: str) -> None:
    if count is not None and len(value) != count:
        raise Mismatch(f"expected {what} of {count} value{'' if count == 1 else 's'}, "
                       f"got {describe(value)}")  # fmt: skip


def byte_items(value: Value, count: int | None = None) -> list[bytes]:
    """The items of a BytesList (an empty list of any kind is an empty BytesList)."""
    if not isinstance(value, list):
        if len(value) == 0 and count in (None, 0):
            return []
        raise Mismatch(f"expected a BytesList, got {describe(value)}")
    _count(value, count, "a BytesList")
    return value


def one_bytes(value: Value) -> bytes:
    """The one item of a BytesList of one value."""
    return bytes(byte_items(value, 1)[0])


def text(data: bytes) -> str | bytes:
    """Stored UTF-8 bytes as a str; bytes that are not UTF-8 as they are (a `RawText`), as
    TFDS's Text keeps and gives them (rock_you's passwords)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return RawText(data)


def number_list(
    value: Value, dtype: np.dtype[Any], count: int | None = None, *, ints_as_floats: bool = False
) -> np.ndarray[Any, Any]:
    """The values of the Int64List (int and bool dtypes) or FloatList (float dtypes) a
    feature of `dtype` is stored in, `count` of them (None: any number), as `dtype`: ints must
    fit it (bools be 0 or 1). `ints_as_floats`: a float feature also takes an Int64List."""
    if isinstance(value, list):
        if value or count not in (None, 0):
            raise Mismatch(f"expected {_list_name(dtype)}, got {describe(value)}")
        return np.empty(0, dtype)
    expected = _FLOAT if dtype.kind == "f" else _INT
    int_for_float = ints_as_floats and dtype.kind == "f" and value.dtype == _INT
    if len(value) and value.dtype != expected and not int_for_float:
        raise Mismatch(f"expected {_list_name(dtype)}, got {describe(value)}")
    _count(value, count, _list_name(dtype))
    return as_dtype(value, dtype)


def _list_name(dtype: np.dtype[Any]) -> str:
    return f"a FloatList ({dtype.name})" if dtype.kind == "f" else f"an Int64List ({dtype.name})"


#: Unsigned dtypes whose values TF and TFDS may store as their signed twin's bits: TFDS
#: bitcasts a uint64 to int64 before writing it in an Int64List (so 2**63 and up arrive
#: negative), and code that packs uint32s through int32 does the same with 32 bits.
_BITCAST_UNSIGNED = frozenset({np.dtype(np.uint32), np.dtype(np.uint64)})


def as_dtype(values: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """`values` (int64 or float32) as `dtype`, refusing ints that do not fit it. A uint32 or
    uint64 also takes the negative values of its signed twin, as their bits (what TF's
    cast and TFDS's bitcast give): -1 is 2**64 - 1 as uint64."""
    if values.dtype == dtype or not len(values):
        return values.astype(dtype, copy=False)
    if dtype.kind in "biu" and values.dtype.kind == "i":
        low, high = (0, 1) if dtype.kind == "b" else _range(dtype)
        twin = dtype in _BITCAST_UNSIGNED
        if twin:
            low = -(1 << (dtype.itemsize * 8 - 1))
        bad = (values < low) | (values > high)
        if bad.any():
            first = values[np.argmax(bad)]
            accepted = f"{0 if twin else low}..{high}"
            if twin:
                accepted += f", or {low}..-1 as its {dtype.itemsize * 8} bits"
            raise Mismatch(f"value {first} does not fit {dtype.name} ({accepted})")
    return values.astype(dtype)  # two's complement: a negative keeps its low bits


def _range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def one_label(value: Value, feature: ClassLabel) -> int:
    """A class index stored as an Int64List of one value, in the feature's range."""
    return int(class_labels(value, feature, 1)[0])


def class_labels(
    value: Value, feature: ClassLabel, count: int | None = None
) -> np.ndarray[Any, Any]:
    """Class indices (an Int64List), each in the feature's range (its own check says which)."""
    if isinstance(value, list) or (len(value) and value.dtype != _INT):
        if not (isinstance(value, list) and not value and count in (None, 0)):
            raise Mismatch(f"expected an Int64List of class indices, got {describe(value)}")
        return np.empty(0, np.int64)
    _count(value, count, "an Int64List")
    classes = feature.num_classes
    low = feature.lowest
    if len(value) and (classes is None or value.min() < low or value.max() >= classes):
        bad = value[0] if classes is None else value[(value < low) | (value >= classes)][0]
        feature.int2str(int(bad))  # raises the feature's own error: out of range, or no classes
        raise AssertionError("unreachable")  # pragma: no cover
    return value


def element_count(shape: tuple[int | None, ...], count: int, what: str) -> tuple[int, ...]:
    """The shape of `count` flat values read as `shape` (one dimension may be None), or
    Mismatch when they do not fill it."""
    known = math.prod(d for d in shape if d is not None)
    unknown = [i for i, d in enumerate(shape) if d is None]
    if len(unknown) > 1:
        raise Mismatch(f"a shape {shape} with more than one unknown dimension cannot be read "
                       "from one flat list")  # fmt: skip
    if unknown:
        if count % known:
            raise Mismatch(f"{count} values cannot fill shape {shape} ({what})")
        dims = list(shape)
        dims[unknown[0]] = count // known
        return tuple(d for d in dims if d is not None)
    if count != known:
        raise Mismatch(f"expected {known} values for shape {shape}, got {count} ({what})")
    return tuple(d for d in shape if d is not None)


def tensor(value: Value, feature: Tensor, *, ints_as_floats: bool = False) -> np.ndarray[Any, Any]:
    """A Tensor's values from its flat list: the right kind, as many as its shape holds,
    checked by the feature's own `validate` (a BBox's range and order too)."""
    flat = number_list(value, feature.dtype, ints_as_floats=ints_as_floats)
    shape = element_count(feature.shape, len(flat), describe(value))
    return feature.validate(flat.reshape(shape))


def image(data: bytes, feature: Image) -> np.ndarray[Any, Any]:
    """A PNG/JPEG file decoded by the feature's checked decoder."""
    return feature.decode_file(data)


def reason(error: Exception) -> str:
    """The message of a FeatureError (its reason, the feature's repr in front), or any error."""
    if isinstance(error, FeatureError):
        return str(error)
    return str(error) or type(error).__name__

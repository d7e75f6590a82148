"""Sequence: a list of values of one feature, of a fixed or a varying length."""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence as SequenceABC
from typing import Any

import numpy as np

from catalog.errors import CatalogError, FeatureError
from catalog.features.base import DecodeFn, Feature, join_path
from catalog.features.features_dict import FeaturesDict
from catalog.features.text import Text

__all__ = ["Sequence"]

_COUNT_BYTES = 4  # the element count and each variable-size element's length: uint32 LE


class Sequence(Feature):
    """A list of values of `feature`: ``length`` of them, or any number when it is None.

    What it decodes to (as TFDS does):

    - elements of a fixed shape and a NumPy dtype (Scalar, ClassLabel, Tensor and Image with
      known shapes, fixed-length Sequences of those) stack into **one array** of shape
      ``(n, *element shape)``; ClassLabels stack into int64. No elements: shape ``(0, ...)``.
    - other elements (Text, Tensor or Image of varying shape) give a **list**.
    - a dict of features gives a **dict of sequences**, one per feature, each decoded by the
      rules above (``{"bbox": float32 (n, 4), "label": int64 (n,)}``); it is stored that way
      too. Encode either a list of dicts or a dict of lists of the same length.

    Errors name the element: ``tags[3]``, ``objects/label[3]``. Storage: the count (uint32,
    only when `length` is None), then the elements; variable-size elements each prefixed by
    their length. Fixed-size elements with a fixed length make a fixed-size feature.

    Args:
        feature: the element's `Feature`, or a dict of features.
        length: the fixed number of elements, or None for any number.

    Raises:
        FeatureError: a bad length or element; and (``encode_example``, when preparing) a value that
            does not fit, naming the feature and the example (a wrong length, names the element).

    Examples:
        >>> from catalog.features import Scalar, Sequence
        >>> Sequence(Scalar("int32"), length=2)
        Sequence(Scalar('int32'), length=2)
    """

    type_name = "Sequence"

    def __init__(self, feature: Feature | Mapping[str, Any], length: int | None = None) -> None:
        if isinstance(feature, Mapping) and not isinstance(feature, Feature):
            feature = FeaturesDict(feature)
        if not isinstance(feature, Feature):
            raise FeatureError(f"Sequence needs a Feature (or a dict of them), got {feature!r}")
        if length is not None and (
            isinstance(length, bool) or not isinstance(length, int) or length < 1
        ):
            raise FeatureError(f"Sequence length must be a positive int or None, got {length!r}")
        self.feature = feature
        self.length = length
        #: For a dict of features: the dict of their Sequences, which encodes and decodes.
        self.columns: FeaturesDict | None = None
        if isinstance(feature, FeaturesDict):
            self.columns = FeaturesDict(
                {name: Sequence(child, length) for name, child in feature.items()}
            )
            return
        inner = feature.shape
        self.shape = None if inner is None else (length, *inner)
        self.dtype = feature.dtype
        self._stacks = feature.dtype is not None and inner is not None and None not in inner
        self._item_size = feature.fixed_size
        if length is not None and feature.raw_dtype is not None:
            self.raw_dtype = feature.raw_dtype

    @property
    def fixed_size(self) -> int | None:
        if self.columns is not None:
            return self.columns.fixed_size
        if self.length is None or self._item_size is None:
            return None
        return self.length * self._item_size

    def children(self) -> Mapping[str, Feature]:
        return self.feature.children()

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, value: Any) -> bytes:
        if self.columns is not None:
            return self.columns.encode(self._as_columns(value))
        items = self._as_items(value)
        feature, variable = self.feature, self._item_size is None
        if (  # the fast path: an array that is already exactly what would be stored
            isinstance(value, np.ndarray)
            and feature.raw_dtype is not None
            and feature.raw_dtype == feature.dtype == value.dtype
            and value.shape[1:] == feature.shape
        ):
            data = np.ascontiguousarray(value).tobytes()
            return (
                data
                if self.length is not None
                else len(value).to_bytes(_COUNT_BYTES, "little") + data
            )
        parts = [] if self.length is not None else [len(items).to_bytes(_COUNT_BYTES, "little")]
        for i, item in enumerate(items):
            try:
                data = feature.encode(item)
            except FeatureError as error:
                path = join_path(f"[{i}]", error.feature_path)
                raise FeatureError(error.reason, feature_path=path) from None
            if variable:
                parts.append(len(data).to_bytes(_COUNT_BYTES, "little"))
            parts.append(data)
        return b"".join(parts)

    def _as_items(self, value: Any) -> SequenceABC[Any]:
        ok = isinstance(value, np.ndarray) and value.ndim >= 1
        ok = ok or (isinstance(value, SequenceABC) and not isinstance(value, (str, bytes)))
        if not ok:
            raise self._error(f"expected a list of values, got {type(value).__name__}")
        if self.length is not None and len(value) != self.length:
            raise self._error(f"expected {self.length} elements, got {len(value)}")
        return value  # type: ignore[no-any-return]

    def _as_columns(self, value: Any) -> Mapping[str, Any]:
        """A dict of lists from a dict of lists or a list of dicts; lengths checked."""
        assert self.columns is not None
        if not isinstance(value, Mapping):
            rows = self._as_items(value)
            for i, row in enumerate(rows):
                if not isinstance(row, Mapping):
                    raise FeatureError(
                        f"{self!r}: expected a dict, got {type(row).__name__}",
                        feature_path=f"[{i}]",
                    )
            names = list(self.columns)
            extra = sorted({str(k) for row in rows for k in row} - set(names))
            if extra:
                raise self._error(f"elements have keys that are not features: {extra}")
            columns = {n: [row[n] for row in rows if n in row] for n in names}
            short = [n for n, column in columns.items() if len(column) != len(rows)]
            if short:
                raise self._error(f"some elements have no {short[0]!r}")
            return columns
        lengths = {
            name: len(column)
            for name, column in value.items()
            if name in self.columns and isinstance(column, (SequenceABC, np.ndarray))
        }
        if len(set(lengths.values())) > 1:
            counts = ", ".join(f"{n} {c}" for n, c in lengths.items())
            raise self._error(f"the features of each element need as many values; got {counts}")
        return value

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, buf: bytearray, offset: int, length: int) -> Any:
        if self.columns is not None:
            return self.columns.decode(buf, offset, length)
        if self.length is None:
            count = int.from_bytes(buf[offset : offset + _COUNT_BYTES], "little")
            offset += _COUNT_BYTES
        else:
            count = self.length
        feature = self.feature
        if feature.raw_dtype is not None:  # the elements' bytes are one array already
            shape = (count, *feature.shape)  # type: ignore[misc]
            raw = np.frombuffer(buf, feature.raw_dtype, math.prod(shape), offset).reshape(shape)
            return raw if raw.dtype == feature.dtype else raw.astype(feature.dtype)
        values = self._elements(buf, offset, count, feature.decode)
        if self._stacks:
            if not values:
                return np.empty((0, *feature.shape), feature.dtype)  # type: ignore[misc]
            return np.stack(values)
        return values

    def decode_spans(self, data: bytearray, starts: list[int], ends: list[int]) -> list[Any] | None:
        """`decode` of each span (so the records' other features decode column by column,
        `catalog.features.FeaturesDict.decode_records`); None when one is not laid out as
        this Sequence (each record is then decoded on its own, which names the bad one)."""
        decode = self.decode
        try:
            return [decode(data, a, b - a) for a, b in zip(starts, ends, strict=True)]
        except (ValueError, IndexError, CatalogError):
            return None

    def _elements(self, buf: bytearray, offset: int, count: int, decode: DecodeFn) -> list[Any]:
        size = self._item_size
        if size is not None:
            return [decode(buf, offset + i * size, size) for i in range(count)]
        values: list[Any] = []
        if isinstance(self.feature, Text) and decode == self.feature.decode:
            return _texts(buf, offset, count)  # its own decode, inlined
        for _ in range(count):
            size = int.from_bytes(buf[offset : offset + _COUNT_BYTES], "little")
            offset += _COUNT_BYTES
            values.append(decode(buf, offset, size))
            offset += size
        return values

    def compile_decoder(self, overrides: Mapping[str, DecodeFn]) -> DecodeFn:
        """An override at this path applies to each element (the result is then a list)."""
        if self.columns is not None:
            return self.columns.compile_decoder(overrides)
        if not overrides:
            return self.decode
        element = overrides.get("") or self.feature.compile_decoder(overrides)

        def decode(buf: bytearray, offset: int, length: int) -> list[Any]:
            count = self.length
            if count is None:
                count = int.from_bytes(buf[offset : offset + _COUNT_BYTES], "little")
                offset += _COUNT_BYTES
            return self._elements(buf, offset, count, element)

        return decode

    def describe(self) -> str:
        return self.feature.describe()

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type_name, "feature": self.feature.to_json(), "length": self.length}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Sequence:
        return cls(data["feature"], length=data.get("length"))

    def __repr__(self) -> str:
        inner = self.feature
        shown = repr(dict(inner)) if isinstance(inner, FeaturesDict) else repr(inner)
        length = "" if self.length is None else f", length={self.length}"
        return f"Sequence({shown}{length})"


def _texts(buf: bytearray, offset: int, count: int) -> list[Any]:
    """`count` Text elements from `offset` on (each after its 4-byte size), as `Text.decode`
    gives each: a str, or the bytes of one that is not UTF-8 (a `RawText`'s)."""
    values: list[Any] = []
    append, size_of = values.append, int.from_bytes
    for _ in range(count):
        size = size_of(buf[offset : offset + _COUNT_BYTES], "little")
        offset += _COUNT_BYTES
        data = buf[offset : offset + size]
        offset += size
        try:
            append(data.decode("utf-8"))
        except UnicodeDecodeError:
            append(bytes(data))
    return values

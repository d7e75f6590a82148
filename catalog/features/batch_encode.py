"""Encoding a batch of examples at once, column by column: the same records, byte for byte, as
`catalog.features.codec.RecordCodec.encode` gives for each example of the batch.

For a FeaturesDict of features that `BatchEncoder.supports` (Scalar, ClassLabel with its
classes set, Text, a Sequence of any length of Scalars or Texts, a FeaturesDict of those: a
struct, whose records are made first and laid out as a text's), a table's rows are encoded
with a few NumPy operations per column instead of a Python call per value: the fixed-size
features' bytes are laid out as one ``(n, width)`` matrix with the variable ones' length
prefixes (and a Sequence's count), and pyarrow joins that matrix's pieces and the variable
columns row by row into the records (they come as pyarrow's buffers: every reader that gives
such columns reads with pyarrow, so they are encoded so only where it is installed). The
values must have been checked already (the reader's job, as
`catalog.formats.tables.table_batches` does): a column of the feature's dtype, class indices
in range, text as UTF-8 bytes, a Sequence's elements as they are stored (numbers as their
dtype's bytes, texts each after its 4-byte length), one run a row with its count
(`TextColumn` both).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog._util.optional import importable
from catalog.errors import FeatureError
from catalog.features.class_label import ClassLabel
from catalog.features.codec import RECORD_VERSION
from catalog.features.features_dict import FeaturesDict
from catalog.features.scalar import Scalar
from catalog.features.sequence import Sequence
from catalog.features.text import MAX_BYTES, Text

__all__ = ["BatchEncoder", "PackedRecords", "TextColumn", "length_prefixed", "sized_lists"]

_LENGTH = np.dtype("<u4")  # the length prefix of a variable-size value (FeaturesDict's)


@dataclass(frozen=True)
class TextColumn:
    """A column of texts as their UTF-8 bytes: text ``i`` is ``data[offsets[i]:offsets[i+1]]``
    (Arrow's layout of a string array: `offsets` has one more entry than there are texts); of
    a Sequence, row ``i``'s elements as stored so, and `counts` its elements a row."""

    offsets: np.ndarray[Any, Any]
    data: np.ndarray[Any, Any]
    counts: np.ndarray[Any, Any] | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1


class BatchEncoder:
    """The records of a batch of examples given as columns (see the module docstring).

    Args:
        features: a FeaturesDict that `supports` accepts.

    Raises:
        FeatureError: features it cannot encode in bulk (ask `supports` first).
    """

    def __init__(self, features: FeaturesDict) -> None:
        if not self.supports(features):
            raise FeatureError(f"cannot encode {features!r} column by column")
        self.features = features
        self._fixed = [(n, f, off, size) for n, f, off, size in features._fixed_plan]
        self._variable = [name for name, _ in features._variable]
        self._width = 1 + features._fixed_total
        #: per variable feature, whether it is a Sequence (else a Text, or a FeaturesDict's
        #: records, length-prefixed alike)
        self._listed = [
            isinstance(f, Sequence) and f.columns is None for _, f in features._variable
        ]
        self._texts = [isinstance(f, Text) for _, f in features._variable]
        #: where each variable feature's prefix (its length, a Sequence's count too) begins
        self._prefixes = list(
            itertools.accumulate((8 if s else 4 for s in self._listed), initial=self._width)
        )

    @staticmethod
    def supports(features: FeaturesDict) -> bool:
        """True when every feature is a Scalar, a ClassLabel with classes, a Text, a Sequence
        `_listed` takes (these two with pyarrow installed, which joins them into records) or
        a FeaturesDict of those (a struct: its records made so first, `nested`)."""
        for feature in features.children().values():
            if isinstance(feature, FeaturesDict):
                if not BatchEncoder.supports(feature):
                    return False
            elif isinstance(feature, ClassLabel):
                if feature.num_classes is None:
                    return False
            elif isinstance(feature, (Text, Sequence)):
                if not importable("pyarrow"):
                    return False
                if isinstance(feature, Sequence) and not _listed(feature):
                    return False
            elif not isinstance(feature, Scalar):
                return False
        return True

    def encode(self, columns: Mapping[str, Any], rows: int) -> list[bytes]:
        """The records of `rows` examples; `columns` maps each feature to its values: a NumPy
        array of the Scalar's dtype, of class indices (ClassLabel), a `TextColumn` (Text)."""
        return self.encode_packed(columns, rows).records()

    def encode_packed(self, columns: Mapping[str, Any], rows: int) -> PackedRecords:
        """`encode`'s records one after the other, without a ``bytes`` object per record (as
        `catalog.storage.shard_writer.ShardWriter.write_packed` takes them)."""
        return self._packed(columns, rows)

    def nested(self, columns: Mapping[str, Any], rows: int) -> np.ndarray[Any, Any] | TextColumn:
        """The values of these features as a FeaturesDict inside another's records (a struct
        column): what ``features.encode`` gives each row (its records without the version
        byte), as the enclosing encoder takes them: a ``(rows, size)`` uint8 matrix when they
        are of a fixed size, else a `TextColumn`."""
        packed = self._packed(columns, rows)
        size = self.features.fixed_size
        if size is not None:
            return packed.data.reshape(rows, size + 1)[:, 1:]
        starts = packed.starts[:-1]
        data = np.delete(packed.data, starts)  # each record's version byte
        return TextColumn(packed.starts - np.arange(rows + 1), data)

    def _packed(self, columns: Mapping[str, Any], rows: int) -> PackedRecords:
        # the bytes of a record that are no text's: its fixed part, then the texts' prefixes
        head = np.empty((rows, self._prefixes[-1]), np.uint8)
        fixed = head[:, : self._width]
        fixed[:, 0] = RECORD_VERSION
        for name, feature, offset, size in self._fixed:
            values = np.asarray(columns[name])
            if len(values) != rows:
                raise ValueError(f"column {name!r} has {len(values)} values, expected {rows}")
            if isinstance(feature, FeaturesDict) or (  # `nested`'s matrix: its bytes already
                isinstance(feature, Sequence) and feature.columns is not None
            ):
                fixed[:, 1 + offset : 1 + offset + size] = values
                continue
            if isinstance(feature, ClassLabel):
                stored = values.astype(np.int64) + feature._shift
                values = stored.astype(f"<u{size}")
            else:
                values = values.astype(feature.dtype, copy=False)
            fixed[:, 1 + offset : 1 + offset + size] = values.view(np.uint8).reshape(rows, size)
        if not self._variable:
            return PackedRecords(head.ravel(), np.arange(rows + 1, dtype=np.int64) * self._width)
        texts: list[TextColumn] = [columns[name] for name in self._variable]
        for j, (name, text, listed, plain) in enumerate(
            zip(self._variable, texts, self._listed, self._texts, strict=True)
        ):
            if len(text) != rows:
                raise ValueError(f"column {name!r} has {len(text)} values, expected {rows}")
            if listed and text.counts is None:
                raise ValueError(f"column {name!r} holds no counts of its lists' elements")
            length = np.diff(text.offsets).astype(np.int64)
            if plain and rows and int(length.max()) > MAX_BYTES:
                raise FeatureError(
                    f"{int(length.max())} bytes of UTF-8; a Text holds at most {MAX_BYTES}",
                    feature_path=name,
                )
            # each record: its fixed bytes, then per variable feature its length prefix (a
            # Sequence's: its count's 4 bytes too, then the count) and its bytes
            parts = [length] if text.counts is None else [length + 4, text.counts]
            at = self._prefixes[j]
            for k, part in enumerate(parts):
                view = part.astype(_LENGTH).view(np.uint8).reshape(rows, 4)
                head[:, at + 4 * k : at + 4 * k + 4] = view
        return _joined(head, self._prefixes, texts)


def _listed(feature: Sequence) -> bool:
    """Whether `BatchEncoder` lays out `feature` from a column: a Sequence of any length of
    Scalars, ClassLabels with classes, Texts, fixed-size Sequences of Scalars or Sequences of
    any length it lays out (`sized_lists`); one of a fixed length of Scalars (a ``(rows,
    length)`` array); a Sequence of a dict whose fields' Sequences it lays out (stored as that
    dict of Sequences, `Sequence.columns`)."""
    element = feature.feature
    if feature.columns is not None:
        return feature.length is None and BatchEncoder.supports(feature.columns)
    if feature.length is not None:
        return type(element) is Scalar
    if isinstance(element, Sequence):  # fixed-size lists of numbers, or lists of those
        if element.columns is not None:
            return False
        return type(element.feature) is Scalar if element.length is not None else _listed(element)
    if isinstance(element, ClassLabel):  # class indices, stored as the label stores them
        return element.num_classes is not None
    return type(element) in (Scalar, Text)


def sized_lists(lists: TextColumn) -> PackedRecords:
    """Each of `lists` (at least one: a Sequence's values, its elements as stored, with their
    `counts`) after its size and its count (4 bytes each), as a Sequence stores Sequences of
    any length: element ``i`` is ``data[starts[i]:starts[i+1]]``."""
    assert lists.counts is not None
    sizes = np.diff(lists.offsets)
    head = np.empty((len(sizes), 8), np.uint8)
    head[:, :4] = (sizes + 4).astype(_LENGTH).view(np.uint8).reshape(-1, 4)
    head[:, 4:] = lists.counts.astype(_LENGTH).view(np.uint8).reshape(-1, 4)
    return _joined(head, [0, 8], [TextColumn(lists.offsets, lists.data)])


def length_prefixed(texts: TextColumn) -> PackedRecords:
    """Each of `texts` (at least one) after its 4-byte length, as a Sequence stores its texts:
    element ``i`` is ``data[starts[i]:starts[i+1]]``."""
    sizes = np.diff(texts.offsets).astype(_LENGTH)
    return _joined(sizes.view(np.uint8).reshape(len(texts), 4), [0, 4], [texts])


def _joined(
    head: np.ndarray[Any, Any], prefixes: list[int], texts: list[TextColumn]
) -> PackedRecords:
    """The records as pyarrow joins their segments ([fixed + prefix 1][text 1][prefix 2]
    [text 2]...: `head`'s columns, prefix j from ``prefixes[j]`` to ``prefixes[j + 1]``, and
    the texts) row by row, in C++ (2-3x NumPy masks laying out every byte, measured on a table
    of short rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = len(head)

    def fixed(a: int, b: int) -> Any:  # head's columns a..b-1, one value a row
        part = np.ascontiguousarray(head[:, a:b])
        buffers = [None, pa.py_buffer(part)]
        array = pa.FixedSizeBinaryArray.from_buffers(pa.binary(b - a), rows, buffers)
        return array.cast(pa.large_binary())

    segments = [fixed(0, prefixes[1])]
    for j, text in enumerate(texts):
        if j:
            segments.append(fixed(prefixes[j], prefixes[j + 1]))
        offsets = np.ascontiguousarray(text.offsets, np.int64)
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(text.data))]
        segments.append(pa.LargeBinaryArray.from_buffers(pa.large_binary(), rows, buffers))
    empty = [None, pa.py_buffer(np.zeros(2, np.int64)), pa.py_buffer(b"")]  # no pa.scalar:
    nothing = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 1, empty)[0]  # it imports pandas
    joined = pc.binary_join_element_wise(*segments, nothing)
    _, offsets, data = joined.buffers()
    starts = np.frombuffer(offsets, np.int64, rows + 1, joined.offset * 8)
    records = np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8)  # no rows
    return PackedRecords(records, starts)


@dataclass(frozen=True)
class PackedRecords:
    """Records laid one after the other: record ``i`` is ``data[starts[i]:starts[i+1]]``."""

    data: np.ndarray[Any, Any]  # uint8
    starts: np.ndarray[Any, Any]  # int64, one more than there are records

    def __len__(self) -> int:
        return len(self.starts) - 1

    def records(self) -> list[bytes]:
        """Each record as ``bytes``."""
        data = self.data.tobytes()
        return [data[a:b] for a, b in itertools.pairwise(self.starts.tolist())]

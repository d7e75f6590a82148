"""Typed columns (Parquet's, as pyarrow reads them) checked and converted a batch at a time,
for units that encode them in bulk (`catalog.features.batch_encode`): numbers, booleans, texts,
class names or indices, and the nested ones, lists (of any length, fixed-size, of lists) and
structs (a FeaturesDict; a list of structs, stored as the dict of its fields' Sequences).

The rules are the row reader's (`catalog.formats.tables.typed_values`): a column is converted
only where the result is provably the value the row reader gives (nulls only with a fill, no
null inside a list or a struct, numbers within the feature's dtype); anything else is Refused
and the batch goes to the row reader, which gives the same values or the same error. The
companion of `catalog.formats.tables.table_batches` (CSV's texts, `from_strings`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catalog.errors import FeatureError
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Text
from catalog.features import Sequence as SequenceFeature
from catalog.features.batch_encode import BatchEncoder, TextColumn, length_prefixed, sized_lists
from catalog.features.text import MAX_BYTES
from catalog.formats.tables.table_batches import (
    Refused,
    arrow_array,
    arrow_scalar,
    fitted_floats,
    fitted_numbers,
    numpy_values,
    text_column,
)

__all__ = ["from_typed"]


def from_typed(array: Any, feature: Feature, fill: Any) -> Any:
    """A Parquet column (a pyarrow array) as `feature`'s values, as
    `catalog.formats.tables.typed_values.typed_value` gives them (a null: `fill`, a value of the
    feature, or None for none); Refused where that cannot be shown in bulk."""
    import pyarrow as pa

    try:
        return _from_typed(array, feature, fill)
    except (pa.ArrowException, TypeError, ValueError):
        raise Refused from None


def _from_typed(array: Any, feature: Feature, fill: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if isinstance(feature, FeaturesDict):
        return _struct(array, feature)
    if isinstance(feature, SequenceFeature):
        return _lists(array, feature)
    nulls = None
    if array.null_count:
        if fill is None:
            raise Refused
        try:
            stored = feature.encode(fill)  # the fill as the row reader encodes it
        except FeatureError:  # the row reader names what is wrong
            raise Refused from None
        if isinstance(feature, Text):
            array = pc.fill_null(array, arrow_scalar(fill, array.type))
        else:
            nulls = numpy_values(array.is_null())
            zero: Any = False if pa.types.is_boolean(array.type) else 0
            if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
                zero = feature.names[0] if isinstance(feature, ClassLabel) and feature.names else ""
            array = pc.fill_null(array, arrow_scalar(zero, array.type))
    values = _typed(array, feature)
    if nulls is not None:
        if isinstance(feature, ClassLabel):
            values[nulls] = int.from_bytes(stored, "little") - feature._shift
        else:
            values[nulls] = np.frombuffer(stored, feature.dtype)[0]
    return values


def _struct(array: Any, feature: FeaturesDict) -> Any:
    """A struct column (no null struct) of a FeaturesDict whose fields `BatchEncoder` takes:
    each field's values as `_from_typed` gives them (a null field: Refused), then the dict's
    records (`BatchEncoder.nested`); Refused for anything else."""
    import pyarrow as pa

    if not pa.types.is_struct(array.type) or array.null_count:
        raise Refused
    names = [array.type.field(i).name for i in range(array.type.num_fields)]
    if sorted(names) != sorted(feature) or not BatchEncoder.supports(feature):
        raise Refused
    fields = dict(zip(names, array.flatten(), strict=True))  # (a slice's own rows)
    columns = {name: _from_typed(fields[name], feature[name], None) for name in feature}
    return BatchEncoder(feature).nested(columns, len(array))


def _listed_structs(array: Any, feature: SequenceFeature) -> Any:
    """A list-of-structs column (no null list, no null struct) of a Sequence of a dict, which
    is stored as the dict of its fields' Sequences (`Sequence.columns`): each field's values,
    row by row, as a list column (`_lists`), then that dict's records
    (`BatchEncoder.nested`); Refused for anything else."""
    import pyarrow as pa

    columns = feature.columns
    if (
        columns is None
        or feature.length is not None
        or not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type))
        or array.null_count
        or not BatchEncoder.supports(columns)
    ):
        raise Refused
    values = array.flatten()  # the structs of these rows (of a slice too)
    if not pa.types.is_struct(values.type) or values.null_count:
        raise Refused
    names = [values.type.field(i).name for i in range(values.type.num_fields)]
    if sorted(names) != sorted(columns):
        raise Refused
    at = np.asarray(array.offsets, np.int64)
    starts = pa.array(at - at[0], pa.int64())
    fields = dict(zip(names, values.flatten(), strict=True))
    lists = {
        name: _from_typed(pa.LargeListArray.from_arrays(starts, fields[name]), columns[name], None)
        for name in columns
    }
    return BatchEncoder(columns).nested(lists, len(array))


def _lists(array: Any, feature: SequenceFeature) -> Any:
    """A list column (no null list, no null element) of a Sequence of any length of numbers,
    booleans, texts or fixed-size lists of numbers as its elements stored, one run a row, with
    their counts (a `TextColumn`, which `catalog.features.batch_encode.BatchEncoder` lays out
    as the Sequence's records: a number as its dtype's bytes, a text after its 4-byte length);
    a fixed-size list column of numbers as a ``(rows, length)`` array; a list of structs as
    `_listed_structs` gives it. Refused for anything else (the row reader takes it, or names
    what is wrong)."""
    import pyarrow as pa

    element = feature.feature
    if feature.columns is not None:
        return _listed_structs(array, feature)
    if feature.length is not None:  # fixed-size: the record's fixed part
        if (
            type(element) is not Scalar
            or not pa.types.is_fixed_size_list(array.type)
            or array.type.list_size != feature.length
            or array.null_count
            or (values := array.flatten()).null_count
        ):
            raise Refused
        items = np.ascontiguousarray(_typed(values, element), element.dtype)
        return items.reshape(len(array), feature.length)
    inner = None  # the length of fixed-size lists of numbers as elements
    if isinstance(element, SequenceFeature) and type(element.feature) is Scalar:
        inner = element.length
    nested = isinstance(element, SequenceFeature) and element.length is None
    labels = isinstance(element, ClassLabel) and element.num_classes is not None
    if (
        (type(element) not in (Scalar, Text) and not inner and not nested and not labels)
        or not (pa.types.is_list(array.type) or pa.types.is_large_list(array.type))
        or array.null_count
    ):
        raise Refused
    values = array.flatten()  # the elements of these rows (of a slice too)
    if values.null_count:
        raise Refused
    at = np.asarray(array.offsets, np.int64)
    at = at - at[0]  # each row's first element among `values`
    counts = np.diff(at)
    if nested:  # lists of lists: each inner one as `_lists` stores it, after size and count
        assert isinstance(element, SequenceFeature)
        stored = _lists(values, element)
        if not isinstance(stored, TextColumn) or stored.counts is None:
            raise Refused
        if not len(stored):  # every list empty
            return TextColumn(np.zeros(len(at), np.int64), np.zeros(0, np.uint8), counts)
        joined = sized_lists(stored)
        return TextColumn(joined.starts[at], joined.data, counts)
    if isinstance(element, SequenceFeature):  # fixed-size lists of numbers (a bbox each)
        scalar = element.feature
        fits = pa.types.is_fixed_size_list(values.type) and values.type.list_size == inner
        if not fits or (leaves := values.flatten()).null_count or not isinstance(scalar, Scalar):
            raise Refused
        items = np.ascontiguousarray(_typed(leaves, scalar), scalar.dtype)
        size = items.itemsize * int(inner or 0)
        return TextColumn(at * size, items.view(np.uint8).ravel(), counts)
    if isinstance(element, ClassLabel):  # indices, stored as the label stores one
        width = int(element.fixed_size or 0)
        stored = (_typed(values, element) + element._shift).astype(f"<u{width}")
        return TextColumn(at * width, stored.view(np.uint8).ravel(), counts)
    if isinstance(element, Scalar):
        items = np.ascontiguousarray(_typed(values, element), element.dtype)
        return TextColumn(at * items.itemsize, items.view(np.uint8).ravel(), counts)
    texts: TextColumn = _typed(values, element)  # strings (else Refused)
    if not len(texts):  # every list empty
        return TextColumn(np.zeros(len(at), np.int64), np.zeros(0, np.uint8), counts)
    if int(np.diff(texts.offsets).max()) > MAX_BYTES:
        raise Refused  # the row reader names the element
    stored = length_prefixed(texts)  # each text after its 4-byte length
    return TextColumn(stored.starts[at], stored.data, counts)


def _typed(array: Any, feature: Feature) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if isinstance(feature, Text):
        if not text:
            raise Refused
        return text_column(array)
    if isinstance(feature, ClassLabel) and pa.types.is_integer(kind):  # indices (Hugging
        values = numpy_values(array).astype(np.int64)  # Face's ClassLabel columns)
        low = -1 if feature.allow_unlabeled else 0
        classes = feature.num_classes or 0
        if len(values) and (int(values.min()) < low or int(values.max()) >= classes):
            raise Refused  # the row reader names the row
        return values
    if isinstance(feature, ClassLabel):
        if not text or not feature.has_names:
            raise Refused
        index = pc.index_in(array, value_set=arrow_array(feature.names))
        if index.null_count:
            raise Refused
        return numpy_values(index).astype(np.int64)
    if not isinstance(feature, Scalar):
        raise Refused
    if feature.dtype.kind == "b":
        if not pa.types.is_boolean(kind):
            raise Refused
        return numpy_values(array).astype(np.bool_)
    if feature.dtype.kind in "iu":
        if not pa.types.is_integer(kind):
            raise Refused
        return fitted_numbers(array, feature)
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)) or pa.types.is_float16(kind):
        raise Refused
    values = numpy_values(array)
    return fitted_floats(values.astype(np.float64), feature)  # as float(value), then the dtype

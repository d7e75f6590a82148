"""Tables read a batch of rows at a time and checked column by column (pyarrow), for units
that encode them in bulk (`catalog.features.batch_encode`): CSV's texts here (`from_strings`),
typed columns (Parquet's) in `catalog.formats.tables.typed_batches`.

The rules are the row readers' (`catalog.formats.tables.delimited`,
`catalog.formats.tables.parquet`): a
column is converted here only where the result is provably the value the row reader gives
(texts parsed as the strict subset of what Python's ``int``/``float`` accept, booleans spelled
``true``/``false``/``1``/``0``, class names the feature knows, nulls with a fill). Any value
outside that subset sends the batch back to the row reader, which gives the same values or
the same error (naming file, line or row, and column) as without batches. So batches change
the speed, never the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from catalog.errors import CatalogError
from catalog.features import ClassLabel, Feature, Scalar, Text
from catalog.features.batch_encode import TextColumn
from catalog.features.tensor import as_dtype, float_overflow
from catalog.formats.base import Batch, Source
from catalog.formats.resume import Cursor, Resumed

__all__ = [
    "BATCH_ROWS",
    "Refused",
    "arrow_array",
    "arrow_scalar",
    "fitted_floats",
    "fitted_numbers",
    "from_strings",
    "numpy_values",
    "only_bytes",
    "resumable",
    "row_batches",
    "string_offsets",
    "text_column",
]

#: Rows per batch.
BATCH_ROWS = 1 << 16

# What Python's float() takes and pyarrow's cast gives the same value for; anything else is
# left to the row reader (whitespace, "_" separators, a signed NaN, ...).
_FLOAT = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$|^(?i:[+-]?inf(?:inity)?|nan)$"
_BOOLS = ("true", "false", "1", "0")
#: The bytes of decimal numbers without ``inf``/``nan``: texts of only these bytes that
#: pyarrow casts to float64 are texts `_FLOAT` matches (its cast then is the check).
_DECIMAL = b"0123456789+-.eE"
#: The bytes of the integers read in bulk (with the cast's check: ``[+-]?[0-9]+``).
_DIGITS = b"0123456789+-"
_EMPTY = frozenset({""})


class Refused(Exception):
    """A column that cannot be converted in bulk: the row reader decides (value or error)."""


def row_batches(
    examples: Iterable[tuple[str, dict[str, Any]]], start: int, rows: int = BATCH_ROWS
) -> Iterator[Batch]:
    """`examples` (positions `start`, `start` + 1, ...) in batches of `rows`; an error
    reading them ends the last batch (its `Batch.error`)."""
    chunk: list[tuple[str, dict[str, Any]]] = []
    pairs = iter(examples)
    while True:
        try:
            pair = next(pairs, None)
        except CatalogError as error:
            yield Batch(start, len(chunk), examples=chunk, error=error)
            return
        if pair is None:
            break
        chunk.append(pair)
        if len(chunk) == rows:
            yield Batch(start, len(chunk), examples=chunk)
            start, chunk = start + len(chunk), []
    if chunk:
        yield Batch(start, len(chunk), examples=chunk)


def text_column(array: Any) -> TextColumn:
    """A pyarrow string array (no nulls) as `TextColumn` (its buffers, not copied)."""
    import pyarrow as pa

    if not pa.types.is_large_string(array.type):
        array = array.cast(pa.large_string())
    _, offsets, data = array.buffers()
    offsets_ = np.frombuffer(offsets, np.int64)[array.offset : array.offset + len(array) + 1]
    data_ = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    return TextColumn(offsets_, data_)


def string_offsets(array: Any) -> np.ndarray[Any, Any]:
    """The offsets of a pyarrow string array's texts in its data buffer (one more than texts)."""
    offsets = np.frombuffer(array.buffers()[1], np.int32)
    result: np.ndarray[Any, Any] = offsets[array.offset : array.offset + len(array) + 1]
    return result


def arrow_array(values: np.ndarray[Any, Any] | Sequence[str]) -> Any:
    """A NumPy array of booleans or numbers (a mask, positions), or texts, as a pyarrow array
    made from buffers: ``pa.array`` imports pandas (about half a second and 50 MB, once per
    process) to check whether it was given pandas' objects.

    >>> arrow_array(np.array([True, False, True])).to_pylist(), arrow_array(np.arange(2)).type
    ([True, False, True], DataType(int64))
    >>> arrow_array(["true", "", "é"]).to_pylist()
    ['true', '', 'é']
    """
    import pyarrow as pa

    if not isinstance(values, np.ndarray):
        data = [text.encode() for text in values]
        offsets = np.zeros(len(data) + 1, np.int32)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
        return pa.Array.from_buffers(pa.string(), len(data), buffers)
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    numbers = np.ascontiguousarray(values)
    kind = pa.from_numpy_dtype(numbers.dtype)
    return pa.Array.from_buffers(kind, len(numbers), [None, pa.py_buffer(numbers)])


def arrow_scalar(value: str | float | bool, kind: Any) -> Any:
    """``pa.scalar(value, kind)`` without importing pandas (see `arrow_array`).

    >>> arrow_scalar(-1, __import__("pyarrow").int32()), arrow_scalar("a", "string")
    (<pyarrow.Int32Scalar: -1>, <pyarrow.StringScalar: 'a'>)
    """
    one = arrow_array([value]) if isinstance(value, str) else arrow_array(np.array([value]))
    return one.cast(kind)[0]


#: pyarrow's names of the float types that are not NumPy's.
_FLOATS = {"halffloat": "float16", "float": "float32", "double": "float64"}


def numpy_values(array: Any) -> np.ndarray[Any, Any]:
    """A pyarrow array of numbers or booleans without nulls as a NumPy array, read from its
    buffers (a view of a number array, read-only); other arrays by pyarrow's ``to_numpy``,
    which imports pandas (a third of a second and ~50 MB in a process that needs none).

    >>> import pyarrow as pa
    >>> numpy_values(pa.array([True, False, True]).slice(1)), numpy_values(pa.array([1.5]))
    (array([False,  True]), array([1.5]))
    """
    import pyarrow as pa

    kind, n, at = array.type, len(array), array.offset
    if array.null_count == 0 and pa.types.is_boolean(kind):
        if not n:
            return np.zeros(0, np.bool_)
        bits = np.unpackbits(np.frombuffer(array.buffers()[1], np.uint8), bitorder="little")
        result: np.ndarray[Any, Any] = bits[at : at + n].astype(np.bool_)
        return result
    if array.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        dtype = np.dtype(_FLOATS.get(str(kind), str(kind)))
        if not n:
            return np.zeros(0, dtype)
        return np.frombuffer(array.buffers()[1], dtype)[at : at + n]
    converted: np.ndarray[Any, Any] = array.to_numpy(zero_copy_only=False)
    return converted


def only_bytes(array: Any, allowed: bytes) -> bool:
    """Whether the texts of `array` (a pyarrow string array without nulls) hold only bytes of
    `allowed`, and at least one byte (one pass over the data, no regular expression).

    >>> import pyarrow as pa
    >>> only_bytes(pa.array(["12", "-3"]), b"0123456789-"), only_bytes(pa.array(["1x"]), b"1")
    (True, False)
    """
    offsets = string_offsets(array)
    first, last = int(offsets[0]), int(offsets[-1])
    data = array.buffers()[2]
    return last > first and not memoryview(data)[first:last].tobytes().translate(None, allowed)


def _all_present(array: Any, missing: frozenset[str]) -> bool:
    """Whether no text of `array` (pyarrow strings) is one of `missing` (shown cheaply when
    the empty text is the only missing one: no text of length 0)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if missing == _EMPTY and pa.types.is_string(array.type) and not array.null_count:
        return not len(array) or bool(np.diff(string_offsets(array)).min() > 0)
    return not pc.any(pc.is_in(array, value_set=arrow_array(sorted(missing)))).as_py()


def fitted_numbers(array: Any, feature: Scalar) -> np.ndarray[Any, Any]:
    """A pyarrow int64/float64/bool array (no nulls) as the feature's values, range checked."""
    values = numpy_values(array)
    kind = feature.dtype.kind
    if kind in "iu" and values.dtype.kind in "iu" and feature.dtype != values.dtype:
        info = np.iinfo(feature.dtype)
        if len(values) and (values.min() < info.min or values.max() > info.max):
            raise Refused
    result: np.ndarray[Any, Any] = values.astype(feature.dtype)
    return result


def fitted_floats(values: np.ndarray[Any, Any], feature: Scalar) -> np.ndarray[Any, Any]:
    """float64 `values` as the feature's float type; Refused when one would become infinite
    (the row reader then names it)."""
    result = as_dtype(values, feature.dtype)
    if float_overflow(values, result):
        raise Refused
    return result


def from_strings(
    array: Any,
    feature: Feature,
    missing: frozenset[str],
    fill: str | None,
    replace: Mapping[str, str] | None = None,
) -> Any:
    """A column of CSV fields (a pyarrow string array) as `feature`'s values, as
    `catalog.formats.tables.delimited.to_value` gives them after ``missing``/``fill``, then
    `replace` (the ``values`` option: texts given others, the rest unchanged); Refused where
    that cannot be shown in bulk."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if missing and not _all_present(array, missing):
        if fill is None:
            raise Refused
        absent = pc.is_in(array, value_set=arrow_array(sorted(missing)))
        array = pc.if_else(absent, arrow_scalar(fill, pa.string()), array)
    if replace:
        keys = list(replace)
        at = pc.index_in(array, value_set=arrow_array(keys))
        if at.null_count < len(at):
            replaced = pc.take(arrow_array([replace[k] for k in keys]), at)
            array = pc.if_else(pc.is_null(at), array, replaced)
    if isinstance(feature, Text):
        return text_column(array)
    if isinstance(feature, ClassLabel):
        return _class_indices(array, feature)
    if not isinstance(feature, Scalar):
        raise Refused
    kind = feature.dtype.kind
    try:
        if kind == "b":
            lower = pc.ascii_lower(array)
            if not pc.all(pc.is_in(lower, value_set=arrow_array(_BOOLS))).as_py():
                raise Refused
            words = pc.is_in(lower, value_set=arrow_array(["true", "1"]))
            return numpy_values(words).astype(np.bool_)
        if kind in "iu":  # pyarrow also casts what int() refuses (0x10): digits only
            if not (pa.types.is_string(array.type) and only_bytes(array, _DIGITS)):
                raise Refused
            return fitted_numbers(pc.cast(array, pa.int64()), feature)
        plain = pa.types.is_string(array.type) and only_bytes(array, _DECIMAL)
        if not plain and not pc.all(pc.match_substring_regex(array, _FLOAT)).as_py():
            raise Refused  # (texts of `_DECIMAL` bytes that pyarrow casts match `_FLOAT`)
        values = numpy_values(pc.cast(array, pa.float64())).copy()
        values[np.isnan(values)] = float("nan")  # Python's NaN, bit for bit
        if np.isinf(values).any():  # 1e309 is past float64, inf is not: the row reader says
            raise Refused
        return fitted_floats(values, feature)
    except pa.ArrowInvalid:
        raise Refused from None


def _class_indices(array: Any, feature: ClassLabel) -> np.ndarray[Any, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not feature.has_names:
        raise Refused
    index = pc.index_in(array, value_set=arrow_array(feature.names))
    if feature.allow_unlabeled:
        index = pc.if_else(
            pc.equal(array, arrow_scalar("-1", pa.string())), arrow_scalar(-1, index.type), index
        )
    if index.null_count:
        raise Refused
    indices: np.ndarray[Any, Any] = numpy_values(index).astype(np.int64)
    return indices


def _cut(batch: Batch, rows: int) -> tuple[Batch, Batch]:
    """`batch` as its first `rows` rows and the rest."""
    if batch.examples is not None:
        pairs = batch.examples
        return (
            Batch(batch.start, rows, examples=pairs[:rows]),
            Batch(batch.start + rows, batch.rows - rows, examples=pairs[rows:], error=batch.error),
        )
    assert batch.columns is not None
    head, tail = {}, {}
    for name, column in batch.columns.items():
        if isinstance(column, TextColumn):
            counts = column.counts
            head[name] = TextColumn(
                column.offsets[: rows + 1], column.data, None if counts is None else counts[:rows]
            )
            tail[name] = TextColumn(
                column.offsets[rows:], column.data, None if counts is None else counts[rows:]
            )
        else:
            head[name], tail[name] = column[:rows], column[rows:]
    return (
        Batch(batch.start, rows, columns=head),
        Batch(batch.start + rows, batch.rows - rows, columns=tail),
    )


def resumable(
    stream: Callable[[Source, Cursor], Iterator[Batch]],
    ahead: Callable[[Source], bool] | None = None,
) -> Resumed[Batch]:
    """``batches(source, start, stop)`` from a `stream` ``(source, cursor) -> Batch es from
    cursor.start to the end``, resumed where the last call stopped when the next one starts
    there or, for a stream `ahead` says is read from its start (default: every one), further
    on (`catalog.formats.resume.Resumed`: the units of a split a process writes in turn, one
    after the other or every N-th with N workers, read a sequential file once, not each from
    its start; a stream reading the `Cursor` as it goes converts no row between). Each batch
    says where it begins; one carrying an error is given even before the range."""
    return Resumed(
        stream,
        size=lambda batch: batch.rows,
        cut=_cut,
        ahead=ahead or (lambda _: True),
        files=lambda source: (source.files, source.options),
        where=lambda batch: batch.start,
        keep=lambda batch: batch.error is not None,
    )

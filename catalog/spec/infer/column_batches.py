"""A CSV column's type from a batch of its fields at once (pyarrow), the same as adding them
one by one (`catalog.spec.infer.column_types.TextColumn.add`).

Fields that are plain ASCII without spaces are told apart by regular expressions equivalent to
`catalog.spec.infer.column_types.kind_of_text`'s on such text; other fields (spaces, which
Python's ``strip``/``\\s`` see, non-ASCII digits and spaces) are judged one by one by
`kind_of_text` itself. A column's kind changes only at the first field of each kind (the kinds
form a join: ``bool`` with a number is ``text``), so replaying those first fields in order
gives the kind and the line where it widened, as adding every field would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catalog.formats.tables.table_batches import (
    arrow_array,
    arrow_scalar,
    numpy_values,
    only_bytes,
    string_offsets,
)
from catalog.spec.infer.column_types import (
    EMPTY,
    PANDAS_MISSING,
    ZERO_PADDED,
    TextColumn,
    kind_of_text,
)

__all__ = ["add_batch"]

_KINDS = ("bool", "int64", "float64", "text")
_PLAIN = r"^[\x21-\x7e]*$"
_INT = r"^[+-]?[0-9]+$"
_FLOAT = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))$"


def add_batch(
    column: TextColumn, array: Any, first_line: int, missing: frozenset[str] = EMPTY
) -> None:
    """Add the fields of `array` (a pyarrow string array without nulls), field ``i`` being on
    line ``first_line + i``, to `column`, as ``column.add(field, line, missing)`` of each
    would (only the fields not of the column's kind so far are sorted into kinds: the others
    cannot widen it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    plain = array.type == pa.string() and not array.null_count  # its buffers read directly
    if missing == EMPTY and plain:
        absent = np.diff(string_offsets(array)) == 0
    elif missing == EMPTY:
        absent = numpy_values(pc.equal(array, arrow_scalar("", array.type)))
    else:
        absent = pc.is_in(array, value_set=arrow_array(sorted(missing)))
        absent = numpy_values(absent)
    count = int(absent.sum())
    if count:
        if column.first_missing is None:
            column.first_missing = first_line + int(np.argmax(absent))
        column.missing += count
    present = array.filter(arrow_array(~absent)) if count else array
    rows = np.flatnonzero(~absent) if count else None
    column.values += len(present)
    if column.distinct is not None and len(present):
        distinct = pc.unique(present)
        if len(distinct) > column.cap:
            column.distinct = None
        else:
            column.distinct.update(distinct.to_pylist())
            if len(column.distinct) > column.cap:
                column.distinct = None
    if column.zero_padded is None and len(present):
        _zero_padded(column, present, rows, first_line)
    if (column.kind == "text" and column.real_text) or not len(present):
        return
    where = None  # the positions in `present` of the fields that may widen the column
    if column.kind in ("bool", "int64", "float64"):
        where = np.flatnonzero(~_fits(present, column.kind))
        if not len(where):
            return
        present = present.take(arrow_array(where))

    def line(at: int) -> int:  # of field `at` of `present`
        at = at if where is None else int(where[at])
        return first_line + (at if rows is None else int(rows[at]))

    kinds = _kinds(present)
    text = kinds == _KINDS.index("text")
    if text.any():
        _saw_texts(column, present.filter(arrow_array(text)), np.flatnonzero(text), line)
    if column.kind == "text":
        return
    for code in sorted(set(np.unique(kinds).tolist()), key=lambda c: int(np.argmax(kinds == c))):
        column.widen(_KINDS[code], line(int(np.argmax(kinds == code))))


def _zero_padded(column: TextColumn, present: Any, rows: Any, first_line: int) -> None:
    """`TextColumn.zero_padded` from a batch's present fields (a cheap ``starts_with`` first:
    most columns have no field starting with 0)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if present.type == pa.string() and not present.null_count:  # the first bytes, by NumPy
        offsets, buffer = string_offsets(present), present.buffers()[2]
        data = np.frombuffer(buffer, np.uint8) if buffer is not None else np.zeros(0, np.uint8)
        where = np.zeros(0, np.int64)
        if len(data):
            first = np.minimum(offsets[:-1], len(data) - 1)
            where = np.flatnonzero((np.diff(offsets) > 0) & (data[first] == ord("0")))
    else:
        zero = pc.starts_with(present, "0")
        where = np.flatnonzero(numpy_values(zero))
    if not len(where):
        return
    padded = pc.match_substring_regex(present.take(arrow_array(where)), f"^{ZERO_PADDED.pattern}")
    padded_ = numpy_values(padded)
    if padded_.any():
        at = int(where[int(np.argmax(padded_))])
        line = first_line + (at if rows is None else int(rows[at]))
        column.zero_padded = (line, present[at].as_py())


def _saw_texts(column: TextColumn, texts: Any, at: np.ndarray[Any, Any], line: Any) -> None:
    """`TextColumn.saw_text` of each of `texts` (fields of kind text, at positions `at` of
    the batch, whose lines `line` gives) up to the first that is not missing-like, as one by
    one: after it nothing more is remembered."""
    import pyarrow.compute as pc

    like = pc.is_in(texts, value_set=arrow_array(sorted(PANDAS_MISSING)))
    like_ = numpy_values(like)
    stop = len(like_) if like_.all() else int(np.argmin(like_))  # the first real text
    column.real_text = stop < len(like_)
    if not stop:
        return
    column.na_count += stop
    found = texts.slice(0, stop)
    for token in pc.unique(found).to_pylist():
        if token not in column.na_texts:
            first = np.argmax(numpy_values(pc.is_in(found, value_set=arrow_array([token]))))
            column.na_texts[token] = line(int(at[int(first)]))


def _fits(texts: Any, kind: str) -> np.ndarray[Any, Any]:
    """Which fields are of `kind` or of one that `kind` holds (an int64 in a float64
    column): those leave a column of that kind as it is (one regular expression, not all of
    `_kinds`'s; the patterns are ASCII without spaces, so `_PLAIN` holds for what they match)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if kind in _CAST and _cast_fits(texts, kind):
        return np.ones(len(texts), bool)
    if kind == "bool":
        lower = pc.is_in(pc.ascii_lower(texts), value_set=arrow_array(["true", "false"]))
        result: np.ndarray[Any, Any] = numpy_values(lower)
        return result
    integer: np.ndarray[Any, Any] = numpy_values(pc.match_substring_regex(texts, _INT))
    fits = integer.copy()
    if integer.any():  # an integer past int64 is text (as `_kinds` finds it)
        digits = texts.filter(arrow_array(integer))
        try:
            if bool((numpy_values(pc.utf8_length(digits)) > 20).any()):
                raise pa.ArrowInvalid("longer than any int64")
            pc.cast(pc.replace_substring_regex(digits, r"^\+", ""), pa.int64())  # "+5" too
        except pa.ArrowInvalid:
            fits[integer] = False  # `_kinds` sorts them out one by one
    if kind == "float64":
        fits |= ~integer & numpy_values(pc.match_substring_regex(texts, _FLOAT))
    return fits


#: The bytes a field of each kind may hold for `_cast_fits`.
_CAST = {"int64": b"0123456789+-", "float64": b"0123456789+-.eE"}
#: The longest field `_cast_fits` takes for float64: an integer of at most 18 characters is
#: within int64 (one past int64 is text, as `_kinds` finds it, though a float parses it).
_FLOAT_CHARS = 18


def _cast_fits(texts: Any, kind: str) -> bool:
    """Whether every field of `texts` is of `kind` (int64 or float64), shown without a
    regular expression: their bytes are all of `_CAST`'s for the kind, and pyarrow casts them
    all to the kind; such fields match `_INT` / `_FLOAT` (and an integer its int64 range).
    False only means "not shown": `_fits` then sorts them out by the expressions."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if texts.type != pa.string() or texts.null_count or not len(texts):
        return False
    if not only_bytes(texts, _CAST[kind]):
        return False
    if kind == "float64" and int(pc.max(pc.binary_length(texts)).as_py()) > _FLOAT_CHARS:
        return False
    try:
        pc.cast(texts, pa.int64() if kind == "int64" else pa.float64())
    except pa.ArrowInvalid:
        return False
    return True


def _kinds(texts: Any) -> np.ndarray[Any, Any]:
    """Each field's kind, as an index into `_KINDS`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def mask(pattern: str) -> np.ndarray[Any, Any]:
        result: np.ndarray[Any, Any] = numpy_values(pc.match_substring_regex(texts, pattern))
        return result

    kinds = np.full(len(texts), _KINDS.index("text"), np.int8)
    plain = mask(_PLAIN)
    integer = plain & mask(_INT)
    floating = plain & ~integer & mask(_FLOAT)
    boolean = (
        plain
        & ~integer
        & ~floating
        & numpy_values(pc.is_in(pc.ascii_lower(texts), value_set=arrow_array(["true", "false"])))
    )
    kinds[floating] = _KINDS.index("float64")
    kinds[boolean] = _KINDS.index("bool")
    if integer.any():
        where = np.flatnonzero(integer)
        digits = texts.filter(arrow_array(integer))
        try:
            if bool((numpy_values(pc.utf8_length(digits)) > 20).any()):
                raise pa.ArrowInvalid("longer than any int64")
            pc.cast(pc.replace_substring_regex(digits, r"^\+", ""), pa.int64())  # "+5" too
            kinds[where] = _KINDS.index("int64")
        except pa.ArrowInvalid:  # past int64: text, as one by one
            for i, text in zip(where.tolist(), digits.to_pylist(), strict=True):
                kinds[i] = _KINDS.index(kind_of_text(text))
    others = np.flatnonzero(~plain)
    if len(others):
        for i, text in zip(
            others.tolist(), texts.take(arrow_array(others)).to_pylist(), strict=True
        ):
            kinds[i] = _KINDS.index(kind_of_text(text))
    return kinds

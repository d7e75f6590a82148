"""A Croissant record set read a batch of rows at a time and checked column by column, for
units that encode them in bulk (`catalog.features.batch_encode`), where that gives the values
the row reader (`catalog.formats.croissant.records`) gives.

That is the case for a record set whose every field is a column of one Parquet or CSV/TSV
FileObject or FileSet (files on disk) read as it is (no transform, date, JSON path or join), or
its files' ``fullpath``/``filename`` with any transform (the Hub's split field: one value per
file, computed once per file by the row reader's own code), and whose split filter, if any,
reads such a field (a file is kept or left out whole). Parquet rows are read as the ``parquet``
format reads them (footers, row groups: `catalog.formats.tables.parquet`) and converted by
`catalog.formats.tables.typed_batches.from_typed` with the Croissant casts
(`catalog.formats.croissant.values`) as fills: the ``fill`` option's value, else a null float
NaN (any other null: the row reader's error naming ``--fill``). Whatever those converters do
not show to be the row reader's value (a float in an integer field, which mlcroissant cuts; a
number in a text field; a null integer, ...) sends the batch to the row reader's casts, which
give the same values or the same error. CSV is read as `catalog.formats.tables.csv_batches` reads it
(pyarrow's streaming reader, every field text, the bytes checked to be CSV Python's ``csv``
module reads alike) and converted by `catalog.formats.tables.table_batches.from_strings` (an empty
float cell is NaN, as pandas reads it for mlcroissant); from the first bytes that may read
otherwise (or a row of another field count) the row reader reads the rest. Every other record
set is read by the row reader, in batches of its examples. A split read from its start (the row
reader, CSV) goes on where the last range stopped (`catalog.formats.resume`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from catalog.errors import CatalogError
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Text
from catalog.features.batch_encode import TextColumn
from catalog.formats.base import Batch, Source
from catalog.formats.croissant.files import FILENAME, FULLPATH
from catalog.formats.croissant.records import Recipe, examples, file_reference, inline_rows
from catalog.formats.croissant.values import caster, fills_of, match_key
from catalog.formats.resume import Cursor
from catalog.formats.tables.csv_batches import bulk_dialect, open_fields
from catalog.formats.tables.parquet import ParquetAccess, parquet_file
from catalog.formats.tables.table_batches import (
    BATCH_ROWS,
    Refused,
    from_strings,
    resumable,
    row_batches,
)
from catalog.formats.tables.typed_batches import from_typed

if TYPE_CHECKING:
    from catalog.formats.croissant.records import Recipe

__all__ = ["ColumnsPlan", "batches", "columns_plan", "split_counts"]


@dataclass(frozen=True)
class ColumnsPlan:
    """What a record set read column by column reads: its Parquet or CSV `files` (in the row
    reader's order, those a split filter keeps), the `columns` of its fields (``{field id:
    column}``, all of them, so a missing one is an error as it is row by row), the values of
    its fields that read a file's path (``{file: {field id: value}}``, the same in each row of
    a file) and the field each feature takes."""

    files: tuple[Path, ...]
    columns: Mapping[str, str]
    constants: Mapping[Path, Mapping[str, Any]]
    features: Mapping[str, str]
    #: The files' kind: ``parquet``, ``csv`` or ``tsv``.
    kind: str = "parquet"


def columns_plan(recipe: Recipe) -> ColumnsPlan | None:
    """The `ColumnsPlan` of the recipe's record set when every field is a plain column of one
    Parquet or CSV/TSV file or file set on disk, or its files' path or name (the Hub's split
    field), and a split filter reads such a path (see the module docstring); None otherwise."""

    node = recipe.record_sets[recipe.target]
    fields = recipe.fields[recipe.target]
    if inline_rows(node) is not None or not fields:
        return None
    sources = {f.file for f in fields.values()}
    if len(sources) != 1 or None in sources:
        return None
    file = str(sources.pop())
    kind = recipe.files[file]["kind"] if file in recipe.files else None
    if kind not in ("parquet", "csv", "tsv") or (
        kind != "parquet" and not bulk_dialect(",", "utf-8")
    ):
        return None  # CSV read by pyarrow (`catalog.formats.tables.csv_batches`), when it is there
    columns, per_file = {}, []
    for f in fields.values():
        if f.joined or file_reference(f.node) or f.no_values or f.path_key:
            return None
        if f.plain_column is not None and f.property is None:
            columns[f.id] = f.plain_column
        elif f.column is None and f.property in (FULLPATH, FILENAME):
            per_file.append(f)  # its transforms run once per file, as the row reader runs them
        else:
            return None
    if not columns:
        return None  # a row per row of the files, no column read: the row reader counts them
    if not all(isinstance(feature, str) and feature in fields for feature in
               recipe.features.values()):  # fmt: skip
        return None  # a nested field (subField): the row reader builds its dict
    where = [(recipe.features[name], value) for name, value in recipe.where.items()]
    if any(fid not in {f.id for f in per_file} for fid, _ in where):
        return None  # a filter on a column: row by row
    files, constants = [], {}
    for path, relative in recipe.files_of(file):
        if not isinstance(path, Path):
            return None  # a zip member: read in memory by the row reader
        props = {FULLPATH: relative, FILENAME: relative.rsplit("/", 1)[-1]}
        try:
            values = {f.id: f.value(props) for f in per_file}
        except CatalogError:  # the row reader raises it where it reads the file's first row
            return None
        if all(match_key(values.get(fid)) == value for fid, value in where):
            files.append(path)
            constants[path] = values
    return ColumnsPlan(tuple(files), columns, constants, dict(recipe.features), str(kind))


def split_counts(source: Source, feature: str) -> dict[str, int] | None:
    """The split's records counted by the value of `feature` (its split field, as ``str``
    shows the cast value) without reading them, when each row of its Parquet files is one
    record (`catalog.formats.croissant.records.Recipe.quick_count`): a field of the files'
    paths (the Hub's ``default/train/0000.parquet``) counted from the footers, a plain column
    from that column alone; None otherwise (read them)."""
    import pyarrow

    recipe = Recipe(source.options["recipe"], source.options["files"])
    field = recipe.features.get(feature)
    if not isinstance(field, str) or recipe.quick_count() is None:
        return None
    reader = recipe.fields[recipe.target][field]
    by_path = reader.column is None and reader.property in (FULLPATH, FILENAME)
    if not by_path and reader.plain_column is None:
        return None
    cast = caster(source.features[feature], field)
    counts: dict[str, int] = {}
    try:
        for path, relative in recipe.files_of(str(reader.file)):
            if not isinstance(path, Path):
                return None  # a zip member: read by the row reader
            handle = parquet_file(path)
            if by_path:
                props = {FULLPATH: relative, FILENAME: relative.rsplit("/", 1)[-1]}
                value = str(cast(reader.value(props)))
                counts[value] = counts.get(value, 0) + handle.metadata.num_rows
                continue
            for batch in handle.iter_batches(columns=[reader.plain_column]):
                for entry in batch.column(0).value_counts().to_pylist():
                    value = str(cast(entry["values"]))
                    counts[value] = counts.get(value, 0) + entry["counts"]
    except (CatalogError, ArithmeticError, ValueError, TypeError, pyarrow.ArrowException):
        return None  # the row reader gives the error, naming the row
    return counts


def _fill(feature: Feature, given: Any) -> Any:
    """The value the row reader's cast gives a null (`catalog.formats.croissant.values`): the
    ``fill`` option's, a float's NaN, or None where it is an error (the row reader raises it)."""
    if given is not None:
        return given
    if isinstance(feature, Scalar) and feature.dtype.kind == "f":
        return float("nan")
    return None


def _stream(source: Source, cursor: Cursor) -> Iterator[Batch]:
    """Examples ``cursor.start..`` of a croissant split in `Batch` es: columns where the
    record set allows (`columns_plan`), else the row reader's examples."""

    start = cursor.start
    recipe = Recipe(source.options["recipe"], source.options["files"])
    plan = columns_plan(recipe)
    if plan is None:  # read from the start: the row reader has no random access
        yield from row_batches(itertools.islice(examples(source), start, None), start)
        return
    yield from _column_batches(source, recipe.target, plan, start, None)


def _sequential(source: Source) -> bool:
    """Whether the split is read from its start (by the row reader, or CSV by pyarrow): a
    range after the last one read goes on reading it; Parquet starts at the row group."""

    plan = columns_plan(Recipe(source.options["recipe"], source.options["files"]))
    return plan is None or plan.kind != "parquet"


#: ``batches(source, start, stop)``: examples ``start..stop-1`` of a croissant split in
#: `Batch` es (`_stream`), a range starting where the last one stopped (or after it, read by
#: the row reader) going on reading where it was (`catalog.formats.resume`).
batches = resumable(_stream, ahead=_sequential)


def _column_batches(
    source: Source, target: str, plan: ColumnsPlan, start: int, stop: int | None
) -> Iterator[Batch]:

    features: FeaturesDict = source.features
    table = Source(
        source.split,
        {"files": plan.files},
        {"columns": {c: c for c in plan.columns.values()}, "fill": {}},
        features,
    )
    given = fills_of(source)
    fills = {name: _fill(features[name], given.get(name)) for name in plan.features}
    casts = [
        (name, f, caster(features[name], f, name, given.get(name)))
        for name, f in plan.features.items()
    ]
    irregular: list[bool] = []
    if plan.kind == "parquet":
        # dates as the field's cast gives them (mlcroissant's), not as plain Parquet's text
        slices = ParquetAccess(table).slices(start, stop, BATCH_ROWS, dates_as_text=False)
        convert = _from_parquet
    else:
        slices = _csv_slices(plan, start, irregular)
        convert = _from_text
    position = start
    for path, _, batch in slices:
        if stop is not None and position >= stop:
            return
        constants = plan.constants[path]
        try:
            converted: dict[str, Any] | None = {
                name: _constant(features[name], cast(constants[f]), batch.num_rows)
                if f in constants
                else convert(batch.column(plan.columns[f]), features[name], fills[name])
                for name, f, cast in casts
            }
        except (Refused, CatalogError):  # the row reader gives the value, or the error
            converted = None
        if converted is None:
            pairs = _examples(target, position, batch, plan, constants, casts)
            yield from row_batches(pairs, position, batch.num_rows)
        else:
            yield Batch(position, batch.num_rows, columns=converted)
        position += batch.num_rows
    if irregular:  # CSV pyarrow may read otherwise: the row reader, from there on
        yield from row_batches(itertools.islice(examples(source), position, stop), position)


def _from_parquet(array: Any, feature: Feature, fill: Any) -> Any:
    """A Parquet column as `from_typed` gives it, but a list or struct field's: its field's
    casts take it example by example (`catalog.formats.croissant.values`), as mlcroissant
    reads it."""
    if isinstance(feature, (Sequence, FeaturesDict)):
        raise Refused
    return from_typed(array, feature, fill)


def _from_text(array: Any, feature: Feature, fill: Any) -> Any:
    """A CSV column (pyarrow strings) as the Croissant casts give it
    (`catalog.formats.croissant.values`): an empty cell of a float field is NaN (pandas', so
    mlcroissant's); Refused where `catalog.formats.tables.table_batches.from_strings` cannot show
    the cast's value."""

    if isinstance(feature, ClassLabel) and feature.allow_unlabeled:
        raise Refused  # "-1" is a label there, not to the Croissant cast
    if isinstance(feature, Scalar) and feature.dtype.kind == "f":
        return from_strings(array, feature, frozenset({""}), "nan")
    return from_strings(array, feature, frozenset(), None)


def _csv_slices(plan: ColumnsPlan, start: int, irregular: list[bool]) -> Iterator[Any]:
    """``(file, its row, record batch)`` of the plan's CSV files from the split's row `start`
    on, every column read as text by pyarrow (`catalog.formats.tables.csv_batches.open_fields`),
    while the bytes are CSV Python's ``csv`` module reads alike; at the first that may not
    be (or pyarrow's error), `irregular` is set and no more is given."""
    import pyarrow as pa

    options = {"delimiter": "\t" if plan.kind == "tsv" else ",", "encoding": "utf-8-sig"}
    options["quoting"] = "minimal"
    columns = sorted(set(plan.columns.values()))
    offset = 0  # the split's row of the file's next row
    for path in plan.files:
        try:
            opened = open_fields(path, options, columns)
        except CatalogError:  # the row reader names what is wrong
            opened = None
        if opened is None:
            irregular.append(True)
            return
        reader, checked, _ = opened
        row = 0
        try:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                if checked.irregular:
                    break
                lo = max(0, start - offset - row)
                if lo < batch.num_rows:
                    yield path, row + lo, batch.slice(lo)
                row += batch.num_rows
        except (pa.ArrowException, OSError):
            irregular.append(True)
        finally:
            checked.close()
        if irregular or checked.irregular:
            irregular.append(True)
            return
        offset += row


def _constant(feature: Feature, value: Any, rows: int) -> Any:
    """A column of `rows` times the value of a feature (cast already)."""

    if isinstance(feature, Text):
        data = np.frombuffer(str(value).encode("utf-8"), np.uint8)
        offsets = np.arange(rows + 1, dtype=np.int64) * len(data)
        return TextColumn(offsets, np.tile(data, rows))
    if isinstance(feature, (Scalar, ClassLabel)):
        dtype = np.int64 if isinstance(feature, ClassLabel) else feature.dtype
        return np.full(rows, value, dtype)
    raise Refused


def _examples(
    target: str,
    position: int,
    batch: Any,
    plan: ColumnsPlan,
    constants: Mapping[str, Any],
    casts: list[tuple[str, str, Any]],
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A batch's examples as the row reader gives them: each field's values (a column's, or
    the file's) cast by the field's caster, keyed ``record set:index``."""
    values = {
        f: [constants[f]] * batch.num_rows
        if f in constants
        else batch.column(plan.columns[f]).to_pylist()
        for _, f, _ in casts
    }
    for i in range(batch.num_rows):
        example = {name: cast(values[f][i]) for name, f, cast in casts}
        yield f"{target}:{position + i}", example

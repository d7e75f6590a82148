"""A Croissant record set read a batch of rows at a time and checked column by column, for
units that encode them in bulk (`catalog.features.batch_encode`), where that gives the values
the row reader (`catalog.formats.croissant_records`) gives.

That is the case for a record set whose every field is a column of one Parquet FileObject or
FileSet (files on disk), read as it is: no transform, date, JSON path, file property, join or
split filter. Its rows are read as the ``parquet`` format reads them (footers, row groups:
`catalog.formats.parquet`) and converted by `catalog.formats.table_batches.from_typed` with
the Croissant casts (`catalog.formats.croissant_values`) as fills: a null text is ``"None"``,
a null float NaN, a null class ``"None"`` where the enumeration holds it. Whatever those
converters do not show to be the row reader's value (a float in an integer field, which
mlcroissant cuts; a number in a text field; a null integer, ...) sends the batch to the row
reader's casts, which give the same values or the same error. Every other record set is read
by the row reader, in batches of its examples.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Text
from catalog.formats.base import Batch, Source

if TYPE_CHECKING:
    from catalog.formats.croissant_records import Recipe

__all__ = ["ColumnsPlan", "batches", "columns_plan"]


@dataclass(frozen=True)
class ColumnsPlan:
    """What a record set read column by column reads: its Parquet `files` (in the row
    reader's order), the `columns` of its fields (``{field id: column}``, all of them, so a
    missing one is an error as it is row by row) and the field each feature takes."""

    files: tuple[Path, ...]
    columns: Mapping[str, str]
    features: Mapping[str, str]


def columns_plan(recipe: Recipe) -> ColumnsPlan | None:
    """The `ColumnsPlan` of the recipe's record set when every field is a plain column of one
    Parquet file or file set on disk (see the module docstring); None otherwise."""
    from catalog.formats.croissant_records import file_reference

    node = recipe.record_sets[recipe.target]
    fields = recipe.fields[recipe.target]
    if recipe.where or isinstance(node.get("data"), list) or not fields:
        return None
    sources = {f.file for f in fields.values()}
    if len(sources) != 1 or None in sources:
        return None
    file = str(sources.pop())
    if file not in recipe.files or recipe.files[file]["kind"] != "parquet":
        return None
    columns = {}
    for f in fields.values():
        plain = f.plain_column
        if plain is None or f.property is not None or f.joined or file_reference(f.node):
            return None
        columns[f.id] = plain
    if not all(isinstance(feature, str) and feature in fields for feature in
               recipe.features.values()):  # fmt: skip
        return None  # a nested field (subField): the row reader builds its dict
    paths = [path for path, _ in recipe.files_of(file)]
    if not all(isinstance(path, Path) for path in paths):
        return None  # a zip member: read in memory by the row reader
    return ColumnsPlan(tuple(paths), columns, dict(recipe.features))


def _fill(feature: Feature) -> Any:
    """The value the row reader's cast gives a null (`catalog.formats.croissant_values`), or
    None where it is an error (then the row reader raises it)."""
    from catalog.formats.croissant_values import MISSING_TEXT

    if isinstance(feature, Text):
        return MISSING_TEXT
    if isinstance(feature, ClassLabel):
        names = feature.names if feature._names is not None else []
        return MISSING_TEXT if MISSING_TEXT in names else None
    if isinstance(feature, Scalar) and feature.dtype.kind == "f":
        return float("nan")
    return None


def batches(source: Source, start: int, stop: int) -> Iterator[Batch]:
    """Examples ``start..stop-1`` of a croissant split in `Batch` es: columns where the
    record set allows (`columns_plan`), else the row reader's examples."""
    from catalog.formats.croissant_records import Recipe, examples
    from catalog.formats.table_batches import row_batches

    recipe = Recipe(source.options["recipe"], source.options["files"])
    plan = columns_plan(recipe)
    if plan is None:  # read from the start, as the row path does without random access
        yield from row_batches(itertools.islice(examples(source), start, stop), start)
        return
    yield from _column_batches(source, recipe.target, plan, start, stop)


def _column_batches(
    source: Source, target: str, plan: ColumnsPlan, start: int, stop: int
) -> Iterator[Batch]:
    from catalog.formats.croissant_values import caster
    from catalog.formats.parquet import _Access
    from catalog.formats.table_batches import BATCH_ROWS, Refused, from_typed, row_batches

    features: FeaturesDict = source.features
    table = Source(
        source.split,
        {"files": plan.files},
        {"columns": {c: c for c in plan.columns.values()}, "fill": {}},
        features,
    )
    fills = {name: _fill(features[name]) for name in plan.features}
    casts = [(name, plan.columns[f], caster(features[name], f)) for name, f in
             plan.features.items()]  # fmt: skip
    position = start
    for _, _, batch in _Access(table).slices(start, stop, BATCH_ROWS):
        try:
            converted: dict[str, Any] | None = {
                name: from_typed(batch.column(column), features[name], fills[name])
                for name, column, _ in casts
            }
        except Refused:
            converted = None
        if converted is None:
            pairs = _examples(target, position, batch, casts)
            yield from row_batches(pairs, position, batch.num_rows)
        else:
            yield Batch(position, batch.num_rows, columns=converted)
        position += batch.num_rows


def _examples(
    target: str, position: int, batch: Any, casts: list[tuple[str, str, Any]]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """A batch's examples as the row reader gives them: each column's values cast by the
    field's caster, keyed ``record set:index``."""
    values = {column: batch.column(column).to_pylist() for _, column, _ in casts}
    for i in range(batch.num_rows):
        example = {name: cast(values[column][i]) for name, column, cast in casts}
        yield f"{target}:{position + i}", example

"""Parquet files: one example per row, columns mapped to features (``pip install
'catalog[parquet]'``, which brings pyarrow).

Options as for JSON Lines (`catalog.formats.tables.json_lines`): ``columns`` ``{feature: column}``
and ``fill`` ``{feature: text}`` standing in for a null. The files are read a batch of rows at
a time (memory stays that of one batch, whatever the file's size), and every value is checked
against its feature (`catalog.formats.tables.typed_values`): an error names the file, the row
(0-based, in the file) and the column. The key of an example is ``<file name>:<row>``.

Dates, times and timestamps are read as text, each value as Python shows it (and pandas shows
a timestamp): ``2017-01-01 00:00:00+00:00``, ``2017-01-01``, ``12:30:00`` (`temporal_as_text`);
nanoseconds that a microsecond cannot hold are an error naming the file and row.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Batch, Examples, Option, Role, Source, SourceFormat
from catalog.formats.tables.json_lines import fill_values, validate_columns
from catalog.formats.tables.table_batches import BATCH_ROWS as ROWS
from catalog.formats.tables.table_batches import Refused, row_batches
from catalog.formats.tables.typed_batches import from_typed
from catalog.formats.tables.typed_values import typed_example

__all__ = [
    "BATCH_ROWS", "FORMAT", "ParquetAccess", "examples", "is_temporal", "parquet_file",
    "temporal_as_text",
]  # fmt: skip

#: Rows read at once, example by example (a batch of images is this many images).
BATCH_ROWS = 1024


def parquet_file(path: Any) -> Any:
    """A ``pyarrow.parquet.ParquetFile``; MissingDependencyError without pyarrow,
    SourceFormatError for a file that is not Parquet."""
    check()
    import pyarrow
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pyarrow.ArrowException, OSError) as error:
        raise SourceFormatError(f"{path}: not a Parquet file pyarrow can read ({error})") from None


def check() -> None:
    """MissingDependencyError unless pyarrow is installed."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise MissingDependencyError(
            "reading Parquet files needs pyarrow: pip install 'catalog[parquet]'"
        ) from None


def examples(source: Source) -> Examples:
    """Yield ``(file:row, example)`` for every row of the files, in order."""
    return ParquetAccess(source).examples(0, None)


class ParquetAccess:
    """Random access to the rows of a split's Parquet files (a `catalog.formats.base.Source`
    with the ``files`` role and ``columns``/``fill`` options): the row counts come from their
    footers, and a range starts reading at the row group holding its first row."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._counts: list[int] | None = None

    @property
    def length(self) -> int:
        """The rows of all the files (their footers')."""
        if self._counts is None:
            self._counts = [
                parquet_file(path).metadata.num_rows for path in self._source.paths("files")
            ]
        return sum(self._counts)

    def slices(
        self, start: int, stop: int | None, rows: int = BATCH_ROWS, dates_as_text: bool = True
    ) -> Iterator[tuple[Path, int, Any]]:
        """``(file, its row, record batch)`` for the rows ``start..stop-1`` of the split; its
        dates, times and timestamps as text (`temporal_as_text`) unless not `dates_as_text`."""
        import pyarrow

        columns: Mapping[str, str] = self._source.options["columns"]
        position = 0
        for path in self._source.paths("files"):
            if stop is not None and position >= stop:
                return
            handle = parquet_file(path)
            present = set(handle.schema_arrow.names)
            absent = sorted(set(columns.values()) - present)
            if absent:
                raise SourceFormatError(
                    f"{path}: no column {absent[0]!r}; the columns are {', '.join(sorted(present))}"
                )
            metadata = handle.metadata
            groups: list[int] = []
            row = 0
            for group in range(metadata.num_row_groups):
                size = metadata.row_group(group).num_rows
                if position + row + size > start and (stop is None or position + row < stop):
                    if not groups:
                        first = row
                    groups.append(group)
                row += size
            if groups:
                row = first
                try:
                    for batch in handle.iter_batches(
                        batch_size=rows, row_groups=groups, columns=list(columns.values())
                    ):
                        lo = max(0, start - position - row)
                        hi = (
                            batch.num_rows
                            if stop is None
                            else min(batch.num_rows, stop - position - row)
                        )
                        if hi > lo:
                            part = batch.slice(lo, hi - lo)
                            yield path, row + lo, temporal_as_text(part) if dates_as_text else part
                        row += batch.num_rows
                except pyarrow.ArrowException as error:
                    raise SourceFormatError(
                        f"{path}: cannot read it at row {row} ({error})"
                    ) from None
            position += metadata.num_rows

    def examples(self, start: int, stop: int | None) -> Examples:
        """``(file:row, example)`` for the rows ``start..stop-1`` (None: to the end)."""
        options, features = self._source.options, self._source.features
        columns: Mapping[str, str] = options["columns"]
        fills = fill_values(options["fill"], features)
        for path, row, batch in self.slices(start, stop):
            yield from _batch_examples(path, row, batch, columns, fills, features)

    def batches(self, start: int, stop: int) -> Iterator[Batch]:
        """The rows ``start..stop-1`` in `Batch` es, column by column where
        `catalog.formats.tables.typed_batches.from_typed` takes them, else example by example."""

        options, features = self._source.options, self._source.features
        columns: Mapping[str, str] = options["columns"]
        fills = fill_values(options["fill"], features)
        position = start
        for path, row, batch in self.slices(start, stop, ROWS):
            try:
                converted: dict[str, Any] | None = {
                    name: from_typed(batch.column(column), features[name], fills.get(name))
                    for name, column in columns.items()
                }
            except Refused:
                converted = None
            if converted is None:
                pairs = _batch_examples(path, row, batch, columns, fills, features)
                yield from row_batches(pairs, position, batch.num_rows)
            else:
                yield Batch(position, batch.num_rows, columns=converted)
            position += batch.num_rows

    def close(self) -> None:
        pass


def is_temporal(kind: Any) -> bool:
    """Whether the Arrow type `kind` (its values, if dictionary-encoded) is a date, a time or
    a timestamp."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_time(kind))


def temporal_as_text(batch: Any) -> Any:
    """`batch` (a record batch) with its date, time and timestamp columns as text (see the
    module docstring), nulls kept; pyarrow's ArrowInvalid for nanoseconds a microsecond cannot
    hold."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not any(is_temporal(kind) for kind in batch.schema.types):
        return batch
    arrays = []
    for array, kind, name in zip(
        batch.columns, batch.schema.types, batch.schema.names, strict=True
    ):
        if is_temporal(kind):
            if pa.types.is_dictionary(kind):
                array, kind = array.dictionary_decode(), kind.value_type
            if getattr(kind, "unit", None) == "ns":  # Python's values hold microseconds
                coarser = pa.timestamp("us", kind.tz) if pa.types.is_timestamp(kind) else None
                try:
                    array = pc.cast(array, coarser or pa.time64("us"), safe=True)
                except pa.ArrowInvalid:
                    raise pa.ArrowInvalid(
                        f"column {name!r} holds a {kind} value with nanoseconds, which its text "
                        "(to the microsecond) cannot hold; round the column to microseconds "
                        "(pandas: .dt.floor('us')) and write the file again"
                    ) from None
            shown = [None if value is None else str(value) for value in array.to_pylist()]
            array = pa.array(shown, pa.string())
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _batch_examples(
    path: Path,
    row: int,
    batch: Any,
    columns: Mapping[str, str],
    fills: Mapping[str, Any],
    features: FeaturesDict,
) -> Examples:
    values = {name: batch.column(name).to_pylist() for name in columns.values()}
    for i in range(batch.num_rows):
        at = {column: column_values[i] for column, column_values in values.items()}
        yield (
            f"{path.name}:{row + i}",
            typed_example(
                at.__getitem__,
                columns,
                fills,
                features,
                f"{path}: row {row + i}",
                "column",
                "is null",
            ),
        )


FORMAT = SourceFormat(
    name="parquet",
    description="Parquet files: one example per row, columns mapped to features",
    roles=(Role("files", many=True),),
    options={
        "columns": Option("str_map", {}, "feature -> the column holding its value"),
        "fill": Option("str_map", {}, "feature -> the text standing in for a null"),
    },
    features=lambda options: (frozenset(options["columns"]), frozenset()),
    examples=examples,
    validate=validate_columns,
    check=check,
    random_access=ParquetAccess,
    batches=lambda source, start, stop: ParquetAccess(source).batches(start, stop),
)

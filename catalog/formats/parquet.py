"""Parquet files: one example per row, columns mapped to features (``pip install
'catalog[parquet]'``, which brings pyarrow).

Options as for JSON Lines (`catalog.formats.json_lines`): ``columns`` ``{feature: column}``
and ``fill`` ``{feature: text}`` standing in for a null. The files are read a batch of rows at
a time (memory stays that of one batch, whatever the file's size), and every value is checked
against its feature (`catalog.formats.typed_values`): an error names the file, the row
(0-based, in the file) and the column. The key of an example is ``<file name>:<row>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.json_lines import fill_values, validate_columns
from catalog.formats.typed_values import typed_value

__all__ = ["BATCH_ROWS", "FORMAT", "examples", "parquet_file"]

#: Rows read at once.
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
    import pyarrow

    options, features = source.options, source.features
    columns: Mapping[str, str] = options["columns"]
    fills = fill_values(options["fill"], features)
    for path in source.paths("files"):
        handle = parquet_file(path)
        present = set(handle.schema_arrow.names)
        absent = sorted(set(columns.values()) - present)
        if absent:
            raise SourceFormatError(
                f"{path}: no column {absent[0]!r}; the columns are {', '.join(sorted(present))}"
            )
        row = 0
        try:
            batches = handle.iter_batches(batch_size=BATCH_ROWS, columns=list(columns.values()))
            for batch in batches:
                values = {name: batch.column(name).to_pylist() for name in columns.values()}
                for i in range(batch.num_rows):
                    yield (
                        f"{path.name}:{row}",
                        _example(values, i, columns, fills, features, path, row),
                    )
                    row += 1
        except pyarrow.ArrowException as error:
            raise SourceFormatError(f"{path}: cannot read it at row {row} ({error})") from None


def _example(
    values: Mapping[str, list[Any]],
    i: int,
    columns: Mapping[str, str],
    fills: Mapping[str, Any],
    features: FeaturesDict,
    path: Any,
    row: int,
) -> dict[str, Any]:
    example = {}
    for feature, column in columns.items():
        value = values[column][i]
        if value is None:
            if feature not in fills:
                raise SourceFormatError(
                    f"{path}: row {row}: column {column!r} is null; give options.fill a value "
                    f"for feature {feature!r} (catalog prepare FILE: --fill {column}=VALUE)"
                )
            example[feature] = fills[feature]
            continue
        try:
            example[feature] = typed_value(features[feature], value)
        except ValueError as error:
            raise SourceFormatError(f"{path}: row {row}: column {column!r}: {error}") from None
    return example


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
)

"""One pass over a table's files: its columns, each column's type, its rows per file.

`scan` reads every row of every file once (CSV/TSV and JSON Lines; Parquet from its
metadata, plus the label column's values when one is asked for), keeping per column only what
`catalog.spec.infer.column_types` keeps, so memory stays bounded whatever the files' size.
Every file of a table must have the first file's columns (CSV/TSV: the same header; its
delimiter and encoding are those of the first file).
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError, SpecError
from catalog.features import Feature
from catalog.formats.tables.csv_dialect import Dialect, sniff
from catalog.formats.tables.delimited import rows, too_many_fields
from catalog.formats.tables.json_lines import objects
from catalog.spec.infer.column_types import EMPTY, JsonColumn, TextColumn

__all__ = ["TableScan", "scan"]

#: The most class names a --label column may have.
MAX_CLASSES = 100_000
#: The bytes per column from which a CSV/TSV file is scanned in batches: each batch costs a
#: few pyarrow calls per column, which only many rows repay (a wide file of few rows is
#: scanned row by row: 12,000 columns of 3 rows took 42 s in batches).
BULK_BYTES_PER_COLUMN = 4096
#: Rows of a Parquet file looked at to offer a text column as a label.
_SAMPLE = 1000


@dataclass
class TableScan:
    """What one pass over a table's files found."""

    #: the column names, in the file's order
    columns: list[str]
    #: column -> its statistics (CSV/TSV, JSON Lines; empty for Parquet)
    stats: dict[str, TextColumn | JsonColumn] = field(default_factory=dict)
    #: file -> its rows (blank lines and header rows not counted)
    counts: dict[Path, int] = field(default_factory=dict)
    #: a CSV/TSV file's dialect
    dialect: Dialect | None = None
    #: column -> its type, for Parquet (from the schema)
    types: dict[str, Feature] = field(default_factory=dict)
    #: the label column's distinct values (Parquet), or None
    label_values: set[Any] | None = None
    #: Parquet text columns' statistics over the first file's first rows (to offer a label)
    sampled: dict[str, JsonColumn] = field(default_factory=dict)
    #: CSV/TSV: the names the reader must be given (its ``header`` option) when they are not
    #: the file's header row as it stands (no header row; empty or repeated names, which
    #: pandas renames), and the lines it then skips (``skip_rows``: the header row's too)
    given_header: list[str] = field(default_factory=list)
    skip_rows: int = 0
    #: CSV/TSV: the file's header row, as written (what `columns` renamed, if anything)
    file_header: list[str] = field(default_factory=list)


def pandas_names(header: list[str]) -> list[str]:
    """The column names pandas' C parser gives a header row: an empty name is ``Unnamed: i``
    (its position), a repeated one gets ``.1``, ``.2``... (skipping names the header holds).

    >>> pandas_names(["a", "a", "a.1", "a"]), pandas_names(["x", "", "x"])
    (['a', 'a.2', 'a.1', 'a.3'], ['x', 'Unnamed: 1', 'x.1'])
    """
    names = [name if name != "" else f"Unnamed: {i}" for i, name in enumerate(header)]
    held = set(names)
    counts: dict[str, int] = {}
    out = []
    for name in names:
        column, count = name, counts.get(name, 0)
        while count > 0:
            counts[name] = count + 1
            column = f"{name}.{count}"
            count = count + 1 if column in held else counts.get(column, 0)
        out.append(column)
        counts[column] = count + 1
    return out


def scan(
    kind: str,
    files: list[Path] | tuple[Path, ...],
    *,
    label: str | None = None,
    delimiter: str | None = None,
    encoding: str | None = None,
    missing: frozenset[str] = EMPTY,
    skip_rows: int = 0,
    no_header: bool = False,
    quoting: str = "minimal",
) -> TableScan:
    """The `TableScan` of a table's `files` of one `kind` (csv, tsv, jsonl, parquet);
    `missing`: the CSV/TSV fields that are missing values; `skip_rows`: lines skipped at each
    CSV/TSV file's start; `no_header`: its first row is data (columns named ``0``, ``1``...,
    as pandas' ``header=None``, as text); `quoting`: how CSV/TSV fields are quoted (the
    delimited format's option: ``minimal`` or ``none``)."""
    if kind == "jsonl":
        return _scan_json(files, label)
    if kind == "parquet":
        return _scan_parquet(files, label)
    return _scan_delimited(
        kind, files, label, (delimiter, encoding, quoting), missing | EMPTY, skip_rows, no_header
    )


def _cap(column: str, label: str | None) -> dict[str, int]:
    return {"cap": MAX_CLASSES} if column == label else {}


def _scan_delimited(
    kind: str,
    files: list[Path] | tuple[Path, ...],
    label: str | None,
    given: tuple[str | None, str | None, str],
    missing: frozenset[str],
    skip_rows: int,
    no_header: bool,
) -> TableScan:
    delimiter, encoding, quoting = given
    dialect = sniff(files[0], delimiter, "\t" if kind == "tsv" else ",", encoding)
    options: dict[str, Any] = {
        "encoding": dialect.encoding,
        "delimiter": dialect.delimiter,
        "quoting": quoting,
        "skip_rows": skip_rows,
    }
    header: list[str] | None = None
    names: list[str] = []
    columns: list[TextColumn] = []
    counts: dict[Path, int] = {}
    header_lines = 0  # the lines the header row takes (with the blank ones after it)
    for path in files:
        lines = rows(path, options)
        first = next(lines, None)
        if first is None:
            what = "a row" if no_header else "a header row"
            raise SourceFormatError(f"{path}: empty; expected {what}")
        if no_header:  # the first row is data: pandas' header=None names 0..n-1
            lines = itertools.chain([first], lines)
            first = (first[0], [str(i) for i in range(len(first[1]))])
        if header is None:
            header = first[1]
            names = pandas_names(header)
            columns = [TextColumn(**_cap(name, label)) for name in names]  # type: ignore[arg-type]
        elif first[1] != header:
            raise SpecError(
                f"{path}: its header ({', '.join(first[1])}) differs from {files[0].name}'s "
                f"({', '.join(header)}); the files of one table share their columns"
            )
        if not no_header and names != header:
            second = next(lines, None)
            if second is not None:
                header_lines = max(header_lines, second[0] - first[0])
                lines = itertools.chain([second], lines)
        plain = first[0] == 1 and not no_header
        large = path.stat().st_size >= BULK_BYTES_PER_COLUMN * len(header)
        bulk = _bulk_scan(path, options, columns, missing) if plain and large else None
        if bulk is not None:
            columns, counts[path] = bulk
            continue
        n = 0
        width = len(header)
        for line, row in lines:
            n += 1
            if len(row) > width:
                raise too_many_fields(path, line, width, len(row), dialect.delimiter)
            for column, text in zip(columns, row):  # noqa: B905 (a short row: missing after)
                column.add(text, line, missing)
            for column in columns[len(row) :]:
                column.add("", line)
        counts[path] = n
    assert header is not None
    found = TableScan(names, dict(zip(names, columns, strict=True)), counts, dialect)
    found.file_header, found.skip_rows = header, skip_rows
    if no_header:
        found.given_header = names
    elif names != header:  # pandas' names given, the header row skipped
        found.given_header, found.skip_rows = names, skip_rows + max(header_lines, 1)
    return found


def _bulk_scan(
    path: Path, options: dict[str, str], columns: list[TextColumn], missing: frozenset[str]
) -> tuple[list[TextColumn], int] | None:
    """`columns` having seen the file's rows, and their count, read a batch at a time
    (`catalog.spec.infer.column_batches`); None where the rows are not one line each or
    not read the same as one by one (`catalog.formats.tables.csv_batches`): then they are read one
    by one (which names the line of what is wrong)."""
    from catalog.formats.tables.csv_batches import bulk_dialect, open_fields

    if not bulk_dialect(options["delimiter"], options["encoding"]):
        return None  # no pyarrow among them: then the rows are read one by one
    import pyarrow as pa

    from catalog.spec.infer.column_batches import add_batch

    opened = open_fields(path, options, hashed=True)  # its sha256 while it is read
    if opened is None:
        return None
    reader, checked, _ = opened
    seen = copy.deepcopy(columns)
    n = 0
    try:
        for batch in reader:
            if checked.irregular or checked.multiline:
                return None
            for column, values in zip(seen, batch.columns, strict=True):
                # the header is line 1, rows one line each
                add_batch(column, values, n + 2, missing)
            n += batch.num_rows
    except (pa.ArrowException, OSError):
        return None
    finally:
        checked.close()
    if checked.irregular or checked.multiline:
        return None
    return seen, n


def _scan_json(files: list[Path] | tuple[Path, ...], label: str | None) -> TableScan:
    stats: dict[str, JsonColumn] = {}
    counts: dict[Path, int] = {}
    seen_rows = 0
    for path in files:
        n = 0
        for line, obj in objects(path):
            n += 1
            for key, value in obj.items():
                column = stats.get(key)
                if column is None:  # absent from every earlier row: missing there
                    column = stats[key] = JsonColumn(**_cap(key, label))  # type: ignore[arg-type]
                    if seen_rows + n > 1:
                        column.missing, column.first_missing = seen_rows + n - 1, 1
                column.add(value, line, str(path), key)
            if len(obj) < len(stats):
                for key, column in stats.items():
                    if key not in obj:
                        column.add(None, line, str(path), key)
        seen_rows += n
        counts[path] = n
    if not stats:
        raise SourceFormatError(f"{files[0]}: no JSON objects")
    return TableScan(list(stats), dict(stats), counts)


def _scan_parquet(files: list[Path] | tuple[Path, ...], label: str | None) -> TableScan:
    from catalog.formats.tables.parquet import parquet_file

    first = parquet_file(files[0])
    columns = list(first.schema_arrow.names)
    counts = {}
    values: set[Any] | None = set() if label else None
    for path in files:
        handle = parquet_file(path)
        if list(handle.schema_arrow.names) != columns:
            raise SpecError(
                f"{path}: its columns ({', '.join(handle.schema_arrow.names)}) differ from "
                f"{files[0].name}'s ({', '.join(columns)}); the files of one table share them"
            )
        counts[path] = handle.metadata.num_rows
        if values is not None and label in columns:
            for batch in handle.iter_batches(columns=[label]):
                values.update(v for v in batch.column(0).to_pylist() if isinstance(v, str))
                if len(values) > MAX_CLASSES:
                    raise SpecError(f"--label {label}: more than {MAX_CLASSES} distinct values")
    sampled: dict[str, JsonColumn] = {}
    texts = [f.name for f in first.schema_arrow if str(f.type) in ("string", "large_string")]
    for batch in first.iter_batches(batch_size=_SAMPLE, columns=texts) if texts else ():
        for name in texts:
            column = sampled[name] = JsonColumn()
            for value in batch.column(name).to_pylist():
                if isinstance(value, str):
                    column.add(value, 0, str(files[0]), name)
        break
    return TableScan(columns, counts=counts, label_values=values, sampled=sampled)

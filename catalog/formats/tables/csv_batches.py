"""CSV/TSV files read in batches by pyarrow's streaming CSV reader, for units that encode rows
in bulk; the values and errors are exactly those of `catalog.formats.tables.delimited`'s rows.

pyarrow parses a file (its dialect: the split's ``delimiter``; every field read as text) a
block at a time, and `catalog.formats.tables.table_batches.from_strings` converts each column.
pyarrow
parses regular CSV the way Python's ``csv`` module does, and is laxer on irregular CSV (text
after a closing quote, a quote inside an unquoted field, a lone ``\\r``), which
`catalog.formats.tables.delimited` refuses or reads otherwise. So the bytes are checked on their way
into pyarrow (`Checked`: every opening quote starts a field, every closing quote ends one, no
lone ``\\r``, no NUL, quotes balanced at the end). A file whose quotes are text (``quoting:
none``, Python's ``csv.QUOTE_NONE``) is parsed by pyarrow with no quote character, and only
the ``\\r`` and NUL checks apply.

What pyarrow parses alike but `from_strings` does not convert (a value only Python reads:
``1_000``, ``" 5"``; a missing value without a fill) sends that batch alone to the row reader's
conversion (`catalog.formats.tables.delimited.RowConverter`, on the same fields), and the next batch
is read in bulk again. A row shorter than the header (legal with ``incomplete: missing``) is
skipped by pyarrow, handed back by its row number and put back in place, padded as the row
reader pads it. Whatever else is not shown regular (irregular bytes, a row longer than the
header or than pyarrow's block, values holding line breaks together with short rows, an
encoding other than UTF-8) and every error send the rest of the file to the row reader, from
the first row of the batch where it happened (the rows before it parsed again, not converted):
the same values, or the same error naming file and line.
"""

from __future__ import annotations

import codecs
import itertools
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog._util.optional import importable
from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Batch, Source
from catalog.formats.resume import Cursor
from catalog.formats.tables import csv_dialect
from catalog.formats.tables.compressed import compression
from catalog.formats.tables.csv_check import Checked
from catalog.formats.tables.delimited import RowConverter, examples, file_examples, rows
from catalog.formats.tables.table_batches import Refused, from_strings, resumable, row_batches

__all__ = ["BLOCK_BYTES", "Checked", "batches", "bulk_dialect", "open_fields"]

#: Bytes pyarrow parses at once (a row longer than this is read by the row reader). Its
#: streaming reader reads up to 32 blocks ahead in a thread of its own (measured: a slow
#: consumer finds 128 MB read with 4 MiB blocks), so this also sets that memory: 32 MiB.
BLOCK_BYTES = 1 << 20
#: Options only the row reader applies.
_ROW_OPTIONS = (
    "stack", "constant", "row_index", "strip", "doubled_quotes", "via_float32", "skip_rows"
)  # fmt: skip


def _stream(source: Source, cursor: Cursor) -> Iterator[Batch]:
    """The examples of a delimited split from ``cursor.start`` on, in `Batch` es (the rows
    before a later ``cursor.start`` parsed, not converted)."""
    stop = sys.maxsize
    options = source.options
    if not _bulk_options(options):
        rows_ = itertools.islice(examples(source), cursor.start, stop)
        yield from row_batches(rows_, cursor.start)
        return
    offset = 0
    for path in source.paths("file"):
        if offset >= stop:
            return
        counted = [0]
        yield from _file(path, options, source.features, offset, cursor, stop, counted)
        offset += counted[0]


#: ``batches(source, start, stop)``: the examples ``start..stop-1`` of a delimited split, in
#: `Batch` es (see the module docstring); a call starting where the last one stopped goes on
#: reading the same files.
batches = resumable(_stream)


def _bulk_options(options: Mapping[str, Any]) -> bool:
    """Whether the split's options are ones `from_strings` applies (columns, header, missing,
    fill, values); others (stack, strip, ...) are left to the row reader."""
    return (
        not any(options[name] for name in _ROW_OPTIONS)
        and options["incomplete"] != "skip"
        and bulk_dialect(options["delimiter"], options["encoding"])
    )


def _file(
    path: Path,
    options: Mapping[str, Any],
    features: FeaturesDict,
    offset: int,
    cursor: Cursor,
    stop: int,
    counted: list[int],
) -> Iterator[Batch]:
    """The split's rows ``cursor.start..stop-1`` that this file holds, its first row being
    the split's row `offset`; `counted` gets its row count (or `stop`, read no further)."""
    import pyarrow as pa

    include = list(dict.fromkeys(options["columns"].values()))
    invalid: list[Any] = []  # rows pyarrow skipped (a field count not the header's)
    opened = open_fields(path, options, include, invalid)
    row = offset  # the split's position of the file's next row
    if opened is not None:
        reader, checked, header = opened
        convert = RowConverter(path, options, features, include)
        parsed = 0 if options["header"] else 1  # rows pyarrow parsed (its numbers), a header's too
        try:
            while row < stop:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    if checked.irregular or invalid:
                        break
                    counted[0] = row - offset
                    return
                if checked.irregular:
                    break
                if invalid:  # short rows: put back where they were, as the row reader pads them
                    batch = _with_skipped(batch, invalid, parsed + 1, header, include, options)
                    if batch is None or checked.multiline:
                        break
                size, done, failed = batch.num_rows, 0, False
                while not failed:  # the parts of the batch asked for (by this call or later)
                    lo, hi = max(done, cursor.start - row), min(size, cursor.stop - row)
                    if hi <= lo:
                        break
                    part = _part(batch, lo, hi, features, options, convert, (row, offset))
                    if part is None:
                        row, failed = row + lo, True  # an error: the row reader names its line
                    else:
                        yield Batch(row + lo, hi - lo, **part)
                        done = hi
                if failed:
                    break
                row += size
                parsed += size
            else:
                counted[0] = stop
                return
        except (pa.ArrowException, OSError):
            pass  # the row reader says what is wrong, naming the line
        finally:
            checked.close()
    # the row reader, from `row` on (the rows before it are parsed again, not converted:
    # bulk options have every row give one example, so the index is the position)
    seen = [0]
    begin = max(row, cursor.start)

    def numbered() -> Iterator[tuple[str, dict[str, Any]]]:
        for index, example in file_examples(path, options, features, begin - offset):
            seen[0] = index + 1
            if example is not None:
                yield str(offset + index), example

    rest = itertools.islice(numbered(), 0, stop - begin)
    yield from row_batches(rest, begin)
    counted[0] = seen[0]


def _part(
    batch: Any,
    lo: int,
    hi: int,
    features: FeaturesDict,
    options: Mapping[str, Any],
    convert: RowConverter,
    where: tuple[int, int],
) -> dict[str, Any] | None:
    """Rows ``lo..hi-1`` of `batch` (`where`: the split's positions of its first row and of
    its file's first row) as a `Batch` 's
    ``columns`` (converted in bulk), else its ``examples`` (as the row reader converts the same
    fields: the bytes were checked); None if one is an error."""
    part = batch.slice(lo, hi - lo)
    missing, fills, values = frozenset(options["missing"]), options["fill"], options["values"]
    try:
        return {
            "columns": {
                name: from_strings(
                    part.column(column), features[name], missing, fills.get(name), values.get(name)
                )
                for name, column in options["columns"].items()
            }
        }
    except Refused:
        pass
    row, offset = where
    pairs = _examples(convert, [c.to_pylist() for c in part.columns], row + lo - offset)
    if pairs is None:
        return None
    return {"examples": [(str(offset + i), e) for i, e in pairs]}


def _with_skipped(
    batch: Any,
    invalid: list[Any],
    first: int,
    header: list[str],
    include: list[str],
    options: Mapping[str, Any],
) -> Any:
    """`batch` (its first row being pyarrow's row number `first`) with the rows pyarrow
    skipped while parsing it (`invalid`: shorter than the header) put back in place, padded as
    ``incomplete: missing`` pads them; None where that cannot be shown to be the row reader's
    reading (a longer row, another ``incomplete``)."""
    import pyarrow as pa

    if options["incomplete"] != "missing":
        return None
    rows = batch.num_rows
    taken = 0  # the skipped rows among this batch's (numbered first .. first + rows + taken - 1)
    while taken < len(invalid) and invalid[taken].number is not None:
        if invalid[taken].number >= first + rows + taken:
            break
        taken += 1
    skipped, invalid[:] = invalid[:taken], invalid[taken:]
    if any(r.number < first or r.actual_columns >= r.expected_columns for r in skipped):
        return None
    columns = [c.to_pylist() for c in batch.columns]
    position = {name: i for i, name in enumerate(header)}
    fill = options["missing"][0]
    at = {r.number - first: r for r in skipped}
    out: list[list[str]] = [[] for _ in include]
    source = 0
    for i in range(rows + taken):
        short = at.get(i)
        if short is None:
            for column, values in zip(out, columns, strict=True):
                column.append(values[source])
            source += 1
            continue
        row = csv_dialect.reader([short.text], delimiter=options["delimiter"], strict=True)
        parsed: list[str] = next(row, [])
        if len(parsed) != short.actual_columns:
            return None
        padded = parsed + [fill] * (len(header) - len(parsed))
        for column, name in zip(out, include, strict=True):
            column.append(padded[position[name]])
    arrays = [pa.array(column, pa.string()) for column in out]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def _examples(
    convert: RowConverter, fields: list[list[str]], first: int
) -> list[tuple[int, dict[str, Any]]] | None:
    """A batch's rows (`fields`: its columns' texts; its first row the file's row `first`) as
    the row reader's examples; None if one is an error (the row reader, reading the file, then
    says which, naming its line)."""
    pairs = []
    try:
        for i in range(len(fields[0]) if fields else 0):
            example = convert(first + i, 0, [column[i] for column in fields])
            assert example is not None  # incomplete: skip is left to the row reader
            pairs.append((first + i, example))
    except SourceFormatError:
        return None
    return pairs


def bulk_dialect(delimiter: str, encoding: str) -> bool:
    """Whether files of this dialect can be read by `open_fields` (else: the row reader)."""
    return (
        importable("pyarrow")
        and codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")
        and len(delimiter) == 1
        and ord(delimiter) < 128
        and delimiter not in '"\r\n'
    )


def open_fields(
    path: Path,
    options: Mapping[str, Any],
    include: list[str] | None = None,
    invalid: list[Any] | None = None,
    hashed: bool = False,
) -> tuple[Any, Checked, list[str]] | None:
    """pyarrow's streaming reader of the file's `include` d columns (every one: None) as
    text, its `Checked` input and the file's header; or None (the row reader reads it).
    `options`: the delimited format's ``delimiter``, ``encoding`` and ``quoting``. A row whose
    field count is not the header's is an error, or, given `invalid`, skipped and appended to
    it (pyarrow's ``InvalidRow``: its row number, counts and text). `hashed`: the file is
    hashed as it is read (see `Checked`)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if compression(path) is not None:
        return None  # compressed: the row reader reads it, decompressing as a stream
    given = list(options.get("header") or [])  # the names of a file without a header row
    first = next(rows(path, options), None)
    if first is None:
        return None
    header = given or first[1]
    if len(set(header)) != len(header):
        return None
    quoted = options["quoting"] == "minimal"  # else quotes are text
    checked = Checked(path, options["delimiter"], hashed, quoted)
    try:
        reader = pacsv.open_csv(
            checked,
            read_options=pacsv.ReadOptions(
                block_size=BLOCK_BYTES, use_threads=False, column_names=given or None
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=options["delimiter"],
                quote_char='"' if quoted else False,
                double_quote=quoted,
                escape_char=False,
                newlines_in_values=quoted,
                ignore_empty_lines=True,
                invalid_row_handler=None if invalid is None else _skipper(invalid),
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                include_columns=list(dict.fromkeys(header if include is None else include)),
                strings_can_be_null=False,
                check_utf8=True,
            ),
        )
    except (pa.ArrowException, OSError):
        checked.close()
        return None
    if checked.irregular:
        checked.close()
        return None
    return reader, checked, header


def _skipper(invalid: list[Any]) -> Any:
    def skip(row: Any) -> str:
        invalid.append(row)
        return "skip"

    return skip

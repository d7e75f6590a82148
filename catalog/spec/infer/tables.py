"""Tables: CSV/TSV, JSON Lines (and JSON arrays of records) and Parquet files -> a spec of one
feature per column.

Types come from every row of every file (`catalog.spec.infer.column_types`: one pass, a few
numbers kept per column, widening int -> float -> text as values come; Parquet: from its
schema, `catalog.spec.infer.parquet_types`): a column of integers (fitting int64) is a
``Scalar('int64')``, of numbers ``Scalar('float64')``, of ``true``/``false`` (any case; JSON
and Parquet booleans) ``Scalar('bool')``, anything else ``Text``; JSON lists and objects,
Parquet lists and structs nested features; Parquet columns keep their own integer and float
widths. ``dtypes`` (``--dtype COLUMN=TYPE``) sets a column's type instead (every value is
then checked against it). ``label`` makes a text column a ClassLabel whose names are its
distinct values over every file, sorted. Every row is checked again when the dataset is
prepared: a value that does not fit its column's type is one error naming file, line (row) and
column. A CSV/TSV file's delimiter and encoding are found from its head
(`catalog.formats.tables.csv_dialect`) unless given; a row with more fields than the header is an
error naming file, line and counts (as pandas' C parser), a row with fewer has missing values.

Missing values: an empty CSV field (or one a short row lacks), a JSON ``null`` or absent key,
a Parquet null. A missing number is NaN, as pandas reads it: a float column stores NaN, and an
integer CSV or JSON column with missing values becomes float64 (a note says so; ``--fill
age=-1`` keeps it int64). Elsewhere (text, booleans, Parquet integers) catalog stores no
nulls: a missing value is an error naming file, line and column unless ``fill`` gives the
text standing in for that column's missing values (``--fill comment=`` keeps empty texts as
empty). A column that is empty in every row is float64 NaN, as pandas reads it (Text with a
``fill``).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from catalog.errors import SpecError
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Text
from catalog.formats.tables.compressed import compression, inner_suffix
from catalog.formats.tables.csv_dialect import Dialect, splitting
from catalog.spec.infer.column_types import FEW, TextColumn
from catalog.spec.infer.common import (
    InferOptions,
    column_feature_names,
    complete_options,
    make_spec,
)
from catalog.spec.infer.layout import SplitFiles, expand, split_files, split_refs
from catalog.spec.infer.parquet_types import parquet_types
from catalog.spec.infer.table_scan import MAX_CLASSES, scan
from catalog.spec.model import BuilderSpec, SplitSpec

__all__ = ["DTYPES", "SUFFIXES", "infer_table", "sample_types", "table_spec"]

#: File suffixes of each kind of table.
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",  # JSON Lines, or an array of records; not a JSON document (`_tables`)
    ".parquet": "parquet",
}
_FORMAT = {"csv": "delimited", "tsv": "delimited", "jsonl": "json_lines", "parquet": "parquet"}
#: ``--dtype`` type names -> features.
DTYPES: dict[str, Feature] = {
    **{n: Scalar(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")},
    **{n: Scalar(n) for n in ("float16", "float32", "float64", "bool")},
    **dict.fromkeys(("text", "str", "string"), Text()),
}


def infer_table(text: str, options: InferOptions) -> BuilderSpec:
    """The spec of the table file(s) `text` names (a file, a folder of them or a glob)."""
    files, base, pattern = expand(text, list(SUFFIXES))
    files = _tables(text, files)
    return table_spec(text, files, split_files(files, base, pattern), options)


def _tables(text: str, files: list[Path]) -> list[Path]:
    """`files` but the ``.json`` ones that are JSON documents, not tables (a Croissant file or
    dataset_infos.json beside the data: `catalog.formats.tables.json_lines.json_layout`);
    SpecError when none is left."""
    from catalog.formats.tables.json_lines import json_layout

    kept = [f for f in files if inner_suffix(f) != ".json" or json_layout(f) != "document"]
    if files and not kept:
        raise SpecError(
            f"{text}: {', '.join(f.name for f in files[:3])} "
            f"{'is a JSON document' if len(files) == 1 else 'are JSON documents'}, not a table: "
            "catalog reads a table from JSON Lines (an object per line) or a JSON array of "
            "objects, and a dataset from a Croissant file (a JSON-LD object with a recordSet)"
        )
    return kept


def table_spec(
    text: str, files: list[Path], groups: dict[str, SplitFiles], options: InferOptions
) -> BuilderSpec:
    """The spec of the table `files`, grouped into splits by `groups` (see `infer_table`)."""
    # a compressed file (data.csv.gz) is its table's kind; Parquet compresses inside
    kinds = {SUFFIXES.get(inner_suffix(f)) for f in files}
    if any(compression(f) for f in files) and "parquet" in kinds:
        kinds.add(None)
    if len(kinds) != 1 or None in kinds:
        shown = ", ".join(sorted({"".join(f.suffixes[-2:]) or "(none)" for f in files}))
        raise SpecError(
            f"{text}: expected files of one kind (csv, tsv, jsonl or json, parquet; csv, tsv and "
            f"json may be compressed: .gz, .bz2, .xz, .zst), got {shown}"
        )
    kind = kinds.pop()
    assert kind is not None
    first = files[0]
    if options.missing and kind not in ("csv", "tsv"):
        raise SpecError(
            f"{text}: --missing (missing=) names the texts of missing values in CSV/TSV "
            f"fields; {kind} files have nulls of their own"
        )
    if options.quoting != "minimal" and kind not in ("csv", "tsv"):
        raise SpecError(
            f"{text}: --quoting (quoting=) says how CSV/TSV fields are quoted; {kind} files "
            "are not delimited text: leave it out"
        )
    missing = ["", *dict.fromkeys(m for m in options.missing if m)]
    found = scan(
        kind,
        files,
        label=options.label,
        delimiter=options.delimiter,
        encoding=options.encoding,
        missing=frozenset(missing),
        skip_rows=options.skip_rows,
        no_header=options.no_header,
        quoting=options.quoting,
    )
    if (options.skip_rows or options.no_header) and kind not in ("csv", "tsv"):
        raise SpecError(
            f"{text}: --skip-rows and --no-header (skip_rows=, no_header=) apply to CSV/TSV "
            f"files; {kind} files have no header row to skip"
        )
    columns = found.columns
    if found.dialect is not None and len(columns) == 1:
        _one_column_note(options, first, found.dialect)
    _renamed_note(options, first, found.file_header, columns)
    names = column_feature_names(columns, str(first), options.note)
    by_column = {column: name for name, column in names.items()}
    for column in [*([options.label] if options.label else []), *options.fill, *options.dtypes]:
        if column not in by_column:
            raise SpecError(f"{first}: no column {column!r}; the columns are {', '.join(columns)}")
    types = parquet_types(first, options.sample)[1] if kind == "parquet" else {}
    fill = dict(options.fill)
    for column, stats in found.stats.items():
        feature = types[column] = stats.feature()
        if stats.kind == "empty" and stats.missing and column not in fill:
            feature = types[column] = Scalar("float64")  # as pandas reads an empty column
        if isinstance(feature, Scalar) and stats.missing and column not in fill:
            if feature.dtype.kind in "iu":
                feature = types[column] = Scalar("float64")
                _note(options, f"{first}: column {column!r} has {stats.missing} missing values "
                      f"(first at line {stats.first_missing}): float64 with NaN, as pandas "
                      f"reads it (--fill {column}=VALUE keeps it int64)")  # fmt: skip
            if feature.dtype.kind == "f":
                fill[column] = "nan"
        _widening_notes(options, first, column, stats)
        if column not in options.dtypes:
            _missing_like_note(options, first, column, stats)
            _zero_padded_note(options, first, column, stats, feature)
    for column, feature in types.items():  # Parquet: a null float is NaN too
        if isinstance(feature, Scalar) and feature.dtype.kind == "f" and column not in fill:
            fill[column] = "nan"
    for column, dtype in options.dtypes.items():
        if dtype not in DTYPES:
            raise SpecError(
                f"--dtype {column}={dtype}: unknown type; the types are {', '.join(DTYPES)}"
            )
        types[column] = DTYPES[dtype]
    features: dict[str, Feature] = {name: types[column] for name, column in names.items()}
    if options.label:
        feature = features[by_column[options.label]]
        if not isinstance(feature, Text):
            raise SpecError(
                f"--label {options.label}: the column holds {feature!r} values; a label column "
                "holds text (class names)"
            )
        label_stats = found.stats.get(options.label)
        values = found.label_values if label_stats is None else label_stats.distinct
        if values is None:
            raise SpecError(f"--label {options.label}: more than {MAX_CLASSES} distinct values")
        features[by_column[options.label]] = ClassLabel(names=sorted(values))
    _refuse_unfilled(first, found, features, by_column, fill)
    downloads, refs = split_refs(groups)
    fill = {by_column[c]: v for c, v in fill.items()}
    given: dict[str, Any]
    if kind in ("csv", "tsv"):
        assert found.dialect is not None
        given = {
            "delimiter": found.dialect.delimiter,
            "encoding": found.dialect.encoding,
            "columns": names,
            "missing": missing,
            "incomplete": "missing",
            "fill": fill,
            "header": found.given_header,
            "skip_rows": found.skip_rows,
            "quoting": options.quoting,
        }
    else:
        given = {"columns": names, "fill": fill}
    role = "file" if kind in ("csv", "tsv") else "files"
    format_name = _FORMAT[kind]
    splits = {
        split: SplitSpec(
            split,
            format_name,
            {role: refs[split]},
            sum(found.counts[f] for f in group.files),
            complete_options(format_name, given),
        )
        for split, group in groups.items()
    }
    empty = [s for s in splits.values() if s.num_examples == 0]
    if empty:
        raise SpecError(f"{text}: split {empty[0].name!r} has no rows")
    if not options.label:
        for name, feature in features.items():
            seen = found.stats.get(names[name]) or found.sampled.get(names[name])
            distinct = len(seen.distinct) if seen and seen.distinct is not None else 0
            if isinstance(feature, Text) and seen and 2 <= distinct <= min(FEW, seen.values // 2):
                within = " in its first rows" if kind == "parquet" else ""
                _note(options, f"{first}: column {names[name]!r} holds {distinct} distinct "
                      f"values{within}; --label {names[name]} (label={names[name]!r}) makes "
                      "it a ClassLabel")  # fmt: skip
    label = by_column[options.label] if options.label else None
    supervised = None
    if label and len(features) == 2:
        supervised = (next(n for n in features if n != label), label)
    return make_spec(
        options, text, features, downloads, splits,
        description=f"A table of {len(features)} columns", supervised=supervised,
        tags=("tabular",),
    )  # fmt: skip


def _refuse_unfilled(
    first: Path,
    found: Any,
    features: dict[str, Feature],
    by_column: dict[str, str],
    fill: dict[str, str],
) -> None:
    """SpecError naming every column with missing values that stores no null (text, bool,
    int given by --dtype, a label) and has no fill, before anything is prepared: one
    message for them all, not one prepare per column."""
    unfilled = []
    for column, stats in found.stats.items():
        feature = features[by_column[column]]
        floats = isinstance(feature, Scalar) and feature.dtype.kind == "f"
        if stats.missing and column not in fill and not floats:
            unfilled.append((column, stats.first_missing))
    if not unfilled:
        return
    where = ", ".join(f"{c!r} (line {line})" for c, line in unfilled[:8])
    more = f" and {len(unfilled) - 8} more" if len(unfilled) > 8 else ""
    flags = " ".join(
        f"--fill {shlex.quote(c)}=" + _fill_word(features[by_column[c]]) for c, _ in unfilled[:3]
    )
    raise SpecError(
        f"{first}: missing values in column(s) {where}{more}, which hold no null (text, "
        f"booleans, class labels, integers, lists); give each the value standing in for them: "
        f"{flags}{' ...' if len(unfilled) > 3 else ''} (fill={{column: value}}; --fill "
        f"{shlex.quote(unfilled[0][0])}= for an empty text)"
    )


def _fill_word(feature: Feature) -> str:
    """What ``--fill COLUMN=`` takes for `feature`, as an error shows it."""
    if isinstance(feature, FeaturesDict):
        return "'{...}'"  # its fields as a JSON object
    return "'[]'" if isinstance(feature, Sequence) else "VALUE"


def _one_column_note(options: InferOptions, first: Path, dialect: Dialect) -> None:
    """Say when a file read as one column would split into several by another delimiter
    (a space-separated file: pandas reads it as one column too, given no ``sep``)."""
    other = splitting(first, dialect, options.skip_rows)
    if other is not None:
        shown = "' '" if other == " " else shlex.quote(other)
        _note(options, f"{first}: one column, but every row splits into the same fields "
              f"by {other!r}; --delimiter {shown} (delimiter={other!r}) reads them as "
              "columns")  # fmt: skip


def _renamed_note(options: InferOptions, first: Path, header: list[str], names: list[str]) -> None:
    """Say which of the file's header names pandas (and so catalog) renames: an empty one is
    ``Unnamed: i``, a repeated one ``NAME.1``."""
    if options.no_header or not header or header == names:
        return
    changes = [(h, n) for h, n in zip(header, names, strict=True) if h != n]
    shown = ", ".join(f"{h!r} -> {n!r}" for h, n in changes[:6])
    more = f" and {len(changes) - 6} more" if len(changes) > 6 else ""
    _note(options, f"{first}: header names renamed as pandas renames them (empty names are "
          f"'Unnamed: i', repeated ones NAME.1, NAME.2...): {shown}{more}; options name the "
          "columns so")  # fmt: skip


def _note(options: InferOptions, text: str) -> None:
    if options.note is not None:
        options.note(text)


def _widening_notes(options: InferOptions, first: Path, column: str, stats: Any) -> None:
    """Say where a column stopped being integers (or numbers), so a surprise is found."""
    at = stats.widened_at
    if stats.kind == "float64" and ("int64" in at or "uint64" in at) and "float64" in at:
        _note(options, f"{first}: column {column!r} holds integers and decimals (the first "
              f"decimal at line {at['float64']}): float64")  # fmt: skip
    elif stats.kind == "text" and len(at) > 1 and at.get("text"):
        _note(options, f"{first}: column {column!r} holds numbers and other text (from line "
              f"{at['text']}): text (--dtype {column}=TYPE to require a type)")  # fmt: skip


def _missing_like_note(options: InferOptions, first: Path, column: str, stats: Any) -> None:
    """Say when a column is text only because of texts pandas reads as missing (``NA``
    written by R, ``null``...), and how to read them so."""
    if not isinstance(stats, TextColumn) or not stats.text_only_by_na():
        return
    texts = sorted(stats.na_texts, key=stats.na_texts.__getitem__)
    line = stats.na_texts[texts[0]]
    flags = " ".join(f"--missing {shlex.quote(t)}" for t in texts)
    _note(options, f"{first}: column {column!r} is text only because of "
          f"{', '.join(map(repr, texts))} (first at line {line}), which pandas reads as a "
          f"missing value; {flags} (missing={texts!r}) reads it so, and the column is then "
          "typed by its other values")  # fmt: skip


def _zero_padded_note(
    options: InferOptions, first: Path, column: str, stats: Any, feature: Feature
) -> None:
    """Say when a number column holds integers written with leading zeros (ZIP codes, IDs),
    which numbers drop, as pandas' do; and how to keep them."""
    if not isinstance(stats, TextColumn) or stats.zero_padded is None:
        return
    if not isinstance(feature, Scalar) or feature.dtype.kind == "b":
        return
    line, text = stats.zero_padded
    _note(options, f"{first}: column {column!r} holds numbers written with leading zeros "
          f"({text!r} at line {line}): as {feature.dtype.name} they lose them, as in "
          f"pandas; --dtype {column}=text (dtypes={{{column!r}: 'text'}}) keeps them as "
          "written")  # fmt: skip


def sample_types(kind: str, path: Path, sample: int = 0) -> tuple[list[str], dict[str, Feature]]:
    """The columns of the file and each one's feature (from every row; Parquet: its schema).
    A comma-separated file (a folder's metadata.csv)."""
    if kind == "parquet":
        return parquet_types(path, sample or 1000)
    found = scan(kind, [path], delimiter="," if kind == "csv" else None)
    return found.columns, {c: s.feature() for c, s in found.stats.items()}

"""Tables: CSV/TSV, JSON Lines and Parquet files -> a spec of one feature per column.

Types come from the first `InferOptions.sample` rows of the first file (Parquet: from its
schema): a column whose values are all integers (fitting int64) is a ``Scalar('int64')``, all
numbers ``Scalar('float64')``, all ``true``/``false`` (any case; JSON and Parquet booleans)
``Scalar('bool')``, anything else ``Text``; Parquet columns keep their own integer and float
widths. ``label`` makes a text column a ClassLabel whose names are its distinct values over
every file, sorted. Every row is then checked when the dataset is prepared: a value that does
not fit its column's type is one error naming file, line (row) and column.

Missing values: an empty CSV field, a JSON ``null`` or absent key, a Parquet null. catalog
stores no nulls: a missing value is an error naming file, line and column unless ``fill``
gives the text standing in for that column's missing values (``--fill age=-1``; parsed as the
column's type; ``--fill comment=`` keeps empty texts as empty). A CSV column that is empty in
every sampled row is Text.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError, SpecError
from catalog.features import ClassLabel, Feature, Image, Scalar, Text
from catalog.formats.json_lines import objects
from catalog.spec.infer.common import InferOptions, complete_options, feature_names, make_spec
from catalog.spec.infer.layout import expand, split_files, split_refs
from catalog.spec.model import BuilderSpec, SplitSpec

__all__ = ["SUFFIXES", "infer_table", "sample_types"]

#: File suffixes of each kind of table.
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
_FORMAT = {"csv": "delimited", "tsv": "delimited", "jsonl": "json_lines", "parquet": "parquet"}
_INT = re.compile(r"^[+-]?\d+$")
_INT64 = (-(1 << 63), (1 << 63) - 1)
#: The most class names a --label column may have.
MAX_CLASSES = 100_000


def infer_table(text: str, options: InferOptions) -> BuilderSpec:
    """The spec of the table file(s) `text` names (a file, a folder of them or a glob)."""
    files, base, pattern = expand(text, list(SUFFIXES))
    kinds = {SUFFIXES.get(f.suffix.lower()) for f in files}
    if len(kinds) != 1 or None in kinds:
        shown = ", ".join(sorted({f.suffix or "(none)" for f in files}))
        raise SpecError(
            f"{text}: expected files of one kind (csv, tsv, jsonl, parquet), got {shown}"
        )
    kind = kinds.pop()
    assert kind is not None
    groups = split_files(files, base, pattern)
    first = files[0]
    columns, types = sample_types(kind, first, options.sample)
    names = feature_names(columns, str(first))
    by_column = {column: name for name, column in names.items()}
    for column in [*([options.label] if options.label else []), *options.fill]:
        if column not in by_column:
            raise SpecError(f"{first}: no column {column!r}; the columns are {', '.join(columns)}")
    features: dict[str, Feature] = {name: types[column] for name, column in names.items()}
    if options.label:
        if not isinstance(features[by_column[options.label]], Text):
            raise SpecError(
                f"--label {options.label}: the column holds {features[by_column[options.label]]!r} "
                "values; a label column holds text (class names)"
            )
        features[by_column[options.label]] = ClassLabel(
            names=_class_names(kind, files, options.label)
        )
    downloads, refs = split_refs(groups)
    fill = {by_column[c]: v for c, v in options.fill.items()}
    given: dict[str, Any]
    if kind in ("csv", "tsv"):
        given = {
            "delimiter": "\t" if kind == "tsv" else ",",
            "columns": names,
            "missing": [""],
            "fill": fill,
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
            _count(kind, group.files),
            complete_options(format_name, given),
        )
        for split, group in groups.items()
    }
    empty = [s for s in splits.values() if s.num_examples == 0]
    if empty:
        raise SpecError(f"{text}: split {empty[0].name!r} has no rows")
    if options.note is not None and not options.label:
        text_columns = [names[n] for n, f in features.items() if isinstance(f, Text)]
        for column, distinct in _few_values(kind, first, options.sample, text_columns):
            options.note(
                f"{first}: column {column!r} holds {distinct} distinct values in its first "
                f"rows; --label {column} (label={column!r}) makes it a ClassLabel"
            )
    label = by_column[options.label] if options.label else None
    supervised = None
    if label and len(features) == 2:
        supervised = (next(n for n in features if n != label), label)
    return make_spec(
        options, text, features, downloads, splits,
        description=f"A table of {len(features)} columns", supervised=supervised,
        tags=("tabular",),
    )  # fmt: skip


def _csv_rows(path: Path, kind: str) -> Iterator[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t" if kind == "tsv" else ",", strict=True)
        try:
            yield from (row for row in reader if row)
        except csv.Error as error:
            raise SourceFormatError(
                f"{path}:{reader.line_num}: cannot read this row: {error}"
            ) from None
        except UnicodeDecodeError:
            raise SourceFormatError(f"{path}: not UTF-8 text") from None


def sample_types(kind: str, path: Path, sample: int) -> tuple[list[str], dict[str, Feature]]:
    """The columns of the first file and each one's feature, from its first `sample` rows."""
    if kind == "parquet":
        return _parquet_types(path, sample)
    values: dict[str, list[Any]] = {}
    if kind == "jsonl":
        for number, obj in itertools.islice(objects(path), sample):
            for key, value in obj.items():
                if isinstance(value, (list, dict)):
                    raise SpecError(
                        f"{path}:{number}: key {key!r} holds a {type(value).__name__}; nested "
                        "values are not supported yet (flatten them into columns)"
                    )
                values.setdefault(key, []).append(value)
        if not values:
            raise SourceFormatError(f"{path}: no JSON objects")
        return list(values), {k: _json_type(v) for k, v in values.items()}
    rows = _csv_rows(path, kind)
    header = next(rows, None)
    if header is None:
        raise SourceFormatError(f"{path}: empty; expected a header row")
    columns: list[list[str]] = [[] for _ in header]
    for row in itertools.islice(rows, sample):
        for i, cell in enumerate(row[: len(header)]):
            if cell != "":
                columns[i].append(cell)
    return header, {name: _text_type(cells) for name, cells in zip(header, columns, strict=True)}


#: A text column is offered as a label when its sample holds at most this many distinct
#: values, each at least twice on average.
_FEW = 20


def _few_values(kind: str, path: Path, sample: int, columns: list[str]) -> list[tuple[str, int]]:
    """The text columns whose first `sample` rows hold few distinct values (label-like)."""
    seen: dict[str, list[Any]] = {c: [] for c in columns}
    if kind == "parquet":
        from catalog.formats.parquet import parquet_file

        for batch in parquet_file(path).iter_batches(batch_size=sample, columns=columns):
            for column in columns:
                seen[column] = batch.column(column).to_pylist()
            break
    elif kind == "jsonl":
        for _, obj in itertools.islice(objects(path), sample):
            for column in columns:
                seen[column].append(obj.get(column))
    else:
        rows = _csv_rows(path, kind)
        header = next(rows, [])
        for row in itertools.islice(rows, sample):
            for column in columns:
                at = header.index(column)
                seen[column].append(row[at] if at < len(row) else None)
    out = []
    for column, values in seen.items():
        distinct = len({v for v in values if v not in (None, "")})
        if 2 <= distinct <= _FEW and len(values) >= 2 * distinct:
            out.append((column, distinct))
    return out


def _text_type(cells: list[str]) -> Feature:
    if cells and all(_INT.match(c) and _INT64[0] <= int(c) <= _INT64[1] for c in cells):
        return Scalar("int64")
    if cells and all(_is_float(c) for c in cells):
        return Scalar("float64")
    if cells and all(c.strip().lower() in ("true", "false") for c in cells):
        return Scalar("bool")
    return Text()


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _json_type(values: list[Any]) -> Feature:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return Scalar("bool")
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return Scalar("int64")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return Scalar("float64")
    return Text()


def _parquet_types(path: Path, sample: int) -> tuple[list[str], dict[str, Feature]]:
    import pyarrow as pa

    from catalog.formats.parquet import parquet_file

    schema = parquet_file(path).schema_arrow
    types: dict[str, Feature] = {}
    for item in schema:
        kind = item.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_boolean(kind):
            types[item.name] = Scalar("bool")
        elif pa.types.is_integer(kind) or pa.types.is_float32(kind) or pa.types.is_float64(kind):
            types[item.name] = Scalar(kind.to_pandas_dtype().__name__)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            types[item.name] = Text()
        elif pa.types.is_struct(kind) and _is_image_struct(kind):
            types[item.name] = _image_column(path, item.name, sample)
        else:
            raise SpecError(
                f"{path}: column {item.name!r} is of Parquet type {item.type}; not supported yet "
                "(integers, floats, booleans and strings are)"
            )
    return list(schema.names), types


def _is_image_struct(kind: Any) -> bool:
    """Hugging Face's ``Image`` layout: a struct of ``bytes`` (binary) and ``path``."""
    import pyarrow as pa

    names = {kind.field(i).name: kind.field(i).type for i in range(kind.num_fields)}
    binary = names.get("bytes")
    return (
        set(names) <= {"bytes", "path"}
        and binary is not None
        and (pa.types.is_binary(binary) or pa.types.is_large_binary(binary))
    )


def _image_column(path: Path, column: str, sample: int) -> Feature:
    """An Image feature for a column of image structs: the widest channels its first rows'
    images hold."""
    from catalog.formats.image_files import decode_pixels
    from catalog.formats.parquet import parquet_file

    channels = 1
    for batch in parquet_file(path).iter_batches(batch_size=min(sample, 64), columns=[column]):
        for value in batch.column(0).to_pylist():
            data = value.get("bytes") if isinstance(value, dict) else None
            if data is None:
                raise SpecError(
                    f"{path}: column {column!r} holds an image without its bytes (only a path); "
                    "not supported yet"
                )
            pixels = decode_pixels(data, f"{path}: column {column!r}")
            depth = 1 if pixels.ndim == 2 else pixels.shape[2]
            channels = max(channels, 3 if depth == 3 else depth)
        break
    return Image((None, None, channels), encoding="png")


def _class_names(kind: str, files: tuple[Path, ...] | list[Path], column: str) -> list[str]:
    """The distinct values of `column` over every file, sorted."""
    names: set[str] = set()
    for path in files:
        if kind == "parquet":
            from catalog.formats.parquet import parquet_file

            for batch in parquet_file(path).iter_batches(columns=[column]):
                names.update(v for v in batch.column(0).to_pylist() if isinstance(v, str))
        elif kind == "jsonl":
            names.update(v for _, o in objects(path) if isinstance(v := o.get(column), str))
        else:
            rows = _csv_rows(path, kind)
            header = next(rows, [])
            at = header.index(column)
            names.update(row[at] for row in rows if len(row) > at and row[at] != "")
        if len(names) > MAX_CLASSES:
            raise SpecError(f"--label {column}: more than {MAX_CLASSES} distinct values")
    return sorted(names)


def _count(kind: str, files: tuple[Path, ...]) -> int:
    """How many rows the files hold (blank lines and CSV header rows not counted)."""
    total = 0
    for path in files:
        if kind == "parquet":
            from catalog.formats.parquet import parquet_file

            total += parquet_file(path).metadata.num_rows
        elif kind == "jsonl":
            total += sum(1 for _ in objects(path))
        else:
            total += max(sum(1 for _ in _csv_rows(path, kind)) - 1, 0)
    return total

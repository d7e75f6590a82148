"""Delimited text (CSV, TSV, ``;``-separated): one example per row, columns mapped to features.

Read with the standard library's `csv` module, one row at a time (memory stays that of one
row); a unit of a prepare reads the same rows a batch at a time through pyarrow where that
gives the same values and errors (`catalog.formats.tables.csv_batches`). Options (all optional
except the mapping):

- ``delimiter`` (default ``,``; ``"\\t"`` for TSV) and ``quoting``: ``minimal`` (double quotes
  quote a field, ``""`` is a quote: Python's csv defaults) or ``none`` (quote characters are
  plain text, as GLUE's TSV files need).
- ``header``: the column names, for a file without a header row; without it the first row
  is the header. ``skip_rows``: lines skipped at the file's start, before the header (or
  the first row), as pandas' ``skiprows=N`` (a count line such as scikit-learn's
  ``569,30,malignant,benign``).
- ``columns``: ``{feature path: column name}``, e.g. ``{label: class, "features/pH": pH}``
  (a path goes through nested dicts). ``stack``: ``{feature path: [column, ...]}`` for a
  Tensor of one dimension built from several columns. ``constant``: ``{feature path: text}``
  for a feature no column holds (``label: "-1"``, an unlabelled test file). ``row_index``:
  a feature that gets the row's 0-based index (header and blank lines excluded, skipped
  incomplete rows counted, as TFDS's GLUE ``idx``). Every feature of the spec
  must get its value from exactly one of these.
- ``missing``: texts that mark a missing value (``?``); ``fill``: ``{feature path: text}``
  standing in for a missing value of that feature (a missing value elsewhere is an error).
- ``values``: ``{feature path: {text in the file: text given to the feature}}``, e.g.
  ``embarked: {C: Cherbourg}``; texts not listed pass unchanged. Applied after ``fill``.
- ``strip``: features whose text loses its surrounding whitespace. ``doubled_quotes``:
  Text features that keep each quote doubled as the file holds it (``""the office""``), as
  TFDS's Yelp reader, which slices the raw line, gives them. ``via_float32``: float features
  whose values are rounded to float32 first, as TFDS stores every float (a FloatList), so a
  float64 feature reads back ``0.5600000023841858`` for ``0.56``. ``encoding``: of the file
  (default utf-8; a BOM is found by `catalog.formats.tables.csv_dialect`). ``incomplete``: ``error``
  (default), ``skip`` a row with fewer fields than the header, or ``missing``: its absent
  fields are missing values (as pandas reads them: NaN), filled or refused as ``fill`` says.
  A row with more fields than the header is always an error naming file, line and counts
  (pandas' C parser refuses it too; pandas' one exception, a first data row one field longer
  whose first field becomes the index, is refused as well).

Texts become values by the feature's type: Text as is; Scalar and Tensor elements parsed as
numbers of their dtype (a bool one: ``true``/``false`` in any case, or ``1``/``0``);
ClassLabel a class name, else an integer index (``"-1"`` needs ``allow_unlabeled``). Blank
lines are skipped. The key is the row index. Errors name the file and line.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Tensor, Text
from catalog.features.features_dict import split_path
from catalog.formats.base import Examples, Source
from catalog.formats.tables import csv_dialect
from catalog.formats.tables.compressed import open_bytes
from catalog.formats.tables.csv_dialect import PANDAS_MISSING
from catalog.formats.tables.typed_values import typed_value

__all__ = [
    "QUOTING",
    "RowConverter",
    "examples",
    "file_examples",
    "leaf",
    "rows",
    "to_value",
    "too_many_fields",
]


_INT = re.compile(r"^[+-]?\d+$")
_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")  # after a \r that ends a line by itself
_INFINITY = re.compile(r"\s*[+-]?inf(inity)?\s*", re.IGNORECASE)
_BOOLS = {"true": True, "false": False, "1": True, "0": False}
QUOTING: dict[str, Literal[0, 3]] = {"minimal": csv.QUOTE_MINIMAL, "none": csv.QUOTE_NONE}


def _feature(features: FeaturesDict, path: str) -> Feature:
    """The feature at `path` (checked to exist when the spec was loaded)."""
    feature = leaf(features, path)
    assert feature is not None
    return feature


def leaf(features: FeaturesDict, path: str) -> Feature | None:
    return features.feature_at(path)


def to_value(feature: Feature, text: str) -> Any:
    """`text` as a value of `feature`; ValueError saying why not."""
    if isinstance(feature, Text):
        return text
    if isinstance(feature, ClassLabel):
        names = feature.names
        if text in names or (text == "-1" and feature.allow_unlabeled):
            return feature.str2int(text)
        if _INT.match(text.strip()):
            return int(text)
        raise ValueError(f"{text!r} is not a class name ({', '.join(names[:6])}) or an index")
    if isinstance(feature, (Scalar, Tensor)):
        kind = feature.dtype.kind
        if kind == "b":
            word = text.strip().lower()
            if word in _BOOLS:
                return _BOOLS[word]
            raise ValueError(f"{text!r} is not a boolean (true/false, 1/0)")
        try:
            if kind in "iu":
                return int(text)
            if kind == "f":
                value = float(text)
                if math.isinf(value) and not _INFINITY.fullmatch(text):
                    raise OverflowError
                return value
        except ValueError:
            raise ValueError(f"{text!r} is not a number ({feature.dtype.name})") from None
        except OverflowError:
            raise ValueError(
                f"{text[:40]!r} is outside float64 (about ±1.8e308): it would be inf; write "
                "inf if that is meant"
            ) from None
    if isinstance(feature, Sequence) and feature.length is None:  # a list: as JSON, [] or [1, 2]
        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if not isinstance(items, list):
            raise ValueError(f"{text!r} is not a list written as JSON ([] or [1, 2])")
        return items
    if isinstance(feature, (Sequence, FeaturesDict)):  # a struct, a list of them: as JSON
        parsed: Any
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, (list, dict)):
            raise ValueError(f"{text!r} is not a value of {feature!r} written as JSON")
        return typed_value(feature, parsed)
    raise ValueError(f"a delimited-text column cannot fill {feature!r}")


def _lines(path: Path, encoding: str) -> Iterator[str]:
    """The file's lines, decoded one at a time so a decoding error names its line (UTF-16 and
    UTF-32, whose newline is not one byte, are decoded as a stream, their lines counted)."""
    if "\n".encode(encoding, errors="ignore") != b"\n":
        yield from _stream_lines(path, encoding)
        return
    with open_bytes(path) as f:
        number = 0
        for chunk in csv_dialect.lines_of(f, path):
            # a line may also end with a lone \r (old Mac files), as open(newline="") reads
            for line in _LONE_CR.split(chunk) if b"\r" in chunk[:-2] else (chunk,):
                if not line:
                    continue
                number += 1
                try:
                    yield line.decode(encoding if number == 1 else _after_bom(encoding))
                except UnicodeDecodeError as error:
                    raise SourceFormatError(
                        _not_text(path, number, encoding, error.start)
                    ) from None


def _after_bom(encoding: str) -> str:
    return "utf-8" if codecs.lookup(encoding).name == "utf-8-sig" else encoding


def _stream_lines(path: Path, encoding: str) -> Iterator[str]:
    number = 0
    limit = csv_dialect.LINE_BYTES // 2  # characters: 2 or 4 bytes each here
    with io.TextIOWrapper(open_bytes(path), encoding=encoding, newline="") as f:
        try:
            while line := f.readline(limit + 1):
                number += 1
                if len(line) > limit:
                    raise SourceFormatError(
                        f"{path}:{number}: a line longer than {limit >> 20} Mi characters; "
                        "catalog reads lines up to that"
                    )
                yield line
        except UnicodeDecodeError:
            raise SourceFormatError(_not_text(path, number + 1, encoding, None)) from None


def _not_text(path: Path, line: int, encoding: str, byte: int | None) -> str:
    at = "" if byte is None else f" at byte {byte} of the line"
    return (
        f"{path}:{line}: not {encoding} text{at}; give the file's encoding (options.encoding, "
        "e.g. latin-1 or cp1252; catalog prepare FILE: --encoding ENCODING)"
    )


def rows(path: Path, options: Mapping[str, Any]) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank row, the line its first field is on;
    SourceFormatError naming file:line for a row that cannot be read (broken quoting, a
    field over `csv_dialect.FIELD_LIMIT` characters, bytes that are not the file's encoding)."""
    lines = _lines(path, options["encoding"])
    skip = options.get("skip_rows", 0)
    for _ in itertools.islice(lines, skip):
        pass
    reader = csv_dialect.reader(
        lines,
        delimiter=options["delimiter"],
        quoting=QUOTING[options["quoting"]],
        strict=options["quoting"] == "minimal",
    )
    start = skip + 1
    try:
        for row in reader:
            if row:
                yield start, row
            start = skip + reader.line_num + 1
    except csv.Error as error:
        text = (  # quotes that are text would have read
            "; if this file's quotes are text, not quoting (as in most TSV files), read it "
            "with --quoting none (quoting='none')"
            if options["quoting"] == "minimal"
            else ""
        )
        if "field larger than field limit" in str(error):
            raise SourceFormatError(
                f"{path}:{start}: a field longer than {csv_dialect.FIELD_LIMIT >> 20} Mi "
                f"characters; catalog reads fields up to that (is a closing quote missing?){text}"
            ) from None
        raise SourceFormatError(
            f"{path}:{start}: cannot read this row: {error} (a quoted field ends with its "
            f"closing quote, then {options['delimiter']!r} or the line's end; a quote inside "
            f"one is written twice){text}"
        ) from None


def examples(source: Source) -> Examples:
    """Yield ``(row index, example)`` for every row of the file (of the files, in order, for
    a glob matching several: the index runs on through them)."""
    offset = 0
    for path in source.paths("file"):
        rows = 0
        for index, example in file_examples(path, source.options, source.features):
            assert example is not None
            yield str(offset + index), example
            rows = index + 1
        offset += rows


def file_examples(
    path: Path, options: Mapping[str, Any], features: FeaturesDict, convert_from: int = 0
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """``(index, example)`` of each row; the rows before `convert_from` are read (their
    index counted) but not converted: ``(index, None)``."""
    rows_ = rows(path, options)
    header: list[str] = list(options["header"])
    if not header:
        first = next(rows_, None)
        if first is None:
            raise SourceFormatError(f"{path}: empty; expected a header row")
        header = first[1]
    convert = RowConverter(path, options, features, header)
    for index, (line, row) in enumerate(rows_):
        if index < convert_from:
            yield index, None
            continue
        example = convert(index, line, row)
        if example is not None:
            yield index, example


class RowConverter:
    """A row's fields (a list of texts, as `rows` gives them) as the example the split's
    options make of it: ``convert(index, line, fields)`` -> the example, or None for a row
    ``incomplete: skip`` drops; SourceFormatError naming ``path:line`` for one that cannot be
    read. `header`: the names of the fields, in order (the file's header, or any subset of its
    columns holding every mapped one: a row of them is read as the whole row would be)."""

    def __init__(
        self, path: Path, options: Mapping[str, Any], features: FeaturesDict, header: list[str]
    ) -> None:
        position = {name: i for i, name in enumerate(header)}
        wanted = [
            *options["columns"].values(),
            *(c for cs in options["stack"].values() for c in cs),
        ]
        absent = [c for c in wanted if c not in position]
        if absent:
            raise SourceFormatError(
                f"{path}: no column {absent[0]!r}; the columns are {', '.join(header)}"
            )
        self._plan: list[tuple[str, Feature, list[int]]] = [
            (p, _feature(features, p), [position[c] for c in cs])
            for p, cs in [
                *((p, [c]) for p, c in options["columns"].items()),
                *options["stack"].items(),
            ]
        ]
        try:
            self._constants = {
                p: to_value(_feature(features, p), t) for p, t in options["constant"].items()
            }
        except ValueError as error:
            raise SourceFormatError(f"{path}: options.constant: {error}") from None
        self._path, self._options, self._features, self._header = path, options, features, header
        self._missing, self._stacked = set(options["missing"]), set(options["stack"])
        self._strip, self._doubled = set(options["strip"]), set(options["doubled_quotes"])
        self._via_float32 = set(options["via_float32"])

    def __call__(self, index: int, line: int, row: list[str]) -> dict[str, Any] | None:
        path, options, header = self._path, self._options, self._header
        if len(row) > len(header):
            raise too_many_fields(path, line, len(header), len(row), options["delimiter"])
        if len(row) < len(header):
            if options["incomplete"] == "skip":
                return None
            if options["incomplete"] != "missing":
                raise SourceFormatError(
                    f"{path}:{line}: {len(row)} fields, the header has {len(header)} "
                    "(options.incomplete: skip drops such rows, missing reads the absent "
                    "fields as missing values)"
                )
            row = row + [options["missing"][0]] * (len(header) - len(row))
        flat: dict[str, Any] = dict(self._constants)
        if options["row_index"]:
            flat[options["row_index"]] = index
        missing, fill, values = self._missing, options["fill"], options["values"]
        for feature_path, feature, cols in self._plan:
            texts = []
            for col in cols:
                text = row[col]
                if text in missing:
                    if feature_path not in fill:
                        raise SourceFormatError(
                            f"{path}:{line}: column {header[col]!r} is missing ({text!r}); give "
                            f"options.fill a value for feature {feature_path!r} (catalog "
                            f"prepare FILE: --fill {header[col]}=VALUE)"
                        )
                    text = fill[feature_path]
                text = values.get(feature_path, {}).get(text, text)
                if feature_path in self._doubled:
                    text = text.replace('"', '""')
                texts.append(text.strip() if feature_path in self._strip else text)
            try:
                if feature_path in self._stacked:
                    values_ = [to_value(feature, t) for t in texts]
                    flat[feature_path] = np.array(values_, dtype=feature.dtype)
                else:
                    flat[feature_path] = to_value(feature, texts[0])
                if feature_path in self._via_float32:
                    flat[feature_path] = np.float32(flat[feature_path]).astype(feature.dtype)
            except ValueError as error:
                hint = ""
                token = next((t for t in texts if t in PANDAS_MISSING), None)
                if token is not None:  # "NA" as R writes it
                    hint = (
                        f"; if {token!r} means a missing value, give options.missing "
                        f"(catalog prepare FILE: --missing {token})"
                    )
                raise SourceFormatError(
                    f"{path}:{line}: column(s) {', '.join(header[c] for c in cols)} for feature "
                    f"{feature_path!r}: {error}{hint}"
                ) from None
        return _nest(flat, self._features)


def too_many_fields(path: Path, line: int, expected: int, saw: int, delimiter: str) -> Exception:
    """The error for a row longer than the header (pandas' C parser's words, plus where and
    what to check)."""
    return SourceFormatError(
        f"{path}:{line}: expected {expected} fields (as the header), saw {saw}; is the "
        f"delimiter {delimiter!r} right (catalog prepare FILE: --delimiter), or is a field "
        f"holding {delimiter!r} not quoted?"
    )


def _nest(flat: Mapping[str, Any], features: FeaturesDict) -> dict[str, Any]:
    """``{"a/b": 1, "c": 2}`` -> ``{"a": {"b": 1}, "c": 2}`` when ``a`` is a dict of
    features; a name holding '/' (TFDS's ``image/filename``) stays one key."""
    out: dict[str, Any] = {}
    for path, value in flat.items():
        node, level, rest = out, features.children(), path
        while True:
            found = split_path(level, rest)
            assert found is not None  # every path was checked against the features
            name, rest = found
            if not rest:
                node[name] = value
                break
            node, level = node.setdefault(name, {}), level[name].children()
    return out

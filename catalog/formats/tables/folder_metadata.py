"""A metadata file beside a folder of images or audio files: more features per file.

Hugging Face's folder builders read ``metadata.csv`` or ``metadata.jsonl`` in the folder: one
row per file, its ``file_name`` column holding the file's path relative to the folder
(``cat/1.png``), its other columns more features of that file's example. `load_metadata`
reads such a file whole (one row per example: what the folder's listing holds anyway) into
``{file_name: {feature: value}}``, checking every value against its feature (CSV text parsed
as `catalog.formats.tables.delimited.to_value` does, JSON values as
`catalog.formats.tables.typed_values`
takes them); a missing value, a duplicate or absent ``file_name`` is an error naming the file
and line. The folder readers then give each example its row, and refuse an example without
one, or a row whose file is not there.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.tables.csv_dialect import dict_reader
from catalog.formats.tables.delimited import to_value
from catalog.formats.tables.json_lines import objects
from catalog.formats.tables.typed_values import typed_value

__all__ = ["FILE_NAME", "METADATA_FILES", "load_metadata", "unused_rows"]

#: The column naming each row's file.
FILE_NAME = "file_name"
#: The names a metadata file may have, in the folder it describes.
METADATA_FILES = ("metadata.csv", "metadata.jsonl")


def load_metadata(
    path: Path, columns: Mapping[str, str], features: FeaturesDict
) -> dict[str, dict[str, Any]]:
    """``{file_name: {feature: value}}`` of a metadata file; `columns` maps features to its
    columns."""
    rows: dict[str, dict[str, Any]] = {}
    for line, raw in _rows(path):
        name = raw.get(FILE_NAME)
        if not isinstance(name, str) or not name:
            raise SourceFormatError(f"{path}:{line}: no {FILE_NAME} (the file the row describes)")
        if name in rows:
            raise SourceFormatError(f"{path}:{line}: a second row for {FILE_NAME} {name!r}")
        row = {}
        for feature, column in columns.items():
            value = raw.get(column)
            if value is None or value == "":
                raise SourceFormatError(
                    f"{path}:{line}: column {column!r} is missing; every file needs a value"
                )
            try:
                if isinstance(value, str) and path.suffix == ".csv":
                    row[feature] = to_value(features[feature], value)
                else:
                    row[feature] = typed_value(features[feature], value)
            except ValueError as error:
                raise SourceFormatError(f"{path}:{line}: column {column!r}: {error}") from None
        rows[name] = row
    return rows


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if path.suffix == ".jsonl":
        return list(objects(path))
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = dict_reader(f, strict=True)
            return [(reader.line_num, dict(row)) for row in reader]
    except (csv.Error, UnicodeDecodeError) as error:
        raise SourceFormatError(f"{path}: cannot read it as UTF-8 CSV ({error})") from None


def unused_rows(path: Path, rows: Mapping[str, Any], seen: set[str]) -> None:
    """SourceFormatError when the metadata describes a file the folder does not hold."""
    extra = sorted(set(rows) - seen)
    if extra:
        raise SourceFormatError(
            f"{path}: {FILE_NAME} {extra[0]!r} is no file of the folder "
            f"({len(extra)} such row{'s' if len(extra) > 1 else ''})"
        )

"""Image files in an archive, described by whitespace tables keyed by file name (CelebA).

CelebA ships ``img_align_celeba.zip`` (``img_align_celeba/000001.jpg`` ...) and text tables,
one row per image, its file name first: ``list_eval_partition.txt`` (``000001.jpg 0``: 0
train, 1 validation, 2 test), ``list_attr_celeba.txt`` and ``list_landmarks_align_celeba.txt``
(a first line holding the row count, a second the column names, then the rows) and
``identity_CelebA.txt`` (rows only). Format ``image_tables`` reads:

- role ``images``: the images, a zip (read in place, members found by base name) or a
  directory;
- role ``partition``: the list of ``<file name> <number>``; a split holds the files whose
  number is option ``partition``, in sorted file-name order (as the reference catalog does);
- option ``tables``: ``{feature: table file}``, each feature a FeaturesDict of Scalars whose
  names are the table's columns (the second line of a headed table; for a table without
  headings, option ``columns`` gives them: ``{identity: [Identity_No]}``); a bool Scalar is
  ``value > 0`` (CelebA's attributes are -1 or 1), an integer Scalar the value.

The image is given to the ``image`` feature as it is (its bytes kept); the key is the file
name. A listed file without an image or without a row in a table is an error naming both.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict, Scalar
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples", "read_table"]


def read_table(path: Path, columns: list[str] | None) -> tuple[list[str], dict[str, list[int]]]:
    """A table's column names and its rows (file name -> integers). Without `columns`, the
    file's first line is the row count and its second the names."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    first = 0
    if columns is None:
        if len(lines) < 2:
            raise SourceFormatError(f"{path}: expected a row count and a line of column names")
        columns, first = lines[1].split(), 2
    rows: dict[str, list[int]] = {}
    for number, line in enumerate(lines[first:], first + 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != len(columns) + 1:
            raise SourceFormatError(
                f"{path}:{number}: {len(fields) - 1} values, expected {len(columns)} "
                f"({' '.join(columns[:4])} ...)"
            )
        try:
            rows[fields[0]] = [int(v) for v in fields[1:]]
        except ValueError:
            raise SourceFormatError(f"{path}:{number}: not whole numbers: {line!r}") from None
    return columns, rows


class _Images:
    """The image files by base name, in a zip (read in place) or a directory."""

    def __init__(self, root: Any) -> None:
        self._root = root
        self._zip: zipfile.ZipFile | None = None
        if isinstance(root, Path) and root.is_dir():
            self._names = {p.name: str(p) for p in root.rglob("*") if p.is_file()}
        else:
            self._zip = zipfile.ZipFile(root.open("rb") if not isinstance(root, Path) else root)
            self._names = {
                posixpath.basename(name): name
                for name in self._zip.namelist()
                if not name.endswith("/")
            }

    def read(self, name: str, where: str) -> Any:
        member = self._names.get(name)
        if member is None:
            raise SourceFormatError(f"{where}: no image {name!r} in {self._root}")
        return self._zip.read(member) if self._zip is not None else Path(member)

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


def examples(source: Source) -> Examples:
    """Yield ``(file name, {"image": bytes or path, group: {column: value}, ...})`` for every
    file of the split's partition, in sorted order."""
    partition = source.file("partition")
    options = source.options
    _, listed = read_table(partition, ["partition"])
    files = sorted(name for name, (number,) in listed.items() if number == options["partition"])
    tables = {}
    bools: dict[str, set[str]] = {}  # the bool columns of each table: value > 0
    for feature, path in options["tables"].items():
        columns, rows = read_table(path, options["columns"].get(feature))
        group = source.features[feature]
        assert isinstance(group, FeaturesDict)
        unknown = sorted(set(columns) ^ set(group))
        if unknown:
            raise SourceFormatError(
                f"{path}: its columns and feature {feature!r}'s differ, e.g. {unknown[0]!r}"
            )
        tables[feature] = (path, columns, rows)
        bools[feature] = {c for c, f in group.items() if getattr(f, "dtype", None) == np.bool_}
    images = _Images(source.stream("images"))
    try:
        for name in files:
            example: dict[str, Any] = {"image": images.read(name, str(partition))}
            for feature, (path, columns, rows) in tables.items():
                row = rows.get(name)
                if row is None:
                    raise SourceFormatError(f"{path}: no row for {name!r}")
                kinds = bools[feature]
                example[feature] = {
                    column: value > 0 if column in kinds else value
                    for column, value in zip(columns, row, strict=True)
                }
            yield name, example
    finally:
        images.close()


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset({"image", *options["tables"]}), frozenset()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    for feature in options["tables"]:
        group = features[feature]
        if not isinstance(group, FeaturesDict) or not all(
            isinstance(f, Scalar) for f in group.values()
        ):
            return f"feature {feature!r} must be a FeaturesDict of Scalars, one per column"
    for feature in options["columns"]:
        if feature not in options["tables"]:
            return f"columns.{feature}: not a feature of tables"
    return None


FORMAT = SourceFormat(
    name="image_tables",
    description="images in a zip described by whitespace tables keyed by file name (CelebA)",
    roles=(Role("images", stream=True), Role("partition")),
    options={
        "partition": Option("int", 0, "the partition number of the split's files"),
        "tables": Option("file_map", {}, "feature -> a table of its columns"),
        "columns": Option("strs_map", {}, "feature -> column names of a table without them"),
    },
    features=_features,
    examples=examples,
    validate=_validate,
)

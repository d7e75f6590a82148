"""Image files labelled by a CSV table: every file under the root is looked up by name.

DeepWeeds ships its images flat in a zip and their labels in ``labels.csv`` (``Filename,
Label,Species``). Every file under the root (a directory, or a zip/tar read as a stream; see
`catalog.formats.shards.members`) is an example; its row in the CSV (found by the file's base name
in ``filename_column``) gives the label from ``label_column``, a class name. A file without
a row is an error naming it, and so is a row naming no file. The image is given to the
``image`` feature as it is (its bytes kept); the key is the file name; examples come in
sorted order.

Options: ``filename_column`` (default ``Filename``), ``label_column`` (default ``label``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.shards.members import walk
from catalog.formats.tables.csv_dialect import dict_reader

__all__ = ["FORMAT", "examples", "read_table"]


def read_table(source: Source) -> dict[str, str]:
    """File name -> label, from the CSV file; SourceFormatError naming it when malformed."""
    path = source.file("csv")
    name_column, label_column = source.options["filename_column"], source.options["label_column"]
    with open(path, encoding="utf-8", newline="") as f:
        reader = dict_reader(f)
        header = reader.fieldnames or []
        missing = [c for c in (name_column, label_column) if c not in header]
        if missing:
            raise SourceFormatError(
                f"{path}: no column {missing[0]!r}; the header is {', '.join(header)}"
            )
        table = {}
        for row in reader:
            name = row[name_column]
            if name in table:
                raise SourceFormatError(f"{path}:{reader.line_num}: {name!r} is listed twice")
            table[name] = row[label_column]
    return table


def examples(source: Source) -> Examples:
    """Yield ``(file name, {"image": file or bytes, "label": class name})`` for every file."""
    table = read_table(source)
    seen = set()
    for member in walk(source.stream("root")):
        if member.name not in table:
            raise SourceFormatError(
                f"{source.stream('root')}/{member.path}: not listed in {source.file('csv')}"
            )
        seen.add(member.name)
        image: Any = member.file if member.file is not None else member.read()
        yield member.name, {"image": image, "label": table[member.name]}
    unseen = sorted(set(table) - seen)
    if unseen:
        raise SourceFormatError(
            f"{source.file('csv')} lists {len(unseen)} files that are not in "
            f"{source.stream('root')}, e.g. {unseen[0]!r}"
        )


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not isinstance(features["label"], ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {features['label']!r}"
    return None


FORMAT = SourceFormat(
    name="image_csv",
    description="image files (a directory, zip or tar) labelled by a CSV table of file names",
    roles=(Role("root", stream=True), Role("csv")),
    options={
        "filename_column": Option("str", "Filename", "the CSV column holding file names"),
        "label_column": Option("str", "label", "the CSV column holding class names"),
    },
    features=lambda options: (frozenset({"image", "label"}), frozenset()),
    examples=examples,
    validate=_validate,
)

"""JSON Lines: one JSON object per line, one example per object, keys mapped to features.

Options: ``columns``: ``{feature: key}`` (every feature of the spec gets its value from one
key); ``fill``: ``{feature: text}``, the value standing in for a missing one (a key that is
absent or ``null``), parsed as the feature's type as a CSV field is (`catalog.formats.
delimited.to_value`); without it a missing value is an error. Values must fit their feature
exactly (`catalog.formats.tables.typed_values`); a key the mapping does not name is an error unless
``extra_keys: ignore``. Blank lines are skipped. The files are read one line at a time; the
key of an example is ``<file name>:<line>``, and every error names the file, the line and the
key.
"""

from __future__ import annotations

import codecs
import json
import math
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat
from catalog.formats.tables.compressed import open_bytes
from catalog.formats.tables.csv_dialect import lines_of
from catalog.formats.tables.delimited import to_value
from catalog.formats.tables.typed_values import typed_example

__all__ = ["FORMAT", "examples", "objects"]


def _finite(text: str) -> float:
    """A JSON number as float64; ValueError past float64 (``1e309``), which would be inf."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is outside float64 (about ±1.8e308)")
    return value


def _constant(text: str) -> float:
    """``NaN``, ``Infinity``, ``-Infinity`` (Python's JSON extension), as Python reads them."""
    return float(text)


def objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-blank line; SourceFormatError naming file:line
    for a line that is not UTF-8 JSON holding an object (nested past the interpreter's
    recursion limit included: never a RecursionError). A UTF-8 byte order mark opening the
    file (as Windows tools write one) is not part of the first line."""
    with open_bytes(path) as f:
        for number, raw in enumerate(lines_of(f, path), 1):
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
                value = json.loads(text, parse_float=_finite, parse_constant=_constant)
            except UnicodeDecodeError as error:
                raise SourceFormatError(
                    f"{path}:{number}: not UTF-8 text at byte {error.start} of the line"
                ) from None
            except json.JSONDecodeError as error:
                where = (
                    "the line ends before the JSON does"
                    if error.pos >= len(text)
                    else f"at column {error.pos + 1} of the line"
                )
                message = f"{path}:{number}: not JSON: {error.msg}, {where}"
                raise SourceFormatError(message) from None
            except ValueError as error:
                raise SourceFormatError(f"{path}:{number}: not JSON ({error})") from None
            except RecursionError:  # Python's parser recurses once per [ or {
                raise SourceFormatError(
                    f"{path}:{number}: JSON nested too deeply (more than about "
                    f"{sys.getrecursionlimit()} levels of [ and {{); catalog reads flat objects"
                ) from None
            if not isinstance(value, dict):
                raise SourceFormatError(
                    f"{path}:{number}: expected a JSON object per line, got {type(value).__name__}"
                )
            yield number, value


def examples(source: Source) -> Examples:
    """Yield ``(file:line, example)`` for every object of the files, in order."""
    options, features = source.options, source.features
    columns: Mapping[str, str] = options["columns"]
    wanted = set(columns.values())
    fills = fill_values(options["fill"], features)
    for path in source.paths("files"):
        for number, obj in objects(path):
            if options["extra_keys"] == "error":
                extra = sorted(set(obj) - wanted)
                if extra:
                    raise SourceFormatError(
                        f"{path}:{number}: key {extra[0]!r} is none of the dataset's columns "
                        f"({', '.join(sorted(wanted))}); map it to a feature, or give "
                        "options.extra_keys: ignore"
                    )
            example = typed_example(
                obj.get, columns, fills, features, f"{path}:{number}", "key",
                "is missing (null or absent)",
            )  # fmt: skip
            yield f"{path.name}:{number}", example


def fill_values(fill: Mapping[str, str], features: FeaturesDict) -> dict[str, Any]:
    """The ``fill`` option's texts as values of their features; SourceFormatError if one
    does not parse."""
    values = {}
    for name, text in fill.items():
        try:
            values[name] = to_value(features[name], text)
        except ValueError as error:
            raise SourceFormatError(f"options.fill {name!r}: {error}") from None
    return values


def validate_columns(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    """What is wrong with ``columns``/``fill`` for these features (shared with Parquet)."""
    missing = sorted(set(features) - set(options["columns"]))
    if missing:
        return f"options.columns gives no key for feature {missing[0]!r}"
    for name in options["fill"]:
        if name not in options["columns"]:
            return f"options.fill: {name!r} is not a mapped feature"
    return None


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if options["extra_keys"] not in ("error", "ignore"):
        return f"options.extra_keys must be error or ignore, got {options['extra_keys']!r}"
    return validate_columns(options, features)


FORMAT = SourceFormat(
    name="json_lines",
    description="JSON Lines: one object per line, keys mapped to features",
    roles=(Role("files", many=True),),
    options={
        "columns": Option("str_map", {}, "feature -> the key holding its value"),
        "fill": Option("str_map", {}, "feature -> the text standing in for a missing value"),
        "extra_keys": Option("str", "error", "error or ignore: keys no feature takes"),
    },
    features=lambda options: (frozenset(options["columns"]), frozenset()),
    examples=examples,
    validate=_validate,
)

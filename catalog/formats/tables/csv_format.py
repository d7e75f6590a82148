"""The `delimited` source format: CSV/TSV text, one example per row, columns mapped to features
(`delimited`: the row reader; `csv_batches`: the same rows in batches, by pyarrow).
Options (all optional) are those of `catalog.formats.tables.delimited`."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from catalog.features import FeaturesDict, Scalar, Tensor, Text
from catalog.formats.base import Option, Role, SourceFormat
from catalog.formats.tables.csv_batches import batches
from catalog.formats.tables.delimited import QUOTING, examples, leaf

__all__ = ["FORMAT"]


def _mapped(options: Mapping[str, Any]) -> list[str]:
    paths = [*options["columns"], *options["stack"], *options["constant"]]
    return [*paths, options["row_index"]] if options["row_index"] else paths


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """Any top-level feature a mapped path may start with (a name may hold '/'); `_validate`
    checks that every feature gets a value."""
    paths = _mapped(options)
    return frozenset(), frozenset(p[:i] for p in paths for i in range(1, len(p) + 1)
                                  if i == len(p) or p[i] == "/")  # fmt: skip


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if options["quoting"] not in QUOTING:
        return f"options.quoting must be one of {', '.join(QUOTING)}, got {options['quoting']!r}"
    if options["incomplete"] not in ("error", "skip", "missing"):
        return f"options.incomplete must be error, skip or missing, got {options['incomplete']!r}"
    if options["incomplete"] == "missing" and not options["missing"]:
        return "options.incomplete: missing needs options.missing (the texts of a missing value)"
    if len(options["delimiter"]) != 1:
        return f"options.delimiter must be one character, got {options['delimiter']!r}"
    mapped = _mapped(options)
    twice = sorted(p for p, n in collections.Counter(mapped).items() if n > 1)  # linear
    if twice:
        return f"feature {twice[0]!r} is given a value by more than one option"
    leaves = {path for path, _ in features.leaves()}
    for path in mapped:
        if path not in leaves:
            return f"{path!r} is not a feature (features: {', '.join(sorted(leaves))})"
    unmapped = sorted(leaves - set(mapped))
    if unmapped:
        return f"no column, constant or row_index gives feature {unmapped[0]!r}"
    for path in options["stack"]:
        feature = leaf(features, path)
        if not isinstance(feature, Tensor) or len(feature.shape) != 1:
            return f"options.stack: feature {path!r} must be a Tensor of one dimension"
    for path in [*options["fill"], *options["values"], *options["strip"]]:
        if path not in mapped:
            return f"{path!r} in fill, values or strip is not a mapped feature"
    for path in options["doubled_quotes"]:
        if path not in mapped or not isinstance(leaf(features, path), Text):
            return f"options.doubled_quotes: {path!r} is not a mapped Text feature"
    for path in options["via_float32"]:
        feature = leaf(features, path) if path in mapped else None
        if not isinstance(feature, (Scalar, Tensor)) or feature.dtype.kind != "f":
            return f"options.via_float32: {path!r} is not a mapped float feature"
    return None


FORMAT = SourceFormat(
    name="delimited",
    description="CSV/TSV text: one example per row, columns mapped to features",
    roles=(Role("file", many=True),),
    options={
        "delimiter": Option("str", ",", "the field separator (one character)"),
        "quoting": Option("str", "minimal", "minimal (double quotes) or none (quotes are text)"),
        "header": Option("strs", [], "column names of a file without a header row"),
        "skip_rows": Option("int", 0, "lines skipped at the start, before the header"),
        "columns": Option("str_map", {}, "feature path -> column name"),
        "stack": Option("strs_map", {}, "1-d Tensor feature path -> its columns"),
        "constant": Option("str_map", {}, "feature path -> a text for features no column holds"),
        "row_index": Option("str", "", "a feature that gets the row's 0-based index"),
        "missing": Option("strs", [], "texts marking a missing value, e.g. ?"),
        "fill": Option("str_map", {}, "feature path -> the text standing in for a missing value"),
        "values": Option("str_maps", {}, "feature path -> {text in the file: text to use}"),
        "strip": Option("strs", [], "features whose text loses surrounding whitespace"),
        "doubled_quotes": Option("strs", [], "Text features keeping quotes doubled, as TFDS"),
        "via_float32": Option("strs", [], "float features rounded to float32 first, as TFDS"),
        "encoding": Option("str", "utf-8", "the file's text encoding"),
        "incomplete": Option(
            "str", "error", "error, skip or missing: a row shorter than the header"
        ),
    },
    features=_features,
    examples=examples,
    validate=_validate,
    batches=batches,  # pyarrow, when installed and a unit encodes in bulk
)

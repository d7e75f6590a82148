"""The `json_lines` source format: JSON Lines (or a JSON array of records), one example per
object, keys mapped to features (`json_lines`: the row reader; `json_batches`: the same rows in
batches, by pyarrow). Options are those of `catalog.formats.tables.json_lines`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.features import FeaturesDict
from catalog.formats.base import Option, Role, SourceFormat
from catalog.formats.tables.json_batches import batches
from catalog.formats.tables.json_lines import examples, validate_columns

__all__ = ["FORMAT"]


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
    batches=batches,  # pyarrow, when installed and a unit encodes in bulk
)

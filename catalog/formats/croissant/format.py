"""The `croissant` source format: a Croissant file's record set, read as mlcroissant reads it
(`records`: the recipe, row by row), its plain Parquet or CSV columns in batches (`batches`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from catalog.formats.base import Option, SourceFormat
from catalog.formats.croissant.batches import batches
from catalog.formats.croissant.records import examples

__all__ = ["FORMAT"]


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    try:
        return frozenset(json.loads(options["recipe"])["features"]), frozenset()
    except (ValueError, KeyError, TypeError):
        return frozenset(), frozenset()


FORMAT = SourceFormat(
    name="croissant",
    description="a record set of a Croissant file, read as mlcroissant reads it",
    roles=(),
    options={
        "recipe": Option("str", "", "the record set and what it reads (JSON; written by catalog)"),
        "files": Option("file_map", {}, "key -> a file, archive or folder the recipe names"),
        "fill": Option("str_map", {}, "feature -> the value standing in for a missing one"),
    },
    features=_features,
    examples=examples,
    batches=batches,
)

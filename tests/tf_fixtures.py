"""The TFDS directories written by TensorFlow Datasets itself (tests/fixtures/tf, made by
fixtures/tf/make_fixtures.py) and what TFDS decoded from them, for the tests that read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tf"
FORMATS = ("tfrecord", "array_record")


def expected(name: str) -> Any:
    """A JSON document of fixtures/tf (``expected.json``, ``tfds_kinds_gold.json``...)."""
    return json.loads((FIXTURES / name).read_text("utf-8"))


def tfds_dir(document: Any, file_format: str) -> Path:
    """The TFDS directory of `file_format` that `document` (from `expected`) describes."""
    return FIXTURES / document["tfds"][file_format]["path"]


def plain(value: Any) -> Any:
    """A value as plain nested lists / numbers / strings: the form both JSON layouts (TFDS's
    decoded examples, catalog's) and arrays share."""
    if isinstance(value, dict):
        if set(value) == {"array", "dtype", "shape"}:
            return value["array"]
        if set(value) == {"bytes", "shape"}:
            return value["bytes"]
        if len(value) == 1 and next(iter(value)) in ("text", "bool", "ragged", "list", "digest"):
            inner = next(iter(value.values()))
            return [plain(v) for v in inner] if isinstance(inner, list) else inner
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value

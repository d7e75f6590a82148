"""CIFAR binary batches: fixed-size records of label bytes, then a channel-planar image.

Each record is one byte per label (CIFAR-10: ``label``; CIFAR-100: ``coarse_label`` then
``label``), then 3072 image bytes: 1024 red, 1024 green, 1024 blue, each 32x32 row by row.
Images come back as (32, 32, 3): height, width, channel. Files are read a block of records
at a time, never whole, from any record on (random access by position). Never the pickle
version of CIFAR: unpickling downloads is unsafe.

Options (``splits.<name>.options``):

- ``label_bytes``: the ClassLabel features the leading bytes fill, in record order.
- ``names_files``: ``{feature: file}``, text files listing those features' class names (one
  per line, blank lines ignored); the prepare step checks they equal the spec's names.

Examples hold ``image``, the ``label_bytes`` features, and ``id`` if the spec declares it
(Text, ``train_00000``...: a running index in source order across the split's files).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.features.class_label import read_names_file
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat, running_id

__all__ = ["FORMAT", "IMAGE_BYTES", "examples"]

IMAGE_BYTES = 32 * 32 * 3
_BLOCK = 1024  # records per read: about 3 MB


class _Records:
    """The split's records by position: file sizes give each file's count, a range is read
    with one seek and block reads."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._labels: list[str] = list(source.options["label_bytes"])
        self._size = len(self._labels) + IMAGE_BYTES
        self._starts = [0]  # the position of each file's first record, then the total
        for path in source.paths("records"):
            total = path.stat().st_size
            if total % self._size:
                raise SourceFormatError(
                    f"{path}: {total} bytes is not a whole number of {self._size}-byte records "
                    f"({len(self._labels)} label byte(s) + {IMAGE_BYTES} image bytes); the file "
                    "is cut short or not a CIFAR binary batch with this layout"
                )
            self._starts.append(self._starts[-1] + total // self._size)

    @property
    def length(self) -> int:
        return self._starts[-1]

    def examples(self, start: int, stop: int) -> Examples:
        with_id = "id" in self._source.features
        labels, size = self._labels, self._size
        for path, first, end in zip(
            self._source.paths("records"), self._starts, self._starts[1:], strict=False
        ):
            lo, hi = max(start, first), min(stop, end)
            if lo >= hi:
                continue
            with open(path, "rb") as f:
                f.seek((lo - first) * size)
                index = lo
                while index < hi:
                    block = f.read(size * min(_BLOCK, hi - index))
                    rows = np.frombuffer(block, np.uint8).reshape(-1, size)
                    values = rows[:, : len(labels)].tolist()
                    planar = rows[:, len(labels) :].reshape(-1, 3, 32, 32)
                    images = np.ascontiguousarray(planar.transpose(0, 2, 3, 1))
                    for image, label_values in zip(images, values, strict=True):
                        key = running_id(self._source.split, index)
                        example: dict[str, Any] = dict(zip(labels, label_values, strict=True))
                        example["image"] = image
                        if with_id:
                            example["id"] = key
                        yield key, example
                        index += 1

    def close(self) -> None:
        pass


def examples(source: Source) -> Examples:
    """Yield ``(id, example)`` for every record of the split's files, in order."""
    records = _Records(source)
    return records.examples(0, records.length)


def _class_names(source: Source) -> dict[str, tuple[Path, list[str]]]:
    names_files: Mapping[str, Path] = source.options["names_files"]
    return {feature: (path, read_names_file(path)) for feature, path in names_files.items()}


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset({"image", *options["label_bytes"]}), frozenset({"id"})


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    labels = options["label_bytes"]
    if not labels or len(set(labels)) != len(labels):
        return f"label_bytes must name one or more different features, got {labels}"
    for name in labels:
        if name in features and not isinstance(features[name], ClassLabel):
            return f"label_bytes: feature {name!r} must be a ClassLabel, got {features[name]!r}"
    unknown = sorted(set(options["names_files"]) - set(labels))
    if unknown:
        return f"names_files: {unknown[0]!r} is not one of the label_bytes features {labels}"
    return None


FORMAT = SourceFormat(
    name="cifar_bin",
    description="CIFAR binary batches: label byte(s) + a 32x32x3 channel-planar image per record",
    roles=(Role("records", many=True),),
    options={
        "label_bytes": Option("strs", ["label"], "features filled by the leading label bytes"),
        "names_files": Option("file_map", {}, "feature -> file of its class names"),
    },
    features=_features,
    examples=examples,
    class_names=_class_names,
    validate=_validate,
    random_access=_Records,
)

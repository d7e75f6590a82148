"""Raw uint8 image files: one fixed-size image after another, labels in a file of bytes.

STL-10 ships ``train_X.bin`` (N x 27648 bytes: 96x96x3 images) beside ``train_y.bin`` (one
byte per image). The image size is the ``image`` feature's (fully known) shape; ``layout``
says how each image's bytes are ordered:

- ``hwc``: row by row, the channels of each pixel together;
- ``chw``: one plane per channel, each row by row (CIFAR);
- ``cwh``: one plane per channel, each column by column (STL-10, MATLAB's order).

Options: ``layout`` (default ``hwc``); ``labels``: ``{label: file}``, a file of one byte per
image (without it, every example's label is -1: an unlabelled split, which needs
``ClassLabel(allow_unlabeled=True)``); ``label_offset``: subtracted from each label byte (STL-10
counts classes from 1); ``names_files``: ``{label: file}``, a text file of the class names (one
a line), checked against the spec's when the dataset is prepared. Images are read a block at a
time, so memory stays bounded (STL-10's unlabelled split is 2.8 GB). The key is the image's
index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image
from catalog.features.class_label import read_names_file
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat, shape_of

__all__ = ["FORMAT", "examples"]

_LAYOUTS = ("hwc", "chw", "cwh")
#: Images read at a time.
BLOCK = 256


def _to_hwc(
    block: np.ndarray[Any, Any], layout: str, shape: tuple[int, ...]
) -> np.ndarray[Any, Any]:
    height, width, channels = shape
    if layout == "hwc":
        return block.reshape(len(block), height, width, channels)
    if layout == "chw":
        return block.reshape(len(block), channels, height, width).transpose(0, 2, 3, 1)
    return block.reshape(len(block), channels, width, height).transpose(0, 3, 2, 1)


def examples(source: Source) -> Examples:
    """Yield ``(index, {"image": (h, w, c) uint8[, "label": int]})`` for every image."""
    path = source.file("images")
    shape = shape_of(source.features, "image", "raw_images")
    size = math.prod(shape)
    total = path.stat().st_size
    if total % size:
        raise SourceFormatError(
            f"{path}: {total} bytes is not a whole number of {size}-byte images of shape {shape}"
        )
    count = total // size
    label_files = source.options["labels"]
    labels = None
    if "label" in source.features and label_files:
        labels = np.fromfile(label_files["label"], np.uint8).astype(np.int64)  # 1 byte/image
        if len(labels) != count:
            raise SourceFormatError(
                f"{path} holds {count} images but {label_files['label']} holds {len(labels)} labels"
            )
        labels -= source.options["label_offset"]
    layout = source.options["layout"]
    with open(path, "rb") as f:
        index = 0
        while index < count:
            n = min(BLOCK, count - index)
            block = np.frombuffer(f.read(n * size), np.uint8).reshape(n, size)
            for image in _to_hwc(block, layout, shape):
                example: dict[str, Any] = {"image": np.ascontiguousarray(image)}
                if "label" in source.features:
                    example["label"] = -1 if labels is None else int(labels[index])
                yield str(index), example
                index += 1


def _class_names(source: Source) -> dict[str, tuple[Path, list[str]]]:
    files: Mapping[str, Path] = source.options["names_files"]
    return {feature: (path, read_names_file(path)) for feature, path in files.items()}


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    image = features["image"]
    if not isinstance(image, Image) or None in image.shape:
        return f"feature 'image' must be an Image of a fully known shape, got {image!r}"
    if options["layout"] not in _LAYOUTS:
        return f"layout must be one of {', '.join(_LAYOUTS)}, got {options['layout']!r}"
    for option in ("labels", "names_files"):
        unknown = sorted(set(options[option]) - {"label"})
        if unknown:
            return f"{option}: {unknown[0]!r} is not 'label'"
    label = features.get("label")
    if label is not None and not isinstance(label, ClassLabel):
        return f"feature 'label' must be a ClassLabel, got {label!r}"
    if label is not None and not options["labels"] and not label.allow_unlabeled:
        return (
            "without options.labels every label is -1, which needs "
            "ClassLabel(allow_unlabeled: true)"
        )
    return None


FORMAT = SourceFormat(
    name="raw_images",
    description="raw uint8 images back to back (hwc, chw or cwh), labels one byte each",
    roles=(Role("images"),),
    options={
        "layout": Option("str", "hwc", "the byte order of an image: hwc, chw or cwh"),
        "labels": Option("file_map", {}, "{label: file}: one label byte per image"),
        "label_offset": Option("int", 0, "subtracted from every label byte"),
        "names_files": Option("file_map", {}, "{label: file of its class names}"),
    },
    features=lambda options: (frozenset({"image"}), frozenset({"label"})),
    examples=examples,
    class_names=_class_names,
    validate=_validate,
)

"""Caltech-UCSD Birds-200-2011: images, the official train/test split, boxes and masks.

``CUB_200_2011.tgz`` holds ``CUB_200_2011/images/<NNN.Class_Name>/<name>.jpg`` and text
files whose lines share the image id: ``images.txt`` (``<id> <path under images/>``),
``train_test_split.txt`` (``<id> <1: train, 0: test>``), ``bounding_boxes.txt`` (``<id> <x>
<y> <width> <height>`` in pixels); ``segmentations.tgz`` holds ``segmentations/<NNN.Class_Name>/
<name>.png``. Format ``cub`` reads role ``root`` (the ``CUB_200_2011`` folder) and role
``segmentations`` (the folder of masks); option ``part`` (train or test) picks the split. In
images.txt's order, each example holds, as the reference catalog computes them:

- ``image`` (kept as it is) and ``image/filename``: ``CUB_200_2011/images/<path>``;
- ``label``: the class folder's number minus 1; ``label_name``: its name lower-cased
  (``001.Black_footed_Albatross`` -> 0, ``black_footed_albatross``);
- ``segmentation_mask``: the mask decoded by OpenCV as greyscale, ``(h, w, 1)``;
- ``bbox``: ``(y / h, x / w, (y + height) / h, (x + width) / w)``, each at most 1, where ``h``
  and ``w`` are the mask's height and width.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]

_CLASS = re.compile(r"(\d+)\.(\w+)")
_PARTS = {"train": "1", "test": "0"}


def _table(path: Path, width: int) -> dict[str, list[str]]:
    """id -> the other fields of each line of a CUB text file."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != width:
                raise SourceFormatError(
                    f"{path}:{number}: {len(fields)} fields, expected {width}: {line.strip()!r}"
                )
            rows[fields[0]] = fields[1:]
    return rows


def examples(source: Source) -> Examples:
    """Yield ``(filename, {image, filename, label, label_name, bbox, segmentation_mask})``."""
    import cv2

    root, masks = source.file("root"), source.file("segmentations")
    images = _table(root / "images.txt", 2)
    split = _table(root / "train_test_split.txt", 2)
    boxes = _table(root / "bounding_boxes.txt", 5)
    wanted = _PARTS[source.options["part"]]
    for image_id, (path,) in images.items():
        if split.get(image_id, [None])[0] != wanted:
            continue
        folder, _, name = path.partition("/")
        found = _CLASS.fullmatch(folder)
        if found is None or image_id not in boxes:
            raise SourceFormatError(f"{root / 'images.txt'}: image {image_id} {path!r}: no class "
                                    "folder NNN.Name or no bounding box")  # fmt: skip
        mask_path = masks / folder / f"{Path(name).stem}.png"
        if not mask_path.is_file():
            raise SourceFormatError(f"{mask_path}: no mask for image {image_id} {path!r}")
        mask = cv2.imdecode(np.fromfile(mask_path, np.uint8), cv2.IMREAD_GRAYSCALE)
        if mask is None:
            raise SourceFormatError(f"{mask_path}: no mask OpenCV can decode")
        height, width = mask.shape
        x, y, w, h = (float(v) for v in boxes[image_id])
        image = root / "images" / path
        filename = f"{root.name}/images/{path}"
        yield filename, {
            "image": image,
            "image/filename": filename,
            "label": int(found[1]) - 1,
            "label_name": found[2].lower(),
            "bbox": (min(y / height, 1.0), min(x / width, 1.0),
                     min((y + h) / height, 1.0), min((x + w) / width, 1.0)),
            "segmentation_mask": mask[:, :, None],
        }  # fmt: skip


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    return None if options["part"] in _PARTS else "part must be train or test"


FORMAT = SourceFormat(
    name="cub",
    description="Caltech-UCSD Birds 2011: images, train/test split, boxes, segmentation masks",
    roles=(Role("root"), Role("segmentations")),
    options={"part": Option("str", "train", "train or test (train_test_split.txt)")},
    features=lambda options: (
        frozenset({"image", "image/filename", "label", "label_name", "bbox", "segmentation_mask"}),
        frozenset(),
    ),
    examples=examples,
    validate=_validate,
)

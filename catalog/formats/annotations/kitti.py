"""KITTI object detection: images, their label files, and the reference catalog's split by video.

KITTI's object benchmark ships ``data_object_image_2.zip`` (``training/image_2/000000.png``
...), ``data_object_label_2.zip`` (``training/label_2/000000.txt``: one object per line,
``type truncated occluded alpha left top right bottom height width length x y z
rotation_y``) and ``devkit_object.zip``, whose ``mapping/train_rand.txt`` (a comma-separated
permutation, counting from 1) and ``mapping/train_mapping.txt`` (``<date> <drive> <frame>``
per line) give each training image its video (drive). Only the training images are labelled,
so the reference catalog splits them by video, and format ``kitti`` does the same: with
``numpy.random.RandomState(123)``, ``choice`` of 10% of the sorted videos (at least one) for
test, then of 10% of the rest for validation, without replacement; option ``part`` (train,
validation or test) picks one. Images come in id order, each kept as its PNG bytes, with:

- ``image/file_name``: ``000042.png``;
- ``objects``: per object but ``DontCare`` its ``type``, ``truncated``, ``occluded``,
  ``alpha``, ``dimensions`` (height, width, length), ``location`` (x, y, z), ``rotation_y``
  and ``bbox``: as the reference catalog computes it, with the origin at the *bottom* left:
  ``((H - bottom) / H, left / W, (H - top) / H, right / W)``.

The zips are read in place, member by member.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples", "split_by_video"]

_PARTS = ("train", "validation", "test")
_PERCENT = 10  # of the videos for test, and of the rest for validation


def split_by_video(train_rand: str, train_mapping: str) -> dict[str, list[int]]:
    """The image ids of train, validation and test, from the devkit's two mapping files."""
    lines = train_mapping.splitlines()
    try:
        line_ids = [int(x.strip()) - 1 for x in train_rand.split(",") if x.strip()]
        videos: dict[str, list[int]] = {}
        for image_id, line_id in enumerate(line_ids):
            videos.setdefault(lines[line_id].split(" ")[1], []).append(image_id)
    except (ValueError, IndexError) as error:
        raise SourceFormatError(f"devkit mapping files do not match ({error})") from None
    rng = np.random.RandomState(123)
    names = sorted(videos)
    test = set(rng.choice(names, max(1, _PERCENT * len(names) // 100), replace=False))
    rest = sorted(set(names) - test)
    validation = set(rng.choice(rest, max(1, _PERCENT * len(names) // 100), replace=False))
    parts: dict[str, list[int]] = {part: [] for part in _PARTS}
    for video, ids in videos.items():
        part = "test" if video in test else "validation" if video in validation else "train"
        parts[part].extend(ids)
    return {part: sorted(ids) for part, ids in parts.items()}


def _objects(text: str, where: str, height: int, width: int) -> list[dict[str, Any]]:
    objects = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split(" ")
        if not line.strip():
            continue
        if len(fields) != 15:
            raise SourceFormatError(f"{where}:{number}: {len(fields)} fields, expected 15")
        if fields[0] == "DontCare":
            continue
        try:
            values = [float(v) for v in fields[1:]]
        except ValueError:
            raise SourceFormatError(f"{where}:{number}: not numbers: {line!r}") from None
        truncated, occluded, alpha, left, top, right, bottom = values[:7]
        objects.append({
            "type": fields[0],
            "truncated": np.float32(truncated),
            "occluded": int(occluded),
            "alpha": np.float32(alpha),
            "bbox": ((height - bottom) / height, left / width, (height - top) / height,
                     right / width),
            "dimensions": np.asarray(values[7:10], np.float32),
            "location": np.asarray(values[10:13], np.float32),
            "rotation_y": np.float32(values[13]),
        })  # fmt: skip
    return objects


def _zip(source: Source, role: str) -> zipfile.ZipFile:
    file = source.stream(role)
    try:
        return zipfile.ZipFile(file if not hasattr(file, "at") else file.open("rb"))
    except (zipfile.BadZipFile, OSError) as error:
        raise SourceFormatError(f"{file}: not a zip file ({error})") from None


def _read(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except KeyError:
        raise SourceFormatError(f"{archive.filename}: no member {name!r}") from None


def examples(source: Source) -> Examples:
    """Yield ``(file name, {"image", "image/file_name", "objects"})`` for the part's image ids."""
    from PIL import Image as PILImage

    with _zip(source, "devkit") as devkit:
        rand = _read(devkit, "mapping/train_rand.txt").decode()
        mapping = _read(devkit, "mapping/train_mapping.txt").decode()
    ids = split_by_video(rand, mapping)[source.options["part"]]
    with _zip(source, "images") as images, _zip(source, "labels") as labels:
        for image_id in ids:
            name = f"{image_id:06d}.png"
            data = _read(images, f"training/image_2/{name}")
            with PILImage.open(io.BytesIO(data)) as img:
                width, height = img.size
            label = f"training/label_2/{image_id:06d}.txt"
            text = _read(labels, label).decode()
            objects = _objects(text, f"{labels.filename}/{label}", height, width)
            yield name, {"image": data, "image/file_name": name, "objects": objects}


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    return None if options["part"] in _PARTS else f"part must be one of {', '.join(_PARTS)}"


FORMAT = SourceFormat(
    name="kitti",
    description="KITTI object detection: images, label files, split by video as the reference",
    roles=(Role("images", stream=True), Role("labels", stream=True), Role("devkit", stream=True)),
    options={"part": Option("str", "train", "train, validation or test (by video)")},
    features=lambda options: (frozenset({"image", "image/file_name", "objects"}), frozenset()),
    examples=examples,
    validate=_validate,
)

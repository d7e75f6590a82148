"""PASCAL VOC annotations: one XML file per image, its size and its objects' boxes.

Format ``voc`` reads a detection split: role ``ids`` is the list of image ids
(``ImageSets/Main/train.txt``), role ``root`` the year's directory (``VOCdevkit/VOC2007``)
holding ``JPEGImages/<id>.jpg`` and ``Annotations/<id>.xml``. Each example holds ``image`` (the
JPEG, its bytes kept), ``image/filename`` (``<id>.jpg``, TFDS's name), ``objects`` (a Sequence
of ``label``, ``bbox``, ``pose``, ``is_truncated``, ``is_difficult``), ``labels`` (the sorted
set of its objects' labels) and ``labels_no_difficult`` (the same over objects not marked
difficult). As in the reference catalog, a box is ``<bndbox>``'s pixel values as they are (VOC
counts from 1) divided by ``<size>``'s height and width; names and poses are lower-cased;
truncated and difficult are ``== "1"``. The key is the id.

`first_box` (the head box of an Oxford-IIIT Pet annotation) is shared with `image_list`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.errors import FeatureError, SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Sequence
from catalog.features.bbox import normalised_box
from catalog.formats.base import Examples, Role, Source, SourceFormat

__all__ = ["FORMAT", "Annotation", "VocObject", "first_box", "read_annotation"]

_EMPTY_BOX = (0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class VocObject:
    """One ``<object>``: class name and pose (lower-cased), flags, normalised box."""

    name: str
    pose: str
    truncated: bool
    difficult: bool
    bbox: tuple[float, float, float, float]


@dataclass(frozen=True)
class Annotation:
    height: int
    width: int
    objects: list[VocObject]


def _text(node: ET.Element, tag: str, path: Path, default: str | None = None) -> str:
    child = node.find(tag)
    if child is None or child.text is None:
        if default is not None:
            return default
        raise SourceFormatError(f"{path}: <{node.tag}> has no <{tag}>")
    return child.text.strip()


def _number(node: ET.Element, tag: str, path: Path) -> float:
    text = _text(node, tag, path)
    try:
        return float(text)
    except ValueError:
        raise SourceFormatError(f"{path}: <{tag}> is {text!r}, not a number") from None


def read_annotation(path: Path) -> Annotation:
    """Parse a VOC annotation file; SourceFormatError naming it when it is malformed."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as error:
        raise SourceFormatError(f"{path}: not a readable XML annotation ({error})") from None
    size = root.find("size")
    if size is None:
        raise SourceFormatError(f"{path}: no <size>")
    height, width = int(_number(size, "height", path)), int(_number(size, "width", path))
    if height < 1 or width < 1:
        raise SourceFormatError(f"{path}: <size> is {width}x{height}")
    objects = []
    for node in root.findall("object"):
        box = node.find("bndbox")
        if box is None:
            raise SourceFormatError(f"{path}: an <object> has no <bndbox>")
        ymin, xmin, ymax, xmax = (_number(box, t, path) for t in ("ymin", "xmin", "ymax", "xmax"))
        objects.append(
            VocObject(
                name=_text(node, "name", path).lower(),
                pose=_text(node, "pose", path, "unspecified").lower(),
                truncated=_text(node, "truncated", path, "0") == "1",
                difficult=_text(node, "difficult", path, "0") == "1",
                bbox=normalised_box(ymin, xmin, ymax, xmax, height, width),
            )
        )
    return Annotation(height, width, objects)


def first_box(path: Path) -> tuple[float, float, float, float]:
    """The first object's normalised box, or (0, 0, 0, 0) if there is no annotation file."""
    if not path.is_file():
        return _EMPTY_BOX
    objects = read_annotation(path).objects
    return objects[0].bbox if objects else _EMPTY_BOX


def examples(source: Source) -> Examples:
    """Yield ``(id, {"image", "image/filename", "objects", "labels", "labels_no_difficult"})``."""
    ids_file, root = source.file("ids"), source.file("root")
    with open(ids_file, encoding="utf-8") as f:
        ids = [line.strip() for line in f if line.strip()]
    for image_id in ids:
        image = root / "JPEGImages" / f"{image_id}.jpg"
        if not image.is_file():
            raise SourceFormatError(f"{ids_file}: id {image_id!r} has no image {image}")
        annotation = read_annotation(root / "Annotations" / f"{image_id}.xml")
        objects: list[dict[str, Any]] = [
            {
                "label": o.name,
                "bbox": o.bbox,
                "pose": o.pose,
                "is_truncated": o.truncated,
                "is_difficult": o.difficult,
            }
            for o in annotation.objects
        ]
        label = source.features["labels"].feature  # type: ignore[attr-defined]
        try:
            labels = sorted({label.str2int(o.name) for o in annotation.objects})
            easy = sorted({label.str2int(o.name) for o in annotation.objects if not o.difficult})
        except FeatureError as error:
            where = root / "Annotations" / f"{image_id}.xml"
            raise SourceFormatError(f"{where}: {error}") from None
        yield (
            image_id,
            {
                "image": image,
                "image/filename": image.name,
                "objects": objects,
                "labels": labels,
                "labels_no_difficult": easy,
            },
        )


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:

    labels = features["labels"]
    if not isinstance(labels, Sequence) or not isinstance(labels.feature, ClassLabel):
        return f"feature 'labels' must be a Sequence of ClassLabel, got {labels!r}"
    return None


FORMAT = SourceFormat(
    name="voc",
    description="PASCAL VOC detection: an id list, JPEGImages/<id>.jpg, Annotations/<id>.xml",
    roles=(Role("ids"), Role("root")),
    features=lambda options: (
        frozenset({"image", "image/filename", "objects", "labels", "labels_no_difficult"}),
        frozenset(),
    ),
    examples=examples,
    validate=_validate,
)

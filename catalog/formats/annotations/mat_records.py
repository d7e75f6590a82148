"""Image files annotated by a MATLAB struct array: one record per image (Stanford Cars).

Stanford Cars' devkit holds ``cars_train_annos.mat``: a struct array ``annotations`` whose
records have fields ``bbox_x1``, ``bbox_y1``, ``bbox_x2``, ``bbox_y2`` (pixels), ``class``
(counting from 1) and ``fname`` (``00001.jpg``). Format ``mat_records`` reads role
``annotations`` (the .mat file) and role ``root`` (the directory of images); each record is an
example, in the array's order:

- ``image``: the file ``<root>/<fname>``, kept as it is;
- ``label``: the record's ``class`` field minus ``label_base`` (default 1), a class index;
- ``bbox``: ``(y1 / height, x1 / width, y2 / height, x2 / width)``, the image's size read
  from its header (the reference catalog's normalisation: pixel values as they are);
- ``id``: when the spec declares it, the file name without its extension (``00001``).

Options: ``struct`` (default ``annotations``), ``file_field`` (``fname``), ``label_field``
(``class``), ``box_fields`` (``[bbox_y1, bbox_x1, bbox_y2, bbox_x2]``: ymin, xmin, ymax,
xmax). Reading needs scipy: ``pip install 'catalog[mat]'``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict
from catalog.features.bbox import normalised_box
from catalog.formats.arrays import mat
from catalog.formats.base import Examples, Option, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]


def _records(path: Path, options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The struct array's records as dicts of plain values (str, int, float)."""
    struct = options["struct"]
    array = mat.load_arrays(path, [struct])[struct]
    fields = [options["file_field"], options["label_field"], *options["box_fields"]]
    names = array.dtype.names or ()
    missing = [f for f in fields if f not in names]
    if missing:
        raise SourceFormatError(
            f"{path}: {struct!r} has no field {missing[0]!r}; its fields: {', '.join(names)}"
        )
    records = []
    for i, record in enumerate(array.reshape(-1)):
        try:
            records.append({f: np.asarray(record[f]).reshape(-1)[0] for f in fields})
        except IndexError:
            raise SourceFormatError(f"{path}: {struct}[{i}] has an empty field") from None
    return records


def examples(source: Source) -> Examples:
    """Yield ``(file name, {"image", "label", "bbox"[, "id"]})`` per record."""
    from PIL import Image as PILImage
    from PIL import UnidentifiedImageError

    path, root = source.file("annotations"), source.file("root")
    options = source.options
    ymin_f, xmin_f, ymax_f, xmax_f = options["box_fields"]
    with_id = "id" in source.features
    for record in _records(path, options):
        name = str(record[options["file_field"]])
        image = root / name
        try:
            with PILImage.open(image) as img:
                width, height = img.size
        except (OSError, UnidentifiedImageError) as error:
            raise SourceFormatError(f"{path}: record {name!r}: {image} ({error})") from None
        example: dict[str, Any] = {
            "image": image,
            "label": int(record[options["label_field"]]) - options["label_base"],
            "bbox": normalised_box(
                float(record[ymin_f]),
                float(record[xmin_f]),
                float(record[ymax_f]),
                float(record[xmax_f]),
                height,
                width,
            ),
        }
        if with_id:
            example["id"] = name.split(".")[0]
        yield name, example


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    if not isinstance(features["label"], ClassLabel):
        return "feature 'label' must be a ClassLabel"
    if len(options["box_fields"]) != 4:
        return "box_fields must name 4 fields: ymin, xmin, ymax, xmax"
    return None


FORMAT = SourceFormat(
    name="mat_records",
    description="image files annotated by a .mat struct array: file, class, box per record",
    roles=(Role("annotations"), Role("root")),
    options={
        "struct": Option("str", "annotations", "the struct array's name"),
        "file_field": Option("str", "fname", "the field holding the image's file name"),
        "label_field": Option("str", "class", "the field holding the class number"),
        "label_base": Option("int", 1, "the class number of the first class"),
        "box_fields": Option(
            "strs", ["bbox_y1", "bbox_x1", "bbox_y2", "bbox_x2"], "ymin, xmin, ymax, xmax fields"
        ),
    },
    features=lambda options: (frozenset({"image", "label", "bbox"}), frozenset({"id"})),
    examples=examples,
    validate=_validate,
    check=mat.check,
)

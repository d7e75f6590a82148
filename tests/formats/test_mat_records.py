"""The mat_records source format on its own: records of a .mat struct array (file, class,
box) over a folder of images; malformed structs and missing images are named."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.io

from catalog.errors import SourceFormatError
from catalog.features import BBox, ClassLabel, FeaturesDict, Image, Text
from catalog.formats import FORMATS, Source

FEATURES = FeaturesDict(
    {"image": Image((None, None, 3)), "label": ClassLabel(num_classes=3), "bbox": BBox(),
     "id": Text()}
)  # fmt: skip


def annotations(path: Path, records: list[dict[str, Any]]) -> Path:
    fields = list(records[0])
    array = np.zeros((1, len(records)), dtype=[(f, "O") for f in fields])
    for i, record in enumerate(records):
        for field, value in record.items():
            array[0, i][field] = (
                np.array([value]) if isinstance(value, str) else np.array([[value]])
            )
    scipy.io.savemat(path, {"annotations": array})
    return path


def jpeg_file(path: Path, height: int, width: int) -> Path:
    from PIL import Image as PILImage

    out = io.BytesIO()
    PILImage.new("RGB", (width, height), (10, 200, 30)).save(out, format="JPEG")
    path.write_bytes(out.getvalue())
    return path


def read(mat: Path, root: Path, **options: Any) -> list[Any]:
    fmt = FORMATS["mat_records"]
    given = {**{n: o.default for n, o in fmt.options.items()}, **options}
    assert fmt.problem(given, FEATURES) is None
    return list(fmt.examples(Source("train", {"annotations": (mat,), "root": (root,)}, given,
                                    FEATURES)))  # fmt: skip


def record(name: str, label: int, box: tuple[int, int, int, int]) -> dict[str, Any]:
    x1, y1, x2, y2 = box
    return {"bbox_x1": x1, "bbox_y1": y1, "bbox_x2": x2, "bbox_y2": y2, "class": label,
            "fname": name}  # fmt: skip


def test_records_in_order_with_boxes_normalised_by_the_image_size(tmp_path: Path) -> None:
    jpeg_file(tmp_path / "b.jpg", 10, 40)
    jpeg_file(tmp_path / "a.jpg", 20, 20)
    mat = annotations(tmp_path / "annos.mat", [record("b.jpg", 3, (4, 1, 40, 10)),
                                               record("a.jpg", 1, (0, 5, 10, 15))])  # fmt: skip
    (key_b, b), (key_a, a) = read(mat, tmp_path)
    assert (key_b, b["label"], b["id"]) == ("b.jpg", 2, "b")
    np.testing.assert_allclose(b["bbox"], [0.1, 0.1, 1.0, 1.0])
    np.testing.assert_allclose(a["bbox"], [0.25, 0.0, 0.75, 0.5])
    assert key_a == "a.jpg" and a["image"] == tmp_path / "a.jpg"


def test_a_missing_field_or_image_is_named(tmp_path: Path) -> None:
    mat = annotations(tmp_path / "annos.mat", [record("gone.jpg", 1, (0, 0, 1, 1))])
    with pytest.raises(SourceFormatError, match=r"record 'gone.jpg': .*gone.jpg"):
        read(mat, tmp_path)
    with pytest.raises(SourceFormatError, match=r"'annotations' has no field 'file'; its fields"):
        read(mat, tmp_path, file_field="file")

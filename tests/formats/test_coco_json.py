"""`coco_json`: COCO's annotation JSON and image zip, read in place; the JSON parsed once
into arrays staged in scratch; boxes as TFDS normalises them; bad files named."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import BBox, ClassLabel, FeaturesDict, Image, Scalar, Sequence, Text
from catalog.formats import FORMATS, Source

from dummy_images import jpeg, write_zip

FMT = FORMATS["coco_json"]
FEATURES = FeaturesDict({
    "image": Image(), "image/filename": Text(), "image/id": Scalar("int64"),
    "objects": Sequence(FeaturesDict({
        "id": Scalar("int64"), "area": Scalar("int64"), "bbox": BBox(),
        "label": ClassLabel(names=["cat", "dog"]), "is_crowd": Scalar("bool"),
    })),
})  # fmt: skip
CATEGORIES = [{"id": 17, "name": "cat"}, {"id": 18, "name": "dog"}]


def write(tmp_path: Path, annotations: list[dict[str, Any]], **extra: Any) -> Source:
    images = [{"id": 5, "file_name": "b.jpg", "height": 4, "width": 8},
              {"id": 2, "file_name": "a.jpg", "height": 10, "width": 5}]  # fmt: skip
    data = {"images": images, "annotations": annotations, "categories": CATEGORIES, **extra}
    write_zip(tmp_path / "ann.zip", {"annotations/instances.json": json.dumps(data).encode()})
    write_zip(tmp_path / "img.zip", {"imgs/a.jpg": jpeg(10, 5, (9, 9, 9)),
                                     "imgs/b.jpg": jpeg(4, 8, (99, 9, 9))})  # fmt: skip
    member = zipfile.Path(tmp_path / "ann.zip", "annotations/instances.json")
    files = {"annotations": (member,), "images": (tmp_path / "img.zip",)}
    options = {"images_folder": "imgs", "annotated": True}
    return Source("train", files, options, FEATURES, tmp_path / "scratch")


def test_images_by_id_with_their_objects_by_id(tmp_path: Path) -> None:
    anns = [
        {"id": 9, "image_id": 5, "category_id": 18, "bbox": [2, 1, 4, 2], "area": 8.9,
         "iscrowd": 0},
        {"id": 3, "image_id": 5, "category_id": 17, "bbox": [0, 0, 8, 4], "area": 32,
         "iscrowd": 1},
    ]  # fmt: skip
    src = write(tmp_path, anns)
    got = list(FMT.examples(src))
    assert [key for key, _ in got] == ["a.jpg", "b.jpg"]
    first, second = got[0][1], got[1][1]
    assert (first["image/id"], first["image/filename"], first["objects"]) == (2, "a.jpg", [])
    assert first["image"] == zipfile.ZipFile(tmp_path / "img.zip").read("imgs/a.jpg")
    assert [o["id"] for o in second["objects"]] == [3, 9]
    assert second["objects"][1] == {"id": 9, "area": 8, "label": "dog", "is_crowd": False,
                                    "bbox": (0.25, 0.25, 0.75, 0.75)}  # fmt: skip
    assert (tmp_path / "scratch" / "coco-index" / "bbox.npy").is_file()  # parsed once, staged
    reader = FMT.random_access(src)  # type: ignore[misc]
    assert reader.length == 2
    second_again = next(iter(reader.examples(1, 2)))
    assert second_again[0] == "b.jpg" and second_again[1]["objects"] == second["objects"]
    reader.close()


@pytest.mark.parametrize(
    ("annotations", "extra", "message"),
    [
        ([{"id": 1, "image_id": 77, "category_id": 17, "bbox": [0, 0, 1, 1], "area": 1,
           "iscrowd": 0}], {}, "annotation 1 names no image"),
        ([], {"categories": [{"id": 17, "name": "cat"}]}, "names 1 categories but the spec"),
        ([{"id": 1, "image_id": 2, "bbox": [0, 0, 1, 1], "area": 1, "iscrowd": 0}], {},
         "without 'category_id'"),
    ],
)  # fmt: skip
def test_bad_annotations_are_named(
    tmp_path: Path, annotations: list[dict[str, Any]], extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(SourceFormatError, match=message):
        list(FMT.examples(write(tmp_path, annotations, **extra)))


def test_a_missing_image_is_named(tmp_path: Path) -> None:
    src = write(tmp_path, [])
    write_zip(tmp_path / "img.zip", {"imgs/a.jpg": jpeg(10, 5, (9, 9, 9))})
    with pytest.raises(SourceFormatError, match="no member 'imgs/b.jpg'"):
        list(FMT.examples(src))


def test_not_json_is_named(tmp_path: Path) -> None:
    src = write(tmp_path, [])
    write_zip(tmp_path / "bad.zip", {"annotations/instances.json": b'{"images": [{"id": 1,'})
    member = zipfile.Path(tmp_path / "bad.zip", "annotations/instances.json")
    src = Source("train", {**src.files, "annotations": (member,)}, src.options, FEATURES, None)
    with pytest.raises(SourceFormatError, match="instances.json: not a JSON file"):
        list(FMT.examples(src))


def test_without_ijson_the_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ijson", None)  # import ijson raises ImportError
    assert FMT.check is not None
    with pytest.raises(MissingDependencyError, match=r"pip install 'catalog\[coco\]'"):
        FMT.check()

"""The cub source format on its own: the id-keyed text files, a missing mask or box named."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from catalog.errors import SourceFormatError
from catalog.formats import FORMATS, Source
from catalog.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
DUMMY = ROOT / "builders" / "caltech_birds2011" / "dummy_data"


def source(tmp_path: Path, part: str = "train") -> Source:
    for name in ("CUB_200_2011.tgz", "segmentations.tgz"):
        with tarfile.open(DUMMY / name) as tar:
            tar.extractall(tmp_path, filter="data")
    spec = load_spec(ROOT / "builders" / "caltech_birds2011")
    files = {"root": (tmp_path / "CUB_200_2011",), "segmentations": (tmp_path / "segmentations",)}
    return Source(part, files, {"part": part}, spec.features)


def test_parts_follow_train_test_split(tmp_path: Path) -> None:
    keys = [k for k, _ in FORMATS["cub"].examples(source(tmp_path, "test"))]
    assert keys == [
        "CUB_200_2011/images/001.Black_footed_Albatross/Black_Footed_Albatross_0002_55.jpg"
    ]


def test_a_missing_mask_or_box_is_named(tmp_path: Path) -> None:
    src = source(tmp_path)
    mask = next((tmp_path / "segmentations").rglob("Common_Yellowthroat_0003_190521.png"))
    mask.unlink()
    with pytest.raises(SourceFormatError, match=r"Common_Yellowthroat_0003_190521.png: no mask"):
        list(FORMATS["cub"].examples(src))
    boxes = tmp_path / "CUB_200_2011" / "bounding_boxes.txt"
    boxes.write_text(boxes.read_text().replace("3 5.5 1.0 20.0", "3 5.5 1.0"))
    with pytest.raises(SourceFormatError, match=r"bounding_boxes.txt:3: 4 fields, expected 5"):
        list(FORMATS["cub"].examples(src))

"""The kitti source format on its own: TFDS's split by video (checked against what TFDS
4.9.10's own _build_splits gave for the same mapping files), label lines, missing members."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.errors import SourceFormatError
from catalog.formats import FORMATS, Source
from catalog.formats.annotations.kitti import split_by_video
from catalog.spec.load import load_spec

from dummy_images import write_zip
from dummy_vtab import KITTI_MAPPING, KITTI_RAND, KITTI_SPLITS

ROOT = Path(__file__).resolve().parents[2]


def test_the_split_by_video_is_tfds() -> None:
    rand = ",".join(map(str, KITTI_RAND))
    assert split_by_video(rand, "\n".join(KITTI_MAPPING)) == KITTI_SPLITS
    with pytest.raises(SourceFormatError, match="mapping files do not match"):
        split_by_video(rand + ",9", "\n".join(KITTI_MAPPING))


def source(tmp_path: Path, label: bytes) -> Source:
    folder = ROOT / "builders" / "kitti" / "dummy_data"
    write_zip(tmp_path / "labels.zip", {"training/label_2/000002.txt": label})
    spec = load_spec(ROOT / "builders" / "kitti")
    files = {"images": (folder / "data_object_image_2.zip",), "labels": (tmp_path / "labels.zip",),
             "devkit": (folder / "devkit_object.zip",)}  # fmt: skip
    return Source("train", files, {"part": "train"}, spec.features)


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (b"Car 0 0 0 1 2 3\n", r"000002.txt:1: 7 fields, expected 15"),
        (b"Car 0 x 0 1 2 3 4 1 1 1 1 1 1 1\n", r"000002.txt:1: not numbers"),
        (b"DontCare -1 -1 -10 1 2 3 4 -1 -1 -1 -1000 -1000 -1000 -10\n", r"no member .*000003"),
    ],
)
def test_label_files_that_do_not_fit_are_named(tmp_path: Path, label: bytes, message: str) -> None:
    with pytest.raises(SourceFormatError, match=message):
        list(FORMATS["kitti"].examples(source(tmp_path, label)))

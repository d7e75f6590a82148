"""The builders of manual downloads with no published checksum (resisc45,
diabetic_retinopathy_detection) prepared from their dummy files in the upstream layout (a
folder placed in the manual dir), checked against what TFDS 4.9.10 itself stored from the same
files (tests/fixtures/tf/manual_gold.json, made by make_manual_gold.py) and against what the
layout means. imagenet2012's test tar is checked in test_builders_imagenet.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from dummy_manual import (
    RESISC45,
    RETINA_IMAGES,
    RETINA_SOLUTION,
    RETINA_TRAIN_LABELS,
    retina_pixels,
)

import catalog
from catalog.features import ClassLabel
from catalog.formats.images.btgraham import btgraham_jpeg
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
from catalog.testing.harness import run_builder

import tf_fixtures
from conftest import BUILDERS, assert_builder_facts

GOLD = tf_fixtures.expected("manual_gold.json")
#: OpenCV re-encodes the images of every config but `original`: its bytes are TFDS's only
#: with the OpenCV the gold was made with (else the shapes are still compared).
SAME_OPENCV = cv2.__version__ == GOLD["opencv"]


def stored(tmp_path: Path, split: str) -> DataSource:
    """The prepared split with its images left as their stored bytes."""
    folder = next((tmp_path / "data").rglob(INFO_FILE)).parent
    return DataSource(folder, DatasetInfo.read(folder), split, decoders={"image": False})


def recorded(tmp_path: Path) -> dict[str, dict[str, object]]:
    info = json.loads(next((tmp_path / "data").rglob(INFO_FILE)).read_text())
    downloads: dict[str, dict[str, object]] = info["downloads"]
    return downloads


def test_resisc45_reads_the_placed_folder_as_tfds_does(tmp_path: Path) -> None:
    ds = run_builder(BUILDERS / "resisc45", tmp_path, num_examples={"train": len(RESISC45)})
    label = ds["train"].features["label"]
    raw = stored(tmp_path, "train")
    folder = BUILDERS / "resisc45" / "dummy_data" / "NWPU-RESISC45"
    gold = GOLD["resisc45"]["train"]
    got = []
    for i, (klass, name, colour) in enumerate(RESISC45):  # sorted path order; Thumbs.db left out
        example = ds["train"][i]
        assert (example["filename"], label.int2str(example["label"])) == (name, klass)
        assert raw[i]["image"] == (folder / klass / name).read_bytes()  # kept byte for byte
        assert np.abs(example["image"].astype(int) - colour).max() <= 3
        got.append({"filename": name, "label": example["label"],
                    "sha256": hashlib.sha256(raw[i]["image"]).hexdigest(),
                    "shape": list(example["image"].shape)})  # fmt: skip
    assert got == gold  # TFDS's, from the same folder
    entry = recorded(tmp_path)["images"]
    assert (entry["manual"], entry["verified"]) == ("NWPU-RESISC45", False)
    assert entry["size"] == sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


RETINA_COUNTS = {"sample": 3, "train": 3, "validation": 2, "test": 2}


def retina_expected(split: str) -> list[tuple[str, int]]:
    """(name, label) of a split as the layout means it, in catalog's order."""
    if split == "sample":
        return [(name, -1) for name, _ in RETINA_IMAGES["sample"]]
    if split == "train":
        return RETINA_TRAIN_LABELS
    usage = "Public" if split == "validation" else "Private"
    return [(name, level) for name, level, used in RETINA_SOLUTION if used == usage]


@pytest.mark.parametrize("config", ["original", "1M", "250K", "btgraham-300"])
def test_diabetic_retinopathy_detection_matches_what_tfds_stored(
    config: str, tmp_path: Path
) -> None:
    ds = run_builder(BUILDERS / "diabetic_retinopathy_detection", tmp_path, config=config,
                     num_examples=RETINA_COUNTS)  # fmt: skip
    gold = GOLD[f"diabetic_retinopathy_detection/{config}"]
    dummy = BUILDERS / "diabetic_retinopathy_detection" / "dummy_data"
    for split in RETINA_COUNTS:
        raw = stored(tmp_path, split)
        folder = "sample" if split == "sample" else "train" if split == "train" else "test"
        examples = list(ds[split])
        assert [(e["name"], e["label"]) for e in examples] == retina_expected(split)
        got = sorted(
            ({"name": e["name"], "label": e["label"],
              "sha256": hashlib.sha256(raw[i]["image"]).hexdigest(),
              "shape": list(e["image"].shape)} for i, e in enumerate(examples)),
            key=lambda r: str(r["name"]),
        )  # fmt: skip
        if config == "original" or SAME_OPENCV:
            assert got == gold[split], split
        else:
            assert [{**r, "sha256": ""} for r in got] == [{**r, "sha256": ""} for r in gold[split]]
        for i, example in enumerate(examples):
            original = (dummy / folder / f"{example['name']}.jpeg").read_bytes()
            if config == "original":
                assert raw[i]["image"] == original
            elif config == "btgraham-300":  # the eye's disc is 2 * 0.9 * 300 pixels across
                assert example["image"].shape == (540, 540, 3)
            else:
                limit = 1_000_000 if config == "1M" else 250_000
                height, width = dict(RETINA_IMAGES[folder])[example["name"]]
                shrunk = height * width > limit
                assert (example["image"].shape[:2] == (height, width)) != shrunk
    for name in ("sample", "train", "test", "train_labels"):
        assert recorded(tmp_path)[name]["verified"] is False


def test_btgraham_finds_the_eye_and_greys_the_rest() -> None:
    """What the processing means, apart from TFDS's bytes: the eye's disc (radius 0.42 of
    the short side) is scaled to radius 300, the local average subtracted leaves its flat
    inside near grey 128, and outside the 0.9 mask it is exactly 128 (up to JPEG)."""
    from PIL import Image

    pixels = retina_pixels("train", "15_left", (120, 160))
    data = cv2.imencode(".png", pixels[:, :, ::-1])[1].tobytes()
    out = np.asarray(Image.open(__import__("io").BytesIO(btgraham_jpeg(data, "x", 300))))
    assert out.shape == (540, 540, 3)
    corner = out[:40, :40].astype(int)
    assert np.abs(corner - 128).max() <= 3  # masked out
    centre = out[250:290, 250:290].astype(int)
    assert np.abs(centre.mean() - 128) < 20  # the slow shading is subtracted


def test_btgraham_rejects_what_opencv_cannot_decode() -> None:
    from catalog.errors import SourceFormatError

    with pytest.raises(SourceFormatError, match="x.jpeg: not an image OpenCV can decode"):
        btgraham_jpeg(b"not an image", "x.jpeg", 300)


#: name[/config] -> (version, split sizes, {feature: (type, classes or shape)}): TFDS 4.9.10.
_RETINA = ("3.0.0", {"sample": 10, "train": 35126, "validation": 10906, "test": 42670},
           {"name": ("Text", ()), "image": ("Image", (None, None, 3)),
            "label": ("ClassLabel", 5)})  # fmt: skip
MANUAL_FACTS = {
    "resisc45": ("3.0.0", {"train": 31500}, {
        "image": ("Image", (256, 256, 3)), "label": ("ClassLabel", 45),
        "filename": ("Text", ())}),
    **{f"diabetic_retinopathy_detection/{c}": _RETINA
       for c in ("original", "1M", "250K", "btgraham-300")},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MANUAL_FACTS))
def test_builders_match_the_facts(name: str) -> None:
    b = assert_builder_facts(name, MANUAL_FACTS[name])
    for download in b.spec.downloads.values():  # a file with a URL has its checksum
        assert download.manual or (download.size and download.sha256), download


def test_resisc45_class_names_are_tfds() -> None:
    label = catalog.builder("resisc45").info.features["label"]
    assert label.names[:3] == ["airplane", "airport", "baseball_diamond"]  # type: ignore[attr-defined]
    assert label.names[-1] == "wetland"  # type: ignore[attr-defined]


#: The datasets this file tests (tests/builders/test_builders.py checks every registered one
#: is tested).
MANUAL_DATASETS = sorted({name.split("/")[0] for name in MANUAL_FACTS})


@pytest.mark.parametrize(
    ("fmt", "options", "problem"),
    [
        ("image_list", {"btgraham_radius": 300, "opencv_jpeg": True}, "give one of"),
        ("image_list", {"max_pixels": 10}, "need opencv_jpeg"),
        ("image_list", {"btgraham_radius": 0}, "positive number of pixels"),
        ("image_list", {"skip": "("}, "skip is not a regular expression"),
        ("image_list", {"header_lines": -1}, "header_lines must be >= 0"),
        ("image_folder", {"btgraham_radius": 300, "opencv_jpeg": True}, "btgraham_radius"),
        ("image_folder", {"labelled": False}, "must be a ClassLabel allow_unlabeled"),
    ],
)
def test_the_new_image_options_are_checked(fmt: str, options: dict[str, object],
                                           problem: str) -> None:  # fmt: skip
    from catalog.features import FeaturesDict, Image
    from catalog.formats import FORMATS

    features = FeaturesDict({"image": Image(), "label": ClassLabel(names=["a", "b"])})
    declared = FORMATS[fmt]
    defaults = {name: option.default for name, option in declared.options.items()}
    assert declared.validate is not None
    found = declared.validate({**defaults, **options}, features)
    assert found is not None and problem in found

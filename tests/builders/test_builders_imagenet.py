"""The ImageNet family and COCO prepared from dummy files in the upstream layout (a tar of per-class
tars, a flat validation tar), checked against what TFDS 4.9.10 itself stored from the same
files (tests/fixtures/tf/imagenet_gold.json, made by make_imagenet_gold.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dummy_manual import IMAGENET_TEST, imagenet_test_files

from catalog.api.builder import DatasetBuilder
from catalog.features.image_decode import decoder_for
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec, run_builder
from catalog.testing.http_server import LoopbackServer

import tf_fixtures
from conftest import BUILDERS, assert_builder_facts
from dummy_imagenet import (
    COCO_ANNOTATIONS,
    COCO_IMAGES,
    REAL_LABELS,
    ROBUSTNESS,
    SUBSETS,
    TRAIN,
    VALIDATION,
    VALIDATION_LABELS,
    train_files,
    v2_files,
    validation_files,
)

GOLD = tf_fixtures.expected("imagenet_gold.json")


def stored(tmp_path: Path, split: str) -> DataSource:
    """The prepared split with its images left as their stored bytes."""
    folder = next((tmp_path / "data").rglob(INFO_FILE)).parent
    return DataSource(folder, DatasetInfo.read(folder), split, decoders={"image": False})


def test_imagenet2012_matches_what_tfds_stored(tmp_path: Path) -> None:
    counts = {"train": len(TRAIN), "validation": len(VALIDATION), "test": len(IMAGENET_TEST)}
    ds = run_builder(BUILDERS / "imagenet2012", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    assert len(names) == 1000 and names[:2] == ["n01440764", "n01443537"]
    originals = {**train_files(), **validation_files()}
    # archive order; labels: the inner tar's name, and validation_labels.txt by sorted name
    order = {
        "train": [(name, label) for label, name, *_ in TRAIN],
        "validation": [
            (name, VALIDATION_LABELS[sorted(n for n, *_ in VALIDATION).index(name)])
            for name, *_ in VALIDATION
        ],
    }
    for split, expected in order.items():
        got = [(e["file_name"], names[e["label"]]) for e in ds[split]]
        assert got == expected
        gold = {row["file_name"]: row for row in GOLD["imagenet2012"][split]}
        assert sorted(got) == sorted((n, row["label"]) for n, row in gold.items())  # = TFDS's
        raw = stored(tmp_path, split)
        for i, (name, _) in enumerate(expected):
            data, row = raw[i]["image"], gold[name]
            pixels = ds[split][i]["image"]
            assert list(pixels.shape) == row["shape"], name
            want = np.array(row["pixels"]).reshape(row["shape"])
            if hashlib.sha256(originals[name]).hexdigest() == row["sha256"]:
                assert data == originals[name], name  # kept byte for byte, as TFDS does
                # TF decodes with a faster, less exact IDCT
                assert np.abs(pixels.astype(int) - want).max() <= 3, name
            else:  # the CMYK JPEG and the PNG: re-encoded by both, as RGB JPEGs
                assert name in ("n01739381_1309.JPEG", "n02105855_2933.JPEG")
                assert data != originals[name] and decoder_for(data) == "simplejpeg"
                # the very bytes TFDS (TensorFlow's decoder and encoder) stores
                assert hashlib.sha256(data).hexdigest() == row["sha256"], name
                assert np.abs(pixels.astype(int) - want).max() <= 3, name
    # the test tar (unverified, from the manual dir): archive order, no labels, bytes kept
    tests, raw = imagenet_test_files(), stored(tmp_path, "test")
    gold = {row["file_name"]: row for row in GOLD["imagenet2012"]["test"]}
    assert [e["file_name"] for e in ds["test"]] == [name for name, *_ in IMAGENET_TEST]
    for i, example in enumerate(ds["test"]):
        name = example["file_name"]
        assert example["label"] == -1 == gold[name]["label"]
        assert raw[i]["image"] == tests[name]
        assert hashlib.sha256(tests[name]).hexdigest() == gold[name]["sha256"]
    assert sorted(gold) == sorted(tests)
    info = json.loads(next((tmp_path / "data").rglob(INFO_FILE)).read_text())
    found = info["downloads"]["test"]
    assert found["manual"] == "ILSVRC2012_img_test.tar" and found["verified"] is False
    tar = BUILDERS / "imagenet2012" / "dummy_data" / "ILSVRC2012_img_test.tar"
    assert found["size"] == tar.stat().st_size
    assert found["sha256"] == hashlib.sha256(tar.read_bytes()).hexdigest()


def test_coco_2017_matches_what_tfds_stored(tmp_path: Path) -> None:
    counts = {split: len(images) for split, images in COCO_IMAGES.items()}
    ds = run_builder(BUILDERS / "coco", tmp_path, config="2017", num_examples=counts)
    names = ds["train"].features["objects"].feature["label"].names
    assert len(names) == 80 and names[0] == "person" and names[-1] == "toothbrush"
    for split, images in COCO_IMAGES.items():
        gold = GOLD["coco/2017"][split]
        sizes = {i: (h, w) for i, h, w, _ in images}
        assert [e["image/id"] for e in ds[split]] == sorted(sizes)  # by image id, as TFDS
        raw = stored(tmp_path, split)
        by_image: dict[int, list[Any]] = {}
        for ann in sorted(COCO_ANNOTATIONS.get(split, []), key=lambda a: a[0]):
            by_image.setdefault(ann[1], []).append(ann)
        for i, (example, row) in enumerate(zip(ds[split], gold, strict=True)):
            image_id, objects = example["image/id"], example["objects"]
            assert (example["image/filename"], int(image_id)) == (row["filename"], row["id"])
            assert example["image"].shape[:2] == sizes[image_id]
            assert hashlib.sha256(raw[i]["image"]).hexdigest() == row["sha256"]  # bytes kept
            want = row["objects"]
            assert objects["id"].tolist() == want["id"]
            assert objects["area"].tolist() == want["area"]  # 47.9 -> 47, as TFDS truncates
            assert [names[x] for x in objects["label"]] == want["label"]
            assert objects["is_crowd"].tolist() == want["is_crowd"]
            got_boxes = objects["bbox"].reshape(-1, 4)
            np.testing.assert_allclose(got_boxes, np.array(want["bbox"]).reshape(-1, 4), atol=1e-7)
            # and what COCO's [x, y, w, h] pixels mean: (ymin, xmin, ymax, xmax) fractions
            height, width = sizes[image_id]
            boxes = [(y / height, x / width, (y + h) / height, (x + w) / width)
                     for _, _, _, (x, y, w, h), _, _ in by_image.get(image_id, [])]  # fmt: skip
            np.testing.assert_allclose(got_boxes, np.array(boxes).reshape(-1, 4), atol=1e-7)


ROBUSTNESS_SETS = [
    "imagenet_v2/matched-frequency", "imagenet_v2/threshold-0.7", "imagenet_v2/topimages",
    "imagenet_a", "imagenet_r", "imagenet_sketch",
]  # fmt: skip


@pytest.mark.parametrize("name", ROBUSTNESS_SETS)
def test_robustness_sets_match_what_tfds_stored(name: str, tmp_path: Path) -> None:
    folder, _, config = name.partition("/")
    entries = v2_files(config) if config else ROBUSTNESS[folder][1]
    ds = run_builder(BUILDERS / folder, tmp_path, config=config or None,
                     num_examples={"test": len(entries)})  # fmt: skip
    names = ds["test"].features["label"].names
    raw = stored(tmp_path, "test")
    got = [
        {"file_name": e["file_name"], "label": names[e["label"]],
         "sha256": hashlib.sha256(raw[i]["image"]).hexdigest()}
        for i, e in enumerate(ds["test"])
    ]  # fmt: skip
    assert sorted(got, key=lambda r: r["file_name"]) == GOLD[name]["test"]  # TFDS's, bytes kept
    # in sorted path order; the label is the class folder (ImageNetV2: the class index)
    want = [names[int(c)] if config else c for _, c, _, _ in sorted(entries)]
    assert [r["label"] for r in got] == want
    for i, (_, _, size, colour) in enumerate(sorted(entries)):
        image = ds["test"][i]["image"]
        assert image.shape[:2] == size and np.abs(image.astype(int) - colour).max() <= 3


CONVERTED = ("n01739381_1309.JPEG", "n02105855_2933.JPEG")  # re-encoded by TFDS and by us


@pytest.mark.parametrize("name", ["imagenet2012_subset/1pct", "imagenet2012_subset/10pct",
                                  "imagenet2012_real"])  # fmt: skip
def test_subsets_and_real_labels_match_what_tfds_stored(name: str, tmp_path: Path) -> None:
    folder, _, config = name.partition("/")
    counts = {"validation": len(VALIDATION)}
    if config:
        counts["train"] = len(SUBSETS[config][1])
    ds = run_builder(BUILDERS / folder, tmp_path, config=config or None, num_examples=counts)
    for split in counts:
        raw = stored(tmp_path, split)
        rows = []
        for i, example in enumerate(ds[split]):
            row: dict[str, Any] = {"file_name": example["file_name"]}
            row["sha256"] = hashlib.sha256(raw[i]["image"]).hexdigest()
            for key in ("label", "original_label"):
                if key in example:
                    row[key] = ds[split].features[key].names[example[key]]
            if "real_label" in example:
                row["real_label"] = example["real_label"].tolist()
            rows.append(row)
        gold = GOLD[name][split]
        for row in [*rows, *gold]:  # the converted files' bytes differ (TF's and Pillow's JPEG)
            if row["file_name"] in CONVERTED:
                row.pop("sha256")
        assert sorted(rows, key=lambda r: r["file_name"]) == gold
    if config:  # the listed files, in archive order
        in_order = [n for _, n, *_ in TRAIN if n in SUBSETS[config][1]]
        assert [e["file_name"] for e in ds["train"]] == in_order
    else:
        first = [e["real_label"].tolist() for e in ds["validation"]][1]  # val_00000001
        assert first == REAL_LABELS[0]


def test_imagenet2012_shards_from_two_processes_are_the_serial_ones(tmp_path: Path) -> None:
    """Several shards a split, written by 2 spawned workers: each opens the index the plan
    made once, and reads its own images by offset."""
    spec = load_spec(BUILDERS / "imagenet2012")
    spec = spec.replace(splits={k: v for k, v in spec.splits.items() if k != "test"})
    counts = {"train": len(TRAIN), "validation": len(VALIDATION)}
    shards = {}
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, BUILDERS / "imagenet2012" / "dummy_data", counts)
        for num_proc in (1, 2):
            builder = DatasetBuilder(test_spec, data_dir=tmp_path / f"data{num_proc}")
            info = builder.download_and_prepare(
                download_dir=tmp_path / "downloads", num_proc=num_proc, shard_size=1500
            )
            shards[num_proc] = {
                name: [(s.file, s.sha256) for s in split.shards]
                for name, split in info.splits.items()
            }
    assert len(shards[1]["train"]) > 2 and shards[2] == shards[1]


_CLASSES = {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 1000),
            "file_name": ("Text", ())}  # fmt: skip
#: TFDS 4.9.10's versions, split sizes and features of each builder and config here
#: (tests/builders/test_builders.py checks every registered dataset is in a facts table).
IMAGENET_FACTS: dict[str, tuple[str, dict[str, int], dict[str, tuple[str, object]]]] = {
    "imagenet2012": ("5.1.0", {"train": 1281167, "validation": 50000, "test": 100000}, _CLASSES),
    "imagenet2012_real": ("1.0.0", {"validation": 50000}, {
        "image": ("Image", (None, None, 3)), "original_label": ("ClassLabel", 1000),
        "real_label": ("Sequence", None), "file_name": ("Text", ())}),
    "imagenet2012_subset/1pct": ("5.0.0", {"train": 12811, "validation": 50000}, _CLASSES),
    "imagenet2012_subset/10pct": ("5.0.0", {"train": 128116, "validation": 50000}, _CLASSES),
    **{f"imagenet_v2/{c}": ("3.0.0", {"test": 10000}, _CLASSES)
       for c in ("matched-frequency", "threshold-0.7", "topimages")},
    "imagenet_a": ("0.1.0", {"test": 7500}, _CLASSES),
    "imagenet_r": ("0.2.0", {"test": 30000}, _CLASSES),
    "imagenet_sketch": ("1.0.0", {"test": 50889}, _CLASSES),
    "coco/2017": ("1.1.0", {"train": 118287, "validation": 5000, "test": 40670}, {
        "image": ("Image", (None, None, 3)), "image/filename": ("Text", ()),
        "image/id": ("Scalar", ()),
        "objects": ("Sequence", None)}),
}  # fmt: skip
IMAGENET_DATASETS = sorted({name.split("/")[0] for name in IMAGENET_FACTS})


@pytest.mark.parametrize("name", sorted(IMAGENET_FACTS))
def test_builders_match_the_facts(name: str) -> None:
    assert_builder_facts(name, IMAGENET_FACTS[name])


IMAGENET_COUNTS = {"train": len(TRAIN), "validation": len(VALIDATION)}


def test_imagenet2012_without_the_test_tar_prepares_train_and_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As TFDS: the test tar is one the user assembles; without it, train and validation are
    prepared with a note; once it is placed, the next prepare adds the test split."""
    from catalog.download.config import DownloadConfig

    spec = load_spec(BUILDERS / "imagenet2012")
    dummy = BUILDERS / "imagenet2012" / "dummy_data"
    manual = tmp_path / "manual"
    manual.mkdir()
    config = DownloadConfig(manual_dir=manual, offline=False)
    with LoopbackServer() as server:
        counts = {**IMAGENET_COUNTS, "test": len(IMAGENET_TEST)}
        test_spec = dummy_spec(spec, server, dummy, counts)
        b = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        b.download_and_prepare(download_dir=tmp_path / "dl", download_config=config)
        note = capsys.readouterr().err
        assert "imagenet2012: ILSVRC2012_img_test.tar is not in the manual dir" in note
        assert "preparing without split 'test'" in note
        assert set(b.as_data_source()) == {"train", "validation"}
        assert len(b.as_data_source("train")) == len(TRAIN)
        again = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        assert again.prepare(download_config=config).status == "reused"  # not prepared again
        test_tar = (dummy / "ILSVRC2012_img_test.tar").read_bytes()
        (manual / "ILSVRC2012_img_test.tar").write_bytes(test_tar)
        placed = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        assert placed.prepare(download_config=config).status == "prepared"
        assert len(placed.as_data_source("test")) == len(IMAGENET_TEST)


def test_imagenet2012_names_the_tars_to_place_before_anything_else(tmp_path: Path) -> None:
    """A train tar neither in the manual dir nor at its URL (a login page, no space for
    138 GiB) is "place ILSVRC2012_img_train.tar in the manual dir", with what was there."""
    from catalog.download.config import DownloadConfig
    from catalog.errors import DownloadError

    spec = load_spec(BUILDERS / "imagenet2012")
    dummy = BUILDERS / "imagenet2012" / "dummy_data"
    manual = tmp_path / "manual"
    manual.mkdir()
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, dummy, IMAGENET_COUNTS | {"test": 1})
        train = test_spec.downloads["train"]
        gone = dataclasses.replace(train, url=train.url.replace(".tar", "-gone.tar"))
        test_spec = test_spec.replace(downloads={**test_spec.downloads, "train": gone})
        b = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        for held in (None, b"not the tar"):
            if held is not None:
                (manual / "ILSVRC2012_img_train.tar").write_bytes(held)
            with pytest.raises(DownloadError) as raised:
                b.download_and_prepare(
                    download_dir=tmp_path / "dl", download_config=DownloadConfig(manual_dir=manual)
                )
            message = str(raised.value)
            assert message.startswith("place ILSVRC2012_img_train.tar ("), message
            assert f"in the manual dir {manual}" in message
            if held is not None:
                assert "is not it: size mismatch" in message
    assert not list(tmp_path.rglob(INFO_FILE))

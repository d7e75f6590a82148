"""VTAB's sources and the fine-grained datasets (food101 ... celeb_a) prepared from their dummy
files over loopback HTTP, checked value by value against what tests/dummy_vtab.py wrote and
what the upstream format means; their registered specs against TFDS 4.9.10's facts."""

from __future__ import annotations

import hashlib
import json
import operator
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.features import ClassLabel
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
from catalog.testing.harness import run_builder

from conftest import BUILDERS, assert_builder_facts
from dummy_vtab import (
    CAMELYON,
    CARS196,
    CELEBA,
    CELEBA_ATTRIBUTES,
    CELEBA_LANDMARKS,
    CLEVR,
    CUB,
    DMLAB,
    FOOD101,
    KITTI_SIZE,
    KITTI_SPLITS,
    SMALLNORB,
    SUN397,
    camelyon_label,
    camelyon_patch,
    cars196_colour,
    celeba_colour,
    celeba_row,
    clevr_questions,
    clevr_rgba,
    cub_colour,
    cub_mask,
    dmlab_colour,
    dsprites_arrays,
    food101_colour,
    kitti_objects,
    kitti_pixels,
    smallnorb_arrays,
    sun397_partition,
    sun397_pixels,
)


def raw(tmp_path: Path, split: str, feature: str = "image") -> DataSource:
    """The prepared split with `feature` left as its stored bytes."""
    folder = next((tmp_path / "data").rglob(INFO_FILE)).parent
    return DataSource(folder, DatasetInfo.read(folder), split, decoders={feature: False})


def tar_member(archive: Path, member: str) -> bytes:
    with tarfile.open(archive) as tar:
        data = tar.extractfile(member)
        assert data is not None
        return data.read()


def test_food101_reads_the_meta_lists(tmp_path: Path) -> None:
    counts = {split: len(lines) for split, lines in FOOD101.items()}
    ds = run_builder(BUILDERS / "food101", tmp_path, num_examples=counts)
    label = ds["train"].features["label"]
    archive = BUILDERS / "food101" / "dummy_data" / "food-101.tar.gz"
    for split, lines in FOOD101.items():
        stored = raw(tmp_path, split)
        for i, line in enumerate(lines):
            example = ds[split][i]
            assert label.int2str(example["label"]) == line.split("/")[0]
            assert np.abs(example["image"].astype(int) - food101_colour(split, i)).max() <= 3
            assert stored[i]["image"] == tar_member(archive, f"food-101/images/{line}.jpg")
    assert label.str2int("apple_pie") == 0 and label.str2int("waffles") == 100


def test_sun397_tfds_lists_pick_files_shrunk_and_stored_as_jpeg(tmp_path: Path) -> None:
    from PIL import Image

    counts = {split: len(entries) for split, entries in SUN397.items()}
    ds = run_builder(BUILDERS / "sun397", tmp_path, config="tfds", num_examples=counts)
    label = ds["train"].features["label"]
    for split, entries in SUN397.items():
        stored = raw(tmp_path, split)
        for i, (path, fmt, (height, width)) in enumerate(entries):
            example = ds[split][i]
            assert example["file_name"] == path
            assert label.int2str(example["label"]) == path.rsplit("/", 1)[0]
            assert stored[i]["image"][:3] == b"\xff\xd8\xff"  # every file becomes a JPEG
            pixels = sun397_pixels(height, width, grey=fmt == "PNG")
            if height * width > 120_000:  # shrunk by sqrt(120000 / pixels) on each side
                factor = (120_000 / (height * width)) ** 0.5
                shape = (round(height * factor), round(width * factor))
                pixels = np.asarray(Image.fromarray(pixels).resize(shape[::-1]))
            assert example["image"].shape == (*pixels.shape[:2], 3)
            diff = np.abs(example["image"].astype(int) - pixels)
            assert diff.mean() < 2 and diff.max() <= 12, (split, path)
    assert ds["train"][0]["image"].shape == (268, 447, 3)


@pytest.mark.parametrize("partition", [1, 2])
def test_sun397_standard_partitions_read_the_official_lists(tmp_path: Path, partition: int) -> None:
    """standard-partN-120k (TFDS's ten configs): train and test are the images the official
    Training_NN.txt / Testing_NN.txt of Partitions.zip list (the file the reference catalog
    leaves out stays out), processed as in the tfds config."""
    wanted = {split: [p for p in paths if "sun_aophkoiosslinihb" not in p]
              for split, paths in sun397_partition(partition).items()}  # fmt: skip
    counts = {split: len(paths) for split, paths in wanted.items()}
    config = f"standard-part{partition}-120k"
    ds = run_builder(BUILDERS / "sun397", tmp_path, config=config, num_examples=counts)
    assert set(ds) == {"train", "test"}
    label = ds["train"].features["label"]
    shapes = {path: shape for entries in SUN397.values() for path, _, shape in entries}
    for split, paths in wanted.items():
        stored = raw(tmp_path, split)
        assert sorted(ds[split][i]["file_name"] for i in range(len(paths))) == sorted(paths)
        for i in range(len(paths)):
            example = ds[split][i]
            assert label.int2str(example["label"]) == example["file_name"].rsplit("/", 1)[0]
            assert stored[i]["image"][:3] == b"\xff\xd8\xff"
            height, width = shapes[example["file_name"]]
            if height * width <= 120_000:
                assert example["image"].shape == (height, width, 3)
    assert sun397_partition(1) != sun397_partition(2)


def test_sun397_dummy_lists_are_lines_of_the_shipped_lists() -> None:
    shipped, dummy = (
        {name: set(tar_member(folder / "sun397_tfds_splits.tar.gz", name).decode().split())
         for name in ("sun397_tfds_tr.txt", "sun397_tfds_va.txt", "sun397_tfds_te.txt")}
        for folder in (BUILDERS / "sun397", BUILDERS / "sun397" / "dummy_data")
    )  # fmt: skip
    assert all(dummy[name] <= shipped[name] for name in shipped)
    assert [len(lines) for lines in shipped.values()] == [76128, 10875, 21750]


def test_patch_camelyon_reads_the_gzipped_h5_pairs(tmp_path: Path) -> None:
    counts = {split: count for split, (_, count) in CAMELYON.items()}
    ds = run_builder(BUILDERS / "patch_camelyon", tmp_path, num_examples=counts)
    for split, (stem, count) in CAMELYON.items():
        for i in range(count):
            example = ds[split][i]
            np.testing.assert_array_equal(example["image"], camelyon_patch(split, i))
            assert example["label"] == camelyon_label(split, i)
            assert example["id"] == f"{stem}_{i}"  # the files' split name: valid_0
    assert {ds[s][i]["label"] for s, (_, n) in CAMELYON.items() for i in range(n)} == {0, 1}


def test_dsprites_latent_columns_1_to_5(tmp_path: Path) -> None:
    arrays = dsprites_arrays()
    count = len(arrays["imgs"])
    ds = run_builder(BUILDERS / "dsprites", tmp_path, num_examples={"train": count})
    names = ("shape", "scale", "orientation", "x_position", "y_position")
    for i in range(count):
        example = ds["train"][i]
        np.testing.assert_array_equal(example["image"], arrays["imgs"][i][..., None])  # 0 and 1
        for column, name in enumerate(names, 1):
            assert example[f"label_{name}"] == arrays["latents/classes"][i, column]
            value = example[f"value_{name}"]
            assert value.dtype == np.float32 and value.shape == ()
            assert value == np.float32(arrays["latents/values"][i, column])
    assert ds["train"][0]["image"].max() == 1


def test_smallnorb_reads_the_binary_matrices(tmp_path: Path) -> None:
    counts = {split: count for split, (_, count) in SMALLNORB.items()}
    ds = run_builder(BUILDERS / "smallnorb", tmp_path, num_examples=counts)
    for split, count in counts.items():
        arrays = smallnorb_arrays(split)
        for i in range(count):
            example = ds[split][i]
            np.testing.assert_array_equal(example["image"], arrays["dat"][i, 0][..., None])
            np.testing.assert_array_equal(example["image2"], arrays["dat"][i, 1][..., None])
            assert example["label_category"] == arrays["cat"][i]
            instance, elevation, azimuth, lighting = arrays["info"][i]
            assert (example["instance"], example["label_elevation"]) == (instance, elevation)
            assert example["label_azimuth"] == azimuth // 2  # stored as 0, 2, ..., 34
            assert example["label_lighting"] == lighting
    assert ds["train"][0]["label_azimuth"] == 17
    names = ds["train"].features["label_category"].names
    assert names[ds["train"][1]["label_category"]] == "human figures"


def test_cars196_records_of_the_annotation_structs(tmp_path: Path) -> None:
    counts = {split: len(entries) for split, entries in CARS196.items()}
    ds = run_builder(BUILDERS / "cars196", tmp_path, num_examples=counts)
    names = ds["train"].features["label"].names
    for split, entries in CARS196.items():
        for i, (name, label, (x1, y1, x2, y2), (height, width)) in enumerate(entries):
            example = ds[split][i]
            assert example["id"] == name[:-4] and example["label"] == label - 1
            expected = [y1 / height, x1 / width, y2 / height, x2 / width]
            np.testing.assert_allclose(example["bbox"], expected, rtol=1e-6)
            assert example["image"].shape == (height, width, 3)
            assert np.abs(example["image"].astype(int) - cars196_colour(split, i)).max() <= 3
    assert names[ds["train"][1]["label"]] == "smart fortwo Convertible 2012"
    assert names[ds["test"][0]["label"]] == "AM General Hummer SUV 2000"


def test_dmlab_reads_the_tfrecords_of_each_split(tmp_path: Path) -> None:
    counts = {split: sum(map(len, files.values())) for split, files in DMLAB.items()}
    ds = run_builder(BUILDERS / "dmlab", tmp_path, num_examples=counts)
    for split, files in DMLAB.items():
        entries = [entry for name in sorted(files) for entry in files[name]]
        for i, (filename, label) in enumerate(entries):
            example = ds[split][i]
            assert (example["filename"], example["label"]) == (filename, label)
            assert np.abs(example["image"].astype(int) - dmlab_colour(label)).max() <= 3


def test_celeb_a_tables_keyed_by_file_name(tmp_path: Path) -> None:
    splits = ("train", "validation", "test")
    files = {s: sorted(n for n, p in CELEBA.items() if p == i) for i, s in enumerate(splits)}
    ds = run_builder(
        BUILDERS / "celeb_a", tmp_path, num_examples={s: len(f) for s, f in files.items()}
    )
    for split, names in files.items():
        for i, name in enumerate(names):
            example = ds[split][i]
            attributes, landmarks, identity = celeba_row(name)
            assert example["attributes"] == {
                a: np.bool_(v > 0) for a, v in zip(CELEBA_ATTRIBUTES, attributes, strict=True)
            }
            assert example["landmarks"] == dict(zip(CELEBA_LANDMARKS, landmarks, strict=True))
            assert example["identity"] == {"Identity_No": identity}
            assert np.abs(example["image"].astype(int) - celeba_colour(name)).max() <= 3
    assert bool(ds["train"][0]["attributes"]["5_o_Clock_Shadow"]) is (
        celeba_row("000001.jpg")[0][0] > 0
    )


def test_clevr_scenes_objects_and_questions(tmp_path: Path) -> None:
    counts = {split: len(entries) for split, entries in CLEVR.items()}
    ds = run_builder(BUILDERS / "clevr", tmp_path, num_examples=counts)
    objects_feature = ds["train"].features["objects"]
    names = {k: objects_feature.feature[k].names for k in ("color", "material", "shape", "size")}
    for split, entries in CLEVR.items():
        for i, (name, objects) in enumerate(entries):
            example = ds[split][i]
            assert example["file_name"] == name
            np.testing.assert_array_equal(example["image"], clevr_rgba(i)[:, :, :3])  # no alpha
            qa = example["question_answer"]
            assert list(zip(qa["question"], qa["answer"], strict=True)) == clevr_questions(
                split, name
            )
            got = example["objects"]
            assert len(got["color"]) == len(objects or [])
            for j, (color, material, shape, size, rotation, coords, pixels) in enumerate(
                objects or []
            ):
                assert [names[k][got[k][j]] for k in names] == [color, material, shape, size]
                assert got["rotation"][j] == np.float32(rotation)
                np.testing.assert_array_equal(got["3d_coords"][j], np.float32(coords))
                np.testing.assert_array_equal(got["pixel_coords"][j], np.float32(pixels))


def test_kitti_split_by_video_as_tfds_and_boxes_from_the_bottom(tmp_path: Path) -> None:
    counts = {split: len(ids) for split, ids in KITTI_SPLITS.items()}
    ds = run_builder(BUILDERS / "kitti", tmp_path, num_examples=counts)
    types = ds["train"].features["objects"].feature["type"].names
    height, width = KITTI_SIZE
    for split, ids in KITTI_SPLITS.items():
        for i, image_id in enumerate(ids):
            example = ds[split][i]
            assert example["image/file_name"] == f"{image_id:06d}.png"
            np.testing.assert_array_equal(example["image"], kitti_pixels(image_id))
            lines = [line.split() for line in kitti_objects(image_id)[:-1]]  # no DontCare
            objects = example["objects"]
            assert [types[t] for t in objects["type"]] == [f[0] for f in lines]
            for j, f in enumerate(lines):
                left, top, right, bottom = map(float, f[4:8])
                box = [(height - bottom) / height, left / width, (height - top) / height,
                       right / width]  # fmt: skip
                np.testing.assert_allclose(objects["bbox"][j], box, rtol=1e-6)
                assert objects["occluded"][j] == int(f[2])
                assert objects["truncated"][j] == np.float32(f[1])
                assert objects["alpha"][j] == np.float32(f[3])
                np.testing.assert_array_equal(objects["dimensions"][j], np.float32(f[8:11]))
                np.testing.assert_array_equal(objects["location"][j], np.float32(f[11:14]))
                assert objects["rotation_y"][j] == np.float32(f[14])


def test_caltech_birds2011_split_boxes_and_masks(tmp_path: Path) -> None:
    parts = {"train": [i for i, v in CUB.items() if v[1] == 1],
             "test": [i for i, v in CUB.items() if v[1] == 0]}  # fmt: skip
    ds = run_builder(BUILDERS / "caltech_birds2011", tmp_path,
                     num_examples={s: len(ids) for s, ids in parts.items()})  # fmt: skip
    for split, ids in parts.items():
        for i, image_id in enumerate(ids):
            path, _, (x, y, w, h), (height, width) = CUB[image_id]
            example = ds[split][i]
            assert example["image/filename"] == f"CUB_200_2011/images/{path}"
            number, name = path.split("/")[0].split(".", 1)
            assert (example["label"], example["label_name"]) == (int(number) - 1, name.lower())
            box = [y / height, x / width, min((y + h) / height, 1), min((x + w) / width, 1)]
            np.testing.assert_allclose(example["bbox"], box, rtol=1e-6)
            np.testing.assert_array_equal(
                example["segmentation_mask"], cub_mask(image_id)[..., None]
            )
            assert np.abs(example["image"].astype(int) - cub_colour(image_id)).max() <= 3
    assert ds["train"][1]["label"] == 199 and ds["train"][1]["bbox"][3] == 1.0


GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "tf" / "vtab_gold.json"
GOLD_COUNTS = {"smallnorb": {"train": 4, "test": 3}, "dsprites": {"train": 5},
               "patch_camelyon": {"test": 3, "train": 4, "validation": 2},
               "food101": {"train": 3, "validation": 2}, "cars196": {"train": 2, "test": 1},
               "celeb_a": {"train": 3, "validation": 1, "test": 1}}  # fmt: skip


def _digest(value: Any) -> Any:
    """As tests/fixtures/tf/make_vtab_gold.py digests TFDS's examples."""
    if isinstance(value, dict):
        return {k: _digest(v) for k, v in value.items()}
    if isinstance(value, str):
        return value
    a = np.asarray(value)
    if a.ndim >= 2:
        return [list(a.shape), hashlib.sha256(a.astype(np.uint8).tobytes()).hexdigest()]
    return a.astype(np.float32).tolist() if a.dtype.kind == "f" else a.tolist()


@pytest.mark.parametrize("name", sorted(GOLD_COUNTS))
def test_examples_are_what_tfds_generates_from_the_same_files(name: str, tmp_path: Path) -> None:
    """tests/fixtures/tf/vtab_gold.json: TFDS 4.9.10's own builders run on our dummy files
    (an image file TFDS keeps as it is compared by its bytes, class names by name)."""
    gold = json.loads(GOLD.read_text())
    ds = run_builder(BUILDERS / name, tmp_path, num_examples=GOLD_COUNTS[name])
    features = ds[next(iter(GOLD_COUNTS[name]))].features
    for split in GOLD_COUNTS[name]:
        stored = raw(tmp_path, split)
        for i, expected in enumerate(gold[f"{name}/{split}"]):
            example = ds[split][i]
            got = {}
            for key, want in expected.items():
                if key == "image" and isinstance(want, str):  # the file's bytes
                    got[key] = hashlib.sha256(stored[i]["image"]).hexdigest()
                elif isinstance(features[key], ClassLabel) and isinstance(want, str):
                    got[key] = features[key].int2str(example[key])
                else:
                    got[key] = _digest(example[key])
            assert got == expected, (split, i)


def test_sun397_jpegs_are_the_bytes_tfds_stores(tmp_path: Path) -> None:
    """TFDS's SUN397 builder on the same files (vtab_gold.json): the same files, classes and
    sizes, and with the same OpenCV the same JPEG bytes."""
    import cv2

    gold = json.loads(GOLD.read_text())
    counts = {s: len(gold[f"sun397/{s}"]) for s in ("train", "validation", "test")}
    ds = run_builder(BUILDERS / "sun397", tmp_path, config="tfds", num_examples=counts)
    label = ds["train"].features["label"]
    for split in counts:
        stored = raw(tmp_path, split)
        for i, expected in enumerate(gold[f"sun397/{split}"]):
            example = ds[split][i]
            assert example["file_name"] == expected["file_name"]
            assert label.int2str(example["label"]) == expected["label"]
            assert list(example["image"].shape) == expected["shape"]
            if cv2.__version__ == gold["sun397/opencv"]:
                assert hashlib.sha256(stored[i]["image"]).hexdigest() == expected["image"]


def test_kitti_and_dmlab_are_what_tfds_generates(tmp_path: Path) -> None:
    """vtab_gold.json: TFDS's kitti (split by video, objects, boxes) and dmlab (reading our
    TFRecord files) on the same files."""
    gold = json.loads(GOLD.read_text())
    counts = {s: len(gold[f"kitti/{s}"]) for s in ("train", "validation", "test")}
    ds = run_builder(BUILDERS / "kitti", tmp_path / "kitti", num_examples=counts)
    objects_feature = ds["train"].features["objects"].feature
    for split in counts:
        for i, expected in enumerate(gold[f"kitti/{split}"]):
            example = ds[split][i]
            assert example["image/file_name"] == expected["file_name"]  # TFDS's image/file_name
            assert _digest(example["image"]) == expected["image"]
            columns = example["objects"]
            got = [
                {k: objects_feature[k].int2str(int(v[j])) if k == "type"
                 else int(v[j]) if k == "occluded" else _digest(v[j])
                 for k, v in columns.items()}
                for j in range(len(columns["type"]))
            ]  # fmt: skip
            assert got == expected["objects"], (split, i)
    counts = {s: len(gold[f"dmlab/{s}"]) for s in ("train", "validation", "test")}
    ds = run_builder(BUILDERS / "dmlab", tmp_path / "dmlab", num_examples=counts)
    for split in counts:
        stored = raw(tmp_path / "dmlab", split)
        got = [{"filename": ds[split][i]["filename"], "label": ds[split][i]["label"],
                "image": hashlib.sha256(stored[i]["image"]).hexdigest()}
               for i in range(counts[split])]  # fmt: skip
        assert got == gold[f"dmlab/{split}"], split


#: name[/config] -> (version, split sizes, {feature: (type, classes or shape)}): TFDS 4.9.10.
FACTS = {
    "food101": ("2.0.0", {"train": 75750, "validation": 25250},
                {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 101)}),
    "sun397/tfds": ("4.0.0", {"train": 76127, "validation": 10875, "test": 21750},
                    {"file_name": ("Text", ()), "image": ("Image", (None, None, 3)),
                     "label": ("ClassLabel", 397)}),
    # SUN397's ten official partitions: 50 train and 50 test images of each of 397 classes
    **{f"sun397/standard-part{k}-120k": (
        "4.0.0", {"train": 19850, "test": 19850},
        {"file_name": ("Text", ()), "image": ("Image", (None, None, 3)),
         "label": ("ClassLabel", 397)}) for k in range(1, 11)},
    "patch_camelyon": ("2.0.0", {"test": 32768, "train": 262144, "validation": 32768},
                       {"id": ("Text", ()), "image": ("Image", (96, 96, 3)),
                        "label": ("ClassLabel", 2)}),
    "dsprites": ("2.0.0", {"train": 737280}, {
        "image": ("Image", (64, 64, 1)), "label_shape": ("ClassLabel", 3),
        "label_scale": ("ClassLabel", 6), "label_orientation": ("ClassLabel", 40),
        "label_x_position": ("ClassLabel", 32), "label_y_position": ("ClassLabel", 32),
        **{f"value_{n}": ("Tensor", ()) for n in ("shape", "scale", "orientation",
                                                  "x_position", "y_position")}}),
    "smallnorb": ("2.0.0", {"train": 24300, "test": 24300}, {
        "image": ("Image", (96, 96, 1)), "image2": ("Image", (96, 96, 1)),
        "label_category": ("ClassLabel", 5), "instance": ("ClassLabel", 10),
        "label_elevation": ("ClassLabel", 9), "label_azimuth": ("ClassLabel", 18),
        "label_lighting": ("ClassLabel", 6)}),
    "cars196": ("2.1.0", {"train": 8144, "test": 8041},
                {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 196),
                 "bbox": ("BBox", (4,)), "id": ("Text", ())}),
    "dmlab": ("2.0.1", {"train": 65550, "validation": 22628, "test": 22735},
              {"image": ("Image", (360, 480, 3)), "filename": ("Text", ()),
               "label": ("ClassLabel", 6)}),
    "celeb_a": ("2.1.0", {"train": 162770, "validation": 19867, "test": 19962},
                {"image": ("Image", (218, 178, 3)), "landmarks": ("FeaturesDict", None),
                 "attributes": ("FeaturesDict", None), "identity": ("FeaturesDict", None)}),
    "clevr": ("3.1.0", {"train": 70000, "validation": 15000, "test": 15000},
              {"image": ("Image", (None, None, 3)), "file_name": ("Text", ()),
               "objects": ("Sequence", None), "question_answer": ("Sequence", None)}),
    "kitti": ("3.3.0", {"train": 6347, "validation": 423, "test": 711},
              {"image": ("Image", (None, None, 3)), "image/file_name": ("Text", ()),
               "objects": ("Sequence", None)}),
    "caltech_birds2011": ("0.2.0", {"train": 5994, "test": 5794},
                          {"image": ("Image", (None, None, 3)), "image/filename": ("Text", ()),
                           "label": ("ClassLabel", 200), "label_name": ("Text", ()),
                           "bbox": ("BBox", (4,)),
                           "segmentation_mask": ("Image", (None, None, 1))}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FACTS))
def test_builders_match_the_facts(name: str) -> None:
    b = assert_builder_facts(name, FACTS[name])
    for download in b.spec.downloads.values():
        assert download.size and download.sha256, download


#: The datasets this file tests (tests/builders/test_builders.py checks every registered one
#: is tested).
VTAB_DATASETS = sorted({name.split("/")[0] for name in FACTS})


def test_clevr_and_caltech_birds2011_are_what_tfds_generates(tmp_path: Path) -> None:
    """vtab_gold.json: TFDS's CLEVR builder on the same zip (images as TensorFlow decodes
    them to 3 channels, objects, questions) and its CaltechBirds2011 builder on the same
    archives (the JPEG's bytes, box, greyscale mask), matched by file name."""
    gold = json.loads(GOLD.read_text())
    counts = {s: len(gold[f"clevr/{s}"]) for s in ("train", "validation", "test")}
    ds = run_builder(BUILDERS / "clevr", tmp_path / "clevr", num_examples=counts)
    objects_feature = ds["train"].features["objects"].feature
    for split in counts:
        got = []
        for example in ds[split]:
            objects, qa = example["objects"], example["question_answer"]
            got.append({
                "file_name": example["file_name"], "image": _digest(example["image"]),
                "question_answer": [{"question": q, "answer": a}
                                    for q, a in zip(qa["question"], qa["answer"], strict=True)],
                "objects": [{k: objects_feature[k].int2str(int(v[j]))
                             if isinstance(objects_feature[k], ClassLabel) else _digest(v[j])
                             for k, v in objects.items()}
                            for j in range(len(objects["color"]))],
            })  # fmt: skip
        key = operator.itemgetter("file_name")
        assert sorted(got, key=key) == sorted(gold[f"clevr/{split}"], key=key), split
    counts = {s: len(gold[f"caltech_birds2011/{s}"]) for s in ("train", "test")}
    ds = run_builder(BUILDERS / "caltech_birds2011", tmp_path / "cub", num_examples=counts)
    for split in counts:
        stored = raw(tmp_path / "cub", split)
        got = [
            {"image/filename": e["image/filename"], "label": e["label"],
             "label_name": e["label_name"], "bbox": _digest(e["bbox"]),
             "image": hashlib.sha256(stored[i]["image"]).hexdigest(),
             "segmentation_mask": _digest(e["segmentation_mask"])}
            for i, e in enumerate(ds[split])
        ]  # fmt: skip
        key = operator.itemgetter("image/filename")
        assert sorted(got, key=key) == sorted(gold[f"caltech_birds2011/{split}"], key=key), split

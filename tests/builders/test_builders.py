"""Every registered builder, run through download -> prepare -> read on its dummy files."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest
from test_builders_manual import MANUAL_DATASETS, MANUAL_FACTS

import catalog
from catalog.spec.load import load_spec
from catalog.testing.harness import run_builder
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import assert_builder_facts
from make_dummy_data import (
    CIFAR10_PER_BATCH,
    CIFAR100_COUNTS,
    CMATERDB,
    FLOWERS,
    IDX_BUILDERS,
    IDX_SPLITS,
    SVHN,
    binary_images,
    cifar_images,
    svhn_labels,
)
from test_builders_imagenet import IMAGENET_DATASETS, IMAGENET_FACTS
from test_builders_images import IMAGE_DATASETS, IMAGE_FACTS
from test_builders_text_audio import FACTS as TEXT_AUDIO_FACTS
from test_builders_vtab import FACTS as VTAB_FACTS
from test_builders_vtab import VTAB_DATASETS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(IDX_BUILDERS))
def test_idx_builder_prepares_every_pixel_and_label(name: str, tmp_path: Path) -> None:
    counts = {split: count for split, (_, count, _) in IDX_SPLITS.items()}
    sources = run_builder(ROOT / "builders" / name, tmp_path, num_examples=counts)
    for split, (_, count, offset) in IDX_SPLITS.items():
        seed = IDX_BUILDERS[name] + offset
        images = pattern_images(count, seed=seed)[..., None]
        labels = pattern_labels(count, seed=seed)
        ds = sources[split]
        for i in range(count):
            example = ds[i]
            assert example["image"].shape == (28, 28, 1)
            np.testing.assert_array_equal(example["image"], images[i])
            assert example["label"] == int(labels[i])
    # One literal value, so the pattern helper itself is checked: pixel (0, 0) of train[1].
    assert sources["train"][1]["image"][0, 0, 0] == 31 + IDX_BUILDERS[name]


@pytest.mark.parametrize("name", sorted(IDX_BUILDERS))
def test_registered_spec_matches_the_facts(name: str) -> None:
    spec = load_spec(ROOT / "builders" / name)
    assert spec.version == "3.0.1"
    assert {s: spec.splits[s].num_examples for s in spec.splits} == {"train": 60000, "test": 10000}
    assert spec.features["image"].shape == (28, 28, 1)  # type: ignore[attr-defined]
    assert spec.features["label"].num_classes == 10  # type: ignore[attr-defined]
    for download in spec.downloads.values():
        assert download.size and download.sha256, download  # every file has a checksum


def test_fashion_mnist_class_names() -> None:
    label = load_spec(ROOT / "builders" / "fashion_mnist").features["label"]
    assert label.names == [  # type: ignore[attr-defined]
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
    ]  # fmt: skip
    assert label.int2str(9) == "Ankle boot"  # type: ignore[attr-defined]


def test_cifar10_planar_records_come_back_hwc_with_running_ids(tmp_path: Path) -> None:
    train_count = 5 * CIFAR10_PER_BATCH
    ds = run_builder(
        ROOT / "builders" / "cifar10", tmp_path, num_examples={"train": train_count, "test": 3}
    )
    # Source order across data_batch_1..5, ids counting on from file to file.
    images, labels = cifar_images(train_count, seed=1), pattern_labels(train_count, seed=1)
    for i in range(train_count):
        example = ds["train"][i]
        np.testing.assert_array_equal(example["image"], images[i])
        assert example["label"] == labels[i] and example["id"] == f"train_{i:05d}"
    assert [e["id"] for e in ds["test"]] == ["test_00000", "test_00001", "test_00002"]
    np.testing.assert_array_equal(ds["test"][2]["image"], cifar_images(3, seed=2)[2])
    # Literal values: train[3] pixel (row 1, col 2) is (5*3 + 3 + 14 + 1 + 80*channel) % 256,
    # one value from each planar block (R, G, B), so a channel or row/col swap shows.
    assert ds["train"][3]["image"][1, 2].tolist() == [33, 113, 193]
    assert ds["train"][3]["image"][2, 1].tolist() == [29, 109, 189]
    assert ds["train"].features["label"].int2str(ds["train"][0]["label"]) == "automobile"


def test_cifar100_coarse_and_fine_labels(tmp_path: Path) -> None:
    counts = CIFAR100_COUNTS
    ds = run_builder(ROOT / "builders" / "cifar100", tmp_path, num_examples=counts)
    for seed, (split, count) in enumerate(counts.items(), 1):
        images = cifar_images(count, seed=seed)
        coarse = pattern_labels(count, 20, seed=seed)
        fine = pattern_labels(count, 100, seed=seed * 7)
        for i in range(count):
            example = ds[split][i]
            np.testing.assert_array_equal(example["image"], images[i])
            assert (example["coarse_label"], example["label"]) == (coarse[i], fine[i])
            assert example["id"] == f"{split}_{i:05d}"
    first = ds["train"][0]
    assert (first["coarse_label"], first["label"]) == (1, 7)
    features = ds["train"].features
    assert features["label"].int2str(7) == "beetle"
    assert features["coarse_label"].int2str(1) == "fish"


@pytest.mark.parametrize("config", sorted(CMATERDB))
def test_cmaterdb_configs(config: str, tmp_path: Path) -> None:
    seed, counts = CMATERDB[config]
    ds = run_builder(
        ROOT / "builders" / "cmaterdb",
        tmp_path,
        num_examples=counts,
        config=None if config == "bangla" else config,  # bangla: the default config
    )
    for split, count in counts.items():
        images = cifar_images(count, seed=seed)
        labels = pattern_labels(count, seed=seed)
        assert [e["label"] for e in ds[split]] == labels.tolist()
        for i in range(count):
            np.testing.assert_array_equal(ds[split][i]["image"], images[i])
    # On disk under <data_dir>/cmaterdb/<config>/<version>/.
    assert ds["train"].info.config == config
    assert (tmp_path / "data" / "cmaterdb" / config / "1.0.0" / "dataset_info.json").is_file()


def test_tf_flowers_keeps_jpeg_bytes_and_the_facts_label_order(tmp_path: Path) -> None:
    ds = run_builder(
        ROOT / "builders" / "tf_flowers", tmp_path, num_examples={"train": len(FLOWERS)}
    )["train"]
    # Examples in key order (<class>/<file>); LICENSE.txt is not one of them.
    expected = sorted(FLOWERS, key=lambda f: f"{f[0]}/{f[1]}")
    order = ["dandelion", "daisy", "tulips", "sunflowers", "roses"]
    assert ds.features["label"].names == order
    with tarfile.open(ROOT / "builders/tf_flowers/dummy_data/flower_photos.tgz") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    undecoded = catalog.DataSource(ds.path, ds.info, "train", decoders={"image": False})
    for i, (class_name, file, (height, width), colour) in enumerate(expected):
        example = ds[i]
        assert example["label"] == order.index(class_name)
        assert example["image"].shape == (height, width, 3)
        assert np.abs(example["image"].astype(int) - colour).max() <= 8  # JPEG is lossy
        assert undecoded[i]["image"] == files[f"flower_photos/{class_name}/{file}"]


def test_binarized_mnist_pixels_are_0_or_1(tmp_path: Path) -> None:
    counts = {"train": 4, "validation": 3, "test": 2}
    ds = run_builder(ROOT / "builders" / "binarized_mnist", tmp_path, num_examples=counts)
    for seed, (split, count) in enumerate(counts.items()):
        images = binary_images(count, seed=seed)[..., None]
        got = np.stack([e["image"] for e in ds[split]])
        np.testing.assert_array_equal(got, images)
    assert set(np.unique(got)) == {0, 1} and got.dtype == np.uint8
    assert ds["train"][0]["image"][:2, :6, 0].tolist() == [[1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 1]]


def test_svhn_labels_10_means_0_and_ids_have_6_digits_as_tfds(tmp_path: Path) -> None:
    ds = run_builder(ROOT / "builders" / "svhn_cropped", tmp_path, num_examples=SVHN)
    for seed, (split, count) in enumerate(SVHN.items()):
        images = cifar_images(count, seed=100 + seed)
        y = svhn_labels(count, seed=seed)
        for i in range(count):
            example = ds[split][i]
            np.testing.assert_array_equal(example["image"], images[i])
            assert example["label"] == y[i] % 10 and example["id"] == f"{split}_{i:06d}"
    assert svhn_labels(4, seed=0)[0] == 10 and ds["train"][0]["label"] == 0


#: What the facts say, per dataset (and config): version, split counts, and for each feature
#: its type and shape (ClassLabel: the number of classes).
FACTS: dict[str, tuple[str, dict[str, int], dict[str, tuple[str, object]]]] = {
    "cifar10": ("3.0.2", {"train": 50000, "test": 10000},
                {"id": ("Text", ()), "image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    "cifar100": ("3.0.2", {"train": 50000, "test": 10000},
                 {"id": ("Text", ()), "image": ("Image", (32, 32, 3)),
                  "label": ("ClassLabel", 100), "coarse_label": ("ClassLabel", 20)}),
    "cmaterdb/bangla": ("1.0.0", {"train": 5000, "test": 1000},
                        {"image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    "cmaterdb/devanagari": ("1.0.0", {"train": 2500, "test": 500},
                            {"image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    "cmaterdb/telugu": ("1.0.0", {"train": 2500, "test": 500},
                        {"image": ("Image", (32, 32, 3)), "label": ("ClassLabel", 10)}),
    "tf_flowers": ("3.0.1", {"train": 3670},
                   {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 5)}),
    "binarized_mnist": ("1.0.0", {"train": 50000, "validation": 10000, "test": 10000},
                        {"image": ("Image", (28, 28, 1))}),
    "svhn_cropped": ("3.1.0", {"train": 73257, "test": 26032, "extra": 531131},
                     {"id": ("Text", ()), "image": ("Image", (32, 32, 3)),
                      "label": ("ClassLabel", 10)}),
}  # fmt: skip


ALL_FACTS = {**FACTS, **TEXT_AUDIO_FACTS}


@pytest.mark.parametrize("name", sorted(ALL_FACTS))
def test_builders_match_the_facts(name: str) -> None:
    """Version, split counts, features and registered checksums are the facts'."""
    b = assert_builder_facts(name, ALL_FACTS[name])
    for download in b.spec.downloads.values():
        assert download.size and download.sha256, download  # every file has a checksum


def test_every_registered_dataset_and_config_has_a_builder_test() -> None:
    facts = {*ALL_FACTS, *IMAGE_FACTS, *VTAB_FACTS, *IMAGENET_FACTS, *MANUAL_FACTS}
    tested = {*IDX_BUILDERS, *facts, "cmaterdb", *IMAGE_DATASETS, *VTAB_DATASETS}
    tested |= set(IMAGENET_DATASETS) | set(MANUAL_DATASETS)
    tested |= {n.partition("/")[0] for n in TEXT_AUDIO_FACTS}
    for name in catalog.list_datasets():
        b = catalog.builder(name)
        assert name in tested, name
        for config in b.spec.configs:
            assert f"{name}/{config}" in facts, config
    assert set(CMATERDB) == set(catalog.builder("cmaterdb").spec.configs)


def test_tf_flowers_jpegs_are_kept_as_they_are() -> None:
    image = catalog.builder("tf_flowers").info.features["image"]
    assert image.shape == (None, None, 3) and image.encoding == "jpeg"  # type: ignore[attr-defined]

"""Every registered builder, run through download -> prepare -> read on its dummy files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from catalog.spec import load_spec
from catalog.testing.harness import run_builder
from catalog.testing.idx_files import pattern_images, pattern_labels

from make_dummy_data import IDX_BUILDERS, IDX_SPLITS

ROOT = Path(__file__).resolve().parent.parent


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

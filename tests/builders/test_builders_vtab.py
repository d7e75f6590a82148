"""VTAB's sources and the fine-grained datasets (food101 ... celeb_a) prepared from their dummy
files over loopback HTTP, checked value by value against what tests/dummy_vtab.py wrote and
what the upstream format means; their registered specs against TFDS 4.9.10's facts."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.features import ClassLabel
from catalog.info.dataset_info import INFO_FILE, DatasetInfo
from catalog.read.data_source import DataSource
from catalog.testing.harness import run_builder

from dummy_vtab import FOOD101, food101_colour

ROOT = Path(__file__).resolve().parents[2]
BUILDERS = ROOT / "builders"


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


#: name[/config] -> (version, split sizes, {feature: (type, classes or shape)}): TFDS 4.9.10.
FACTS = {
    "food101": ("2.0.0", {"train": 75750, "validation": 25250},
                {"image": ("Image", (None, None, 3)), "label": ("ClassLabel", 101)}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FACTS))
def test_builders_match_the_facts(name: str) -> None:
    version, splits, features = FACTS[name]
    b = catalog.builder(name)
    assert b.version == version
    assert {s: x.num_examples for s, x in b.spec.splits.items()} == splits
    got = {
        key: (f.type_name, f.num_classes if isinstance(f, ClassLabel)
              else None if f.type_name == "Sequence" else f.shape)  # type: ignore[attr-defined]
        for key, f in b.spec.features.items()
    }  # fmt: skip
    assert got == features
    for download in b.spec.downloads.values():
        assert download.size and download.sha256, download


#: The datasets this file tests (tests/builders/test_builders.py checks every registered one
#: is tested).
VTAB_DATASETS = sorted({name.split("/")[0] for name in FACTS})

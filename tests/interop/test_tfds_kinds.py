"""TFDS-written directories of the feature kinds people meet, read back exactly.

tests/fixtures/tf/tfds_kinds_{tfrecord,array_record}/ were prepared by TFDS 4.9.10 (TF 2.21)
from `TinyKinds` in tests/fixtures/tf/make_tfds_splits.py: Images with and without a fixed
shape, ClassLabels, Text, Sequences of Text and of a dict, Tensors of many dtypes (bytes- and
zlib-encoded, uint64 past 2**63), BBoxFeature, Audio, Video and nested FeaturesDicts, four
splits of two shards each. tfds_kinds_gold.json holds every example TFDS itself reads back
(its data source for array_record, ``as_dataset`` for tfrecord), canonical with dtypes and
shapes; catalog must give the same, example by example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
import catalog.interop.tfds.directory
from catalog.features import Sequence, Tensor
from catalog.storage.data_dir import data_dir_store

import tf_fixtures
from conftest import load_module

FIXTURES = tf_fixtures.FIXTURES
maker = load_module(FIXTURES / "make_tfds_splits.py")

GOLD = tf_fixtures.expected("tfds_kinds_gold.json")
FORMATS = tf_fixtures.FORMATS
CASES = [(f, split) for f in FORMATS for split in GOLD["tfds"][f]["splits"]]


pytestmark = pytest.mark.usefixtures("tmp_data_dir")


def tfds_dir(file_format: str) -> Path:
    return tf_fixtures.tfds_dir(GOLD, file_format)


def same(got: Any, want: Any) -> bool:
    """`got` (canonical) equals TFDS's `want`; an empty Sequence given as an untyped empty
    list (TFDS's data source; catalog's Sequence of Text) matches an empty array."""
    if want == {"list": []} or got == {"list": []}:
        other = got if want == {"list": []} else want
        return isinstance(other, dict) and (other == {"list": []} or other["shape"][0] == 0)
    if isinstance(want, dict) and isinstance(got, dict) and "dtype" not in want:
        return set(got) == set(want) and all(same(got[k], want[k]) for k in want)
    return bool(got == want)


@pytest.mark.parametrize(("file_format", "split"), CASES)
def test_every_example_equals_what_tfds_reads(file_format: str, split: str) -> None:
    want = GOLD["tfds"][file_format]["splits"][split]
    ds = catalog.open_tfds(tfds_dir(file_format), split=split)
    assert [s.num_examples for s in ds.info.splits[split].shards] == want["shards"]
    assert len(ds) == len(want["examples"]) and len(want["shards"]) == 2
    for i, example in enumerate(ds):
        got = maker.canonical(example)
        for key, value in want["examples"][i].items():
            assert same(got[key], value), (split, i, key, got[key], value)
        assert set(got) == set(want["examples"][i])
    batch = ds.__getitems__(list(range(len(ds)))[::-1])  # the batched path agrees
    assert [maker.canonical(e) for e in batch] == [maker.canonical(e) for e in ds][::-1]


def test_the_fixture_holds_the_kinds_it_claims() -> None:
    features = catalog.open_tfds(tfds_dir("array_record"), split="train").features
    assert isinstance(features["audio"], Tensor) and features["audio"].dtype == np.int16
    assert features["stereo"].shape == (None, 2)
    # TFDS's Audio opens as a Tensor of its samples, the rate left in features.json
    # (docs/guides/tfds-differences.md, "Value types")
    assert isinstance(features["stereo"], Tensor) and features["stereo"].dtype == np.int32
    assert isinstance(features["video"], Sequence) and features["video"].feature.shape == (4, 5, 3)
    assert isinstance(features["objects"], Sequence)
    assert features["thumb"].shape == (6, 5, 3) and features["image"].shape == (None, None, 3)
    assert features["photo"].encoding == "jpeg"
    assert features["count_label"].num_classes == 4
    example = catalog.open_tfds(tfds_dir("tfrecord"), split="train")[0]
    assert example["id"].dtype == np.uint64 and example["id"] >= 2**64 - 10
    assert example["hashes"][0] >= 2**63 and example["video"].shape[1:] == (4, 5, 3)
    assert example["audio"].dtype == np.int16 and example["audio"].ndim == 1
    assert example["stereo"].dtype == np.int32 and example["stereo"].shape[1] == 2


@pytest.mark.parametrize("file_format", FORMATS)
def test_split_specs_across_shards(file_format: str) -> None:
    want = GOLD["tfds"][file_format]["splits"]
    ds = catalog.open_tfds(tfds_dir(file_format), split="train[2:5]+test[1shard]")
    expected = (
        want["train"]["examples"][2:5] + want["test"]["examples"][want["test"]["shards"][0] :]
    )
    assert len(ds) == len(expected)
    for got, value in zip(ds, expected, strict=True):
        assert all(same(maker.canonical(got)[k], v) for k, v in value.items())


def test_imported_and_exported_again_every_value_stays(tmp_path: Path) -> None:
    """`catalog import` (catalog's records) and `catalog export --format tfds` keep them all."""
    from catalog.interop.tfds.export import export
    from catalog.interop.tfds.importer import import_tfds

    info, folder = import_tfds(tfds_dir("array_record"), data_dir_store(tmp_path / "imported"))
    want = GOLD["tfds"]["array_record"]["splits"]
    for split in want:
        ours = catalog.data_source(folder, split=split)
        for got, value in zip(ours, want[split]["examples"], strict=True):
            assert all(same(maker.canonical(got)[k], v) for k, v in value.items()), split
    exported = export(info, folder, tmp_path / "exported", format="tfds")
    again = catalog.open_tfds(exported, split="validation")
    for got, value in zip(again, want["validation"]["examples"], strict=True):
        assert all(same(maker.canonical(got)[k], v) for k, v in value.items())

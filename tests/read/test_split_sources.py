"""Data sources over split specs give exactly the examples TFDS gives for the same spec, through a
prepared builder dataset (one shard and several) and through a directory TFDS prepared (its own
records, in shards of known lengths)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog import ReadInstruction, SplitError
from catalog.info.splits import SplitArg, resolve
from catalog.interop.tfrecord import read_records, write_records
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

COUNTS = {"train": 100, "test": 30}


@pytest.fixture(scope="module")
def two_splits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A builder folder, prepared in one shard per split and in several (about 20 KB each)."""
    tmp = tmp_path_factory.mktemp("splits")
    files = {}
    for split, seed in (("train", 0), ("test", 50)):
        count = COUNTS[split]
        write_idx(tmp / f"{split}-i.gz", pattern_images(count, seed=seed))
        write_idx(tmp / f"{split}-l.gz", pattern_labels(count, seed=seed))
        files[f"{split}-i.gz"] = (tmp / f"{split}-i.gz").read_bytes()
        files[f"{split}-l.gz"] = (tmp / f"{split}-l.gz").read_bytes()
    with LoopbackServer() as server:
        folder = write_builder(tmp / "two", server, files, name="two", splits={
            s: (f"{s}-i.gz", f"{s}-l.gz", n) for s, n in COUNTS.items()})  # fmt: skip
        catalog.builder(folder, data_dir=tmp / "data").download_and_prepare()
        sharded = catalog.builder(folder, data_dir=tmp / "sharded")
        sharded.download_and_prepare(shard_size=20_000)
    assert len(sharded.info.splits["train"].shards) > 2
    return folder, tmp / "data", tmp / "sharded"


def expected_images(spec: SplitArg, info: catalog.DatasetInfo) -> np.ndarray:
    """The images `spec` selects, by resolving it against the shard lengths on its own."""
    seeds = {"train": 0, "test": 50}
    parts = [
        pattern_images(COUNTS[s], seed=seeds[s])[r] for s, r in resolve(spec, info.splits.sizes())
    ]
    return np.concatenate(parts)[..., None]


#: Specs of the split guide and TFDS's tests, each naming the examples it must give.
SPECS: list[SplitArg] = [
    "train[:10%]",
    "train[-7:]",
    "test",
    "train+test",
    "train[:50%]+test[:10]",
    "test[90%:]+train[3:5]",
    "test[:-50%]",  # round(-15.0) = -15: the first 15
    "test[:35%]",  # round(10.5) = 10: halves to even
    "all",
    "train[1shard]",
    "train[:2shard]",
    "train[-1shard:]+test[1shard]",
    "train[0:0]",  # nothing: an empty source (TFDS refuses to read an empty instruction)
    ReadInstruction("train", from_=10, to=20),
    ReadInstruction("train", to=30, unit="%", rounding="pct1_dropremainder"),
    ReadInstruction("test", 5) + "train[95:]",
]


@pytest.mark.parametrize("spec", SPECS, ids=str)
@pytest.mark.parametrize("layout", ["data", "sharded"])
def test_data_source_over_a_spec(
    two_splits: tuple[Path, Path, Path], spec: SplitArg, layout: str
) -> None:
    folder, data_dir, sharded = two_splits
    where = data_dir if layout == "data" else sharded
    ds = catalog.data_source(folder, split=spec, data_dir=where, download=False)
    want = expected_images(spec, ds.info)
    assert len(ds) == len(want) == ds.info.splits[spec].num_examples
    assert ds.split == str(spec)
    if not len(want):  # train[1shard] of a split in one shard: nothing, as in TFDS
        assert list(ds) == [] and (layout == "data" or str(spec) == "train[0:0]")
        return
    np.testing.assert_array_equal(np.stack([e["image"] for e in ds]), want)  # iteration
    np.testing.assert_array_equal(ds[len(ds) - 1]["image"], want[-1])  # random access
    np.testing.assert_array_equal(ds[-len(ds)]["image"], want[0])
    picks = [0, len(ds) // 2, len(ds) - 1]
    np.testing.assert_array_equal(np.stack([e["image"] for e in ds[picks]]), want[picks])
    view = ds[1::3]
    np.testing.assert_array_equal(np.stack([e["image"] for e in view]), want[1::3])


def test_shard_bounds_follow_the_shards_on_disk(two_splits: tuple[Path, Path, Path]) -> None:
    folder, _, sharded = two_splits
    lengths = [s.num_examples for s in catalog.builder(folder, data_dir=sharded).info.splits[
        "train"].shards]  # fmt: skip
    ds = catalog.data_source(folder, split="train[1shard]", data_dir=sharded, download=False)
    np.testing.assert_array_equal(
        np.stack([e["image"] for e in ds]),
        pattern_images(100, seed=0)[lengths[0] : lengths[0] + lengths[1], ..., None],
    )


def test_a_list_of_specs_gives_a_list_of_sources(two_splits: tuple[Path, Path, Path]) -> None:
    """The split guide: ``split=['train', 'test']`` returns one dataset per spec."""
    folder, data_dir, _ = two_splits
    train, head = catalog.data_source(folder, split=["train", "test[:5]"], data_dir=data_dir)
    assert (len(train), len(head)) == (100, 5)
    b = catalog.builder(folder, data_dir=data_dir)
    assert [len(d) for d in b.as_data_source(("test", ReadInstruction("train", to=3)))] == [30, 3]


def test_bad_spec_fails_before_any_work(
    two_splits: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, _, _ = two_splits
    with pytest.raises(
        SplitError, match="two: no split 'validation' \\(in split spec 'train\\+validation'\\)"
    ):
        catalog.data_source(folder, split="train+validation", data_dir=tmp_path)
    with pytest.raises(ValueError, match="bad split spec"):
        catalog.data_source(folder, split=["train", "train[5]"], data_dir=tmp_path)
    assert not list(tmp_path.iterdir())  # nothing downloaded or prepared


def test_out_of_range_bounds_are_refused(two_splits: tuple[Path, Path, Path]) -> None:
    """test_invalid_spec: TFDS refuses ``validation[:31]`` of a 30-example split."""
    folder, data_dir, _ = two_splits
    with pytest.raises(ValueError, match="outside split 'test' of 30 examples"):
        catalog.data_source(folder, split="test[:31]", data_dir=data_dir, download=False)


def test_even_splits_feed_data_sources(two_splits: tuple[Path, Path, Path]) -> None:
    folder, data_dir, _ = two_splits
    parts = [
        catalog.data_source(folder, split=s, data_dir=data_dir)
        for s in catalog.even_splits("train", 3)
    ]
    assert [len(p) for p in parts] == [34, 33, 33]  # the first parts take the remainder
    labels = [e["label"] for p in parts for e in p]
    assert labels == pattern_labels(100).tolist()


# -- a directory TensorFlow Datasets prepared ---------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text("utf-8"))
TRAIN_IDS = [ex["meta"]["id"] for ex in EXPECTED["tfds"]["tfrecord"]["splits"]["train"]]
TEST_IDS = [ex["meta"]["id"] for ex in EXPECTED["tfds"]["tfrecord"]["splits"]["test"]]


@pytest.fixture(scope="module")
def tfds_sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TFDS's tiny_features directory with its train split in shards of 4 and 2 records: its
    own records, cut at a record boundary, and shardLengths saying so."""
    source = FIXTURES / EXPECTED["tfds"]["tfrecord"]["path"]
    folder = tmp_path_factory.mktemp("tfds") / "tiny_features" / "1.2.0"
    shutil.copytree(source, folder)
    single = folder / "tiny_features-train.tfrecord-00000-of-00001"
    records = list(read_records(single))
    single.unlink()
    write_records(folder / "tiny_features-train.tfrecord-00000-of-00002", records[:4])
    write_records(folder / "tiny_features-train.tfrecord-00001-of-00002", records[4:])
    info = json.loads((folder / "dataset_info.json").read_text("utf-8"))
    for split in info["splits"]:
        if split["name"] == "train":
            split["shardLengths"] = ["4", "2"]
    (folder / "dataset_info.json").write_text(json.dumps(info), "utf-8")
    return folder


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ("train", TRAIN_IDS),
        ("train[1shard]", TRAIN_IDS[4:]),
        ("train[:1shard]", TRAIN_IDS[:4]),
        ("train[:50%]+test[-1:]", TRAIN_IDS[:3] + TEST_IDS[-1:]),
        ("all", TRAIN_IDS + TEST_IDS),
        ("test[:-50%]", TEST_IDS[:1]),  # round(-1.5) = -2: 3 - 2
        (catalog.even_splits("train", 4)[0], TRAIN_IDS[:2]),
        (catalog.even_splits("train", 4)[3], TRAIN_IDS[5:]),
    ],
    ids=str,
)
def test_tfds_directory_gives_the_examples_of_a_spec(
    tfds_sharded: Path, spec: SplitArg, ids: list[int], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("CATALOG_DATA_DIR", str(tmp_path))  # TFRecord indexes go there
    ds = catalog.open_tfds(tfds_sharded, split=spec)
    assert [ex["meta"]["id"] for ex in ds] == ids
    assert [ds[i]["meta"]["id"] for i in range(len(ds))] == ids
    assert ds.info.splits[spec].num_examples == len(ids)
    with pytest.raises(ValueError, match="outside split 'train' of 6 examples"):
        catalog.open_tfds(tfds_sharded, split="train[:7]")

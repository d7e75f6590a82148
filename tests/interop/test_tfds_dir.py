"""TFDS-prepared directories read as catalog DataSources, against what TFDS itself decoded.

tests/fixtures/tf/tfds_{tfrecord,array_record}/ were prepared by TFDS 4.9.10 from one tiny
builder with every feature type catalog maps (tests/fixtures/tf/make_fixtures.py);
expected.json holds what TFDS decoded from them (as_dataset for TFRecord shards, as_data_source
for ArrayRecord shards).
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import SpecError
from catalog.interop.tfds.directory import is_tfds_dir, read_tfds_info

import tf_fixtures
from tf_fixtures import plain

FIXTURES = tf_fixtures.FIXTURES
EXPECTED = tf_fixtures.expected("expected.json")
FORMATS = tf_fixtures.FORMATS


pytestmark = pytest.mark.usefixtures("tmp_data_dir")


def tfds_dir(file_format: str) -> Path:
    return tf_fixtures.tfds_dir(EXPECTED, file_format)


@pytest.mark.parametrize("file_format", FORMATS)
def test_values_equal_what_tfds_decoded(file_format: str) -> None:
    ds = catalog.open_tfds(tfds_dir(file_format))
    assert list(ds) == ["train", "test"]
    tf_values = EXPECTED["tfds"]["tfrecord"]["splits"]  # TF's own decoding (tf.data)
    pil_values = EXPECTED["tfds"]["array_record"]["splits"]  # TFDS's NumPy path (Pillow)
    for split, source in ds.items():
        assert len(source) == len(tf_values[split])
        for i, example in enumerate(source):
            want = plain(tf_values[split][i])
            got = plain(example)
            # JPEG: TF's decoder and Pillow's differ by rounding; Pillow's is exact here.
            assert got.pop("photo") == plain(pil_values[split][i]["photo"])
            tf_photo = np.array(want.pop("photo"), np.int16)
            assert np.abs(np.array(example["photo"], np.int16) - tf_photo).max() <= 8
            assert got == want, (split, i)


@pytest.mark.parametrize("file_format", FORMATS)
def test_types_and_shapes_follow_catalog_rules(file_format: str) -> None:
    ex = catalog.open_tfds(tfds_dir(file_format), split="train")[0]
    assert ex["image"].dtype == np.uint8 and ex["image"].shape == (8, 8, 3)
    assert ex["frames"].shape == (2, 4, 4, 1)
    assert isinstance(ex["label"], int) and isinstance(ex["text"], str)
    assert ex["flag"].dtype == np.bool_ and ex["small"].dtype == np.int32
    assert ex["score"].dtype == np.float64 and ex["tensor"].dtype == np.float32
    assert ex["objects"]["bbox"].dtype == np.float32 and ex["objects"]["bbox"].shape[1:] == (4,)
    assert isinstance(ex["ragged"], list) and isinstance(ex["words"], list)
    assert ex["image"].flags.writeable


def test_info_maps_features_splits_and_metadata() -> None:
    info = read_tfds_info(tfds_dir("tfrecord"))
    assert (info.name, info.version) == ("tiny_features", "1.2.0")
    assert {n: s.num_examples for n, s in info.splits.items()} == {"train": 6, "test": 3}
    assert info.supervised_keys == ("image", "label")
    assert info.homepage == "https://example.org/tiny"
    f = info.features
    assert f["label"] == catalog.ClassLabel(names=["cat", "dog", "bird"])
    assert f["objects"].feature["kind"].names == ["a", "b"]  # objects-kind.labels.txt
    assert f["photo"] == catalog.Image((None, None, 3), encoding="jpeg")
    assert f["bbox"] == catalog.BBox()  # bboxFormat REL_YXYX, as TFDS writes it
    assert f["meta"]["inner"]["value"] == catalog.Scalar("float32")


def test_data_source_takes_a_path_and_split_specs_work() -> None:
    path = tfds_dir("tfrecord")
    stored = [ex["meta"]["id"] for ex in EXPECTED["tfds"]["tfrecord"]["splits"]["test"]]
    assert sorted(stored) == [100, 101, 102] and stored != sorted(stored)  # TFDS shuffled them
    assert [
        catalog.data_source(str(path), split="test")[i]["meta"]["id"] for i in range(3)
    ] == stored
    part = catalog.data_source(path, split="train[:2]+test[-1:]", as_supervised=True)
    assert len(part) == 3 and isinstance(part[2][1], int)
    raw = catalog.data_source(path, split="train", decoders={"image": False})
    assert raw[0]["image"][:8] == b"\x89PNG\r\n\x1a\n"


def test_pickles_and_reads_in_another_process(tmp_path: Path) -> None:
    ds = catalog.open_tfds(tfds_dir("tfrecord"), split="train")
    ds[0]
    again = pickle.loads(pickle.dumps(ds))
    assert again[3]["text"] == ds[3]["text"]
    code = (
        "import pickle,sys; ds = pickle.load(sys.stdin.buffer); print(ds[5]['meta']['id'], len(ds))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(ds), capture_output=True, check=True
    )
    assert out.stdout.split() == [str(ds[5]["meta"]["id"]).encode(), b"6"]


def test_the_tfds_directory_is_never_written(tmp_data_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    copy.chmod(0o555)
    try:
        before = {p.name: p.stat().st_mtime_ns for p in copy.iterdir()}
        ds = catalog.open_tfds(copy, split="train")
        assert len(list(ds)) == 6 and ds[4]["label"] in (0, 1, 2)
        assert {p.name: p.stat().st_mtime_ns for p in copy.iterdir()} == before
        assert len(list((tmp_data_dir / "tfrecord-index").iterdir())) == 1
    finally:
        copy.chmod(0o755)


def test_unknown_feature_class_is_refused_by_name(tmp_path: Path) -> None:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    features = json.loads((copy / "features.json").read_text())
    features["featuresDict"]["features"]["steps"] = {
        "pythonClassName": "tensorflow_datasets.core.features.dataset_feature.Dataset",
        "sequence": {},
    }
    (copy / "features.json").write_text(json.dumps(features))
    with pytest.raises(
        SpecError,
        match=r"feature 'steps'.*dataset_feature.Dataset' is not supported.*"
        r"Audio, BBoxFeature, ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text, "
        r"Translation, TranslationVariableLanguages, Video",
    ):
        catalog.open_tfds(copy)


def test_boxes_in_another_format_than_rel_yxyx_stay_plain_tensors(tmp_path: Path) -> None:
    """TFDS's BBoxFeature may hold absolute pixels or x-first boxes (bbox_format): those are
    not catalog BBoxes (normalised ymin, xmin, ymax, xmax) and are read as their values."""
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    features = json.loads((copy / "features.json").read_text())
    features["featuresDict"]["features"]["bbox"]["boundingBox"]["bboxFormat"] = "ABS_XYXY"
    (copy / "features.json").write_text(json.dumps(features))
    ds = catalog.open_tfds(copy, split="train")
    assert ds.info.features["bbox"] == catalog.Tensor((4,), "float32")
    assert ds.info.features["objects"].feature["bbox"] == catalog.BBox()
    original = catalog.open_tfds(tfds_dir("tfrecord"), split="train")
    np.testing.assert_array_equal(ds[0]["bbox"], original[0]["bbox"])


def test_a_record_that_does_not_match_features_json_is_named(tmp_path: Path) -> None:
    """A record missing a declared key fails with the shard file and the record, however it
    is read (one example, a batch, iteration, the pipeline)."""
    from catalog.interop.tfrecord import encode_example, parse_example, read_records, write_records

    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    shard = copy / "tiny_features-test.tfrecord-00000-of-00001"
    records = list(read_records(shard))
    broken = parse_example(records[1])
    del broken["label"]
    records[1] = encode_example(broken)
    write_records(shard, records)
    ds = catalog.open_tfds(copy, split="test")
    assert ds[0]["label"] in (0, 1, 2) and ds[2]["label"] in (0, 1, 2)
    where = f"{shard}: record 1 (split 'test') cannot be decoded: a record has no key 'label'"
    view = where.replace("'test'", "'test[1:]'")  # a view names itself
    for read in (
        lambda: ds[1],
        lambda: ds[[0, 2, 1]],
        lambda: list(ds),
        lambda: ds[1:][0],
        lambda: list(catalog.pipeline(ds).batch(2)),
    ):
        with pytest.raises(catalog.SourceFormatError) as info:
            read()
        assert str(info.value).startswith((where, view)), str(info.value)


def test_missing_shard_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("array_record"), copy)
    (copy / "tiny_features-test.array_record-00000-of-00001").unlink()
    with pytest.raises(catalog.ShardError, match="shard 0 of split 'test'"):
        catalog.open_tfds(copy)


def test_metadata_too_large_or_unreadable_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dataset_info.json and features.json are read in bounded memory: a larger one (made so
    here by lowering the limit) is refused by name, as is one that cannot be read."""
    from catalog.interop.tfds import directory

    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    size = (copy / "dataset_info.json").stat().st_size
    monkeypatch.setattr(directory, "_MAX_JSON", size - 1)
    with pytest.raises(
        catalog.SourceFormatError, match=r"dataset_info.json: larger than 0 MiB; not TFDS metadata"
    ):
        catalog.open_tfds(copy)
    monkeypatch.setattr(directory, "_MAX_JSON", 64 << 20)
    (copy / "features.json").unlink()
    (copy / "features.json").mkdir()
    with pytest.raises(catalog.SourceFormatError, match=r"features.json: cannot read it \("):
        catalog.open_tfds(copy)


def test_catalog_dirs_are_not_taken_for_tfds_dirs(tmp_path: Path) -> None:
    assert is_tfds_dir(tfds_dir("array_record"))
    assert not is_tfds_dir(tmp_path)


@pytest.mark.parametrize("file_format", FORMATS)
def test_older_dataset_info_without_shard_lengths(tmp_path: Path, file_format: str) -> None:
    """Older TFDS versions wrote numShards and no shardLengths: the records are counted."""
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir(file_format), copy)
    info = json.loads((copy / "dataset_info.json").read_text())
    for split in info["splits"]:
        del split["shardLengths"], split["filepathTemplate"]
        split["numShards"] = "1"
    (copy / "dataset_info.json").write_text(json.dumps(info))
    ds = catalog.open_tfds(copy)
    assert {name: len(s) for name, s in ds.items()} == {"train": 6, "test": 3}
    assert ds["test"][2]["text"] == catalog.open_tfds(tfds_dir(file_format))["test"][2]["text"]


def test_decoders_hand_over_image_bytes_and_refuse_other_features() -> None:
    path = tfds_dir("array_record")
    sizes = catalog.open_tfds(path, split="train", decoders={"frames": len, "photo": len})
    example = sizes[1]
    assert isinstance(example["photo"], int) and example["photo"] > 100
    assert len(example["frames"]) == 2 and all(isinstance(n, int) for n in example["frames"])
    with pytest.raises(catalog.FeatureError, match="only Image and Text features"):
        catalog.open_tfds(path, split="train", decoders={"label": False})
    with pytest.raises(catalog.FeatureError, match="no Image or Text feature 'nope'"):
        catalog.open_tfds(path, split="train", decoders={"nope": False})


def test_a_record_missing_a_declared_key_is_reported(tmp_path: Path) -> None:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    features = json.loads((copy / "features.json").read_text())
    features["featuresDict"]["features"]["extra"] = {
        "pythonClassName": "tensorflow_datasets.core.features.text_feature.Text",
        "text": {},
    }
    (copy / "features.json").write_text(json.dumps(features))
    ds = catalog.open_tfds(copy, split="train")
    with pytest.raises(catalog.SourceFormatError, match="no key 'extra' that its features.json"):
        ds[0]

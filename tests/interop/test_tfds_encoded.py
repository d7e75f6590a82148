"""TFDS directories whose Tensors are stored as bytes (``encoding="bytes"`` / ``"zlib"``).

tests/fixtures/tf/tfds_encoded_{tfrecord,array_record}/ were prepared by TFDS 4.9.10 (TF
2.21) from one tiny builder of such tensors (`TinyEncoded` in
tests/fixtures/tf/make_fixtures.py, run as ``make_fixtures.py encoded``); expected_encoded.json
holds what TFDS decoded from them (as_dataset for TFRecord shards, as_data_source for
ArrayRecord shards). Damaged records are written here from the real ones.
"""

from __future__ import annotations

import json
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from array_record.python.array_record_module import ArrayRecordReader, ArrayRecordWriter

import catalog
from catalog.interop.tfds import encoded
from catalog.interop.tfds.codec import ExampleCodec
from catalog.interop.tfds.directory import read_tfds_info
from catalog.interop.tfds.importer import import_tfds
from catalog.interop.tfrecord import encode_example, parse_example, read_records, write_records
from catalog.storage.data_dir import data_dir_store

import tf_fixtures
from tf_fixtures import plain

FIXTURES = tf_fixtures.FIXTURES
EXPECTED = tf_fixtures.expected("expected_encoded.json")
FORMATS = tf_fixtures.FORMATS
SHARD = "tiny_encoded-train.{}-00000-of-00001"


pytestmark = pytest.mark.usefixtures("tmp_data_dir")


def tfds_dir(file_format: str) -> Path:
    return tf_fixtures.tfds_dir(EXPECTED, file_format)


def test_the_fixtures_store_tensors_as_bytes() -> None:
    """What the tests below read really is TFDS's bytes layout, both kinds, every shape."""
    features = json.loads((tfds_dir("tfrecord") / "features.json").read_text("utf-8"))
    top = features["featuresDict"]["features"]
    assert top["raw"]["tensor"]["encoding"] == "bytes"
    assert top["packed"]["tensor"]["encoding"] == "zlib"
    record = next(iter(read_records(tfds_dir("tfrecord") / SHARD.format("tfrecord"))))
    parsed = parse_example(record)
    assert isinstance(parsed["raw"], list) and len(parsed["raw"][0]) == 2 * 3 * 4
    assert zlib.decompress(parsed["packed"][0]) != parsed["packed"][0]
    assert {"grid/shape", "grid/value", "cube/shape", "cube/value"} <= set(parsed)


@pytest.mark.parametrize("file_format", FORMATS)
def test_values_equal_what_tfds_decoded(file_format: str) -> None:
    ds = catalog.open_tfds(tfds_dir(file_format))
    tf_values = EXPECTED["tfds"]["tfrecord"]["splits"]["train"]  # TF's own decoding (tf.data)
    np_values = EXPECTED["tfds"]["array_record"]["splits"]["train"]  # TFDS's NumPy path
    assert len(ds["train"]) == len(tf_values) == 5
    for i, example in enumerate(ds["train"]):
        got = plain(example)
        assert got == plain(tf_values[i]), i
        assert got == plain(np_values[i]), i


@pytest.mark.parametrize("file_format", FORMATS)
def test_dtypes_shapes_and_extremes_are_exact(file_format: str) -> None:
    ds = catalog.open_tfds(tfds_dir(file_format), split="train")
    info = read_tfds_info(tfds_dir(file_format))
    assert info.record_format["tensor_encodings"] == {
        "raw": "bytes", "packed": "zlib", "rows": "bytes", "grid": "zlib", "cube": "bytes",
        "flags": "bytes", "big": "bytes", "half": "zlib", "scalar": "bytes", "frames": "zlib",
        "steps/obs": "bytes",
    }  # fmt: skip
    f = info.features
    assert f["grid"] == catalog.Tensor((None, None), "uint16")
    assert f["scalar"] == catalog.Scalar("float64")
    for i in range(len(ds)):
        ex = ds[i]
        key = int(ex["big"][1])  # the example's key: TFDS shuffles them as it writes
        assert ex["big"].dtype == np.uint64 and ex["big"].tolist() == [2**64 - 1 - key, key]
        assert ex["half"].dtype == np.float16 and ex["flags"].dtype == np.bool_
        assert ex["scalar"].dtype == np.float64 and ex["scalar"].shape == ()
        assert ex["rows"].shape[1:] == (3,) and ex["cube"].shape[0] == 2
        assert ex["frames"].dtype == np.int32 and ex["frames"].shape[1:] == (2, 2)
        assert ex["steps"]["obs"].shape == (len(ex["steps"]["act"]), 3)
        assert ex["raw"].flags.writeable and ex["grid"].flags.writeable
    # an empty Sequence of encoded tensors keeps its element shape
    empty = [ds[i] for i in range(len(ds)) if len(ds[i]["frames"]) == 0]
    assert empty and empty[0]["frames"].shape == (0, 2, 2)


def test_import_tfds_keeps_every_value(tmp_path: Path) -> None:
    info, folder = import_tfds(tfds_dir("array_record"), data_dir_store(tmp_path / "imported"))
    assert info.record_format["name"] == "catalog-record"
    ours = catalog.data_source(folder, split="train")
    theirs = catalog.open_tfds(tfds_dir("tfrecord"), split="train")
    assert [plain(ex) for ex in ours] == [plain(ex) for ex in theirs]


def test_codec_writes_what_it_reads() -> None:
    """ExampleCodec with encodings writes TFDS's layout: TFDS's own records re-encode byte
    for byte (keys in TFDS's order), and decode to the same values."""
    info = read_tfds_info(tfds_dir("tfrecord"))
    codec = ExampleCodec(info.features, encodings=info.record_format["tensor_encodings"])
    for record in read_records(tfds_dir("tfrecord") / SHARD.format("tfrecord")):
        example = codec.decode(record)
        again = codec.decode(codec.encode(example))
        assert plain(again) == plain(example)
        assert parse_example(codec.encode(example)).keys() == parse_example(record).keys()


# -- damaged records --------------------------------------------------------------------------
def _damaged(tmp_path: Path, file_format: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the fixture directory whose record 2 went through `change` (parsed keys)."""
    copy = tmp_path / "tiny_encoded" / "1.0.0"
    shutil.copytree(tfds_dir(file_format), copy)
    shard = copy / SHARD.format(file_format)
    if file_format == "tfrecord":
        records = list(read_records(shard))
    else:
        reader = ArrayRecordReader(str(shard))
        records = [reader.read() for _ in range(reader.num_records())]
        reader.close()
    parsed = dict(parse_example(records[2]))
    change(parsed)
    records[2] = encode_example(parsed)
    if file_format == "tfrecord":
        write_records(shard, records)
    else:
        shard.unlink()
        writer = ArrayRecordWriter(str(shard), "group_size:1,zstd")
        for record in records:
            writer.write(record)
        writer.close()
    return copy


def _error(folder: Path) -> str:
    ds = catalog.open_tfds(folder, split="train")
    assert ds[1] is not None and ds[3] is not None  # the other records read
    with pytest.raises(catalog.SourceFormatError) as info:
        ds[2]
    return str(info.value)


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda parsed: parsed.__setitem__(key, value)


CASES = {
    "one byte short": (_set("raw", [b"\0" * 23]), "'raw'", "expected 24 bytes"),
    "one byte more": (_set("raw", [b"\0" * 25]), "'raw'", "expected 24 bytes"),
    "an Int64List for bytes": (_set("big", np.array([1, 2])), "'big'", "expected a BytesList"),
    "two items for one tensor": (_set("raw", [b"\0" * 24] * 2), "'raw'", "BytesList of 1"),
    "a bool byte of 2": (_set("flags", [b"\x01\x02\x00"]), "'flags'", "not a bool"),
    "rows that do not divide": (_set("rows", [b"\0" * 20]), "'rows'", "cannot fill shape"),
    "not zlib": (_set("packed", [b"not zlib at all"]), "'packed'", "not a zlib stream"),
    "zlib of too much": (
        _set("packed", [zlib.compress(b"\0" * 10_000_000)]), "'packed'", "more than the 40 bytes"
    ),
    "zlib of too little": (_set("packed", [zlib.compress(b"\0" * 39)]), "'packed'",
                           "expected 40 bytes"),
    "zlib cut short": (_set("packed", [zlib.compress(b"\0" * 40)[:-3]]), "'packed'", "cut short"),
    "a stored shape of another length": (_set("grid/shape", np.array([2, 3, 1])), "'grid'",
                                         "Int64List (int64) of 2 values"),
    "a stored shape against a known dim": (_set("cube/shape", np.array([3, 1, 1])), "'cube'",
                                           "does not fit (2, None, None)"),
    "a negative stored dim": (_set("grid/shape", np.array([-2, -3])), "'grid'", "negative"),
    "a huge stored shape": (_set("cube/shape", np.array([2, 2**40, 2**40])), "'cube'",
                            "expected 2417851639229258349412352 bytes"),
    "a Sequence element too short": (
        _set("frames", [zlib.compress(b"\0" * 16), zlib.compress(b"\0" * 15)]), "'frames'",
        "expected 16 bytes"
    ),
}  # fmt: skip


@pytest.mark.parametrize("file_format", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_record_is_named(case: str, file_format: str, tmp_path: Path) -> None:
    change, feature, reason = CASES[case]
    folder = _damaged(tmp_path, file_format, change)
    message = _error(folder)
    shard = folder / SHARD.format(file_format)
    assert message.startswith(f"{shard}: record 2 (split 'train') cannot be decoded"), message
    assert f"feature {feature}" in message and reason in message, message


def test_an_open_sized_zlib_stream_is_inflated_no_further_than_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Tensor((None, 3)) in zlib: its size is open, so inflating stops at MAX_INFLATED."""
    monkeypatch.setattr(encoded, "MAX_INFLATED", 1000)
    feature = catalog.FeaturesDict({"rows": catalog.Tensor((None, 3), "int64")})
    codec = ExampleCodec(feature, encodings={"rows": "zlib"})
    fits = np.arange(41 * 3).reshape(41, 3)  # 984 bytes
    assert codec.decode(codec.encode({"rows": fits}))["rows"].tolist() == fits.tolist()
    record = encode_example({"rows": [zlib.compress(b"\0" * 10**7)]})
    with pytest.raises(catalog.SourceFormatError, match="'rows'.*more than 1000 bytes"):
        codec.decode(record)


def _features(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder / "features.json"
    data = json.loads(path.read_text("utf-8"))
    change(data["featuresDict"]["features"])
    path.write_text(json.dumps(data))


def test_an_unknown_encoding_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "tiny_encoded" / "1.0.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    _features(copy, lambda f: f["raw"]["tensor"].__setitem__("encoding", "gzip"))
    with pytest.raises(catalog.SourceFormatError, match=r"feature 'raw'.*encoding 'gzip'"):
        catalog.open_tfds(copy)
    _features(copy, lambda f: f["raw"]["tensor"].__setitem__("encoding", "ZLIB"))  # any case
    with pytest.raises(catalog.SourceFormatError, match="'raw'.*not a zlib stream"):
        catalog.open_tfds(copy, split="train")[0]


def test_encoded_tensors_catalog_cannot_read_back_are_refused_by_name(tmp_path: Path) -> None:
    copy = tmp_path / "tiny_encoded" / "1.0.0"
    shutil.copytree(tfds_dir("tfrecord"), copy)
    features = json.loads((copy / "features.json").read_text("utf-8"))["featuresDict"]
    sequence = features["features"]["frames"]  # Sequence(Tensor((2, 2), int32, zlib))
    tensor = sequence["sequence"]["feature"]

    def in_sequence(feature: dict[str, Any]) -> dict[str, Any]:
        return {**sequence, "sequence": {"feature": feature, "length": "-1"}}

    dynamic = {**tensor, "tensor": {**tensor["tensor"], "shape": {"dimensions": ["-1", "-1"]}}}
    _features(copy, lambda f: f.__setitem__("frames", in_sequence(in_sequence(tensor))))
    with pytest.raises(catalog.SpecError, match="feature 'frames'.*nested Sequences"):
        catalog.open_tfds(copy)
    _features(copy, lambda f: f.__setitem__("frames", in_sequence(dynamic)))
    with pytest.raises(catalog.SpecError, match=r"feature 'frames'.*\(None, None\).*a Sequence"):
        catalog.open_tfds(copy)
    _features(copy, lambda f: f.__setitem__("frames", dynamic))
    catalog.open_tfds(copy)  # alone, (None, None) is read (with its stored shape)

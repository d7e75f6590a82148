"""Records that disagree with their declared features, in a TFDS directory and in TFRecord
files a builder reads (the ``tfrecord`` source format).

Each case copies the real TFDS fixture directory (tests/fixtures/tf/, written by TFDS), changes
one record of its test shard with catalog's own Example writer, and checks that every way of
reading it (ds[i], a batch, iteration, `import_tfds`) raises one SourceFormatError naming the
shard file, the record and the feature, without allocating what the record's values claim,
while the healthy records around it still read.
"""

from __future__ import annotations

import gc
import io
import json
import shutil
import struct
import sys
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text
from catalog.formats import FORMATS
from catalog.formats.base import Source
from catalog.interop.tfds.importer import import_tfds
from catalog.interop.tfrecord import encode_example, parse_example, read_records, write_records
from catalog.interop.tfrecord.index import IndexedReader
from catalog.storage.data_dir import data_dir_store

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf" / "tfds_tfrecord"
SOURCE = FIXTURE / "tiny_features" / "1.2.0"
SHARD = "tiny_features-test.tfrecord-00000-of-00001"
MiB = 1 << 20

Parsed = dict[str, Any]


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CATALOG_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def png(shape: tuple[int, int, int], noise: bool = False) -> bytes:
    out = io.BytesIO()
    pixels = np.full(shape, 9, np.uint8)
    if noise:  # random pixels: a file whose pixel data a cut always damages
        pixels = np.random.default_rng(0).integers(0, 256, shape, np.uint8)
    PILImage.fromarray(pixels[:, :, 0] if shape[2] == 1 else pixels).save(out, "PNG")
    return out.getvalue()


def png_claiming(height: int, width: int) -> bytes:
    """A small PNG whose IHDR (CRC fixed) claims `height` x `width` pixels."""
    data = bytearray(png((2, 2, 1)))
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def changed(tmp_path: Path, change: Callable[[Parsed], None], index: int = 1) -> Path:
    """A copy of the TFDS fixture whose test record `index` went through `change`."""
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(SOURCE, copy)
    shard = copy / SHARD
    records = list(read_records(shard))
    parsed = parse_example(records[index])
    change(parsed)
    records[index] = encode_example(parsed)
    write_records(shard, records)
    return copy


def setter(key: str, value: Any) -> Callable[[Parsed], None]:
    return lambda parsed: parsed.__setitem__(key, value)


def assert_refused(copy: Path, feature: str, words: str, tmp_path: Path, index: int = 1) -> None:
    """Every read of record `index` is one SourceFormatError naming the shard file, the
    record, the feature and `words`; the other records still read; importing stops on it."""
    ds = catalog.open_tfds(copy, split="test")
    where = f"{copy / SHARD}: record {index} (split 'test') cannot be decoded"
    for read in (lambda: ds[index], lambda: ds[[0, index]], lambda: list(ds)):
        with pytest.raises(SourceFormatError) as caught:
            read()
        message = str(caught.value)
        assert message.startswith(where), message
        assert f"feature {feature!r}" in message and words in message, message
        assert "\n" not in message
    assert isinstance(ds[0], dict) and isinstance(ds[2], dict)
    with pytest.raises(SourceFormatError) as caught:
        import_tfds(copy, data_dir_store(tmp_path / "imported"))
    assert f"{copy / SHARD}: record {index}" in str(caught.value)
    assert f"feature {feature!r}" in str(caught.value)
    assert not (tmp_path / "imported" / "tiny_features" / "1.2.0").exists()


# -- one feature, the wrong list -----------------------------------------------------------
CASES = [
    # ClassLabel: a FloatList is not a class index (it came back as 3 from 3.7)
    ("label", np.array([3.7], np.float32), "label", "got a FloatList of 1 value (3.7"),
    ("label", np.array([1.0], np.float32), "label", "expected an Int64List of class indices"),
    ("label", np.array([1, 2], np.int64), "label", "of 1 value, got an Int64List of 2"),
    ("label", [b"dog"], "label", "got a BytesList"),
    # ClassLabel: out of range, by the feature's own check
    ("label", np.array([3], np.int64), "label", "label 3 is out of range: expected 0..2"),
    ("label", np.array([-1], np.int64), "label", "label -1 is out of range"),
    ("label", np.array([1 << 62], np.int64), "label", "out of range"),
    # Text: an Int64List is no text (it became N NUL characters)
    ("text", np.array([30], np.int64), "text", "expected a BytesList, got an Int64List"),
    ("meta/name", np.array([1.5], np.float32), "meta/name", "got a FloatList"),
    # Image: an Int64List is no image file
    ("image", np.array([600_000_000], np.int64), "image", "expected a BytesList"),
    ("image", [png((8, 8, 3)), png((8, 8, 3))], "image", "of 1 value, got a BytesList of 2"),
    ("image", [b"\x89PNG\r\n\x1a\n but garbage"], "image", "not an image file Pillow can read"),
    ("image", [b"not an image at all"], "image", "not an image file Pillow can read"),
    ("image", [png((16, 4, 3))], "image", "expected shape (8, 8, 3), got a PNG image of 16x4"),
    ("image", [png((8, 8, 4))], "image", "got a PNG image in mode RGBA"),
    ("image", [png((8, 8, 3), noise=True)[:120]], "image", "a damaged PNG file"),
    ("mask", [png_claiming(100_000, 100_000)], "mask", "a decompression bomb"),
    ("mask", [png((5, 5, 3))], "mask", "expected 1 channel(s)"),
    # Scalar, Tensor: kind, count, range
    ("small", np.array([1 << 40], np.int64), "small", "does not fit int32"),
    ("small", np.array([1.5], np.float32), "small", "expected an Int64List (int32)"),
    ("flag", np.array([2], np.int64), "flag", "does not fit bool"),
    ("score", np.array([1], np.int64), "score", "expected a FloatList (float64)"),
    ("meta/id", np.array([], np.int64), "meta/id", "of 1 value, got an Int64List of 0"),
    ("tensor", np.zeros(5, np.float32), "tensor", "expected 6 values for shape (2, 3)"),
    ("tensor", np.zeros(6, np.int64), "tensor", "expected a FloatList (float32)"),
    ("counts", np.zeros(3, np.float32), "counts", "expected an Int64List (int64)"),
    ("bbox", np.array([0.5, 0.2, 0.1, 0.75], np.float32), "bbox", "is not ordered"),
    ("bbox", np.array([0.1, 0.2, 1.5, 0.75], np.float32), "bbox", "is not normalised"),
    ("bbox", np.zeros(3, np.float32), "bbox", "expected 4 values for shape (4,)"),
    # Sequences: declared lengths, element checks, ragged row lengths
    ("frames", [png((4, 4, 1))] * 3, "frames", "a BytesList of 2 values, got a BytesList of 3"),
    ("frames", [png((4, 4, 1)), png((5, 4, 1))], "frames", "expected shape (4, 4, 1)"),
    ("frames", np.array([1, 2], np.int64), "frames", "expected a BytesList"),
    ("words", np.array([7], np.int64), "words", "expected a BytesList"),
    ("tokens", np.array([0.5], np.float32), "tokens", "expected an Int64List (int64)"),
    ("objects/kind", np.array([0, 5, 0], np.int64), "objects/kind", "label 5 is out of range"),
    ("objects/kind", np.array([0, 1], np.int64), "objects", "different numbers of elements"),
    ("objects/bbox", np.zeros(10, np.float32), "objects/bbox", "10 values cannot fill shape"),
    ("ragged/ragged_row_lengths_0", np.array([3, 1, 1], np.int64), "ragged", "add up to 5"),
    ("ragged/ragged_row_lengths_0", np.array([5, -1, 0], np.int64), "ragged", "negative"),
    ("ragged/ragged_flat_values", np.array([1.5] * 4, np.float32), "ragged", "Int64List"),
]


@pytest.mark.parametrize(("key", "value", "feature", "words"), CASES)
def test_a_record_that_does_not_fit_its_feature_is_refused(
    tmp_path: Path, key: str, value: Any, feature: str, words: str
) -> None:
    assert_refused(changed(tmp_path, setter(key, value)), feature, words, tmp_path)


def test_a_jpeg_claiming_too_many_pixels_is_refused_before_decoding(tmp_path: Path) -> None:
    def bomb(parsed: Parsed) -> None:
        data = bytearray(parsed["photo"][0])
        sof = data.index(b"\xff\xc0")
        data[sof + 5 : sof + 9] = struct.pack(">HH", 60_000, 60_000)
        parsed["photo"] = [bytes(data)]

    assert_refused(changed(tmp_path, bomb), "photo", "a decompression bomb", tmp_path)


@pytest.mark.parametrize(
    ("key", "value"),
    [("image", np.array([600_000_000], np.int64)), ("text", np.array([1 << 62], np.int64))],
)
def test_a_huge_number_where_bytes_belong_allocates_nothing(
    tmp_path: Path, key: str, value: Any
) -> None:
    """bytes(600000000) was 572 MiB of NULs for one 30-byte record; 2**62 a MemoryError."""
    ds = catalog.open_tfds(changed(tmp_path, setter(key, value)), split="test")
    ds[0]  # readers, index and Pillow loaded before measuring
    tracemalloc.start()
    try:
        with pytest.raises(SourceFormatError, match=f"feature '{key}': expected a BytesList"):
            ds[1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MiB, peak


def test_handed_over_bytes_are_checked_too(tmp_path: Path) -> None:
    """decoders={"image": False} returns an image's stored bytes, but only bytes of an image
    of the declared shape (what import carries over), never an int turned into NULs."""
    for value, words in [
        (np.array([40], np.int64), "expected a BytesList"),
        ([png((56, 14, 3))], "expected shape (8, 8, 3), got a PNG image of 56x14"),
    ]:
        folder = tmp_path / str(len(words))
        copy = changed(folder, setter("image", value))
        ds = catalog.open_tfds(copy, split="test", decoders={"image": False})
        assert isinstance(ds[0]["image"], bytes)
        with pytest.raises(SourceFormatError, match=r"record 1 .*feature 'image'") as caught:
            ds[1]
        assert words in str(caught.value)
        custom = catalog.open_tfds(copy, split="test", decoders={"image": len})
        with pytest.raises(SourceFormatError, match=words.replace("(", r"\(").replace(")", r"\)")):
            custom[1]


def test_the_fixture_itself_still_decodes_and_imports(tmp_path: Path) -> None:
    ds = catalog.open_tfds(SOURCE)
    assert [len(list(s)) for s in ds.values()] == [6, 3]
    _, target = import_tfds(SOURCE, data_dir_store(tmp_path / "imported"))
    assert catalog.data_source(target, split="test")[1]["label"] == ds["test"][1]["label"]


def test_text_that_is_not_utf8_reads_and_imports_as_its_bytes(tmp_path: Path) -> None:
    """TFDS's Text keeps any bytes (rockyou.txt's passwords) and its data source gives them
    back: so does catalog's reader of a TFDS directory, and an import keeps them."""
    copy = changed(tmp_path, setter("text", [b"\xff\xfe"]))
    ds = catalog.open_tfds(copy, split="test")
    assert ds[1]["text"] == b"\xff\xfe"
    _, target = import_tfds(copy, data_dir_store(tmp_path / "imported"))
    assert catalog.data_source(target, split="test")[1]["text"] == b"\xff\xfe"


# -- dataset_info.json -------------------------------------------------------------------
def with_info(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(SOURCE, copy)
    data = json.loads((copy / "dataset_info.json").read_text())
    change(data)
    (copy / "dataset_info.json").write_text(json.dumps(data))
    return copy


@pytest.mark.parametrize(
    ("lengths", "words"),
    [
        (["-5"], "shardLengths[0] is '-5'; expected a count"),
        (["abc"], "shardLengths[0] is 'abc'; expected a count"),
        (["1e30"], "shardLengths[0] is '1e30'; expected a count"),
        ([3.0], "shardLengths[0] is 3.0; expected a count"),
        (["99999999999999999999"], "expected a count"),
        (["9223372036854775807"], "room for at most"),
        ("3", "shardLengths is '3'; expected a list of counts"),
    ],
)
def test_shard_lengths_that_are_not_counts_are_refused(
    tmp_path: Path, lengths: Any, words: str
) -> None:
    copy = with_info(tmp_path, lambda d: d["splits"][1].__setitem__("shardLengths", lengths))
    with pytest.raises(SourceFormatError) as caught:
        catalog.open_tfds(copy)
    assert str(caught.value).startswith(f"{copy / 'dataset_info.json'}: ")
    assert words in str(caught.value)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("splits", {"train": 6}),
        lambda d: d["splits"].append("test"),
        lambda d: d["splits"][0].pop("name"),
        lambda d: d["splits"][1].__setitem__("name", "train"),
        lambda d: d.__setitem__("location", ["https://example.org"]),
        lambda d: (
            d["splits"][0].__setitem__("numShards", "-1") or d["splits"][0].pop("shardLengths")
        ),
    ],
)
def test_malformed_splits_and_metadata_are_refused(
    tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> None:
    copy = with_info(tmp_path, change)
    with pytest.raises(SourceFormatError, match="dataset_info.json: "):
        catalog.open_tfds(copy)


def test_a_dataset_info_json_that_is_not_json_is_said_to_be(tmp_path: Path) -> None:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(SOURCE, copy)
    (copy / "dataset_info.json").write_text('{"name": "tiny_features", "splits": [')
    for read in (catalog.open_tfds, catalog.data_source):
        with pytest.raises(SourceFormatError, match=r"dataset_info.json: not valid JSON"):
            read(copy)


def test_a_features_json_that_does_not_describe_features_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "tiny" / "1.2.0"
    shutil.copytree(SOURCE, copy)
    features = json.loads((copy / "features.json").read_text())
    features["featuresDict"]["features"]["image"]["image"]["shape"]["dimensions"] = ["x"]
    (copy / "features.json").write_text(json.dumps(features))
    with pytest.raises(SourceFormatError, match=r"features.json: feature 'image': cannot map"):
        catalog.open_tfds(copy)


# -- TFRecord files of the `tfrecord` source format ---------------------------------------
FEATURES = FeaturesDict(
    {
        "label": ClassLabel(names=["a", "b", "c", "d"]),
        "caption": Text(),
        "image": Image((None, None, 3), encoding="png"),
        "size": Scalar("int32"),
        "values": Tensor((2,), "float32"),
        "tags": Sequence(Text()),
    }
)
GOOD = {
    "label": [1],
    "caption": [b"hi"],
    "image": [png((5, 4, 3))],
    "size": [3],
    "values": np.array([0.5, 1.5], np.float32),
    "tags": [b"x", b"y"],
}


def tfrecord_examples(tmp_path: Path, **changes: Any) -> list[tuple[str, Any]]:
    path = tmp_path / "x.tfrecord"
    write_records(path, [encode_example(GOOD), encode_example({**GOOD, **changes})])
    options = {"keys": {k: k for k in FEATURES}, "shapes": {}, "compression": "auto"}
    source = Source("train", {"records": (path,)}, options, FEATURES)
    return list(FORMATS["tfrecord"].examples(source))


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("label", np.array([3.7], np.float32), "got a FloatList of 1 value (3.7"),
        ("label", np.array([4], np.int64), "label 4 is out of range: expected 0..3"),
        ("caption", np.array([1 << 62], np.int64), "expected a BytesList, got an Int64List"),
        ("image", np.array([600_000_000], np.int64), "expected a BytesList, got an Int64List"),
        ("image", [png_claiming(100_000, 100_000)], "a decompression bomb"),
        ("size", np.array([2.5], np.float32), "expected an Int64List (int32)"),
        ("size", np.array([1 << 40], np.int64), "does not fit int32"),
        ("values", np.array([1, 2, 3], np.int64), "expected 2 values for shape (2,)"),
        ("tags", np.array([5], np.int64), "expected a BytesList"),
    ],
)
def test_the_tfrecord_source_format_checks_each_list(
    tmp_path: Path, key: str, value: Any, words: str
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(SourceFormatError) as caught:
            tfrecord_examples(tmp_path, **{key: value})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'x.tfrecord'}: record 1: key {key!r}"), message
    assert f"feature {key!r}" in message and words in message, message
    assert peak < 8 * MiB, peak


def test_the_tfrecord_source_format_keeps_good_records(tmp_path: Path) -> None:
    [(_, first), (_, second)] = tfrecord_examples(tmp_path, label=[b"d"])
    assert first["label"] == 1 and second["label"] == "d" and second["tags"] == ["x", "y"]
    assert FEATURES.encode(first) and FEATURES.encode(second)


# -- the TFRecord index --------------------------------------------------------------------
def test_a_reader_that_fails_to_open_leaves_no_exception_for_its_destructor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`catalog import` printed "Exception ignored in IndexedReader.__del__" after the real
    error: a reader whose file failed to index had no file descriptor to close."""
    path = tmp_path / "cut.tfrecord"
    write_records(path, [b"a" * 100])
    path.write_bytes(path.read_bytes()[:50])
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with pytest.raises(SourceFormatError, match="cut.tfrecord"):
        IndexedReader(path, tmp_path / "index")
    gc.collect()
    assert unraisable == []

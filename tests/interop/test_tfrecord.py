"""TFRecord framing and tf.train.Example codec, against files TensorFlow itself wrote.

The fixtures in tests/fixtures/tf/ come from tests/fixtures/tf/make_fixtures.py (TensorFlow
2.21), with the values TF decoded from them in expected.json.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.errors import SourceFormatError
from catalog.interop.tfrecord import (
    IndexedReader,
    TFRecordWriter,
    crc,
    encode_example,
    encode_sequence_example,
    parse_example,
    parse_sequence_example,
    read_records,
    record_offsets,
    write_records,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text("utf-8"))
MNIST = FIXTURES / "fashion_mnist_style.tfrecord"


def _digest(array: np.ndarray) -> dict[str, object]:
    return {
        "shape": list(array.shape),
        "dtype": str(array.dtype),
        "sha256": hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest(),
    }


def test_crc32c_known_values_in_every_implementation() -> None:
    assert crc.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc._pure_crc32c(b"123456789") == 0xE3069283
    data = bytes(range(256)) * 3
    assert crc._pure_crc32c(data) == crc.crc32c(data)
    assert crc.IMPLEMENTATION != "python"  # the C implementation is a dependency


@pytest.mark.parametrize(
    "name", ["fashion_mnist_style.tfrecord", "fashion_mnist_style.tfrecord.gz"]
)
def test_reads_fashion_mnist_style_records_as_tf_does(name: str) -> None:
    got = []
    for record in read_records(FIXTURES / name):
        ex = parse_example(record)
        shape = [int(ex[k][0]) for k in ("height", "width", "depth")]
        image = np.frombuffer(ex["image_raw"][0], np.uint8).reshape(shape)
        got.append({"image": _digest(image), "label": int(ex["label"][0]), "shape": shape})
    assert got == EXPECTED["fashion_mnist_style"]["examples"]


def test_sequence_examples_decode_as_tf_does() -> None:
    got = []
    for record in read_records(FIXTURES / "sequence_examples.tfrecord"):
        context, lists = parse_sequence_example(record)
        got.append(
            {
                "id": context["id"][0].decode(),
                "length": int(context["length"][0]),
                "tokens": [int(step[0]) for step in lists["tokens"]],
                "frames": [step.tolist() for step in lists["frames"]],
                "words": [[w.decode() for w in step] for step in lists["words"]],
            }
        )
    assert got == EXPECTED["sequence_examples"]["examples"]
    assert any(t < 0 for ex in got for t in ex["tokens"])  # negative int64 varints


def test_encoding_reproduces_tf_bytes() -> None:
    """Our Example and SequenceExample encodings are byte-for-byte what TF serialized."""
    for record in read_records(MNIST):
        ex = parse_example(record)
        assert parse_example(encode_example(ex)).keys() == ex.keys()
        again = parse_example(encode_example(ex))
        assert all(np.array_equal(np.asarray(again[k]), np.asarray(ex[k])) for k in ex)
    for record in read_records(FIXTURES / "sequence_examples.tfrecord"):
        context, lists = parse_sequence_example(record)
        assert encode_sequence_example(context, lists) == record


def test_writer_output_is_read_back_and_gzip_is_detected(tmp_path: Path) -> None:
    records = list(read_records(MNIST))
    assert write_records(tmp_path / "plain.tfrecord", records) == len(records)
    assert (tmp_path / "plain.tfrecord").read_bytes() == MNIST.read_bytes()
    write_records(tmp_path / "z.tfrecord", records, compression="gzip")
    assert gzip.decompress((tmp_path / "z.tfrecord").read_bytes()) == MNIST.read_bytes()
    assert list(read_records(tmp_path / "z.tfrecord")) == records


def test_writer_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    target = tmp_path / "out.tfrecord"

    def write_then_fail() -> None:
        with TFRecordWriter(target) as writer:
            writer.write(b"one")
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_then_fail()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_written_files_get_the_permissions_the_umask_gives(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        write_records(tmp_path / "a.tfrecord", [b"x"])
    finally:
        os.umask(old)
    assert (tmp_path / "a.tfrecord").stat().st_mode & 0o777 == 0o666 & ~umask


def test_corrupt_data_is_named_by_file_record_and_offset(tmp_path: Path) -> None:
    data = bytearray(MNIST.read_bytes())
    first = 16 + int.from_bytes(data[:8], "little")
    data[first + 12 + 100] ^= 0xFF  # a byte of record 1's data
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(SourceFormatError, match=rf"bad.tfrecord: record 1 \(byte offset {first}\)"):
        list(read_records(bad))
    assert len(list(read_records(bad, verify=False))) == 20
    reader = IndexedReader(bad, tmp_path / "index")
    reader.read(0, 1)
    with pytest.raises(SourceFormatError, match="data checksum mismatch"):
        reader.read(1, 2)


def test_truncated_and_foreign_files_are_refused(tmp_path: Path) -> None:
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(MNIST.read_bytes()[:-3])
    with pytest.raises(SourceFormatError, match="record 19 .*truncated"):
        list(read_records(cut))
    text = tmp_path / "notes.tfrecord"
    text.write_bytes(b"this is not a tfrecord file at all")
    with pytest.raises(SourceFormatError, match="length checksum mismatch"):
        list(read_records(text))
    with pytest.raises(SourceFormatError, match="GZIP-compressed TFRecord file cannot be read"):
        record_offsets(FIXTURES / "fashion_mnist_style.tfrecord.gz", tmp_path)


def test_malformed_example_is_refused() -> None:
    good = next(read_records(MNIST))
    with pytest.raises(SourceFormatError, match="not a serialized tf.train.Example"):
        parse_example(good[:-5])


def test_indexed_reader_random_access_and_cached_index(tmp_path: Path) -> None:
    records = list(read_records(MNIST))
    index_dir = tmp_path / "index"
    before = sorted(p.name for p in FIXTURES.iterdir())
    reader = IndexedReader(MNIST, index_dir)
    assert len(reader) == 20
    for i in (7, 0, 19, 3):
        reader.seek(i)
        assert reader.read() == records[i]
    assert reader.read(5, 9) == records[5:9]
    stored = list(index_dir.iterdir())
    assert len(stored) == 1 and stored[0].suffix == ".npy"
    assert sorted(p.name for p in FIXTURES.iterdir()) == before  # nothing beside the data
    np.testing.assert_array_equal(np.load(stored[0]), record_offsets(MNIST, index_dir))
    reader.close()


def test_index_is_rebuilt_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "data.tfrecord"
    write_records(path, [b"a", b"bb"])
    assert len(record_offsets(path, tmp_path / "ix")) == 3
    write_records(path, [b"a", b"bb", b"ccc", b"dddd"])
    assert len(record_offsets(path, tmp_path / "ix")) == 5
    assert len(list((tmp_path / "ix").iterdir())) == 1  # the stale index was removed


def test_empty_and_typed_lists_round_trip() -> None:
    data = encode_example(
        {
            "none": np.array([], np.int64),
            "floats": np.array([], np.float32),
            "names": np.array([], "S"),
            "big": np.array([2**62, -1, 0, 300] * 10, np.int64),
            "text": "héllo",
        }
    )
    ex = parse_example(data)
    assert ex["none"].dtype == np.int64 and ex["none"].size == 0
    assert ex["floats"].dtype == np.float32 and ex["floats"].size == 0
    assert ex["names"] == []
    assert ex["big"].tolist() == [2**62, -1, 0, 300] * 10
    assert ex["text"] == ["héllo".encode()]
    with pytest.raises(TypeError, match="typed NumPy array"):
        encode_example({"x": []})


def test_empty_lists_and_entries_in_every_position() -> None:
    """Empty lists first, last and alone decode as empty (no read past their end)."""
    for features in (
        {"a": np.array([], "S")},
        {"a": np.array([], "S"), "b": [b"x"]},
        {"b": [b"x"], "a": np.array([], "S")},
        {"i": np.array([], np.int64), "f": np.array([], np.float32)},
    ):
        parsed = parse_example(encode_example(features))
        assert {k: list(v) for k, v in parsed.items()} == {
            k: [bytes(x) if isinstance(x, bytes) else x for x in v] for k, v in features.items()
        }


_values = st.one_of(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60).map(
        lambda v: np.array(v, np.int64)
    ),
    st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=30).map(
        lambda v: np.array(v, np.float32)
    ),
    st.lists(st.binary(max_size=200), min_size=1, max_size=5),
)


@given(st.dictionaries(st.text(min_size=1, max_size=20), _values, max_size=8))
def test_example_round_trip(features: dict[str, object]) -> None:
    """Any Int64/Float/BytesList values survive encode -> parse (long packed int64 lists take
    the vectorized varint path, negative values the 10-byte form)."""
    parsed = parse_example(encode_example(features))
    assert parsed.keys() == features.keys()
    for key, value in features.items():
        if isinstance(value, np.ndarray):
            assert parsed[key].dtype == value.dtype  # type: ignore[union-attr]
            np.testing.assert_array_equal(parsed[key], value)
        else:
            assert parsed[key] == value

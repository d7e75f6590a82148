"""uint64 and uint32 features TFDS stored in Int64Lists, read back exactly.

tests/fixtures/tf/tfds_unsigned_{tfrecord,array_record}/ were prepared by TFDS 4.9.10 (TF
2.21) from `TinyUnsigned` in tests/fixtures/tf/make_fixtures.py (run as ``make_fixtures.py
unsigned``): TFDS bitcasts a uint64 to int64 as it writes, so values from 2**63 up are stored
as negative int64s; expected_unsigned.json holds what TFDS decoded from them.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import catalog
import catalog.interop.tfds.directory
from catalog.interop.tfrecord import checked, parse_example, read_records

import tf_fixtures
from tf_fixtures import plain

FIXTURES = tf_fixtures.FIXTURES
EXPECTED = tf_fixtures.expected("expected_unsigned.json")
FORMATS = tf_fixtures.FORMATS


pytestmark = pytest.mark.usefixtures("tmp_data_dir")


def tfds_dir(file_format: str) -> Path:
    return tf_fixtures.tfds_dir(EXPECTED, file_format)


def test_the_fixture_stores_big_uint64s_as_negative_int64s() -> None:
    shard = tfds_dir("tfrecord") / "tiny_unsigned-train.tfrecord-00000-of-00001"
    ids = [int(parse_example(r)["id"][0]) for r in read_records(shard)]
    assert min(ids) < 0 and all(v >= -5 for v in ids)  # 2**64 - 1 - i stored as -1 - i


@pytest.mark.parametrize("file_format", FORMATS)
def test_values_equal_what_tfds_decoded(file_format: str) -> None:
    ds = catalog.open_tfds(tfds_dir(file_format), split="train")
    expected = EXPECTED["tfds"][file_format]["splits"]["train"]
    assert len(ds) == len(expected) == 5
    for i, example in enumerate(ds):
        assert plain(example) == plain(expected[i]), i
        assert np.asarray(example["id"]).dtype == np.uint64
        assert example["pair"].dtype == np.uint64 and example["counts"].dtype == np.uint32
        assert example["id"] >= 2**64 - 5 and example["pair"][0] >= 2**63 - 4


@pytest.mark.parametrize(
    ("values", "dtype", "want"),
    [
        ([-1, -(2**63), 2**63 - 1], "uint64", [2**64 - 1, 2**63, 2**63 - 1]),
        ([-1, -(2**31), 2**32 - 1], "uint32", [2**32 - 1, 2**31, 2**32 - 1]),
        ([0, 2**31 - 1], "int32", [0, 2**31 - 1]),
    ],
)
def test_unsigned_ints_are_reinterpreted_as_tf_stores_them(
    values: list[int], dtype: str, want: list[int]
) -> None:
    got = checked.as_dtype(np.array(values, np.int64), np.dtype(dtype))
    assert got.dtype == np.dtype(dtype) and got.tolist() == want


@pytest.mark.parametrize(
    ("value", "dtype", "message"),
    [
        (2**32, "uint32", "value 4294967296 does not fit uint32 (0..4294967295, or "
                          "-2147483648..-1 as its 32 bits)"),
        (-(2**31) - 1, "uint32", "value -2147483649 does not fit uint32"),
        (256, "uint8", "value 256 does not fit uint8 (0..255)"),
        (-1, "uint16", "value -1 does not fit uint16 (0..65535)"),
        (2**31, "int32", "value 2147483648 does not fit int32 (-2147483648..2147483647)"),
        (2, "bool", "value 2 does not fit bool (0..1)"),
    ],
)  # fmt: skip
def test_what_cannot_fit_is_refused_with_its_dtypes_range(
    value: int, dtype: str, message: str
) -> None:
    with pytest.raises(checked.Mismatch, match=re.escape(message)):
        checked.as_dtype(np.array([0, value], np.int64), np.dtype(dtype))


def test_dict_supervised_keys_go_to_tfds_and_back() -> None:
    """TFDS's ``SupervisedKeys.Nest`` of a dict (titanic's input), written and read back."""
    from catalog.interop.tfds.directory import _supervised_keys
    from catalog.interop.tfds.export import _tfds_info

    info = catalog.interop.tfds.directory.read_tfds_info(tfds_dir("tfrecord"))
    keyed = dataclasses.replace(info, supervised_keys=({"ids": "ids", "n": "count"}, "label"))
    data = _tfds_info(keyed, {"train": (5, 1)})
    assert data["supervisedKeys"]["tuple"]["items"] == [
        {"dict": {"dict": {"ids": {"featureKey": "ids"}, "n": {"featureKey": "count"}}}},
        {"featureKey": "label"},
    ]
    assert _supervised_keys(data) == ({"ids": "ids", "n": "count"}, "label")


@pytest.mark.parametrize("file_format", FORMATS)
def test_exported_again_the_big_values_survive(file_format: str, tmp_path: Path) -> None:
    """catalog's TFDS export stores a uint64 bitcast, as TFDS does: read back, the same."""
    from catalog.interop.tfds.export import export

    ds = catalog.open_tfds(tfds_dir(file_format), split="train")
    export(ds.info, tfds_dir(file_format), tmp_path / "out", format="tfds")
    [version] = list((tmp_path / "out").glob("*/*"))
    back = catalog.open_tfds(version, split="train")
    assert [plain(e) for e in back] == [plain(e) for e in ds]

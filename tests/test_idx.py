"""The IDX reader checks the header against the data instead of trusting it."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.formats.idx import examples, read_idx
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx


def test_plain_and_gzipped_files(tmp_path: Path) -> None:
    images = pattern_images(3, 4, 5)
    for compress in (True, False):
        path = write_idx(tmp_path / f"x{compress}", images, compress=compress)
        np.testing.assert_array_equal(read_idx(path), images)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x01\x02\x08\x01", "not an IDX file"),
        (b"", "not an IDX file"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x00", "unknown IDX type code 0x07"),
        (b"\x00\x00\x08\x02\x00\x00", "header is cut short"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x05abc", r"header says shape \(5,\).*holds 11 bytes"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x02abc", "truncated or not what it claims"),
        (b"\x1f\x8b\x08\x00garbage", "not a valid gzip file"),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad-idx"
    path.write_bytes(data)
    with pytest.raises(SourceFormatError, match=message) as info:
        read_idx(path)
    assert str(path) in str(info.value)


def test_images_and_labels_must_agree(tmp_path: Path) -> None:
    images = write_idx(tmp_path / "i.gz", pattern_images(4))
    labels = write_idx(tmp_path / "l.gz", pattern_labels(3))
    with pytest.raises(SourceFormatError, match="holds 4 images but .* holds 3 labels"):
        list(examples({"images": images, "labels": labels}))


def test_truncated_gzip_member(tmp_path: Path) -> None:
    path = tmp_path / "cut.gz"
    path.write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x02ab")[:-6])
    with pytest.raises(SourceFormatError, match="not a valid gzip file"):
        read_idx(path)

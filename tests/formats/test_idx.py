"""The IDX reader checks the header against the data instead of trusting it."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.formats.arrays.idx import examples, read_idx
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


def test_examples_stream_the_images_in_bounded_memory(tmp_path: Path) -> None:
    import tracemalloc

    count = 20_000  # 15 MiB of pixels; the reader holds about 1 MiB of them at a time
    images = write_idx(tmp_path / "i.gz", pattern_images(count))
    labels = write_idx(tmp_path / "l.gz", pattern_labels(count))
    tracemalloc.start()
    try:
        seen = 0
        for key, example in examples({"images": images, "labels": labels}):
            assert example["image"].shape == (28, 28) and key == str(seen)
            seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == count
    assert peak < count * 28 * 28 / 4, peak  # reading it whole held 2x the pixels


def test_images_read_in_chunks_are_the_right_ones(tmp_path: Path) -> None:
    expected = pattern_images(3000)  # several chunks of 1 MiB
    got = examples({"images": write_idx(tmp_path / "i.gz", expected),
                    "labels": write_idx(tmp_path / "l.gz", pattern_labels(3000))})  # fmt: skip
    for i, (_, example) in enumerate(got):
        np.testing.assert_array_equal(example["image"], expected[i])


def test_corruption_midway_through_a_gzip_stream_is_named(tmp_path: Path) -> None:
    path = write_idx(
        tmp_path / "i.gz", np.random.default_rng(0).integers(0, 255, (500, 28, 28), np.uint8)
    )
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    labels = write_idx(tmp_path / "l.gz", pattern_labels(500))
    with pytest.raises(SourceFormatError, match="not a valid gzip file") as info:
        list(examples({"images": path, "labels": labels}))
    assert str(path) in str(info.value)

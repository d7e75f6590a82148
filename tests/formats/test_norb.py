"""The norb source format on its own: NORB binary matrix files as published (magic, ndim, at
least three dims, row-major elements), checked headers, and small NORB's fields."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import SourceFormatError
from catalog.formats import FORMATS, Source
from catalog.formats.arrays.norb import read_matrix
from catalog.spec.load import load_spec

from dummy_vtab import norb_matrix

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, array: np.ndarray[Any, Any]) -> Path:
    path.write_bytes(norb_matrix(array))
    return path


def test_a_matrix_of_fewer_than_three_dims_has_three_written(tmp_path: Path) -> None:
    cat = write(tmp_path / "cat.mat", np.array([3, 1, 4], "<i4"))
    assert len(cat.read_bytes()) == 8 + 12 + 12  # magic, ndim, 3 dims (3, 1, 1), elements
    matrix = read_matrix(cat)
    assert (matrix.shape, matrix.offset, matrix.dtype) == ((3,), 20, np.dtype("<i4"))
    np.testing.assert_array_equal(matrix.array(), [3, 1, 4])
    pairs = write(
        tmp_path / "dat.mat", np.arange(2 * 2 * 3 * 4, dtype=np.uint8).reshape(2, 2, 3, 4)
    )
    assert read_matrix(pairs).offset == 8 + 16  # four dims: no padding
    np.testing.assert_array_equal(read_matrix(pairs).array()[1, 0, 2], [32, 33, 34, 35])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            gzip.compress(norb_matrix(np.zeros(3, "<i4")), mtime=0),
            r"magic number 0x.* is it still gzip'd",
        ),
        (norb_matrix(np.zeros(3, "<i4"))[:-4], r"28 bytes, but its header .* says 32"),
        (b"\x55\x4c\x3d\x1e", "too short"),
    ],
    ids=["gzipped", "truncated", "short"],
)
def test_a_bad_header_is_named(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "x.mat"
    path.write_bytes(data)
    with pytest.raises(SourceFormatError, match=message):
        read_matrix(path)


def source(tmp_path: Path, n: int = 3, info_rows: int | None = None) -> Source:
    dat = write(tmp_path / "dat.mat", np.full((n, 2, 5, 5), 7, np.uint8))
    cat = write(tmp_path / "cat.mat", np.arange(n, dtype="<i4"))
    info = np.tile(np.array([[9, 8, 34, 5]], "<i4"), (info_rows or n, 1))
    info_path = write(tmp_path / "info.mat", info)
    features = load_spec(ROOT / "builders" / "smallnorb").features
    options = {"id": "train_{index:05d}"}
    from catalog.features import FeaturesDict, Text

    features = FeaturesDict({**dict(features.items()), "id": Text()})
    files = {"dat": (dat,), "cat": (cat,), "info": (info_path,)}
    return Source("train", files, options, features)


def test_fields_and_random_access(tmp_path: Path) -> None:
    src = source(tmp_path)
    examples = list(FORMATS["norb"].examples(src))
    key, example = examples[2]
    assert key == "2" and example["id"] == "train_00002" and example["label_category"] == 2
    assert (example["instance"], example["label_elevation"], example["label_azimuth"],
            example["label_lighting"]) == (9, 8, 17, 5)  # fmt: skip
    assert example["image"].shape == (5, 5, 1) and example["image2"].shape == (5, 5, 1)
    reader = FORMATS["norb"].random_access(src)  # type: ignore[misc]
    assert reader.length == 3 and [k for k, _ in reader.examples(1, 9)] == ["1", "2"]
    reader.close()


def test_files_of_different_lengths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match=r"info.mat: shape \(4, 4\), expected \(3, 4\)"):
        list(FORMATS["norb"].examples(source(tmp_path, info_rows=4)))

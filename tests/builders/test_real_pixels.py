"""The first 50 real Fashion-MNIST test images, prepared through the real path."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

import catalog
from catalog.formats.arrays.idx import read_idx

from conftest import FIRST50, FIRST50_LABELS


def test_every_real_image_comes_back_byte_for_byte(first50_builder: Path, tmp_path: Path) -> None:
    ds = catalog.data_source(first50_builder, split="test", data_dir=tmp_path / "data")
    # The expected pixels straight from the file, without catalog's IDX reader.
    raw = gzip.decompress((FIRST50 / "t10k-images-idx3-ubyte.gz").read_bytes())
    assert int.from_bytes(raw[:4], "big") == 2051
    pixels = np.frombuffer(raw, np.uint8, offset=16).reshape(50, 28, 28, 1)
    assert len(ds) == 50
    for i in range(50):
        example = ds[i]
        np.testing.assert_array_equal(example["image"], pixels[i])
        assert example["label"] == FIRST50_LABELS[i]
    assert ds.features["label"].int2str(ds[0]["label"]) == "Ankle boot"


def test_idx_reader_parses_the_real_header() -> None:
    images = read_idx(FIRST50 / "t10k-images-idx3-ubyte.gz")
    labels = read_idx(FIRST50 / "t10k-labels-idx1-ubyte.gz")
    assert images.shape == (50, 28, 28) and images.dtype == np.uint8
    assert labels.tolist() == FIRST50_LABELS

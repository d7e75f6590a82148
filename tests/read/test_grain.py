"""Grain reads a DataSource as a random-access source (it calls len, [i] and _getitems)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder

grain = pytest.importorskip("grain")  # in the `test` extra; optional for users

COUNT = 70


def test_grain_map_dataset_over_a_data_source(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, COUNT)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")

    dataset = grain.MapDataset.source(ds).shuffle(seed=3).batch(32)
    batches = list(dataset)
    assert [len(b["label"]) for b in batches] == [32, 32, 6]
    images = np.concatenate([b["image"] for b in batches])
    labels = np.concatenate([b["label"] for b in batches])
    assert images.shape == (COUNT, 28, 28, 1) and images.dtype == np.uint8
    # A permutation of the split, each image still with its own label.
    expected_images = pattern_images(COUNT)[..., None]
    found = [
        next(i for i in range(COUNT) if np.array_equal(expected_images[i], image))
        for image in images
    ]
    assert sorted(found) == list(range(COUNT))
    assert found != list(range(COUNT))  # shuffled
    np.testing.assert_array_equal(labels, pattern_labels(COUNT)[found])

"""PyTorch's DataLoader over a prepared split: workers, batching, default collate."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels

from conftest import idx_builder

torch = pytest.importorskip("torch")  # a test-only dependency (the `test` extra pins it)

COUNT = 100


def test_dataloader_with_two_workers_collates_batches(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, COUNT)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    ds[0]  # a reader open in the parent must not break the forked workers

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "The given NumPy array is not writable"
        loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=2, shuffle=False)
        batches = list(loader)

    assert [len(b["label"]) for b in batches] == [32, 32, 32, 4]
    images = torch.cat([b["image"] for b in batches])
    labels = torch.cat([b["label"] for b in batches])
    assert images.shape == (COUNT, 28, 28, 1) and images.dtype == torch.uint8
    assert labels.dtype == torch.int64
    np.testing.assert_array_equal(images.numpy(), pattern_images(COUNT)[..., None])
    np.testing.assert_array_equal(labels.numpy(), pattern_labels(COUNT))

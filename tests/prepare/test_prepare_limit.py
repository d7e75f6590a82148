"""download_and_prepare(max_examples_per_split=N): a quick partial copy, never taken for the
whole dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import catalog
from catalog.download import DownloadConfig
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder

QUIET = DownloadConfig(progress="none")


def counts(data_path: Path) -> dict[str, int]:
    info = json.loads((data_path / "dataset_info.json").read_text())
    return {name: s["num_examples"] for name, s in info["splits"].items()}


def test_a_limited_copy_is_replaced_when_the_whole_dataset_is_asked_for(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 6)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    info = b.download_and_prepare(max_examples_per_split=4, download_config=QUIET)
    assert info.splits["train"].num_examples == 4 and counts(b.data_path) == {"train": 4}
    ds = b.as_data_source("train")
    assert (
        len(ds) == 4
        and ds[3]["label"]
        == catalog.data_source(
            folder, split="train", data_dir=tmp_path / "other", download_config=QUIET
        )[3]["label"]
    )  # the first examples, in order

    shard = next(b.data_path.glob("*.array_record-*"))
    mtime = shard.stat().st_mtime_ns
    b.download_and_prepare(max_examples_per_split=4, download_config=QUIET)  # the same: reused
    assert shard.stat().st_mtime_ns == mtime
    b.download_and_prepare(max_examples_per_split=2, download_config=QUIET)  # another: redone
    assert counts(b.data_path) == {"train": 2}

    # data_source() wants the whole dataset: the partial copy is prepared again in full.
    assert len(catalog.data_source(folder, split="train", data_dir=tmp_path / "data")) == 6
    assert counts(b.data_path) == {"train": 6}
    # A full copy serves any limit as it is.
    shard = next(b.data_path.glob("*.array_record-*"))
    mtime = shard.stat().st_mtime_ns
    info = b.download_and_prepare(max_examples_per_split=2, download_config=QUIET)
    assert info.splits["train"].num_examples == 6 and shard.stat().st_mtime_ns == mtime
    # download=False reads what is there, partial or not.
    b.download_and_prepare(max_examples_per_split=3, overwrite=True, download_config=QUIET)
    assert len(catalog.data_source(folder, split="train", data_dir=b.data_dir, download=False)) == 3


def test_a_limit_above_the_split_size_is_the_whole_dataset(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 3)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare(max_examples_per_split=100, download_config=QUIET)
    assert counts(b.data_path) == {"train": 3}
    shard = next(b.data_path.glob("*.array_record-*"))
    mtime = shard.stat().st_mtime_ns
    b.download_and_prepare(download_config=QUIET)  # complete already: reused
    assert shard.stat().st_mtime_ns == mtime


def test_a_limit_below_1_is_refused(tmp_path: Path, server: LoopbackServer) -> None:
    b = catalog.builder(idx_builder(tmp_path, server, 3), data_dir=tmp_path / "data")
    with pytest.raises(ValueError, match="max_examples_per_split must be >= 1, got 0"):
        b.download_and_prepare(max_examples_per_split=0, download_config=QUIET)
    assert server.requests == []

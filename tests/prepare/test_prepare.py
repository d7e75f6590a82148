"""Preparation: verified downloads, atomic output, reuse, locking, clear errors."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

import catalog
from catalog.errors import ChecksumError, FeatureError, SourceFormatError, SpecError
from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

SPLITS = {"train": ("train-images.gz", "train-labels.gz", 6)}


def idx_files(tmp_path: Path, count: int = 6, labels: np.ndarray | None = None) -> dict[str, bytes]:
    write_idx(tmp_path / "i.gz", pattern_images(count))
    write_idx(tmp_path / "l.gz", pattern_labels(count) if labels is None else labels)
    return {
        "train-images.gz": (tmp_path / "i.gz").read_bytes(),
        "train-labels.gz": (tmp_path / "l.gz").read_bytes(),
    }


def test_prepared_layout_and_dataset_info(tmp_path: Path, server: LoopbackServer) -> None:
    folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    assert not b.is_prepared
    info = b.download_and_prepare()
    assert b.data_path == tmp_path / "data" / "tiny" / "1.0.0"
    files = sorted(p.name for p in b.data_path.iterdir())
    assert files == ["dataset_info.json", "tiny-train.array_record-00000-of-00001"]
    on_disk = json.loads((b.data_path / "dataset_info.json").read_text())
    shard = on_disk["splits"]["train"]["shards"][0]
    assert shard["num_examples"] == 6 == info.splits["train"].num_examples
    assert shard["num_bytes"] == (b.data_path / shard["file"]).stat().st_size
    assert len(shard["sha256"]) == 64
    assert on_disk["record_format"] == {"name": "catalog-record", "version": 1}
    assert on_disk["features"]["features"]["image"]["shape"] == [28, 28, 1]
    # Downloads went to <data_dir>/downloads, keyed by content (.meta: records, locks).
    downloads = (tmp_path / "data" / "downloads").iterdir()
    assert len([p for p in downloads if not p.name.startswith(".")]) == 2
    # Nothing temporary is left beside the prepared version.
    gen = b.data_path.resolve().name  # the pointer 1.0.0 names one generation, held by none
    assert sorted(p.name for p in b.data_path.parent.iterdir()) == sorted(
        [".1.0.0.lock", "1.0.0", gen, f".{gen}.readers"]
    )


def test_prepared_dataset_is_reused_without_work(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS)
        catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()
        requests = len(server.requests)
    shard = next((tmp_path / "data/tiny/1.0.0").glob("*.array_record*"))
    mtime = shard.stat().st_mtime_ns
    # The server is gone: a second call must neither download nor rewrite anything.
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    assert len(ds) == 6 and shard.stat().st_mtime_ns == mtime
    assert len(server.requests) == requests


def test_flipped_byte_prepares_nothing_and_caches_nothing(
    tmp_path: Path, server: LoopbackServer
) -> None:
    files = idx_files(tmp_path)
    folder = write_builder(tmp_path / "tiny", server, files, splits=SPLITS)
    corrupt = bytearray(files["train-images.gz"])
    corrupt[len(corrupt) // 2] ^= 0xFF
    server.add("/files/tiny/train-images.gz", bytes(corrupt))
    with pytest.raises(ChecksumError) as info:
        catalog.data_source(folder, data_dir=tmp_path / "data")
    message = str(info.value)
    assert "/files/tiny/train-images.gz" in message and "sha256 mismatch" in message
    assert not (tmp_path / "data" / "tiny" / "1.0.0").exists()
    leftovers = [p.name for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert all(name.endswith((".lock", "labels.gz", "labels.gz.json")) for name in leftovers), (
        leftovers
    )
    assert not any("images" in name and not name.endswith(".lock") for name in leftovers)


def test_a_killed_run_is_cleaned_up(tmp_path: Path, server: LoopbackServer) -> None:
    folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS)
    stale = tmp_path / "data" / "tiny" / "1.0.0.incomplete-abc123"
    stale.mkdir(parents=True)
    (stale / "tiny-train.array_record-00000-of-00001").write_bytes(b"half")
    catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()
    assert not stale.exists()


def test_bad_example_names_split_example_and_feature(
    tmp_path: Path, server: LoopbackServer
) -> None:
    labels = pattern_labels(6)
    labels[4] = 12  # out of range for 10 classes
    folder = write_builder(
        tmp_path / "tiny", server, idx_files(tmp_path, labels=labels), splits=SPLITS
    )
    with pytest.raises(FeatureError) as info:
        catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()
    assert str(info.value).startswith("split 'train', example 4 (key '4'): feature 'label': ")
    assert "label 12 is out of range: expected 0..9" in str(info.value)
    assert not (tmp_path / "data" / "tiny" / "1.0.0").exists()
    assert not list((tmp_path / "data" / "tiny").glob("*incomplete*"))


def test_example_count_must_match_the_spec(tmp_path: Path, server: LoopbackServer) -> None:
    splits = {"train": ("train-images.gz", "train-labels.gz", 7)}
    folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=splits)
    with pytest.raises(SourceFormatError, match="hold 6 examples but .*builder.yaml.*expects 7"):
        catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()
    assert not (tmp_path / "data" / "tiny" / "1.0.0").exists()


def test_missing_checksum_says_what_to_add(tmp_path: Path, server: LoopbackServer) -> None:
    folder = write_builder(
        tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS, register=False
    )
    with pytest.raises(SpecError, match="checksums.tsv: no size and sha256 registered for http"):
        catalog.builder(folder, data_dir=tmp_path / "data").download_and_prepare()


def test_overwrite_replaces_a_prepared_dataset(tmp_path: Path, server: LoopbackServer) -> None:
    folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS)
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    b.download_and_prepare()
    shard = next(b.data_path.glob("*.array_record*"))
    shard.write_bytes(b"damaged")
    b.download_and_prepare(overwrite=True)
    assert len(b.as_data_source("train")) == 6
    gen = b.data_path.resolve().name  # the pointer 1.0.0 names one generation, held by none
    assert sorted(p.name for p in b.data_path.parent.iterdir()) == sorted(
        [".1.0.0.lock", "1.0.0", gen, f".{gen}.readers"]
    )


def _prepare_in_child(folder: str, data_dir: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    info = catalog.builder(folder, data_dir=data_dir).download_and_prepare()
    queue.put(info.splits["train"].shards[0].sha256)


def test_two_processes_prepare_once(tmp_path: Path, server: LoopbackServer) -> None:
    folder = write_builder(tmp_path / "tiny", server, idx_files(tmp_path), splits=SPLITS)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_prepare_in_child, args=(str(folder), str(tmp_path / "data"), queue))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    digests = {queue.get(timeout=10) for _ in procs}
    assert len(digests) == 1  # both saw the same, complete dataset
    # Each file was downloaded once: the second process found the dataset prepared.
    image_gets = [r for r in server.requests if r.path.endswith("train-images.gz")]
    assert len(image_gets) == 1
    queue.close()
    queue.join_thread()

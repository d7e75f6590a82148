"""``tfds:cifar10`` and ``tfds:cifar100`` from archives in their upstream layout (CIFAR's binary
version: label bytes + channel-planar pixels), from a ``--mirror`` dir: TFDS's generator reads
the class names from the archive while it runs, and catalog's features get them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from tfds_files import SKIP_REASON

pytest.importorskip("tensorflow_datasets", reason=SKIP_REASON)

from tfds_files import (
    CIFAR10_URL,
    CIFAR100_URL,
    cifar_images,
    cifar_record,
    images_of,
    mirror_file,
    tar_gz,
)

import catalog
from catalog.download import DownloadConfig

_NAMES10 = ["plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def _config(tmp_path: Path, mirror: Path) -> DownloadConfig:
    return DownloadConfig(
        download_dir=tmp_path / "dl", mirrors=[str(mirror)], offline=True,
        register_checksums=True, progress="none",
    )  # fmt: skip


def test_cifar10_from_its_binary_batches(tmp_path: Path) -> None:
    files, expected = {}, {"train": [], "test": []}
    batches = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for b, batch in enumerate(batches):
        images = cifar_images(2, seed=b)
        labels = [(3 * b + k) % 10 for k in range(2)]
        files[f"cifar-10-batches-bin/{batch}"] = b"".join(
            cifar_record((label,), image) for label, image in zip(labels, images, strict=True)
        )
        expected["test" if batch == "test_batch.bin" else "train"] += list(
            zip(labels, images, strict=True)
        )
    files["cifar-10-batches-bin/batches.meta.txt"] = ("\n".join(_NAMES10) + "\n\n").encode()
    mirror = tmp_path / "mirror"
    mirror_file(mirror, CIFAR10_URL, tar_gz(files))
    sources = catalog.data_source(
        "tfds:cifar10", data_dir=tmp_path / "data", download_config=_config(tmp_path, mirror)
    )
    assert isinstance(sources, dict)
    for split, pairs in expected.items():
        ds = sources[split]
        assert len(ds) == len(pairs)
        assert [int(ds[i]["label"]) for i in range(len(ds))] == [label for label, _ in pairs]
        np.testing.assert_array_equal(images_of(ds), np.stack([image for _, image in pairs]))
        assert ds[1]["id"] == f"{split}_00001"
    assert sources["train"].features["label"].names == _NAMES10  # read from the archive
    assert "tensorflow" not in sys.modules


def test_cifar100_gives_both_labels_with_their_names(tmp_path: Path) -> None:
    coarse = [f"super{i}" for i in range(20)]
    fine = [f"class{i}" for i in range(100)]
    images = cifar_images(3, seed=7)
    pairs = [(1, 42), (19, 99), (0, 0)]
    records = b"".join(cifar_record(p, image) for p, image in zip(pairs, images, strict=True))
    archive = tar_gz({
        "cifar-100-binary/train.bin": records,
        "cifar-100-binary/test.bin": records[: len(records) // 3],
        "cifar-100-binary/coarse_label_names.txt": "\n".join(coarse).encode(),
        "cifar-100-binary/fine_label_names.txt": "\n".join(fine).encode(),
    })  # fmt: skip
    mirror = tmp_path / "mirror"
    mirror_file(mirror, CIFAR100_URL, archive)
    train = catalog.data_source(
        "tfds:cifar100", split="train", data_dir=tmp_path / "data",
        download_config=_config(tmp_path, mirror),
    )  # fmt: skip
    got = [(int(train[i]["coarse_label"]), int(train[i]["label"])) for i in range(len(train))]
    assert got == pairs
    np.testing.assert_array_equal(images_of(train), images)
    assert train.features["label"].names == fine
    assert train.features["coarse_label"].names == coarse

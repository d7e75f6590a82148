"""Files in each dataset's upstream layout for the ``tfds:NAME`` tests, and TFDS's builder
modules patched to read them (as TFDS's own tests patch them)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

#: Why the tfds: tests skip where tensorflow-datasets is not installed.
SKIP_REASON = "tfds: tests need tensorflow-datasets (pip install 'catalog[tfds]'; no TensorFlow)"

#: imdb_reviews' files in aclImdb_v1.tar.gz, re-made in its layout (see tests/data/tfds_dummy).
IMDB_FILES = {
    "aclImdb/train/pos/0_9.txt": "A great film.",
    "aclImdb/train/pos/1_8.txt": "Loved every minute \u2764.",
    "aclImdb/train/neg/2_1.txt": "Awful.",
    "aclImdb/train/unsup/3_0.txt": "Unlabelled, as it comes.",
    "aclImdb/test/pos/4_7.txt": "Fine acting.",
    "aclImdb/test/neg/5_2.txt": "Bad.",
    "aclImdb/README": "not an example",
}
IMDB_URL = "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"


def imdb_archive() -> bytes:
    """aclImdb_v1.tar.gz in its upstream layout, with `IMDB_FILES`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in IMDB_FILES.items():
            data = text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def mirror_file(mirror: Path, url: str, body: bytes) -> Path:
    """`body` where a ``--mirror`` dir holds `url`'s copy (``<mirror>/<host>/<path>``)."""
    path = mirror / url.split("://", 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path


MNIST_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def serve_mnist(server: LoopbackServer, folder: Path, counts: dict[str, int]) -> str:
    """MNIST's four gzip'd IDX files (pattern images) served under ``/mnist/``; the base URL."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed, (split, (images, labels)) in enumerate(MNIST_FILES.items()):
        n = counts[split]
        for name, array in (
            (images, pattern_images(n, seed=seed)),
            (labels, pattern_labels(n, seed=seed)),
        ):
            server.add(f"/mnist/{name}", write_idx(folder / name, array).read_bytes())
    return server.url("/mnist/")


def patch_mnist(monkeypatch: pytest.MonkeyPatch, base_url: str, train: int, test: int) -> None:
    """TFDS's mnist module reading `train` + `test` examples from `base_url` (MNIST's and
    Fashion-MNIST's URL), as TFDS's own mnist test patches it; undone after the test."""
    from catalog.formats.tfds.runtime import import_tfds

    import_tfds()
    from tensorflow_datasets.image_classification import mnist

    monkeypatch.setattr(mnist, "_TRAIN_EXAMPLES", train)
    monkeypatch.setattr(mnist, "_TEST_EXAMPLES", test)
    monkeypatch.setattr(mnist.MNIST, "URL", base_url)
    monkeypatch.setattr(mnist.FashionMNIST, "URL", base_url)
    monkeypatch.setattr(mnist.KMNIST, "URL", base_url)


def images_of(ds: object) -> np.ndarray:
    return np.stack([ds[i]["image"] for i in range(len(ds))])  # type: ignore[index, arg-type]


CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
CIFAR100_URL = "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz"


def cifar_images(count: int, seed: int) -> np.ndarray:
    """`count` 32x32x3 uint8 images (HWC) whose pixels are predictable from `seed`."""
    i, r, c, ch = np.ogrid[:count, :32, :32, :3]
    return ((13 * i + 5 * r + 3 * c + 101 * ch + seed) % 256).astype(np.uint8)


def cifar_record(labels: tuple[int, ...], image: np.ndarray) -> bytes:
    """One record of CIFAR's binary version: label byte(s), then the channel-planar pixels."""
    return bytes(labels) + np.ascontiguousarray(image.transpose(2, 0, 1)).tobytes()


def tar_gz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def assert_examples_equal(
    got: dict[str, list[Any]], wanted: dict[str, list[Any]], multiset: Any, float32: bool
) -> None:
    """Each split's canonical examples (`tools/tfds_equivalence.py`'s form) equal TFDS's as
    multisets (TFDS shuffles); with `float32`, every float compared rounded to float32, as
    TFDS stores float64 (tf.train.Example's float_list)."""
    if float32:
        wanted = {split: _float32(examples) for split, examples in wanted.items()}
        got = {split: _float32(examples) for split, examples in got.items()}
    for split, examples in wanted.items():
        assert len(got[split]) == len(examples), split
        assert multiset(got[split]) == multiset(examples), split


def _float32(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _float32(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_float32(v) for v in value]
    return float(np.float32(value)) if isinstance(value, float) else value

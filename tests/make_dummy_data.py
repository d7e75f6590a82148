"""Write every builder's dummy files, in the source's exact layout (run from anywhere).

    python tests/make_dummy_data.py            # every builder
    python tests/make_dummy_data.py cifar10 idx   # some (idx: the MNIST family)

The files are committed; tests/builders/test_builders.py recomputes the same patterns to check every
pixel and label that comes out of the prepared dataset. Archives are written byte for byte
the same on every run (fixed timestamps and owners), except the .mat files (scipy stamps the
time into them) and JPEGs (their bytes depend on the Pillow version).
"""

from __future__ import annotations

import gzip
import io
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from dummy_manual import MAKERS as MANUAL_MAKERS

from catalog.spec.load import load_spec
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from dummy_imagenet import MAKERS as IMAGENET_MAKERS
from dummy_images import MAKERS as IMAGE_MAKERS
from dummy_vtab import MAKERS as VTAB_MAKERS

BUILDERS = Path(__file__).resolve().parent.parent / "builders"

#: dataset -> seed; split -> (file prefix, example count, seed offset)
IDX_BUILDERS = {"mnist": 1, "fashion_mnist": 2, "kmnist": 3}
IDX_SPLITS = {"train": ("train", 12, 0), "test": ("t10k", 7, 100)}

#: CIFAR-10: records per training batch file (5 files), and in the test batch.
CIFAR10_PER_BATCH, CIFAR10_TEST = 2, 3
CIFAR100_COUNTS = {"train": 4, "test": 3}
#: cmaterdb config -> (seed, {split: count}); files training-images.npz, testing-images.npz.
CMATERDB = {"bangla": (10, {"train": 4, "test": 2}), "devanagari": (20, {"train": 3, "test": 2}),
            "telugu": (30, {"train": 3, "test": 1})}  # fmt: skip
#: tf_flowers: (class, file name, (height, width), RGB colour), in the archive's order.
FLOWERS = [
    ("roses", "12240303_80d87f77a3_n.jpg", (5, 7), (200, 30, 60)),
    ("daisy", "5547758_eea9edfd54_n.jpg", (4, 6), (240, 240, 230)),
    ("tulips", "10791227_7168491604.jpg", (6, 3), (220, 80, 120)),
    ("daisy", "100080576_f52e8ee070_n.jpg", (3, 5), (250, 250, 250)),
    ("dandelion", "7355522_b66e5d3078_m.jpg", (8, 8), (250, 210, 10)),
    ("sunflowers", "6953297_8576bf4ea3.jpg", (2, 9), (230, 180, 0)),
]
BINARIZED_MNIST = {"train": 4, "valid": 3, "test": 2}
SVHN = {"train": 4, "test": 3, "extra": 2}


def cifar_images(count: int, *, seed: int) -> np.ndarray[Any, Any]:
    """(count, 32, 32, 3) images, every pixel predictable and each channel different:
    ``(5*i + 3*r + 7*c + 80*channel + seed) % 256``."""
    i, r, c, ch = np.ogrid[:count, :32, :32, :3]
    pixels: np.ndarray[Any, Any] = (5 * i + 3 * r + 7 * c + 80 * ch + seed) % 256
    return pixels.astype(np.uint8)


def cifar_records(labels: list[np.ndarray[Any, Any]], images: np.ndarray[Any, Any]) -> bytes:
    """CIFAR binary records: the label bytes, then the image channel-planar (R, G, B planes)."""
    planar = images.transpose(0, 3, 1, 2).reshape(len(images), -1)  # (N, 3*32*32)
    return np.concatenate(
        [*(np.asarray(v, np.uint8)[:, None] for v in labels), planar], 1
    ).tobytes()


def binary_images(count: int, *, seed: int) -> np.ndarray[Any, Any]:
    """(count, 28, 28) 0/1 images: ``(r*c + 3*i + seed) % 5 < 2``."""
    i, r, c = np.ogrid[:count, :28, :28]
    return ((r * c + 3 * i + seed) % 5 < 2).astype(np.uint8)


def svhn_labels(count: int, *, seed: int) -> np.ndarray[Any, Any]:
    """SVHN's y: 1..10 (10 is the digit 0); with seed 0 the first is 10."""
    return ((np.arange(count) * 3 + seed + 9) % 10 + 1).astype(np.uint8)


def flower_jpeg(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (size[1], size[0]), colour).save(out, format="JPEG", quality=90)
    return out.getvalue()


def write_tar_gz(path: Path, members: dict[str, bytes]) -> None:
    """A .tar.gz of `members` (name -> bytes) and their directories, the same bytes each run."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dirs = sorted({str(Path(n).parent) for n in members} - {"."})
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))


def write_npz(path: Path, arrays: dict[str, np.ndarray[Any, Any]]) -> None:
    """A compressed .npz, like ``np.savez_compressed`` but with fixed timestamps."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            out = io.BytesIO()
            np.lib.format.write_array(out, array, allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", (1980, 1, 1, 0, 0, 0)), out.getvalue(),
                        zipfile.ZIP_DEFLATED)  # fmt: skip


def make_idx() -> None:
    for name, seed in IDX_BUILDERS.items():
        out = BUILDERS / name / "dummy_data"
        out.mkdir(exist_ok=True)
        for prefix, count, offset in IDX_SPLITS.values():
            write_idx(
                out / f"{prefix}-images-idx3-ubyte.gz", pattern_images(count, seed=seed + offset)
            )
            write_idx(
                out / f"{prefix}-labels-idx1-ubyte.gz", pattern_labels(count, seed=seed + offset)
            )


def make_cifar10() -> None:
    names = load_spec(BUILDERS / "cifar10").features["label"].names  # type: ignore[attr-defined]
    train = cifar_images(5 * CIFAR10_PER_BATCH, seed=1)
    labels = pattern_labels(5 * CIFAR10_PER_BATCH, seed=1)
    members = {"cifar-10-batches-bin/batches.meta.txt": ("\n".join(names) + "\n\n").encode()}
    for b in range(5):
        part = slice(b * CIFAR10_PER_BATCH, (b + 1) * CIFAR10_PER_BATCH)
        members[f"cifar-10-batches-bin/data_batch_{b + 1}.bin"] = cifar_records(
            [labels[part]], train[part]
        )
    members["cifar-10-batches-bin/test_batch.bin"] = cifar_records(
        [pattern_labels(CIFAR10_TEST, seed=2)], cifar_images(CIFAR10_TEST, seed=2)
    )
    write_tar_gz(_out("cifar10") / "cifar-10-binary.tar.gz", members)


def make_cifar100() -> None:
    features = load_spec(BUILDERS / "cifar100").features
    members = {}
    for file, feature in (("fine", "label"), ("coarse", "coarse_label")):
        text = "\n".join(features[feature].names) + "\n"  # type: ignore[attr-defined]
        members[f"cifar-100-binary/{file}_label_names.txt"] = text.encode()
    for seed, (split, count) in enumerate(CIFAR100_COUNTS.items(), 1):
        coarse = pattern_labels(count, 20, seed=seed)
        fine = pattern_labels(count, 100, seed=seed * 7)
        records = cifar_records([coarse, fine], cifar_images(count, seed=seed))
        members[f"cifar-100-binary/{split}.bin"] = records
    write_tar_gz(_out("cifar100") / "cifar-100-binary.tar.gz", members)


def make_cmaterdb() -> None:
    for config, (seed, counts) in CMATERDB.items():
        out = _out("cmaterdb") / config
        out.mkdir(exist_ok=True)
        for split, count in counts.items():
            arrays = {
                "images": cifar_images(count, seed=seed),
                "labels": pattern_labels(count, seed=seed).astype(np.int64),
            }
            write_npz(out / f"{split}ing-images.npz", arrays)


def make_tf_flowers() -> None:
    members = {"flower_photos/LICENSE.txt": b"All images in this archive are licensed CC-BY.\n"}
    for class_name, file, size, colour in FLOWERS:
        members[f"flower_photos/{class_name}/{file}"] = flower_jpeg(size, colour)
    write_tar_gz(_out("tf_flowers") / "flower_photos.tgz", members)


def make_binarized_mnist() -> None:
    for seed, (split, count) in enumerate(BINARIZED_MNIST.items()):
        images = binary_images(count, seed=seed)
        lines = [" ".join(str(v) for v in image.ravel()) + "\n" for image in images]
        (_out("binarized_mnist") / f"binarized_mnist_{split}.amat").write_text("".join(lines))


def make_svhn_cropped() -> None:
    import scipy.io

    for seed, (split, count) in enumerate(SVHN.items()):
        images = cifar_images(count, seed=100 + seed).transpose(1, 2, 3, 0)  # (32, 32, 3, N)
        y = svhn_labels(count, seed=seed)[:, None]
        mat = _out("svhn_cropped") / f"{split}_32x32.mat"
        scipy.io.savemat(mat, {"X": images, "y": y}, do_compression=True)


def make_text_audio() -> None:
    """The text, tabular and audio builders' files (tests/make_dummy_text_audio.py)."""
    from make_dummy_text_audio import main as make

    make([])


def _out(name: str) -> Path:
    out = BUILDERS / name / "dummy_data"
    out.mkdir(exist_ok=True)
    return out


MAKERS: dict[str, Callable[[], None]] = {
    "idx": make_idx,
    "cifar10": make_cifar10,
    "cifar100": make_cifar100,
    "cmaterdb": make_cmaterdb,
    "tf_flowers": make_tf_flowers,
    "binarized_mnist": make_binarized_mnist,
    "svhn_cropped": make_svhn_cropped,
    "text_audio": make_text_audio,
    **IMAGE_MAKERS,
    **IMAGENET_MAKERS,
    **VTAB_MAKERS,
    **MANUAL_MAKERS,
}


def main(names: list[str]) -> None:
    for name in names or MAKERS:
        MAKERS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])

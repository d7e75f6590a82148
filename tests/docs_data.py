"""The data the documentation's examples run against (tests/test_docs_examples.py), offline.

The guides read ``fashion_mnist`` and ``tf_flowers`` by name, at full size (``len(ds["train"])``
is 60000, ``train[-1000:]`` must exist). Stand-ins are prepared through the real path
(`catalog prepare --offline --mirror DIR`, as tests/make_readme_picture.py does):

- fashion_mnist: the registered builder with source files made from the 50 real Fashion-MNIST
  test images in tests/data/, repeated to the registered counts (60,000 + 10,000);
- tf_flowers: the registered builder with a flower_photos.tgz of 3,670 small JPEGs of
  varying size in the five class folders (drawn from the same 50 images, coloured).

Their checksums are those of the generated files, so each is prepared from a copy of the
builder folder; the copy's fingerprint is then recorded as the registered builder's, so that
``catalog.data_source("fashion_mnist")`` takes the stand-in for the real dataset (the only
difference is where the bytes came from). Also made: ``photos/`` (class folders of PNGs, for
``catalog.prepare_files``) in the working directory.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import yaml
from PIL import Image

import catalog

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "fashion_mnist_first50"
FLOWER_CLASSES = ("dandelion", "daisy", "tulips", "sunflowers", "roses")


def first50() -> tuple[np.ndarray, np.ndarray]:
    """The 50 real images (50, 28, 28) and labels (50,)."""
    images = gzip.decompress((SAMPLE / "t10k-images-idx3-ubyte.gz").read_bytes())
    labels = gzip.decompress((SAMPLE / "t10k-labels-idx1-ubyte.gz").read_bytes())
    return (
        np.frombuffer(images, np.uint8, offset=16).reshape(-1, 28, 28),
        np.frombuffer(labels, np.uint8, offset=8),
    )


def idx(array: np.ndarray) -> bytes:
    """An IDX file of uint8 `array` (magic 0x08, one big-endian size per dimension)."""
    head = bytes([0, 0, 8, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return head + array.tobytes()


def catalog_cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "catalog", *args], check=True, capture_output=True,
                   timeout=600)  # fmt: skip


def _stand_in(
    name: str, work: Path, files: dict[str, bytes], counts: dict[str, int] | None = None
) -> tuple[Path, Path]:
    """(builder folder, mirror dir): the registered builder `name`, its downloads replaced
    by `files` (download name -> bytes), served from a mirror dir in the `wget -x` layout;
    `counts` replaces the splits' example counts."""
    spec = yaml.safe_load((ROOT / "builders" / name / "builder.yaml").read_text())
    for split, count in (counts or {}).items():
        spec["splits"][split]["num_examples"] = count
    folder, mirror = work / "builders" / name, work / "mirror"
    folder.mkdir(parents=True)
    lines = []
    for key, download in spec["downloads"].items():
        data = files[key]
        url = urlparse(download["url"])
        filename = url.path.rsplit("/", 1)[1]
        lines.append(
            f"{download['url']}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\t{filename}"
        )
        target = mirror / url.netloc / url.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / "builder.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (folder / "checksums.tsv").write_text("\n".join(lines) + "\n")
    return folder, mirror


def _prepare(name: str, folder: Path, mirror: Path, data_dir: Path, *extra: str) -> None:
    catalog_cli("prepare", str(folder), "--offline", "--mirror", str(mirror), "--data-dir",
                str(data_dir), "-q", *extra)  # fmt: skip
    registered = yaml.safe_load((ROOT / "builders" / name / "builder.yaml").read_text())
    info_path = data_dir / name / str(registered["version"]) / "dataset_info.json"
    info = json.loads(info_path.read_text())
    info["builder"] = {
        "path": str(ROOT / "builders" / name),
        "fingerprint": catalog.builder(name, data_dir=data_dir).spec.fingerprint,
    }
    info_path.write_text(json.dumps(info, indent=2))


def fashion_mnist_files() -> dict[str, bytes]:
    images, labels = first50()
    files = {}
    for split, count in (("train", 60000), ("test", 10000)):
        reps = -(-count // len(images))
        files[f"{split}_images"] = gzip.compress(idx(np.tile(images, (reps, 1, 1))[:count]), 1)
        files[f"{split}_labels"] = gzip.compress(idx(np.tile(labels, reps)[:count]), 1)
    return files


def flower_photos(count: int = 3670) -> bytes:
    """A flower_photos.tgz: `count` small JPEGs of varying size in the five class folders."""
    images, _ = first50()
    rng = np.random.default_rng(0)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for i in range(count):
            gray = images[i % len(images)]
            colour = (gray[..., None] * rng.uniform(0.3, 1.0, 3)).astype(np.uint8)
            h, w = (int(s) for s in rng.integers(32, 72, 2))
            picture = Image.fromarray(colour).resize((w, h))
            jpeg = io.BytesIO()
            picture.save(jpeg, format="JPEG", quality=85)
            member = tarfile.TarInfo(f"flower_photos/{FLOWER_CLASSES[i % 5]}/{i:05d}.jpg")
            member.size = len(jpeg.getvalue())
            tar.addfile(member, io.BytesIO(jpeg.getvalue()))
    return buffer.getvalue()


def photos_folder(root: Path) -> None:
    """``root/train/<class>/*.png`` and ``root/test/<class>/*.png``: the 50 images as PNGs."""
    images, labels = first50()
    names = ("tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker",
             "bag", "boot")  # fmt: skip
    for i, (image, label) in enumerate(zip(images, labels, strict=True)):
        split = "test" if i % 5 == 0 else "train"
        folder = root / split / names[label]
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(folder / f"{i:02d}.png")


def tfds_mnist(work: Path, output: Path) -> None:
    """A TFDS directory ``output/mnist/3.0.1`` (what TFDS prepares), of 100 + 50 examples:
    the mnist builder cut down to the sample, prepared, then written by
    ``catalog export --format tfds`` (its round trip:
    tests/cli/test_cli_tfds.py)."""
    images, labels = first50()
    files = {}
    for split, count in (("train", 100), ("test", 50)):
        files[f"{split}_images"] = gzip.compress(idx(np.tile(images, (2, 1, 1))[:count]), 1)
        files[f"{split}_labels"] = gzip.compress(idx(np.tile(labels, 2)[:count]), 1)
    folder, mirror = _stand_in("mnist", work, files, {"train": 100, "test": 50})
    data_dir = work / "data"
    catalog_cli("prepare", str(folder), "--offline", "--mirror", str(mirror), "--data-dir",
                str(data_dir), "-q")  # fmt: skip
    catalog_cli("export", str(folder), "--format", "tfds", "--data-dir", str(data_dir), "-o",
                str(output))  # fmt: skip


def make(work: Path) -> Path:
    """Prepare the stand-ins into ``work/home/datasets`` (the returned data dir)."""
    data_dir = work / "home" / "datasets"
    fm = work / "fashion_mnist"
    folder, mirror = _stand_in("fashion_mnist", fm, fashion_mnist_files())
    # Shards of about 16 MB: train has several, so the guide's `train[:2shard]` has two.
    _prepare("fashion_mnist", folder, mirror, data_dir, "--shard-size", "16MB")
    fl = work / "tf_flowers"
    folder, mirror = _stand_in("tf_flowers", fl, {"photos": flower_photos()})
    _prepare("tf_flowers", folder, mirror, data_dir)
    return data_dir
